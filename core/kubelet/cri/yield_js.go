//go:build js

package cri

import "time"

// defaultYield gives the JavaScript event loop a turn: with every goroutine
// asleep, the Go runtime returns to JavaScript until its timer fires
// (runtime.beforeIdle schedules a setTimeout of at least 1 ms). A shorter
// sleep would often find its timer already due and never leave Go.
func defaultYield() func() {
	return func() { time.Sleep(time.Millisecond) }
}
