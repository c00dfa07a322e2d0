//go:build js && wasm

package scheduler

import (
	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/wasm/jsloop"
)

// Under Node the scheduler hands the thread to the event loop the way it
// does in the page: through the glue's MessageChannel turn (wasm/jsloop),
// not the 1 ms timer core/eventloop falls back to. Only this test file
// reaches into wasm/; the package itself stays free of syscall/js.
func init() {
	if t, err := jsloop.New(); err == nil {
		eventloop.SetTurn(t.Turn)
	}
}
