package nodelifecycle

import (
	"testing"
	"time"
)

func TestRateLimitedTimedQueue(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	now := t0
	clk := func() time.Time { return now }
	q := NewRateLimitedTimedQueue(0.1) // one node every 10 s, burst 1
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		if !q.Add(n, "uid-"+n, now) {
			t.Fatalf("Add(%s) = false", n)
		}
	}
	if q.Add("node-a", "uid", now) {
		t.Error("a queued node was added twice")
	}
	var tried []string
	ok := func(v TimedValue) (bool, time.Duration) { tried = append(tried, v.Value); return true, 0 }

	if next := q.Try(clk, ok); len(tried) != 1 || tried[0] != "node-a" || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("first Try: tried %v, next %v; want node-a, then 10 s later", tried, next.Sub(t0))
	}
	now = t0.Add(5 * time.Second)
	if next := q.Try(clk, ok); len(tried) != 1 || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("Try before the token: tried %v, next %v", tried, next.Sub(t0))
	}
	now = t0.Add(10 * time.Second)
	q.Try(clk, func(v TimedValue) (bool, time.Duration) {
		tried = append(tried, v.Value)
		return false, 30 * time.Second
	})
	if len(tried) != 2 || tried[1] != "node-b" {
		t.Fatalf("tried %v, want node-b second", tried)
	}
	// node-b failed and waits 30 s; node-c is next, at the next token.
	now = t0.Add(20 * time.Second)
	q.Try(clk, ok)
	if len(tried) != 3 || tried[2] != "node-c" {
		t.Fatalf("tried %v, want node-c third", tried)
	}
	if q.Len() != 1 {
		t.Fatalf("Len = %d, want node-b left", q.Len())
	}
	// Stopped: nothing goes through, and no next time is reported.
	q.SwapLimiter(0, now)
	now = t0.Add(time.Hour)
	if next := q.Try(clk, ok); !next.IsZero() || len(tried) != 3 {
		t.Errorf("stopped queue: next %v, tried %v", next, tried)
	}
	if !q.Remove("node-b") || q.Remove("node-b") || q.Len() != 0 {
		t.Error("Remove")
	}
}
