//go:build js && wasm

package worker

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/wasm/bridge"
)

// apiHandler is what syumai/workers calls for each page request: it runs the
// apiserver through the bridge's recorder and hands the result to syumai's
// writer as a raw JS body.
type apiHandler struct {
	h   *host
	api http.Handler
}

func (a apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bridge.Serve(a.api, r, &jsSink{h: a.h, w: w}, a.h.reportPanic)
}

// jsSink delivers a bridge response to syumai's writer.
type jsSink struct {
	h *host
	w http.ResponseWriter
}

var _ bridge.Sink = (*jsSink)(nil)

func (s *jsSink) head(status int, header http.Header) {
	dst := s.w.Header()
	for k, vs := range header {
		dst[k] = vs
	}
	s.w.WriteHeader(status)
}

func (s *jsSink) Whole(status int, header http.Header, body []byte) {
	s.head(status, header)
	u8, err := s.h.bytes(body)
	if err == nil && !writeRawBody(s.w, u8) {
		err = fmt.Errorf("%T has no WriteRawJSBody", s.w)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubetab: response body: %v\n", err)
	}
}

func (s *jsSink) Open(status int, header http.Header, cancel context.CancelFunc) bridge.Stream {
	s.head(status, header)
	onCancel, err := s.h.callback("stream cancel", func([]safejs.Value) any {
		cancel()
		return nil
	})
	if err != nil {
		cancel()
		return failedStream{}
	}
	obj := s.h.call("newStream", onCancel.Value())
	body, err := obj.Get("stream")
	if err != nil || !writeRawBody(s.w, body) {
		fmt.Fprintf(os.Stderr, "kubetab: stream body: %v\n", err)
		onCancel.Release()
		cancel()
		return failedStream{}
	}
	// syumai/workers returns the JS Response only after the first Write (or
	// when the handler returns). Write(nil) marks the response ready; it then
	// blocks on syumai's body pipe, which nobody reads, until the handler
	// returns and syumai closes the pipe. So it gets its own goroutine.
	go s.w.Write(nil)
	return &jsStream{h: s.h, obj: obj, onCancel: onCancel}
}

// jsStream feeds a JS ReadableStream made by kubetabHost.newStream.
type jsStream struct {
	h        *host
	obj      safejs.Value
	onCancel safejs.Func
}

func (s *jsStream) Write(p []byte) {
	u8, err := s.h.bytes(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubetab: stream chunk: %v\n", err)
		return
	}
	if _, err := s.obj.Call("push", u8); err != nil {
		fmt.Fprintf(os.Stderr, "kubetab: stream chunk: %v\n", err)
	}
}

func (s *jsStream) Close(err error) {
	if err == nil {
		_, _ = s.obj.Call("close")
	} else {
		_, _ = s.obj.Call("fail", err.Error())
	}
	s.onCancel.Release()
}

// failedStream swallows a response whose JS stream could not be made.
type failedStream struct{}

func (failedStream) Write([]byte) {}
func (failedStream) Close(error)  {}
