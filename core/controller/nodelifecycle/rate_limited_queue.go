package nodelifecycle

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Rate limits of NoExecute tainting, as kube-controller-manager's defaults
// (pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go).
const (
	// EvictionRateLimiterBurst is the token bucket's size: one node may be
	// tainted at once, the next one 1/qps later.
	EvictionRateLimiterBurst = 1
	// NodeHealthUpdateRetry is how many times a node's health update is
	// retried (with a fresh read) before the pass gives up on it.
	NodeHealthUpdateRetry = 5
)

// TimedValue is a node waiting in a RateLimitedTimedQueue.
type TimedValue struct {
	Value string // the node name
	UID   string // the node's UID when it was queued
	// AddedAt is when the node was queued; ProcessAt is when it may be tried
	// (later than AddedAt after a failed try).
	AddedAt, ProcessAt time.Time
}

// RateLimitedTimedQueue holds the nodes waiting for their NoExecute taint,
// in ProcessAt order, and lets them through no faster than a token bucket
// allows (qps tokens a second, EvictionRateLimiterBurst at most). Upstream
// one exists per zone, so that a zone losing all its nodes at once (a
// network partition, more likely than every machine dying) does not drain
// the whole cluster: the rate drops, or tainting stops, as the zone's
// health worsens (see handleDisruption).
//
// Unlike upstream's, which is polled every 100 ms, Try reports when it next
// has work, so the caller can sleep until then on its clock: nothing polls
// in a browser tab.
type RateLimitedTimedQueue struct {
	// mu guards everything below.
	mu     sync.Mutex
	queue  []*TimedValue // ordered by ProcessAt, then by insertion
	set    map[string]bool
	bucket tokenBucket
}

// NewRateLimitedTimedQueue returns an empty queue with a full bucket.
func NewRateLimitedTimedQueue(qps float64) *RateLimitedTimedQueue {
	return &RateLimitedTimedQueue{set: map[string]bool{}, bucket: newTokenBucket(qps)}
}

// Add queues a node unless it is queued already; it reports whether it
// was added.
func (q *RateLimitedTimedQueue) Add(value, uid string, now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.set[value] {
		return false
	}
	q.set[value] = true
	q.queue = append(q.queue, &TimedValue{Value: value, UID: uid, AddedAt: now, ProcessAt: now})
	q.sortLocked()
	return true
}

// Remove takes a node out of the queue; it reports whether it was there.
func (q *RateLimitedTimedQueue) Remove(value string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.set[value] {
		return false
	}
	delete(q.set, value)
	for i, v := range q.queue {
		if v.Value == value {
			q.queue = append(q.queue[:i], q.queue[i+1:]...)
			break
		}
	}
	return true
}

// Len is the number of queued nodes.
func (q *RateLimitedTimedQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// SwapLimiter changes the rate (0 stops the queue). A bucket that was
// empty stays empty, so swapping cannot be used to jump the limit.
func (q *RateLimitedTimedQueue) SwapLimiter(qps float64, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bucket.qps == qps {
		return
	}
	q.bucket.refill(now)
	empty := q.bucket.tokens < 1
	q.bucket = newTokenBucket(qps)
	q.bucket.last = now
	if empty {
		q.bucket.tokens = 0
	}
}

func (q *RateLimitedTimedQueue) sortLocked() {
	sort.SliceStable(q.queue, func(i, j int) bool { return q.queue[i].ProcessAt.Before(q.queue[j].ProcessAt) })
}

// Try hands due nodes to fn, in order, as long as the bucket has tokens.
// fn returns true when the node is done (it leaves the queue), or false and
// how long to wait before trying it again. Try returns when the queue next
// has work: the ProcessAt of its head or the next token, whichever is
// later; the zero time when it is empty or stopped (qps 0).
func (q *RateLimitedTimedQueue) Try(now func() time.Time, fn func(TimedValue) (bool, time.Duration)) time.Time {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.mu.Unlock()
			return time.Time{}
		}
		t := now()
		head := q.queue[0]
		if head.ProcessAt.After(t) {
			q.mu.Unlock()
			return laterOf(head.ProcessAt, q.bucketNext(t))
		}
		if !q.bucket.tryAccept(t) {
			next := q.bucket.next(t)
			q.mu.Unlock()
			return next
		}
		v := *head
		q.mu.Unlock()

		done, wait := fn(v)

		q.mu.Lock()
		for i, cur := range q.queue {
			if cur != head {
				continue
			}
			if done {
				q.queue = append(q.queue[:i], q.queue[i+1:]...)
				delete(q.set, head.Value)
			} else {
				head.ProcessAt = now().Add(wait + time.Nanosecond)
				q.sortLocked()
			}
			break
		}
		q.mu.Unlock()
	}
}

func (q *RateLimitedTimedQueue) bucketNext(t time.Time) time.Time {
	b := q.bucket
	return b.next(t)
}

func laterOf(a, b time.Time) time.Time {
	if b.IsZero() {
		return b // stopped: nothing until the limiter changes
	}
	if a.After(b) {
		return a
	}
	return b
}

// tokenBucket is client-go's flowcontrol token bucket, on an explicit
// clock: qps tokens a second, at most EvictionRateLimiterBurst saved.
type tokenBucket struct {
	qps    float64
	tokens float64
	last   time.Time
}

func newTokenBucket(qps float64) tokenBucket {
	return tokenBucket{qps: qps, tokens: EvictionRateLimiterBurst}
}

func (b *tokenBucket) refill(now time.Time) {
	if b.last.IsZero() || now.Before(b.last) {
		b.last = now
		return
	}
	if b.qps > 0 {
		b.tokens = math.Min(EvictionRateLimiterBurst, b.tokens+b.qps*now.Sub(b.last).Seconds())
	}
	b.last = now
}

func (b *tokenBucket) tryAccept(now time.Time) bool {
	if b.qps <= 0 {
		return false
	}
	b.refill(now)
	if b.tokens >= 1-tokenEpsilon {
		b.tokens = math.Max(0, b.tokens-1)
		return true
	}
	return false
}

// tokenEpsilon absorbs float rounding, so that a token due at t (as next
// computes it) is there at t.
const tokenEpsilon = 1e-9

// next is when the next token is there: now if one is, the zero time
// never (qps 0).
func (b tokenBucket) next(now time.Time) time.Time {
	if b.qps <= 0 {
		return time.Time{}
	}
	b.refill(now)
	if b.tokens >= 1-tokenEpsilon {
		return now
	}
	return now.Add(time.Duration(math.Ceil((1 - b.tokens) / b.qps * float64(time.Second))))
}
