package kubectl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInProcessTransportBasics(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-Path", r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "got "+string(body))
	})
	client := &http.Client{Transport: InProcessTransport(h)}
	resp, err := client.Post("https://kubetab.local/a/b?c=d", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTeapot || string(data) != "got hello" ||
		resp.Header.Get("X-Method") != "POST" || resp.Header.Get("X-Path") != "/a/b?c=d" {
		t.Fatalf("got %d %q %v", resp.StatusCode, data, resp.Header)
	}
}

func TestInProcessTransportPanic(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	resp, err := (&http.Client{Transport: InProcessTransport(h)}).Get("https://x/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(data), "boom") {
		t.Fatalf("got %d %q", resp.StatusCode, data)
	}
}

// TestInProcessTransportWatch: a watch started through the transport sees an
// object created after the request began, and cancelling the request's
// context ends the stream (and the handler).
func TestInProcessTransportWatch(t *testing.T) {
	e := newEnv(t)
	srvDone := make(chan struct{})
	rt := e.cli.cfg.Transport
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://kubetab.local/api/v1/namespaces/default/pods?watch=true&resourceVersion=1", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	events := make(chan metav1.WatchEvent)
	go func() {
		defer close(srvDone)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev metav1.WatchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
	}()

	e.pod("late", nil, "hello")
	select {
	case ev := <-events:
		var p corev1.Pod
		_ = json.Unmarshal(ev.Object.Raw, &p)
		if ev.Type != "ADDED" || p.Name != "late" {
			t.Fatalf("event %s %s", ev.Type, p.Name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for a pod created after the watch started")
	}

	cancel()
	select {
	case <-srvDone:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the context did not end the stream")
	}
	if _, err := resp.Body.Read(make([]byte, 1)); !errors.Is(err, context.Canceled) && err != io.EOF && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("read after cancel: %v", err)
	}
}

// TestInProcessTransportCloseBody: closing the body early stops the handler.
func TestInProcessTransportCloseBody(t *testing.T) {
	stopped := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(stopped)
		for {
			if _, err := io.WriteString(w, "tick\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			default:
			}
		}
	})
	resp, err := (&http.Client{Transport: InProcessTransport(h)}).Get("https://x/stream")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "tick\n" {
		t.Fatalf("first line %q", line)
	}
	resp.Body.Close()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("handler still running after the body was closed")
	}
}

func TestInProcessTransportCancelledBeforeHeader(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://x/slow", nil)
	if _, err := InProcessTransport(h).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RoundTrip error = %v, want deadline exceeded", err)
	}
}
