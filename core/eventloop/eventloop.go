// Package eventloop is how long-running work in the control plane hands the
// thread back to the host's event loop.
//
// In a browser tab kubetab runs in a Web Worker as one WebAssembly thread.
// The Go runtime switches goroutines on that thread, but it returns to
// JavaScript only when every goroutine is blocked; until then the worker
// cannot receive the page's messages (API requests, console lines) or run
// JavaScript timers. Code that may keep the thread busy for long (the
// scheduler's loops over nodes, a guest container's instructions) calls
// MaybeTurn often: once the thread has been held for Slice, it takes one
// turn of the event loop.
//
// Natively there is no event loop to serve (goroutines are preempted and run
// on several threads) and a turn does nothing.
//
// Upstream counterpart: none; upstream Kubernetes always has threads. The
// closest relative is runtime.Gosched, which yields to other goroutines but
// never to JavaScript.
package eventloop

import (
	"sync/atomic"
	"time"
)

// Slice is how long the thread may be held before the event loop gets a
// turn: the page's messages wait at most about this long.
const Slice = 8 * time.Millisecond

var (
	// turn is the host's turn; nil natively.
	turn atomic.Pointer[func()]
	// last is when the event loop last had a turn, in mono time.
	last atomic.Int64
)

func init() {
	if f := defaultTurn(); f != nil {
		turn.Store(&f)
	}
}

// SetTurn sets the function that gives the host's event loop one turn and
// returns after it. On js the default sleeps a millisecond: with every
// goroutine asleep the Go runtime returns to JavaScript until its timer
// fires. That costs a timer's clamp per turn (1 ms in Node, 4 ms for nested
// timers in browsers), so the wasm glue sets a MessageChannel round trip,
// which costs a few microseconds (see wasm/worker). nil restores the default.
func SetTurn(f func()) {
	if f == nil {
		f = defaultTurn()
		if f == nil {
			turn.Store(nil)
			return
		}
	}
	turn.Store(&f)
}

// Enabled reports whether there is an event loop to serve (on js).
func Enabled() bool { return turn.Load() != nil }

// Due reports whether the thread has been held for Slice since the last turn.
func Due() bool {
	return turn.Load() != nil && mono()-time.Duration(last.Load()) >= Slice
}

// MaybeTurn takes a turn of the event loop if one is due.
func MaybeTurn() {
	if Due() {
		Turn()
	}
}

// Turn gives the event loop one turn now (nothing natively).
func Turn() {
	f := turn.Load()
	if f == nil {
		return
	}
	(*f)()
	last.Store(int64(mono()))
}

var start = time.Now()

// mono is the process's monotonic time: a turn is about real time, not the
// cluster's injected clock.
func mono() time.Duration { return time.Since(start) }
