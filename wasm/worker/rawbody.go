//go:build js && wasm

package worker

// This is the one file in kubetab that imports syscall/js directly: the method
// syumai/workers' response writer offers for a raw JS body takes a js.Value,
// so the interface we assert has to name that type. Everything else goes
// through hack-pad/safejs, whose calls return errors instead of panicking.

import (
	"net/http"
	"syscall/js"

	"github.com/hack-pad/safejs"
)

// rawBodyWriter is implemented by syumai/workers' http.ResponseWriter. A body
// given this way becomes the JS Response's body as it is (a Uint8Array or a
// ReadableStream), bypassing syumai's io.Pipe, whose Close ends the instance.
type rawBodyWriter interface {
	WriteRawJSBody(body js.Value)
}

// writeRawBody hands body to w as a raw JS body. It reports false if w is not
// syumai's writer.
func writeRawBody(w http.ResponseWriter, body safejs.Value) bool {
	rw, ok := w.(rawBodyWriter)
	if ok {
		rw.WriteRawJSBody(safejs.Unsafe(body))
	}
	return ok
}
