package registry

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/store"
)

// The compactor compacts, at each tick, to the revision of the previous
// tick, on the injected clock; two API servers sharing a store compact once
// per tick between them.
func TestCompactorEveryInterval(t *testing.T) {
	kv := store.New(store.Config{})
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &Compactor{Store: kv, Clock: clk}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	other := &Compactor{Store: kv} // a second API server, ticked by hand

	write := func() int64 {
		t.Helper()
		if _, err := kv.Txn(store.TxnRequest{Then: []store.Op{store.OpPut("/registry/configmaps/default/a", []byte(time.Now().String()))}}); err != nil {
			t.Fatal(err)
		}
		return kv.Revision()
	}
	tick := func() {
		t.Helper()
		before := kv.Revision()
		deadline := time.Now().Add(10 * time.Second)
		for !clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("the compactor never waited on the clock")
			}
			time.Sleep(time.Millisecond)
		}
		clk.Step(DefaultCompactionInterval)
		for kv.Revision() == before { // the tick writes compact_rev_key
			if time.Now().After(deadline) {
				t.Fatal("no tick")
			}
			time.Sleep(time.Millisecond)
		}
	}
	r1 := write()
	clk.Step(DefaultCompactionInterval - time.Second)
	if got := kv.CompactedRevision(); got != 1 {
		t.Fatalf("compacted before the interval: %d", got)
	}
	tick() // tick 1: records the revision, compacts nothing
	seen1 := kv.Revision()
	if got := kv.CompactedRevision(); got != 1 {
		t.Fatalf("the first tick compacted to %d", got)
	}
	write()
	tick() // tick 2: compacts to what tick 1 saw
	if got := kv.CompactedRevision(); got != seen1 {
		t.Fatalf("after the second tick compacted = %d, want %d (tick 1's revision)", got, seen1)
	}
	if _, err := kv.GetAt("/registry/configmaps/default/a", r1); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("read at the old revision: %v", err)
	}
	got, err := kv.Get(CompactRevKey)
	if err != nil || string(got.Value) != strconv.FormatInt(seen1, 10) {
		t.Fatalf("compact_rev_key = %q, %v; want %d", got.Value, err, seen1)
	}
	// A second API server finds the tick taken: it adopts the time and
	// compacts nothing.
	before := kv.CompactedRevision()
	if err := other.Tick(); err != nil {
		t.Fatal(err)
	}
	if kv.CompactedRevision() != before || other.version != 2 {
		t.Fatalf("the other server compacted (%d -> %d) or did not adopt the time (%d)", before, kv.CompactedRevision(), other.version)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
