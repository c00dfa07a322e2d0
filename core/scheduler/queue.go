package scheduler

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Queue timing, upstream's defaults (pkg/scheduler/apis/config/v1/defaults.go
// and pkg/scheduler/backend/queue/scheduling_queue.go).
const (
	DefaultPodInitialBackoff = 1 * time.Second
	DefaultPodMaxBackoff     = 10 * time.Second
	// DefaultPodMaxInUnschedulablePodsDuration: a pod no event has woken
	// is retried after this long anyway, in case an event was missed.
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
	// unschedulableFlushInterval is how often that is checked.
	unschedulableFlushInterval = 30 * time.Second
)

// SchedulingQueue holds the pods waiting for a node (upstream:
// pkg/scheduler/backend/queue/scheduling_queue.go, PriorityQueue). A pod is
// in exactly one of three places, or being scheduled:
//
//		          Add (new pod)                      Pop
//		informer ─────────────▶ activeQ ─────────────────────▶ scheduling cycle
//		                          ▲  ▲                                 │ no node fit
//		     back-off over        │  │ event that may help             ▼
//		     (timer) ┌────────────┘  └──────────────── unschedulablePods
//		             │                                       │ event that may help,
//		          backoffQ ◀─────────────────────────────────┘ still backing off
//		             ▲
//		             └─── failed with an error, or an event arrived while the pod
//		                  was being scheduled (it may have missed it)
//
//	  - activeQ is ordered by the QueueSort plugin: priority, then the time
//	    the pod entered the queue.
//	  - backoffQ holds pods until their back-off ends: 1 s after the first
//	    failed attempt, doubling up to 10 s. A timer set for the earliest end
//	    moves them (upstream polls every second; a timer does the same without
//	    waking an idle browser tab).
//	  - unschedulablePods holds pods no node fit. Retrying them in a loop would
//	    only burn CPU, so they wait for a cluster event that one of the plugins
//	    that rejected them registered (a node added, a pod deleted ...): that is
//	    MoveAllToActiveOrBackoffQueue.
type SchedulingQueue struct {
	clock          clock.WithDelayedExecution
	initialBackoff time.Duration
	maxBackoff     time.Duration
	maxInUnsched   time.Duration
	// events: rejecting plugin -> the events that may help.
	events map[string][]framework.ClusterEvent

	// mu guards everything below. Lock order: mu, then the clock's own lock
	// (mu is held while timers are set); timer callbacks therefore run
	// their work on a new goroutine.
	mu            sync.Mutex
	activeQ       *podHeap
	backoffQ      *podHeap
	unschedulable map[string]*framework.QueuedPodInfo
	// schedulingCycle counts Pops. moveRequestCycle is the cycle during
	// which the last useful event arrived: a pod that fails in a cycle at
	// or before it goes to backoffQ, not unschedulablePods, because the
	// event may have been what it needed.
	schedulingCycle  int64
	moveRequestCycle int64
	backoffTimer     clock.Timer
	backoffTimerAt   time.Time
	closed           bool
	wake             chan struct{} // capacity 1: "activeQ has something"
	// inFlight are the pods popped and not back yet: in a scheduling or
	// binding cycle (upstream's inFlightPods).
	inFlight map[string]*framework.QueuedPodInfo
	// changes counts every change of where a pod is; changed is closed and
	// replaced at each (Changed), so a watcher of the queue wakes up.
	changes uint64
	changed chan struct{}

	// nominator holds the nominated pods (its own lock, taken after mu).
	*nominator
}

// QueueConfig configures a SchedulingQueue.
type QueueConfig struct {
	Clock clock.WithDelayedExecution
	// Less orders activeQ (the QueueSort plugin).
	Less framework.LessFunc
	// EventsToRegister maps each rejecting plugin to the events that may
	// make its pods schedulable.
	EventsToRegister map[string][]framework.ClusterEvent
	// Zero values are upstream's defaults.
	PodInitialBackoff, PodMaxBackoff, PodMaxInUnschedulablePodsDuration time.Duration
	// PodLister, if set, keeps pods that are gone or bound from being
	// nominated.
	PodLister framework.Lister[*v1.Pod]
}

// NewSchedulingQueue returns an empty queue.
func NewSchedulingQueue(cfg QueueConfig) *SchedulingQueue {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.PodInitialBackoff <= 0 {
		cfg.PodInitialBackoff = DefaultPodInitialBackoff
	}
	if cfg.PodMaxBackoff <= 0 {
		cfg.PodMaxBackoff = DefaultPodMaxBackoff
	}
	if cfg.PodMaxInUnschedulablePodsDuration <= 0 {
		cfg.PodMaxInUnschedulablePodsDuration = DefaultPodMaxInUnschedulablePodsDuration
	}
	q := &SchedulingQueue{
		clock:          cfg.Clock,
		initialBackoff: cfg.PodInitialBackoff,
		maxBackoff:     cfg.PodMaxBackoff,
		maxInUnsched:   cfg.PodMaxInUnschedulablePodsDuration,
		events:         cfg.EventsToRegister,
		activeQ:        newPodHeap(cfg.Less),
		unschedulable:  map[string]*framework.QueuedPodInfo{},
		wake:           make(chan struct{}, 1),
		inFlight:       map[string]*framework.QueuedPodInfo{},
		changed:        make(chan struct{}),
		nominator:      newNominator(),
	}
	q.nominator.podLister = cfg.PodLister
	q.backoffQ = newPodHeap(func(a, b *framework.QueuedPodInfo) bool {
		return q.backoffTime(a).Before(q.backoffTime(b))
	})
	return q
}

// Run checks the unschedulable pods every 30 s (on the queue's clock) until
// ctx is done, then closes the queue.
func (q *SchedulingQueue) Run(ctx context.Context) {
	// Timer callbacks start a goroutine: k8s.io/utils' fake clock calls them
	// while holding its own lock, so a callback that reads the clock
	// would deadlock there.
	var t clock.Timer
	var tick func()
	tick = func() {
		q.flushUnschedulablePodsLeftover()
		q.mu.Lock()
		if !q.closed {
			t = q.clock.AfterFunc(unschedulableFlushInterval, func() { go tick() })
		}
		q.mu.Unlock()
	}
	q.mu.Lock()
	t = q.clock.AfterFunc(unschedulableFlushInterval, func() { go tick() })
	q.mu.Unlock()
	<-ctx.Done()
	q.Close()
	q.mu.Lock()
	t.Stop()
	q.mu.Unlock()
}

// Close wakes Pop, which then returns false.
func (q *SchedulingQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	if q.backoffTimer != nil {
		q.backoffTimer.Stop()
	}
	q.signal()
}

func (q *SchedulingQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *SchedulingQueue) newQueuedPodInfo(pod *v1.Pod) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: q.clock.Now()}
}

// Add queues a new pod in activeQ (or moves it there from the other queues).
func (q *SchedulingQueue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.changedLocked()
	key := podKey(pod)
	delete(q.inFlight, key)
	p := q.newQueuedPodInfo(pod)
	q.nominator.add(p.PodInfo, "", false)
	if old, ok := q.unschedulable[key]; ok {
		p = old
		p.PodInfo = framework.NewPodInfo(pod)
		delete(q.unschedulable, key)
	} else if old, ok := q.backoffQ.Get(key); ok {
		p = old
		p.PodInfo = framework.NewPodInfo(pod)
		q.backoffQ.Delete(key)
	} else if old, ok := q.activeQ.Get(key); ok {
		old.PodInfo = framework.NewPodInfo(pod)
		q.activeQ.AddOrUpdate(old)
		return
	}
	q.activeQ.AddOrUpdate(p)
	q.signal()
}

// Pop blocks until a pod is in activeQ and returns it, counting an attempt
// and a scheduling cycle. It returns false once ctx is done or the queue is
// closed.
func (q *SchedulingQueue) Pop(ctx context.Context) (*framework.QueuedPodInfo, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		if p := q.activeQ.Pop(); p != nil {
			q.schedulingCycle++
			p.Attempts++
			if p.InitialAttemptTimestamp == nil {
				now := q.clock.Now()
				p.InitialAttemptTimestamp = &now
			}
			if q.activeQ.Len() > 0 {
				q.signal()
			}
			q.inFlight[podKey(p.Pod)] = p
			q.changedLocked()
			q.mu.Unlock()
			return p, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.wake:
		}
	}
}

// SchedulingCycle is the number of pods popped so far.
func (q *SchedulingQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// AddUnschedulableIfNotPresent puts back a pod whose attempt (in cycle
// podSchedulingCycle) failed: into backoffQ if it failed with an error (no
// plugin rejected it) or if a useful event arrived during its attempt;
// otherwise into unschedulablePods to wait for one.
func (q *SchedulingQueue) AddUnschedulableIfNotPresent(p *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := podKey(p.Pod)
	if _, ok := q.unschedulable[key]; ok || q.activeQ.Has(key) || q.backoffQ.Has(key) {
		return fmt.Errorf("pod %v is already present in the scheduling queue", key)
	}
	delete(q.inFlight, key)
	defer q.changedLocked()
	p.Timestamp = q.clock.Now()
	if q.moveRequestCycle >= podSchedulingCycle || len(p.UnschedulablePlugins)+len(p.PendingPlugins) == 0 {
		q.backoffQ.AddOrUpdate(p)
		q.armBackoffTimerLocked()
		return nil
	}
	q.unschedulable[key] = p
	return nil
}

// Update replaces a queued pod after an update from the informer. A pod
// waiting in unschedulablePods is retried if its spec or metadata changed
// (not for status-only updates, such as the scheduler's own PodScheduled
// condition). A pod found nowhere (being scheduled) is added to activeQ.
func (q *SchedulingQueue) Update(oldPod, newPod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.changedLocked()
	key := podKey(newPod)
	if oldPod != nil {
		defer func() {
			if p, ok := q.lookupLocked(key); ok {
				q.nominator.update(oldPod, p.PodInfo)
			}
		}()
	}
	if p, ok := q.activeQ.Get(key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		q.activeQ.AddOrUpdate(p)
		return
	}
	if p, ok := q.backoffQ.Get(key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		q.backoffQ.AddOrUpdate(p)
		return
	}
	if p, ok := q.unschedulable[key]; ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		if oldPod == nil || isPodUpdated(oldPod, newPod) {
			delete(q.unschedulable, key)
			if q.isPodBackingOff(p) {
				q.backoffQ.AddOrUpdate(p)
				q.armBackoffTimerLocked()
			} else {
				q.activeQ.AddOrUpdate(p)
				q.signal()
			}
		}
		return
	}
	delete(q.inFlight, key)
	q.activeQ.AddOrUpdate(q.newQueuedPodInfo(newPod))
	q.signal()
}

// lookupLocked finds a queued pod wherever it is.
func (q *SchedulingQueue) lookupLocked(key string) (*framework.QueuedPodInfo, bool) {
	if p, ok := q.activeQ.Get(key); ok {
		return p, true
	}
	if p, ok := q.backoffQ.Get(key); ok {
		return p, true
	}
	p, ok := q.unschedulable[key]
	return p, ok
}

// AddNominatedPod nominates the pod to nodeName ("" clears its nomination);
// the scheduler calls it when preemption made room.
func (q *SchedulingQueue) AddNominatedPod(pi *framework.PodInfo, nodeName string) {
	q.nominator.add(pi, nodeName, true)
}

// DeleteNominatedPodIfExists forgets the pod's nomination (it was assumed
// on a node, or deleted).
func (q *SchedulingQueue) DeleteNominatedPodIfExists(pod *v1.Pod) {
	q.nominator.delete(pod)
}

// Delete removes a pod from every queue, and its nomination.
func (q *SchedulingQueue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nominator.delete(pod)
	defer q.changedLocked()
	key := podKey(pod)
	delete(q.inFlight, key)
	q.activeQ.Delete(key)
	if q.backoffQ.Delete(key) {
		q.armBackoffTimerLocked()
	}
	delete(q.unschedulable, key)
}

// isPodUpdated reports whether anything but the status (and bookkeeping
// fields) changed: upstream's check that keeps status writes from
// re-queueing pods.
func isPodUpdated(oldPod, newPod *v1.Pod) bool {
	strip := func(pod *v1.Pod) *v1.Pod {
		p := pod.DeepCopy()
		p.ResourceVersion = ""
		p.Generation = 0
		p.Status = v1.PodStatus{ResourceClaimStatuses: pod.Status.ResourceClaimStatuses}
		p.ManagedFields = nil
		p.Finalizers = nil
		return p
	}
	return !reflect.DeepEqual(strip(oldPod), strip(newPod))
}

// MoveAllToActiveOrBackoffQueue is called on a cluster event. Every pod in
// unschedulablePods that a plugin interested in the event rejected moves to
// activeQ, or to backoffQ if its back-off is not over.
func (q *SchedulingQueue) MoveAllToActiveOrBackoffQueue(event framework.ClusterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.isEventOfInterest(event) {
		return
	}
	q.moveLocked(event, func(*framework.QueuedPodInfo) bool { return true })
}

func (q *SchedulingQueue) moveLocked(event framework.ClusterEvent, which func(*framework.QueuedPodInfo) bool) {
	moved := false
	for key, p := range q.unschedulable {
		if !which(p) || !q.podMatchesEvent(p, event) {
			continue
		}
		delete(q.unschedulable, key)
		if q.isPodBackingOff(p) {
			q.backoffQ.AddOrUpdate(p)
		} else {
			q.activeQ.AddOrUpdate(p)
			moved = true
		}
	}
	q.armBackoffTimerLocked()
	q.moveRequestCycle = q.schedulingCycle
	if moved {
		q.signal()
	}
	q.changedLocked()
}

// isEventOfInterest reports whether any plugin registered the event.
func (q *SchedulingQueue) isEventOfInterest(event framework.ClusterEvent) bool {
	if event.Resource == framework.WildCard {
		return true
	}
	for _, evs := range q.events {
		for _, e := range evs {
			if e.Match(event) {
				return true
			}
		}
	}
	return false
}

// podMatchesEvent reports whether one of the plugins that rejected p
// registered the event. A pod no plugin rejected matches every event.
func (q *SchedulingQueue) podMatchesEvent(p *framework.QueuedPodInfo, event framework.ClusterEvent) bool {
	if event.Resource == framework.WildCard && event.ActionType == framework.All {
		return true
	}
	if len(p.UnschedulablePlugins)+len(p.PendingPlugins) == 0 {
		return true
	}
	for _, set := range []sets.Set[string]{p.UnschedulablePlugins, p.PendingPlugins} {
		for name := range set {
			evs, ok := q.events[name]
			if !ok {
				return true
			}
			for _, e := range evs {
				if e.Match(event) {
					return true
				}
			}
		}
	}
	return false
}

// backoffDuration is initial·2^(attempts-1), capped at max.
func (q *SchedulingQueue) backoffDuration(p *framework.QueuedPodInfo) time.Duration {
	d := q.initialBackoff
	for i := 1; i < p.Attempts; i++ {
		if d > q.maxBackoff-d {
			return q.maxBackoff
		}
		d += d
	}
	return d
}

func (q *SchedulingQueue) backoffTime(p *framework.QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.backoffDuration(p))
}

func (q *SchedulingQueue) isPodBackingOff(p *framework.QueuedPodInfo) bool {
	return q.backoffTime(p).After(q.clock.Now())
}

// armBackoffTimerLocked moves the pods whose back-off is over to activeQ and
// sets a timer for the next one.
func (q *SchedulingQueue) armBackoffTimerLocked() {
	if q.closed {
		return
	}
	now := q.clock.Now()
	moved := false
	for p := q.backoffQ.Peek(); p != nil && !q.backoffTime(p).After(now); p = q.backoffQ.Peek() {
		q.backoffQ.Pop()
		q.activeQ.AddOrUpdate(p)
		moved = true
	}
	if moved {
		q.signal()
		q.changedLocked()
	}
	p := q.backoffQ.Peek()
	if p == nil {
		if q.backoffTimer != nil {
			q.backoffTimer.Stop()
			q.backoffTimer = nil
		}
		return
	}
	at := q.backoffTime(p)
	if q.backoffTimer != nil && !q.backoffTimerAt.After(at) {
		return // the armed timer fires first; it re-arms then
	}
	if q.backoffTimer != nil {
		q.backoffTimer.Stop()
	}
	q.backoffTimerAt = at
	q.backoffTimer = q.clock.AfterFunc(at.Sub(now), func() { go q.flushBackoffQCompleted() })
}

// flushBackoffQCompleted runs when the back-off timer fires.
func (q *SchedulingQueue) flushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.backoffTimer = nil
	q.armBackoffTimerLocked()
}

// flushUnschedulablePodsLeftover retries pods that waited in
// unschedulablePods longer than the maximum.
func (q *SchedulingQueue) flushUnschedulablePodsLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	q.moveLocked(framework.UnschedulableTimeout, func(p *framework.QueuedPodInfo) bool {
		return now.Sub(p.Timestamp) > q.maxInUnsched
	})
}

// PendingPods lists every queued pod, and a summary like upstream's
// "activeQ:1; backoffQ:0; unschedulablePods:2".
func (q *SchedulingQueue) PendingPods() ([]*v1.Pod, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*v1.Pod
	for _, p := range q.activeQ.List() {
		out = append(out, p.Pod)
	}
	for _, p := range q.backoffQ.List() {
		out = append(out, p.Pod)
	}
	for _, p := range q.unschedulable {
		out = append(out, p.Pod)
	}
	return out, fmt.Sprintf("activeQ:%d; backoffQ:%d; unschedulablePods:%d", q.activeQ.Len(), q.backoffQ.Len(), len(q.unschedulable))
}

// changedLocked counts a change and wakes whoever waits in Changed.
func (q *SchedulingQueue) changedLocked() {
	q.changes++
	close(q.changed)
	q.changed = make(chan struct{})
}

// Changed returns the number of changes so far and a channel that is
// closed at the next one: what a watch of the queue waits on.
func (q *SchedulingQueue) Changed() (uint64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changes, q.changed
}

// Where a pod is (QueuedPod.Queue): upstream's names, as the API serves them.
const (
	ActiveQ           = v1alpha1.QueueActive
	BackoffQ          = v1alpha1.QueueBackoff
	UnschedulablePods = v1alpha1.QueueUnschedulable
	InFlightPods      = v1alpha1.QueueInFlight
)

// QueuedPod is one pod of a Snapshot.
type QueuedPod struct {
	*framework.QueuedPodInfo
	// Queue is ActiveQ, BackoffQ, UnschedulablePods or InFlightPods.
	Queue string
	// BackoffExpiration is when the pod's back-off ends (zero before its
	// first failed attempt).
	BackoffExpiration time.Time
}

// Snapshot lists every pod the queue holds or is scheduling, and the
// change count it was taken at: activeQ in the order Pop takes them,
// backoffQ by the end of the back-off, unschedulablePods and inFlightPods
// by the time they entered. The QueuedPodInfos are copies.
func (q *SchedulingQueue) Snapshot() ([]QueuedPod, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]QueuedPod, 0, q.activeQ.Len()+q.backoffQ.Len()+len(q.unschedulable)+len(q.inFlight))
	add := func(queue string, list []*framework.QueuedPodInfo, less func(a, b *framework.QueuedPodInfo) bool) {
		sort.SliceStable(list, func(i, j int) bool { return less(list[i], list[j]) })
		for _, p := range list {
			c := *p
			qp := QueuedPod{QueuedPodInfo: &c, Queue: queue}
			if p.Attempts > 0 {
				qp.BackoffExpiration = q.backoffTime(p)
			}
			out = append(out, qp)
		}
	}
	byTime := func(a, b *framework.QueuedPodInfo) bool {
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		return podKey(a.Pod) < podKey(b.Pod)
	}
	add(InFlightPods, mapValues(q.inFlight), byTime)
	add(ActiveQ, q.activeQ.List(), q.activeQ.less)
	add(BackoffQ, q.backoffQ.List(), q.backoffQ.less)
	add(UnschedulablePods, mapValues(q.unschedulable), byTime)
	return out, q.changes
}

func mapValues(m map[string]*framework.QueuedPodInfo) []*framework.QueuedPodInfo {
	out := make([]*framework.QueuedPodInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out
}
