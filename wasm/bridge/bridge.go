// Package bridge carries one HTTP request from the web page to an http.Handler
// (the kube-apiserver) and carries its response back, either whole or as a
// stream.
//
// In a real cluster, kubectl and the dashboard reach kube-apiserver over TCP.
// In kubetab the apiserver is an http.Handler inside a Web Worker, so the
// "network" is a chain of messages:
//
//	page (site/src/bridge.js)
//	  │ postMessage {method, url, headers, body}
//	  ▼
//	worker (site/src/worker.js) ── new Request(...) ──▶ syumai/workers handleRequest
//	                                                        │ *http.Request
//	                                                        ▼
//	                                          bridge.Serve(apiserver, r, sink)
//	                                                        │
//	          ┌──── the handler returns ────────────────────┴─── the handler flushes ────┐
//	          ▼                                                                           ▼
//	  Sink.Whole(status, header, body)                          Sink.Open(status, header) ▶ Stream
//	  one JS Uint8Array body                                    a JS ReadableStream fed by
//	  (GET, POST, PUT, DELETE ...)                              Stream.Write per chunk (watch, logs -f)
//
// Why record the response here instead of letting syumai/workers write it?
// Its browser handler is built for one Go instance per request: it closes a
// package-level channel when the first response body is closed, so the second
// request in a long-lived instance panics with "close of closed channel". The
// handler therefore writes into this package's recorder, and the JS glue in
// wasm/ hands the finished bytes (or a ReadableStream) to syumai's response
// writer through its WriteRawJSBody method; syumai's own body pipe is never
// read or closed.
//
// When does a response become a stream? When the handler calls Flush (as
// kube-apiserver's watch handler does after every event), or, for a request
// that asks for a stream (?watch=true, ?follow=true, /watch/ paths), as soon
// as the status is known. Everything else is delivered whole, which is one
// message instead of several.
//
// This package has no syscall/js, so it runs and is tested natively; wasm/
// implements Sink and Stream with JS objects.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
)

// ErrWriteAfterReturn is returned by Write on a response whose handler has
// already returned (a goroutine the handler left behind is still writing).
var ErrWriteAfterReturn = errors.New("bridge: write after the handler returned")

// Sink receives the response of one request. Exactly one of Whole or Open is
// called, once, from the goroutine that runs the handler.
type Sink interface {
	// Whole delivers a complete response. body may be empty.
	Whole(status int, header http.Header, body []byte)
	// Open starts a streamed response. The sink calls cancel when the reader
	// goes away (the page aborted the request); that cancels the handler's
	// request context, which is how a watch ends.
	Open(status int, header http.Header, cancel context.CancelFunc) Stream
}

// Stream is the body of a streamed response.
type Stream interface {
	// Write sends one chunk. The stream owns p after the call.
	Write(p []byte)
	// Close ends the body: cleanly when err is nil, as a failed read otherwise.
	Close(err error)
}

// PanicFunc is told about a panic recovered in a handler. where names the
// request ("GET /api/v1/pods").
type PanicFunc func(where string, value any, stack []byte)

// Serve runs h for r and delivers the response to sink. It returns when the
// handler has returned and the response has been handed over.
//
// A panic in the handler is recovered: onPanic (if not nil) is told, and the
// client gets a 500 Status (or, mid-stream, a failed body). http.ErrAbortHandler
// aborts quietly, as in net/http.
func Serve(h http.Handler, r *http.Request, sink Sink, onPanic PanicFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	rec := &recorder{
		header:    http.Header{},
		sink:      sink,
		cancel:    cancel,
		streaming: WantsStream(r),
	}
	defer func() {
		v := recover()
		if v == nil {
			rec.finish()
			return
		}
		if v != http.ErrAbortHandler && onPanic != nil {
			onPanic(r.Method+" "+r.URL.RequestURI(), v, debug.Stack())
		}
		if rec.stream != nil {
			rec.stream.Close(fmt.Errorf("internal error: panic: %v", v))
			return
		}
		sink.Whole(http.StatusInternalServerError,
			http.Header{"Content-Type": {"application/json"}},
			statusJSON(http.StatusInternalServerError, "InternalError", fmt.Sprintf("internal error: panic: %v", v)))
	}()
	h.ServeHTTP(rec, r.WithContext(ctx))
}

// WantsStream reports whether r asks for a streamed response: a watch
// (?watch=true or a /watch/ path) or followed logs (?follow=true).
func WantsStream(r *http.Request) bool {
	q := r.URL.Query()
	isTrue := func(k string) bool { v := q.Get(k); return v == "true" || v == "1" }
	return isTrue("watch") || isTrue("follow") || strings.Contains(r.URL.Path, "/watch/")
}

// statusJSON is a minimal metav1.Status, the body kube-apiserver sends with
// every failure.
func statusJSON(code int, reason, message string) []byte {
	b, _ := json.Marshal(map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": message, "reason": reason, "code": code,
	})
	return b
}

// recorder is the http.ResponseWriter the handler sees. It buffers the body
// until the response turns into a stream (see the package comment).
type recorder struct {
	header    http.Header
	status    int // 0 until WriteHeader or the first Write
	buf       bytes.Buffer
	sink      Sink
	cancel    context.CancelFunc
	streaming bool   // open the stream as soon as the status is known
	stream    Stream // non-nil once the response is streamed
	done      bool
}

var (
	_ http.ResponseWriter = (*recorder)(nil)
	_ http.Flusher        = (*recorder)(nil)
)

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status != 0 || w.done || code < 200 {
		return // like net/http: a second WriteHeader is superfluous; 1xx are not forwarded
	}
	w.status = code
	if w.streaming {
		w.open()
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.done {
		return 0, ErrWriteAfterReturn
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.stream != nil {
		if len(p) > 0 {
			w.stream.Write(bytes.Clone(p))
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// Flush turns the response into a stream and sends what was buffered.
func (w *recorder) Flush() {
	if w.done {
		return
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.open()
}

func (w *recorder) open() {
	if w.stream != nil {
		return
	}
	w.stream = w.sink.Open(w.status, w.snapshotHeader(), w.cancel)
	if w.buf.Len() > 0 {
		w.stream.Write(bytes.Clone(w.buf.Bytes()))
		w.buf.Reset()
	}
}

func (w *recorder) finish() {
	if w.done {
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.stream != nil {
		w.stream.Close(nil)
	} else {
		w.sink.Whole(w.status, w.snapshotHeader(), w.buf.Bytes())
	}
	w.done = true
}

// snapshotHeader copies the header as it is now (later changes by the handler
// are not sent, as with net/http) and fills in Content-Type like net/http does.
func (w *recorder) snapshotHeader() http.Header {
	h := w.header.Clone()
	if _, ok := h["Content-Type"]; !ok && w.buf.Len() > 0 {
		h.Set("Content-Type", http.DetectContentType(w.buf.Bytes()))
	}
	return h
}
