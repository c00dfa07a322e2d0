// Package step is step mode: it pauses the control plane at the API server
// and lets the learner release it one write at a time.
//
// Every component of a cluster (the controllers, the scheduler, the
// kubelets) changes the cluster only by asking the API server to write, so
// holding those writes there pauses all of them consistently. While step
// mode is on:
//
//	deployment-controller ──create replicasets──▶ kube-apiserver ─┐
//	                                                   (held) Gate │ Step ▶ released: stored in etcd,
//	replicaset-controller ──create pods─────────▶ kube-apiserver ─┤        watchers notified, the
//	                                                   (held)      │        next write follows
//	kubelet/node-1 ──update pods/status─────────▶ kube-apiserver ─┘
//
// and the cluster's Clock stands still, so nothing moves on a timer either:
// no lease renewals, no node status heartbeats, no probe periods, no
// backoffs, no guest sleeps. Step releases one held write (the oldest, or
// a named one); Continue releases all of them and turns step mode off. The
// learner's own requests (kubectl over HTTP) are never held: a learner can
// look around (and even write) while the cluster is paused.
//
// Upstream counterpart: none. A real control plane cannot be paused; the
// nearest things are a debugger's breakpoints and the API server's
// admission webhooks, which see every write before it is stored (a webhook
// that waited for a person would be a step mode, badly). It is possible
// here because every component's write passes one Go function, and every
// component's time is one injected clock.
package step

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Write describes a write the API server was asked for.
type Write struct {
	// Component is the writer, as its client names itself
	// ("replicaset-controller", "kubelet/node-1").
	Component string
	// Verb is create, update, patch or delete.
	Verb string
	// Resource is plural with its group and any subresource
	// ("pods", "deployments.apps", "pods/binding", "pods/status").
	Resource  string
	Namespace string
	Name      string
}

// Pending is a held write.
type Pending struct {
	ID    uint64 // from 1, in the order the writes were held
	Write Write
	Since time.Time // the cluster's clock when it was held
}

// Change is one change of the set of held writes: Held or not (released,
// or its caller gave up); or, with Toggled, step mode turned on or off
// (Enabled; Pending is empty), so that a watch of the StepMode sees it.
type Change struct {
	Seq     uint64 // from 1
	Held    bool
	Pending Pending
	Toggled bool
	Enabled bool
}

// Errors of Step.
var (
	ErrNotEnabled = errors.New("step mode is off")
	ErrNoPending  = errors.New("no write is waiting")
	ErrNotPending = errors.New("no such write is waiting")
)

// changeLogSize bounds the log of changes a watch replays from.
const changeLogSize = 4096

// Gate holds the components' writes while step mode is on. It is safe for
// concurrent use. A nil *Gate holds nothing.
type Gate struct {
	clock *Clock // paused while on; may be nil

	// mu guards the fields below; lock order: Gate.mu, then Clock.mu.
	// Nobody waits with mu held: a held write
	// waits on its own channel.
	mu       sync.Mutex
	enabled  bool
	nextID   uint64
	pending  []*held // oldest first
	released uint64
	seq      uint64   // Seq of the last change
	log      []Change // the last changeLogSize changes, oldest first
	wake     chan struct{}
}

type held struct {
	p       Pending
	release chan struct{} // closed when released
}

// NewGate returns a Gate (step mode off) that pauses clk while on; clk may
// be nil.
func NewGate(clk *Clock) *Gate { return &Gate{clock: clk} }

// Clock is the clock the Gate pauses (nil if none).
func (g *Gate) Clock() *Clock {
	if g == nil {
		return nil
	}
	return g.clock
}

// now is the cluster's time (c.mu of the Clock is taken; g.mu may be held).
func (g *Gate) now() time.Time {
	if g.clock == nil {
		return time.Now()
	}
	return g.clock.Now()
}

// Enabled reports whether step mode is on.
func (g *Gate) Enabled() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.enabled
}

// SetEnabled turns step mode on (pausing the clock) or off (releasing every
// held write and letting the clock run).
func (g *Gate) SetEnabled(on bool) {
	if !on {
		g.Continue()
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.enabled {
		return
	}
	g.enabled = true
	if g.clock != nil {
		g.clock.Pause()
	}
	g.toggledLocked()
}

// Hold is called by the API server before it performs w. While step mode is
// off it returns nil at once; while on it waits until the write is released
// (nil) or ctx ends (ctx's error: the write must not happen). The caller
// must hold no lock.
func (g *Gate) Hold(ctx context.Context, w Write) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	if !g.enabled {
		g.mu.Unlock()
		return nil
	}
	g.nextID++
	h := &held{p: Pending{ID: g.nextID, Write: w, Since: g.now()}, release: make(chan struct{})}
	g.pending = append(g.pending, h)
	g.changedLocked(true, h.p)
	g.mu.Unlock()

	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-h.release:
			return nil // released while ctx ended: the write goes ahead
		default:
		}
		g.removeLocked(h)
		g.changedLocked(false, h.p)
		return ctx.Err()
	}
}

func (g *Gate) removeLocked(h *held) {
	for i, x := range g.pending {
		if x == h {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}

func (g *Gate) changedLocked(isHeld bool, p Pending) {
	g.logLocked(Change{Held: isHeld, Pending: p})
}

// toggledLocked records that step mode turned on or off.
func (g *Gate) toggledLocked() {
	g.logLocked(Change{Toggled: true, Enabled: g.enabled})
}

func (g *Gate) logLocked(c Change) {
	g.seq++
	c.Seq = g.seq
	g.log = append(g.log, c)
	if len(g.log) > changeLogSize {
		g.log = append(g.log[:0], g.log[len(g.log)-changeLogSize:]...)
	}
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}

// releaseLocked lets one held write go ahead.
func (g *Gate) releaseLocked(h *held) {
	g.removeLocked(h)
	close(h.release)
	g.released++
	g.changedLocked(false, h.p)
}

// Step releases one held write: the one with id, or the oldest if id is 0.
// The clock stays paused. It returns the released write.
func (g *Gate) Step(id uint64) (Pending, error) {
	if g == nil {
		return Pending{}, ErrNotEnabled
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.enabled {
		return Pending{}, ErrNotEnabled
	}
	if len(g.pending) == 0 {
		return Pending{}, ErrNoPending
	}
	h := g.pending[0]
	if id != 0 {
		h = nil
		for _, x := range g.pending {
			if x.p.ID == id {
				h = x
			}
		}
		if h == nil {
			return Pending{}, ErrNotPending
		}
	}
	g.releaseLocked(h)
	return h.p, nil
}

// Continue releases every held write, turns step mode off and lets the
// clock run. It returns how many writes it released.
func (g *Gate) Continue() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.pending)
	for len(g.pending) > 0 {
		g.releaseLocked(g.pending[0])
	}
	if g.enabled {
		g.enabled = false
		if g.clock != nil {
			g.clock.Resume()
		}
		g.toggledLocked()
	}
	return n
}

// Status is a summary of the Gate.
type Status struct {
	Enabled  bool
	Pending  []Pending // oldest first
	Released uint64    // writes released since the Gate was made
	Seq      uint64    // the last change's Seq
	Paused   bool      // the clock stands still
	Now      time.Time // the cluster's time
}

// Status returns the Gate's state.
func (g *Gate) Status() Status {
	if g == nil {
		return Status{Now: time.Now()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	st := Status{Enabled: g.enabled, Released: g.released, Seq: g.seq, Now: g.now()}
	for _, h := range g.pending {
		st.Pending = append(st.Pending, h.p)
	}
	if g.clock != nil {
		st.Paused = g.clock.Paused()
	}
	return st
}

// Changes returns the changes after seq, oldest first, and the Seq to pass
// next time. lost is true when changes after seq are no longer kept (the
// reader must start again from Status).
func (g *Gate) Changes(seq uint64) (changes []Change, next uint64, lost bool) {
	if g == nil {
		return nil, seq, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if seq > g.seq {
		return nil, g.seq, false
	}
	first := g.seq - uint64(len(g.log)) + 1 // Seq of g.log[0]
	if seq+1 < first {
		return nil, g.seq, true
	}
	changes = append(changes, g.log[seq+1-first:]...)
	return changes, g.seq, false
}

// Wait returns a channel closed when a change after seq happens (at once if
// there is one).
func (g *Gate) Wait(seq uint64) <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seq > seq {
		c := make(chan struct{})
		close(c)
		return c
	}
	if g.wake == nil {
		g.wake = make(chan struct{})
	}
	return g.wake
}
