package step

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Clock is a clock that can stand still. It wraps another clock (the real
// one, or a fake one in tests) and runs with it, except while paused: then
// Now does not move and no timer, ticker or AfterFunc fires. On Resume the
// time goes on from where it stopped, so the cluster's time falls behind the
// wrapped clock by every pause:
//
//	wrapped:  0s ──── 10s ════ pause ════ 40s ──── 50s
//	Clock:    0s ──── 10s ──── (10s) ──── 10s ──── 20s
//	timer due at 15s: fires at wrapped 45s, when the Clock reads 15s
//
// Jumping forward on Resume instead would fire every timer that fell due
// during the pause at once, and expire every node lease, which is exactly
// what a pause must not do.
//
// The zero value is not usable; use NewClock.
type Clock struct {
	base clock.WithTickerAndDelayedExecution

	// mu guards the fields below and every timer's fields.
	mu       sync.Mutex
	paused   bool
	pausedAt time.Time     // the wrapped clock when the pause began
	behind   time.Duration // total length of the earlier pauses
	timers   map[*timer]struct{}
}

var _ clock.WithTickerAndDelayedExecution = (*Clock)(nil)

// NewClock returns a running Clock over base (the real clock if nil).
func NewClock(base clock.WithTickerAndDelayedExecution) *Clock {
	if base == nil {
		base = clock.RealClock{}
	}
	return &Clock{base: base, timers: map[*timer]struct{}{}}
}

// nowLocked is the Clock's time; c.mu is held.
func (c *Clock) nowLocked() time.Time {
	if c.paused {
		return c.pausedAt.Add(-c.behind)
	}
	return c.base.Now().Add(-c.behind)
}

// Now returns the Clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

// Since returns the time elapsed on the Clock since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until returns the time on the Clock until t.
func (c *Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Paused reports whether the Clock stands still.
func (c *Clock) Paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// Pause stops the Clock; it does nothing if the Clock is paused already.
func (c *Clock) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return
	}
	c.pausedAt = c.base.Now()
	c.paused = true
	for t := range c.timers {
		t.disarmLocked()
	}
}

// Resume lets the Clock run again; every timer goes on with the time it had
// left when the pause began.
func (c *Clock) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return
	}
	c.behind += c.base.Now().Sub(c.pausedAt)
	c.paused = false
	for t := range c.timers {
		t.armLocked()
	}
}

// timer is a Timer, a Ticker or an AfterFunc on the Clock. It is armed on
// the wrapped clock (an AfterFunc for the time left) only while the Clock
// runs.
type timer struct {
	c      *Clock
	ch     chan time.Time
	fn     func()        // AfterFunc's function, instead of ch
	period time.Duration // a ticker's period; 0 for a timer
	due    time.Time     // on the Clock
	under  clock.Timer   // the wrapped clock's timer while armed
	gen    uint64        // which arming a wrapped timer belongs to
}

func (c *Clock) newTimer(d time.Duration, period time.Duration, fn func()) *timer {
	t := &timer{c: c, fn: fn, period: period}
	if fn == nil {
		t.ch = make(chan time.Time, 1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.startLocked(d)
	return t
}

// startLocked sets the timer to fire after d on the Clock.
func (t *timer) startLocked(d time.Duration) {
	t.due = t.c.nowLocked().Add(d)
	t.c.timers[t] = struct{}{}
	if !t.c.paused {
		t.armLocked()
	}
}

func (t *timer) armLocked() {
	t.disarmLocked()
	gen := t.gen
	left := t.due.Sub(t.c.nowLocked())
	// The wrapped clock may run the function with its own lock held (the
	// fake clock does), and fire takes c.mu: hand it to a goroutine.
	t.under = t.c.base.AfterFunc(max(left, 0), func() { go t.fire(gen) })
}

func (t *timer) disarmLocked() {
	if t.under != nil {
		t.under.Stop()
		t.under = nil
	}
	t.gen++
}

// fire runs when the wrapped timer of arming gen fires.
func (t *timer) fire(gen uint64) {
	c := t.c
	c.mu.Lock()
	if gen != t.gen || c.paused {
		c.mu.Unlock() // stopped, reset or paused since: not this firing
		return
	}
	t.under = nil
	now := c.nowLocked()
	if now.Before(t.due) {
		t.armLocked() // the wrapped clock ran ahead of the Clock's time
		c.mu.Unlock()
		return
	}
	if t.period > 0 {
		t.due = t.due.Add(t.period)
		if !t.due.After(now) {
			t.due = now.Add(t.period) // a slow reader: skip ticks, as time.Ticker does
		}
		t.armLocked()
	} else {
		delete(c.timers, t)
	}
	c.mu.Unlock()
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- now:
	default: // a tick nobody read yet: drop this one, as time.Ticker does
	}
}

// stop stops the timer; it reports whether it was still waiting.
func (t *timer) stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, waiting := t.c.timers[t]
	delete(t.c.timers, t)
	t.disarmLocked()
	return waiting
}

// C returns the channel the timer fires on.
func (t *timer) C() <-chan time.Time { return t.ch }

// Stop stops the timer or ticker.
func (t *timer) Stop() bool { return t.stop() }

// Reset makes the timer fire after d; it reports whether it was waiting.
func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, waiting := t.c.timers[t]
	t.disarmLocked()
	t.startLocked(d)
	return waiting
}

// NewTimer returns a Timer that fires after d on the Clock.
func (c *Clock) NewTimer(d time.Duration) clock.Timer { return c.newTimer(d, 0, nil) }

// After returns a channel that receives the Clock's time after d.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// AfterFunc runs f in its own goroutine after d on the Clock.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer { return c.newTimer(d, 0, f) }

// NewTicker returns a Ticker that ticks every d on the Clock.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("step: non-positive interval for NewTicker")
	}
	return ticker{c.newTimer(d, d, nil)}
}

// ticker is a periodic timer; clock.Ticker's Stop returns nothing.
type ticker struct{ t *timer }

func (k ticker) C() <-chan time.Time { return k.t.ch }
func (k ticker) Stop()               { k.t.stop() }

// Tick is NewTicker(d).C(); the ticker cannot be stopped.
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return c.NewTicker(d).C()
}

// Sleep blocks for d on the Clock (longer, if it is paused meanwhile).
func (c *Clock) Sleep(d time.Duration) { <-c.After(d) }
