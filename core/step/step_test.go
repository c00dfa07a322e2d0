package step

import (
	"context"
	"errors"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fired reports whether ch has a value now.
func fired(ch <-chan time.Time) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitFired waits (with a deadline) for ch: fake-clock AfterFuncs run in
// their own goroutines.
func waitFired(t *testing.T, ch <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not fire", what)
		return time.Time{}
	}
}

func TestClockPauses(t *testing.T) {
	base := testingclock.NewFakeClock(t0)
	c := NewClock(base)
	timer := c.NewTimer(15 * time.Second)
	tick := c.NewTicker(10 * time.Second)

	base.Step(10 * time.Second)
	if got := waitFired(t, tick.C(), "ticker"); !got.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("tick at %v", got)
	}
	c.Pause()
	base.Step(30 * time.Second) // 40s on the wrapped clock
	if got := c.Now(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("paused clock reads %v, want it frozen at +10s", got)
	}
	time.Sleep(10 * time.Millisecond) // give a wrongly armed AfterFunc time to run
	if fired(timer.C()) || fired(tick.C()) {
		t.Fatal("a timer fired while the clock was paused")
	}
	c.Resume()
	if got := c.Now(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("resumed clock reads %v, want +10s", got)
	}
	base.Step(4 * time.Second)
	time.Sleep(10 * time.Millisecond)
	if fired(timer.C()) {
		t.Fatal("timer fired at +14s, due at +15s")
	}
	base.Step(time.Second)
	if got := waitFired(t, timer.C(), "timer"); !got.Equal(t0.Add(15 * time.Second)) {
		t.Fatalf("timer fired at %v", got)
	}
	base.Step(5 * time.Second)
	if got := waitFired(t, tick.C(), "ticker"); !got.Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("second tick at %v", got)
	}
	tick.Stop()
	if timer.Reset(time.Second) {
		t.Fatal("Reset of a fired timer reported it was waiting")
	}
	if !timer.Stop() {
		t.Fatal("Stop of a reset timer reported it was not waiting")
	}
}

func TestAfterFuncWaitsForResume(t *testing.T) {
	base := testingclock.NewFakeClock(t0)
	c := NewClock(base)
	done := make(chan time.Time, 1)
	c.Pause()
	c.AfterFunc(time.Second, func() { done <- c.Now() })
	base.Step(time.Hour)
	time.Sleep(10 * time.Millisecond)
	if fired(done) {
		t.Fatal("AfterFunc ran while paused")
	}
	c.Resume()
	base.Step(time.Second)
	if got := waitFired(t, done, "AfterFunc"); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("AfterFunc saw %v", got)
	}
}

func TestGate(t *testing.T) {
	base := testingclock.NewFakeClock(t0)
	g := NewGate(NewClock(base))
	ctx := context.Background()
	if err := g.Hold(ctx, Write{Component: "x"}); err != nil {
		t.Fatalf("off: %v", err)
	}
	g.SetEnabled(true)
	if !g.Clock().Paused() {
		t.Fatal("step mode on, clock running")
	}
	results := make(chan string, 3)
	for _, name := range []string{"a", "b"} {
		go func() {
			if err := g.Hold(ctx, Write{Component: "c", Verb: "create", Name: name}); err != nil {
				results <- "error " + err.Error()
				return
			}
			results <- name
		}()
		waitFor(t, func() bool { return len(g.Status().Pending) == map[string]int{"a": 1, "b": 2}[name] })
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		err := g.Hold(cctx, Write{Name: "gives-up"})
		results <- "gave up: " + err.Error()
	}()
	waitFor(t, func() bool { return len(g.Status().Pending) == 3 })

	if p, err := g.Step(0); err != nil || p.Write.Name != "a" {
		t.Fatalf("step: %v %v", p, err)
	}
	if got := <-results; got != "a" {
		t.Fatalf("released %q", got)
	}
	if _, err := g.Step(99); !errors.Is(err, ErrNotPending) {
		t.Fatalf("step 99: %v", err)
	}
	cancel()
	waitFor(t, func() bool { return len(g.Status().Pending) == 1 })
	<-results
	if n := g.Continue(); n != 1 {
		t.Fatalf("continue released %d", n)
	}
	if got := <-results; got != "b" {
		t.Fatalf("continue released %q", got)
	}
	st := g.Status()
	if st.Enabled || st.Paused || st.Released != 2 {
		t.Fatalf("after continue: %+v", st)
	}
	if _, err := g.Step(0); !errors.Is(err, ErrNotEnabled) {
		t.Fatalf("step when off: %v", err)
	}
	changes, next, lost := g.Changes(0)
	var got []string
	for _, c := range changes {
		if c.Toggled {
			got = append(got, map[bool]string{true: "on", false: "off"}[c.Enabled])
			continue
		}
		s := "-"
		if c.Held {
			s = "+"
		}
		got = append(got, s+c.Pending.Write.Name)
	}
	want := "[on +a +b +gives-up -a -gives-up -b off]"
	if fmtList(got) != want || next != 8 || lost {
		t.Fatalf("changes %v next %d lost %v, want %s", got, next, lost, want)
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}
