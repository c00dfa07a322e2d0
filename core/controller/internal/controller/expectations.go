package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// ExpectationsTimeout is how long a controller waits for the watch to show
// the creates and deletes it made before it stops trusting its expectations
// and syncs anyway (upstream: 5 minutes).
const ExpectationsTimeout = 5 * time.Minute

// Expectations remembers, per controller key, the pod creations and
// deletions a controller has made but not yet seen in its informer. It is
// what stops a replica set controller from creating pods twice:
//
//	sync #1: 3 pods missing ─▶ ExpectCreations(rs, 3) ─▶ create 3 pods
//	event:   pod-a added     ─▶ CreationObserved(rs)     (2 to go)
//	sync #2: cache shows 1 pod: expectations unsatisfied ─▶ do nothing
//	events:  pod-b, pod-c    ─▶ CreationObserved × 2     (0 to go)
//	sync #3: cache shows 3 pods, expectations satisfied ─▶ nothing missing
//
// Without it sync #2 would see one pod of three and create two more.
// Deletions are tracked by pod key, so a pod counts once whether the watch
// shows its deletionTimestamp or its removal (upstream:
// UIDTrackingControllerExpectations).
type Expectations struct {
	clock clock.PassiveClock

	// mu guards items.
	mu    sync.Mutex
	items map[string]*expectation
}

type expectation struct {
	add, del  int
	deleting  sets.Set[string] // pod keys whose deletion is expected
	timestamp time.Time
}

// NewExpectations returns empty expectations timed by clk.
func NewExpectations(clk clock.PassiveClock) *Expectations {
	return &Expectations{clock: clk, items: map[string]*expectation{}}
}

// Satisfied reports whether the controller may act on key: true when
// nothing is expected, when everything expected was observed, or when the
// expectations are older than ExpectationsTimeout.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	if !ok {
		return true // a new controller, or one whose expectations were deleted
	}
	if x.add <= 0 && x.del <= 0 {
		return true
	}
	return e.clock.Since(x.timestamp) > ExpectationsTimeout
}

// ExpectCreations records that n creations are on their way for key.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.items[key] = &expectation{add: n, timestamp: e.clock.Now()}
}

// ExpectDeletions records that the pods podKeys are being deleted for key.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := sets.New(podKeys...)
	e.items[key] = &expectation{del: s.Len(), deleting: s, timestamp: e.clock.Now()}
}

// Expect records creations and deletions made in one sync together (the
// DaemonSet controller deletes old pods and creates new ones at once);
// calling ExpectCreations then ExpectDeletions would forget the first.
func (e *Expectations) Expect(key string, creations int, deletions []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := sets.New(deletions...)
	e.items[key] = &expectation{add: creations, del: s.Len(), deleting: s, timestamp: e.clock.Now()}
}

// CreationObserved lowers key's expected creations by one: the informer saw
// a pod appear, or a create failed and will never be seen.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok {
		x.add--
	}
}

// DeletionObserved lowers key's expected deletions by one if podKey was
// among them; a second observation of the same pod changes nothing.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok && x.deleting.Has(podKey) {
		x.deleting.Delete(podKey)
		x.del--
	}
}

// Delete forgets key, for example when its controller object is gone.
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
