//go:build js && wasm

package worker

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/hack-pad/safejs"
)

// host is the JS side of the worker as Go sees it: globalThis.kubetabHost,
// defined by site/src/worker.js before the Go program starts. Its methods:
//
//	newStream(onCancel) → {stream, push(u8), close(), fail(message)}
//	output(id, fd, u8)             a command wrote bytes to fd 1 or 2
//	exit(id, code)                 a command finished
//	imageAdded(id, ref)            addImage listed the module as ref
//	imageError(id, message)        addImage refused it; message is the Go error
//	panic(where, message, stack)   Go recovered a panic; the page shows it
type host struct {
	obj        safejs.Value
	uint8Array safejs.Value
}

func newHost() (*host, error) {
	obj, err := safejs.Global().Get("kubetabHost")
	if err != nil || obj.IsUndefined() {
		return nil, errors.New("globalThis.kubetabHost is not defined: load the wasm from site/src/worker.js")
	}
	u8, err := safejs.Global().Get("Uint8Array")
	if err != nil {
		return nil, fmt.Errorf("Uint8Array: %w", err)
	}
	return &host{obj: obj, uint8Array: u8}, nil
}

// call calls a host method. A failure here has nowhere better to go than the
// worker's console.
func (h *host) call(method string, args ...any) safejs.Value {
	v, err := h.obj.Call(method, args...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubetab: kubetabHost.%s: %v\n", method, err)
	}
	return v
}

// bytes copies p into a new JS Uint8Array.
func (h *host) bytes(p []byte) (safejs.Value, error) {
	u8, err := h.uint8Array.New(len(p))
	if err != nil {
		return safejs.Undefined(), err
	}
	if _, err := safejs.CopyBytesToJS(u8, p); err != nil {
		return safejs.Undefined(), err
	}
	return u8, nil
}

// reportPanic tells the page about a recovered panic, the way tsconnect's
// notifyPanicRecover does: the learner sees it instead of a silent hang.
func (h *host) reportPanic(where string, v any, stack []byte) {
	fmt.Fprintf(os.Stderr, "kubetab: panic in %s: %v\n%s", where, v, stack)
	h.call("panic", where, fmt.Sprint(v), string(stack))
}

// recoverTo is deferred by every goroutine and callback that JS starts.
func (h *host) recoverTo(where string) {
	if v := recover(); v != nil {
		h.reportPanic(where, v, debug.Stack())
	}
}

// callback wraps fn as a JS function that recovers (and reports) panics. JS
// must not keep calling it after Release.
func (h *host) callback(where string, fn func(args []safejs.Value) any) (safejs.Func, error) {
	return safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) (ret any) {
		defer h.recoverTo(where)
		return fn(args)
	})
}
