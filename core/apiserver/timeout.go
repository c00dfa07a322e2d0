package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Request timeouts
//
// Like kube-apiserver (k8s.io/apiserver/pkg/server/filters/timeout.go and
// endpoints/filters/request_deadline.go), a request that is not long-running
// gets a deadline: Config.RequestTimeout, or the client's ?timeout= when that
// is shorter (kubectl --request-timeout sends it). The handler runs with that
// deadline on its context and writes into a buffer; if it has not finished by
// then the client gets 504 "Timeout: request did not complete within the
// allotted timeout" and whatever the handler writes later is dropped.
// Watches and pods/log stream for as long as they like.

// invalidTimeoutInURL is upstream's wording for an unparsable ?timeout=.
const invalidTimeoutInURL = "invalid timeout specified in the request URL"

// withTimeout runs h under the request deadline.
func (s *Server) withTimeout(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if s.cfg.RequestTimeout < 0 || longRunning(r) {
		h(w, r)
		return
	}
	timeout := s.cfg.RequestTimeout
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutInURL, err.Error())))
			return
		}
		// 0 means "no timeout of my own"; more than the server's is capped.
		if d > 0 && d < timeout {
			timeout = d
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	tw := &timeoutWriter{header: http.Header{}}
	done := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				panicked <- p // http.ErrAbortHandler: re-panicked below, on the server's goroutine
				return
			}
			close(done)
		}()
		h(tw, r.WithContext(ctx))
	}()
	select {
	case p := <-panicked:
		panic(p)
	case <-done:
		tw.mu.Lock()
		defer tw.mu.Unlock()
		dst := w.Header()
		for k, v := range tw.header {
			dst[k] = v
		}
		if tw.code == 0 {
			tw.code = http.StatusOK
		}
		w.WriteHeader(tw.code)
		_, _ = w.Write(tw.buf.Bytes())
	case <-ctx.Done():
		tw.mu.Lock()
		defer tw.mu.Unlock()
		tw.timedOut = true
		if r.Context().Err() != nil {
			return // the client went away; nobody to answer
		}
		writeError(w, r, apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0))
	}
}

// longRunning reports whether a request streams (upstream's
// BasicLongRunningRequestCheck: the watch verb, and the log, exec, attach,
// portforward and proxy subresources).
func longRunning(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false
	}
	info, _, err := parseRequest(r)
	if err != nil {
		return false
	}
	switch info.Subresource {
	case "log", "exec", "attach", "portforward", "proxy":
		return true
	}
	return info.Verb == "watch"
}

// timeoutWriter buffers a response until the handler finishes; after a
// timeout it refuses writes.
type timeoutWriter struct {
	mu       sync.Mutex
	header   http.Header
	buf      bytes.Buffer
	code     int
	timedOut bool
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if tw.code == 0 {
		tw.code = http.StatusOK
	}
	return tw.buf.Write(p)
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.code != 0 {
		return
	}
	tw.code = code
}
