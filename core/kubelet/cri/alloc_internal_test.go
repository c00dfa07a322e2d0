package cri

import (
	"context"
	"testing"
)

// TestYieldAllocates nothing: on js/wasm every allocation brings the next
// garbage collection, which stops the one thread, closer.
func TestYieldAllocatesNothing(t *testing.T) {
	g := newGuest(context.Background(), 0)
	if n := testing.AllocsPerRun(1000, func() { g.yield() }); n != 0 {
		t.Fatalf("yield allocates %v times", n)
	}
	g = newGuest(context.Background(), 200)
	if n := testing.AllocsPerRun(1000, func() { g.yield() }); n > 1 {
		t.Fatalf("yield with a CPU limit allocates %v times", n)
	}
}
