package client

import (
	"context"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/eventloop"
)

// Queue is a work queue of keys, with the guarantees controllers rely on
// (upstream: k8s.io/client-go/util/workqueue):
//
//   - a key queued many times before a worker takes it is processed once (dirty set);
//   - a key is never processed by two workers at once: a key added while it is
//     being processed is queued again when Done is called (processing set);
//   - AddRateLimited re-queues a failing key after a per-key exponential
//     back-off (5 ms doubling up to 1000 s, as DefaultControllerRateLimiter);
//     Forget resets it after a success.
type Queue[T comparable] struct {
	clock  clock.WithDelayedExecution
	closed chan struct{} // closed by ShutDown

	// mu guards everything below.
	mu         sync.Mutex
	queue      []T
	dirty      map[T]struct{}
	processing map[T]struct{}
	failures   map[T]int
	shutdown   bool
	wake       chan struct{} // capacity 1

	tracked sync.Once // joins the Work of the first Get's context
}

// Work is the set of work queues whose workers run under one context: a
// cluster's controllers and kubelets (WithWork). It answers whether all of
// them are idle, so a cluster can say it has settled after its start:
// every controller has listed what it watches and done the work the lists
// gave it. Upstream has no counterpart; its controllers never need to agree
// that they are idle.
type Work struct {
	mu     sync.Mutex
	queues []interface{ idle() bool }
}

type workKey struct{}

// WithWork returns ctx carrying w: each queue whose Get is called with it
// (or a context derived from it) joins w.
func WithWork(ctx context.Context, w *Work) context.Context {
	return context.WithValue(ctx, workKey{}, w)
}

// Idle reports whether every queue of w is empty with no item in process.
// Items waiting for AddAfter's delay do not count.
func (w *Work) Idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, q := range w.queues {
		if !q.idle() {
			return false
		}
	}
	return true
}

// Queues is how many queues have joined w.
func (w *Work) Queues() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queues)
}

func (q *Queue[T]) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue) == 0 && len(q.processing) == 0
}

// NewQueue returns an empty queue; c may be nil for the real clock.
func NewQueue[T comparable](c clock.WithDelayedExecution) *Queue[T] {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Queue[T]{
		clock:      c,
		closed:     make(chan struct{}),
		dirty:      map[T]struct{}{},
		processing: map[T]struct{}{},
		failures:   map[T]int{},
		wake:       make(chan struct{}, 1),
	}
}

// Add queues item unless it is already waiting.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return // Done will queue it
	}
	q.queue = append(q.queue, item)
	q.signal()
}

func (q *Queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// AddAfter queues item once d has passed on the queue's clock.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	if d <= 0 {
		q.Add(item)
		return
	}
	q.clock.AfterFunc(d, func() { q.Add(item) })
}

// AddRateLimited queues item after its back-off, and lengthens the back-off.
func (q *Queue[T]) AddRateLimited(item T) {
	q.mu.Lock()
	n := q.failures[item]
	q.failures[item] = n + 1
	q.mu.Unlock()
	q.AddAfter(item, Backoff(n, 5*time.Millisecond, 1000*time.Second))
}

// Backoff is base·2ⁿ, capped at max.
func Backoff(n int, base, max time.Duration) time.Duration {
	d := float64(base) * math.Pow(2, float64(n))
	if d > float64(max) {
		return max
	}
	return time.Duration(d)
}

// Forget clears item's back-off.
func (q *Queue[T]) Forget(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, item)
}

// NumRequeues is how many times item was re-queued since its last Forget.
func (q *Queue[T]) NumRequeues(item T) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[item]
}

// Len is the number of waiting items.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Get blocks until an item is available and returns it; false when the queue
// is shut down or ctx is done. Call Done(item) when finished with it.
func (q *Queue[T]) Get(ctx context.Context) (T, bool) {
	q.tracked.Do(func() {
		if w, ok := ctx.Value(workKey{}).(*Work); ok {
			w.mu.Lock()
			w.queues = append(w.queues, q)
			w.mu.Unlock()
		}
	})
	// Between two keys a worker holds no lock: in the browser, the point to
	// give the event loop its turn when one is due (core/eventloop).
	eventloop.MaybeTurn()
	for {
		q.mu.Lock()
		if len(q.queue) > 0 {
			item := q.queue[0]
			var zero T
			q.queue[0] = zero
			q.queue = q.queue[1:]
			q.processing[item] = struct{}{}
			delete(q.dirty, item)
			if len(q.queue) > 0 {
				q.signal()
			}
			q.mu.Unlock()
			return item, true
		}
		if q.shutdown {
			q.mu.Unlock()
			var zero T
			return zero, false
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			var zero T
			return zero, false
		case <-q.wake:
		case <-q.closed:
		}
	}
}

// Done marks item as processed; if it was added meanwhile it is queued again.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, item)
	if _, ok := q.dirty[item]; ok {
		q.queue = append(q.queue, item)
		q.signal()
	}
}

// ShutDown makes Get return false once the queue is drained.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shutdown {
		q.shutdown = true
		close(q.closed)
	}
}
