package tainteviction

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
)

// timedWork is one scheduled eviction.
type timedWork struct {
	id        uint64
	createdAt time.Time // when the pod's toleration period started
	fireAt    time.Time
	timer     clock.Timer // nil when it was due at once
}

// fired names the eviction a timer fired: the pod key and the work's id,
// so that a work cancelled (or replaced) after its timer fired is not run.
type fired struct {
	key string
	id  uint64
}

// timedWorkQueue schedules pod evictions on a clock (upstream:
// TimedWorkerQueue in timed_workers.go). A key maps to
//
//	a *timedWork  an eviction is scheduled;
//	nil           the eviction ran: the key stays so that the pod, now
//	              terminating, is not evicted again, until CancelWork;
//	(absent)      nothing is scheduled.
//
// A timer only puts the work on the due queue (timer callbacks of a fake
// clock run under the clock's lock, so they must not do more); the
// controller's executor takes it from there.
type timedWorkQueue struct {
	clock clock.WithDelayedExecution
	due   *client.Queue[fired]

	// mu guards works and nextID. Lock order: mu before the clock's lock
	// (timer.Stop under mu); timer callbacks take only the due queue's.
	mu     sync.Mutex
	works  map[string]*timedWork
	nextID uint64
}

func newTimedWorkQueue(clk clock.WithDelayedExecution) *timedWorkQueue {
	return &timedWorkQueue{clock: clk, due: client.NewQueue[fired](clk), works: map[string]*timedWork{}}
}

// AddWork schedules the eviction of key at fireAt, its toleration having
// started at createdAt. A key that has a work (or whose work ran) is left
// alone.
func (q *timedWorkQueue) AddWork(key string, createdAt, fireAt time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, exists := q.works[key]; exists {
		return
	}
	q.nextID++
	w := &timedWork{id: q.nextID, createdAt: createdAt, fireAt: fireAt}
	q.works[key] = w
	item := fired{key: key, id: w.id}
	if d := fireAt.Sub(q.clock.Now()); d > 0 {
		w.timer = q.clock.AfterFunc(d, func() { q.due.Add(item) })
		return
	}
	q.due.Add(item)
}

// CancelWork forgets key; it reports whether an eviction was still
// scheduled (and is now cancelled).
func (q *timedWorkQueue) CancelWork(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, found := q.works[key]
	if !found {
		return false
	}
	delete(q.works, key)
	if w == nil {
		return false
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	return true
}

// GetWork returns the scheduled eviction of key, or nil.
func (q *timedWorkQueue) GetWork(key string) *timedWork {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w := q.works[key]; w != nil {
		cp := *w
		return &cp
	}
	return nil
}

// claim reports whether a fired item is still the scheduled work of its key.
func (q *timedWorkQueue) claim(f fired) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.works[f.key]
	return w != nil && w.id == f.id
}

// done records that the work ran: the key stays, with no work, so the pod
// is not evicted twice.
func (q *timedWorkQueue) done(f fired) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w := q.works[f.key]; w != nil && w.id == f.id {
		q.works[f.key] = nil
	}
}
