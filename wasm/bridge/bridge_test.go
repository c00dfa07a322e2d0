package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSink records what Serve delivers, the way the JS side would see it.
type fakeSink struct {
	mu      sync.Mutex
	kind    string // "whole" or "stream"
	status  int
	header  http.Header
	body    []string // one entry per chunk ("whole" has one)
	closed  bool
	err     error
	cancel  context.CancelFunc
	opened  chan struct{}
	written chan struct{}
}

func newFakeSink() *fakeSink {
	return &fakeSink{opened: make(chan struct{}), written: make(chan struct{}, 100)}
}

func (s *fakeSink) Whole(status int, header http.Header, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kind != "" {
		panic("sink used twice")
	}
	s.kind, s.status, s.header, s.body = "whole", status, header, []string{string(body)}
}

func (s *fakeSink) Open(status int, header http.Header, cancel context.CancelFunc) Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kind != "" {
		panic("sink used twice")
	}
	s.kind, s.status, s.header, s.cancel = "stream", status, header, cancel
	close(s.opened)
	return s
}

func (s *fakeSink) Write(p []byte) {
	s.mu.Lock()
	s.body = append(s.body, string(p))
	s.mu.Unlock()
	s.written <- struct{}{}
}

func (s *fakeSink) Close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.err = true, err
}

func TestServe(t *testing.T) {
	tests := []struct {
		name       string
		target     string
		handler    http.HandlerFunc
		wantKind   string
		wantStatus int
		wantBody   []string
		wantType   string
		wantErr    bool
		wantPanic  bool
	}{{
		name:   "plain GET is delivered whole",
		target: "/api/v1/pods",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":`)
			fmt.Fprint(w, `"PodList"}`)
		},
		wantKind: "whole", wantStatus: 200, wantBody: []string{`{"kind":"PodList"}`}, wantType: "application/json",
	}, {
		name:       "status without body",
		target:     "/api/v1/namespaces/default/pods/x",
		handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
		wantKind:   "whole",
		wantStatus: 204, wantBody: []string{""},
	}, {
		name:       "handler that writes nothing is 200",
		target:     "/healthz",
		handler:    func(w http.ResponseWriter, r *http.Request) {},
		wantKind:   "whole",
		wantStatus: 200, wantBody: []string{""},
	}, {
		name:   "second WriteHeader is ignored",
		target: "/x",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "conflict")
		},
		wantKind: "whole", wantStatus: 409, wantBody: []string{"conflict"}, wantType: "text/plain; charset=utf-8",
	}, {
		name:   "Flush turns the response into a stream",
		target: "/api/v1/pods?watch=false",
		handler: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "a")
			w.(http.Flusher).Flush()
			fmt.Fprint(w, "b")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "c")
		},
		wantKind: "stream", wantStatus: 200, wantBody: []string{"a", "b", "c"},
	}, {
		name:   "a watch streams as soon as the status is known",
		target: "/api/v1/pods?watch=true&resourceVersion=5",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "{}\n")
		},
		wantKind: "stream", wantStatus: 200, wantBody: []string{"{}\n"},
	}, {
		name:   "a failed watch is still a stream with its status",
		target: "/api/v1/watch/pods",
		handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "gone", http.StatusGone)
		},
		wantKind: "stream", wantStatus: 410, wantBody: []string{"gone\n"},
	}, {
		name:   "panic before any output is a 500 Status",
		target: "/boom",
		handler: func(w http.ResponseWriter, r *http.Request) {
			panic("broken invariant")
		},
		wantKind: "whole", wantStatus: 500, wantType: "application/json", wantPanic: true,
		wantBody: []string{`{"apiVersion":"v1","code":500,"kind":"Status","message":"internal error: panic: broken invariant","metadata":{},"reason":"InternalError","status":"Failure"}`},
	}, {
		name:   "panic mid-stream fails the body",
		target: "/api/v1/pods?follow=true",
		handler: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "line\n")
			panic("broken invariant")
		},
		wantKind: "stream", wantStatus: 200, wantBody: []string{"line\n"}, wantErr: true, wantPanic: true,
	}, {
		name:   "ErrAbortHandler aborts quietly",
		target: "/abort",
		handler: func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		},
		wantKind: "whole", wantStatus: 500, wantType: "application/json",
		wantBody: []string{`{"apiVersion":"v1","code":500,"kind":"Status","message":"internal error: panic: net/http: abort Handler","metadata":{},"reason":"InternalError","status":"Failure"}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := newFakeSink()
			var panics []string
			onPanic := func(where string, v any, stack []byte) {
				panics = append(panics, fmt.Sprintf("%s: %v", where, v))
				if !strings.Contains(string(stack), "bridge_test.go") {
					t.Errorf("stack does not show the handler:\n%s", stack)
				}
			}
			Serve(tt.handler, httptest.NewRequest("GET", tt.target, nil), sink, onPanic)
			if sink.kind != tt.wantKind {
				t.Fatalf("kind = %q, want %q", sink.kind, tt.wantKind)
			}
			if sink.status != tt.wantStatus {
				t.Errorf("status = %d, want %d", sink.status, tt.wantStatus)
			}
			if got := strings.Join(sink.body, "|"); got != strings.Join(tt.wantBody, "|") {
				t.Errorf("body = %q, want %q", sink.body, tt.wantBody)
			}
			if tt.wantType != "" && sink.header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", sink.header.Get("Content-Type"), tt.wantType)
			}
			if tt.wantKind == "stream" && (!sink.closed || (sink.err != nil) != tt.wantErr) {
				t.Errorf("closed = %v, err = %v; want closed with error %v", sink.closed, sink.err, tt.wantErr)
			}
			if (len(panics) > 0) != tt.wantPanic {
				t.Errorf("panics reported = %q, want panic %v", panics, tt.wantPanic)
			}
		})
	}
}

// TestServeCancel shows how a watch ends: the page aborts, the sink calls
// cancel, and the handler sees its request context done.
func TestServeCancel(t *testing.T) {
	sink := newFakeSink()
	returned := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
				fmt.Fprintf(w, "event %d\n", i)
			}
		}
	})
	go func() {
		defer close(returned)
		Serve(handler, httptest.NewRequest("GET", "/api/v1/pods?watch=1", nil), sink, nil)
	}()
	select {
	case <-sink.opened:
	case <-time.After(10 * time.Second):
		t.Fatal("stream was not opened")
	}
	<-sink.written
	sink.cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not return after cancel")
	}
	if !sink.closed || sink.err != nil {
		t.Errorf("closed = %v, err = %v; want a clean close", sink.closed, sink.err)
	}
}

func TestWriteAfterReturn(t *testing.T) {
	sink := newFakeSink()
	var saved http.ResponseWriter
	Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { saved = w }),
		httptest.NewRequest("GET", "/", nil), sink, nil)
	if _, err := saved.Write([]byte("late")); !errors.Is(err, ErrWriteAfterReturn) {
		t.Errorf("late Write error = %v, want %v", err, ErrWriteAfterReturn)
	}
}

func BenchmarkServeWhole(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"NodeList","items":[]}`)
	})
	r := httptest.NewRequest("GET", "/api/v1/nodes", nil)
	for b.Loop() {
		Serve(h, r, newFakeSink(), nil)
	}
}
