// Package yield lets the scheduler's long loops hand the thread back.
//
// Natively the Go runtime preempts goroutines, and yielding would only put
// the scheduling loop behind every runnable binding goroutine, once per few
// dozen nodes: Now does nothing. In a browser tab (GOOS=js) the Go program
// is single-threaded and is never preempted: a loop that filters 5,000 nodes
// for 1,000 pods would freeze the informers, the API server and the page
// until it ends. So the scheduler calls Now between pods and Maybe inside
// per-node loops, and there Now lets other goroutines run and, once the
// thread has been held for eventloop.Slice, gives the JavaScript event loop
// a turn (package core/eventloop).
package yield

import (
	"runtime"

	"github.com/kubetab/kubetab/core/eventloop"
)

// Every is how many iterations of a per-node loop pass between yields.
const Every = 64

// Maybe yields on every Every-th iteration; pass the loop index.
func Maybe(i int) {
	if i%Every == Every-1 {
		Now()
	}
}

// Now yields to other goroutines and, when one is due, to the event loop;
// natively it does nothing.
func Now() {
	if !eventloop.Enabled() {
		return
	}
	runtime.Gosched()
	eventloop.MaybeTurn()
}
