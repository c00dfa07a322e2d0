package client

import (
	"context"
	"testing"
)

// A queue joins the Work of its first Get's context; Work is idle only when
// every joined queue is empty with nothing in process.
func TestWorkIdle(t *testing.T) {
	var w Work
	ctx := WithWork(context.Background(), &w)
	q := NewQueue[string](nil)
	other := NewQueue[string](nil) // its Get never sees w
	other.Add("elsewhere")
	q.Add("a")
	q.Add("b")
	if !w.Idle() || w.Queues() != 0 {
		t.Fatalf("before any Get: Idle=%v Queues=%d, want true 0 (no queue has joined)", w.Idle(), w.Queues())
	}
	item, ok := q.Get(ctx)
	if !ok || item != "a" {
		t.Fatalf("Get = %q %v, want a true", item, ok)
	}
	if w.Queues() != 1 {
		t.Fatalf("Queues = %d after the first Get, want 1", w.Queues())
	}
	if w.Idle() {
		t.Fatal("Idle with b waiting and a in process")
	}
	q.Done(item)
	item, _ = q.Get(ctx)
	if w.Idle() {
		t.Fatal("Idle with b in process")
	}
	q.Add(item) // added while in process: queued again at Done
	q.Done(item)
	if w.Idle() {
		t.Fatal("Idle with b queued again by Done")
	}
	item, _ = q.Get(ctx)
	q.Done(item)
	if !w.Idle() {
		t.Fatal("not Idle with the queue empty and nothing in process")
	}
	if _, ok := other.Get(context.Background()); !ok || w.Queues() != 1 {
		t.Fatalf("a queue whose Get has no Work joined w (Queues=%d)", w.Queues())
	}
}
