//go:build js && wasm

package jsloop

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hack-pad/safejs"
)

// TestTurnRunsJavaScript shows that a turn reaches the event loop: a
// goroutine that never blocks, only takes turns, still lets a JavaScript
// setTimeout callback run, which runtime.Gosched alone never does.
func TestTurnRunsJavaScript(t *testing.T) {
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Bool
	cb, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		ran.Store(true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Release()
	if _, err := safejs.Global().Call("setTimeout", cb.Value(), 0); err != nil {
		t.Fatal(err)
	}
	for turns := 1; !ran.Load(); turns++ {
		if turns > 10000 {
			t.Fatal("a setTimeout(0) callback did not run in 10,000 turns")
		}
		tr.Turn()
	}
}

// TestConcurrentTurns: every waiting Turn returns.
func TestConcurrentTurns(t *testing.T) {
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				tr.Turn()
			}
		}()
	}
	wg.Wait()
	if n := len(tr.waiting); n != 0 {
		t.Fatalf("%d turns still waiting", n)
	}
}

// TestTurnAlone: a turn returns when nothing else in the program could wake
// it (no timer, no other goroutine). In Node an unreferenced port would let
// the process end mid-turn, reported as a deadlock.
func TestTurnAlone(t *testing.T) {
	tr, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		tr.Turn()
	}
}
