//go:build js

package yield

import (
	"runtime"
	"sync/atomic"
	"time"
)

// slice is how long the scheduler may keep the thread before it lets the
// JavaScript event loop run (messages from the page, timers).
const slice = 10 * time.Millisecond

// last is when the event loop last had a turn (UnixNano).
var last atomic.Int64

// Now lets other goroutines run (runtime.Gosched). runtime.Gosched alone never
// returns to the JS event loop: it only switches goroutines. So once the
// thread has been held for a time slice, Now sleeps for a millisecond: with
// every goroutine asleep, the Go runtime returns to JS until a timer fires.
// The wasm glue can do better with a MessageChannel turn; core/ does not
// import syscall/js.
func Now() {
	runtime.Gosched()
	now := time.Now().UnixNano()
	if now-last.Load() < int64(slice) {
		return
	}
	time.Sleep(time.Millisecond)
	last.Store(time.Now().UnixNano())
}
