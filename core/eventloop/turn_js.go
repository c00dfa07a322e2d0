//go:build js

package eventloop

import "time"

// defaultTurn sleeps: with every goroutine asleep the Go runtime returns to
// JavaScript until its timer fires (runtime.beforeIdle schedules a
// setTimeout of at least 1 ms). A shorter sleep would often find its timer
// already due and never leave Go.
func defaultTurn() func() {
	return func() { time.Sleep(time.Millisecond) }
}
