package kubectl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// InProcessTransport returns a RoundTripper that serves each request by
// calling h directly, in a new goroutine, with no socket: the browser build
// (GOOS=js) uses it to let the console's kubectl talk to the apiserver in the
// same Web Worker.
//
// The response is streamed. RoundTrip returns as soon as the handler has
// written its header (or its first bytes, or returned), and the body is the
// read end of a pipe the handler writes into; Flush is a no-op because every
// write already reaches the reader. So a watch or `logs -f` delivers each
// event as the handler writes it:
//
//	kubectl goroutine              handler goroutine
//	RoundTrip(req) ──────────────▶ h.ServeHTTP(w, r)
//	    ◀── header ready ───────── w.WriteHeader(200)
//	resp.Body.Read ◀── io.Pipe ─── w.Write(event); w.Flush()
//	resp.Body.Close ─ cancel ────▶ r.Context() done: the handler returns
//
// Cancelling the request's context (or closing the body) cancels the
// handler's request context and makes body reads fail with the context's
// error. A panicking handler yields a 500 (or a broken body if the response
// had started) instead of crashing the program.
func InProcessTransport(h http.Handler) http.RoundTripper {
	return inProcess{h: h}
}

type inProcess struct{ h http.Handler }

var _ http.RoundTripper = inProcess{}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:0" // in process
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	if sreq.Proto == "" {
		sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	}

	pr, pw := io.Pipe()
	w := &pipeResponseWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })

	go func() {
		defer cancel()
		defer stop()
		defer func() {
			if req.Body != nil {
				req.Body.Close()
			}
		}()
		defer func() {
			if p := recover(); p != nil {
				if !w.started() {
					w.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = fmt.Fprintf(pw, "handler panic: %v\n", p)
					pw.Close()
					return
				}
				pw.CloseWithError(fmt.Errorf("kubectl: handler panic: %v", p))
			}
		}()
		t.h.ServeHTTP(w, sreq)
		w.WriteHeader(http.StatusOK) // no-op if already written
		pw.Close()
	}()

	select {
	case <-w.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponseWriter is the handler's side: it records the header and
// forwards the body into the pipe.
type pipeResponseWriter struct {
	header http.Header
	pw     *io.PipeWriter

	once  sync.Once
	ready chan struct{} // closed once code and sent are set
	code  int
	sent  http.Header // the header as of WriteHeader
}

var _ http.Flusher = (*pipeResponseWriter)(nil)

func (w *pipeResponseWriter) Header() http.Header { return w.header }

func (w *pipeResponseWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush sends the header if needed; written bytes are already with the reader.
func (w *pipeResponseWriter) Flush() { w.WriteHeader(http.StatusOK) }

func (w *pipeResponseWriter) started() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// pipeBody is the response body: closing it stops the handler.
type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.cancel()
	return b.pr.Close()
}
