//go:build js && wasm

// Package jsloop gives the JavaScript event loop one turn and comes back,
// through a MessageChannel round trip. The wasm glue installs it as the
// control plane's event-loop turn (core/eventloop.SetTurn), in the page's
// Web Worker and in the benchmarks that run under Node.
//
// Why not a timer: the Go runtime's own way back to JavaScript is a
// setTimeout, which browsers clamp to 4 ms once timers nest and Node to
// 1 ms, so a turn every 8 ms of work would leave the thread idle a third of
// the time. A message posted to oneself is delivered as soon as the event
// loop has run what was already queued (the page's messages among them):
// the turn is as short as the queue allows.
//
// Upstream counterpart: none (Kubernetes always has threads); this is the
// MessageChannel trick schedulers such as React's use to yield without a
// timer's clamp.
package jsloop

import (
	"fmt"
	"sync"

	"github.com/hack-pad/safejs"
)

// Turner posts messages to itself; each Turn waits for its own.
type Turner struct {
	port safejs.Value // the sending end
	recv safejs.Value // the receiving end
	// refs is whether recv has ref/unref (Node): a receiving port keeps
	// Node's process alive, which it must only while a turn waits.
	refs bool

	mu      sync.Mutex
	waiting []chan struct{} // one per Turn in progress, in posting order
}

// New opens the channel. It fails where there is no MessageChannel.
func New() (*Turner, error) {
	ctor, err := safejs.Global().Get("MessageChannel")
	if err != nil || ctor.IsUndefined() {
		return nil, fmt.Errorf("jsloop: no MessageChannel in this JavaScript host")
	}
	ch, err := ctor.New()
	if err != nil {
		return nil, fmt.Errorf("jsloop: new MessageChannel: %w", err)
	}
	recv, err := ch.Get("port1")
	if err != nil {
		return nil, err
	}
	send, err := ch.Get("port2")
	if err != nil {
		return nil, err
	}
	t := &Turner{port: send, recv: recv}
	onMessage, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		t.deliver()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := recv.Set("onmessage", onMessage.Value()); err != nil {
		return nil, err
	}
	// In Node an open port keeps the process alive: between turns it must
	// not, so that the process ends (and wasm_exec reports a deadlock) when
	// nothing else is pending.
	if unref, err := recv.Get("unref"); err == nil && unref.Type() == safejs.TypeFunction {
		t.refs = true
		if _, err := recv.Call("unref"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Turn posts a message to the channel and waits for it: by then the event
// loop has run what was queued before it. While it waits, other goroutines
// run; when none can, the Go runtime returns to JavaScript.
func (t *Turner) Turn() {
	done := make(chan struct{}, 1)
	t.mu.Lock()
	t.waiting = append(t.waiting, done)
	if t.refs && len(t.waiting) == 1 {
		t.recv.Call("ref")
	}
	t.mu.Unlock()
	if _, err := t.port.Call("postMessage", nil); err != nil {
		t.mu.Lock()
		for i, c := range t.waiting {
			if c == done {
				t.waiting = append(t.waiting[:i], t.waiting[i+1:]...)
				break
			}
		}
		t.unrefIfIdle()
		t.mu.Unlock()
		return
	}
	<-done
}

// deliver wakes the oldest Turn: messages arrive in posting order. It runs
// in a JavaScript callback and must not block.
func (t *Turner) deliver() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.waiting) == 0 {
		return
	}
	done := t.waiting[0]
	t.waiting = t.waiting[1:]
	t.unrefIfIdle()
	done <- struct{}{} // buffered: never blocks
}

// unrefIfIdle lets Node's process end once no turn waits; t.mu is held.
func (t *Turner) unrefIfIdle() {
	if t.refs && len(t.waiting) == 0 {
		t.recv.Call("unref")
	}
}
