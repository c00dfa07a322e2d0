package store

import (
	"context"
	"sync"
)

// Watcher streams the events of one key range in revision order, with no gaps
// (upstream: server/storage/mvcc/watchable_store.go and watcher.go).
//
// Events are queued for the watcher inside the writer's critical section, so
// the order is the store's order; a goroutine hands them to ResultChan. A
// watcher whose queue grows past Config.WatcherQueueLimit is dropped: its
// channel closes and Err returns ErrWatcherTooSlow; so is one whose queue
// holds more than Config.WatcherQueueBytesLimit bytes of keys and values. Its reader must list again
// (that is what a Kubernetes reflector does on a watch error). A slow reader
// therefore never blocks a writer.
type Watcher struct {
	key, end string // the range [key, end), with etcd's conventions for end
	out      chan Event
	done     chan struct{}
	stop     sync.Once
	store    *Store

	// mu guards queue, queueBytes, err and closed.
	mu         sync.Mutex
	queue      []Event
	queueBytes int64         // eventSize of the queue's events
	wake       chan struct{} // capacity 1: "the queue has something"
	err        error
	closed     bool
}

// Watch streams every event for the keys starting with prefix with a revision
// greater than afterRevision. afterRevision zero means "from now on". An
// afterRevision older than the compacted revision is ErrCompacted; one newer
// than the current revision is ErrFuture. The watch ends when ctx is done or
// Stop is called.
//
// Listing at revision R (ListAt) and then watching after R sees every change
// exactly once: the watch replays the retained history after R, then follows
// live writes.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (*Watcher, error) {
	return s.WatchRange(ctx, prefix, PrefixEnd(prefix), afterRevision)
}

// WatchRange is Watch for the key range [key, end), with Range's conventions
// for end: "" watches the single key, "\x00" every key >= key.
func (s *Store) WatchRange(ctx context.Context, key, end string, afterRevision int64) (*Watcher, error) {
	w := &Watcher{
		key:   key,
		end:   end,
		out:   make(chan Event),
		done:  make(chan struct{}),
		wake:  make(chan struct{}, 1),
		store: s,
	}
	s.mu.Lock()
	if afterRevision != 0 {
		if afterRevision < s.compacted {
			s.mu.Unlock()
			return nil, ErrCompacted
		}
		if afterRevision > s.rev {
			s.mu.Unlock()
			return nil, ErrFuture
		}
		for _, ev := range s.history.after(afterRevision) {
			if inRange(ev.KV.Key, key, end) {
				w.queue = append(w.queue, ev)
				w.queueBytes += eventSize(ev)
			}
		}
		if len(w.queue) > 0 {
			w.wake <- struct{}{}
		}
	}
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	go w.pump(ctx)
	return w, nil
}

// ResultChan delivers the events. It is closed when the watch ends.
func (w *Watcher) ResultChan() <-chan Event { return w.out }

// Err says why the channel closed: nil after Stop or a done context,
// ErrWatcherTooSlow when the watcher was dropped, ErrCompacted when the
// store was restored from a snapshot under it.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch. It is safe to call more than once.
func (w *Watcher) Stop() {
	w.stop.Do(func() {
		w.store.mu.Lock()
		delete(w.store.watchers, w)
		w.store.mu.Unlock()
		close(w.done)
	})
}

// RequestProgress asks for a Progress event (etcd's progress notification,
// which kube-apiserver turns into watch BOOKMARK events). The event carries
// the store's revision at the moment of the call and is queued in order with
// the watch's other events, so:
//
//   - every event of this watch with a revision up to and including the
//     Progress revision is delivered before it, and
//   - every event delivered after it has a greater revision.
//
// A client that has read the Progress event may therefore resume with a watch
// after its revision and miss nothing: a resourceVersion that is safe to put
// in a BOOKMARK. It does nothing on a watch that has ended; like any event,
// it counts against the queue limit.
func (w *Watcher) RequestProgress() {
	s := w.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[w]; !ok {
		return
	}
	if !w.enqueue(Event{Type: Progress, KV: KeyValue{ModRevision: s.rev}}, s.cfg) {
		delete(s.watchers, w)
	}
}

// enqueue adds ev; it reports false (and marks the watcher dropped) when the
// queue is over limit. Called with the store's lock held.
func (w *Watcher) enqueue(ev Event, cfg Config) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	n := eventSize(ev)
	if len(w.queue) >= cfg.WatcherQueueLimit || (cfg.WatcherQueueBytesLimit >= 0 && w.queueBytes+n > cfg.WatcherQueueBytesLimit && len(w.queue) > 0) {
		w.closeLocked(ErrWatcherTooSlow)
		return false
	}
	w.queue = append(w.queue, ev)
	w.queueBytes += n
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// cancel ends the watch with err after the events already queued are
// dropped. Called with the store's lock held; the caller removes w from the
// store's watchers.
func (w *Watcher) cancel(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closeLocked(err)
	}
}

// eventSize is what an event holds in memory: its keys and values.
func eventSize(ev Event) int64 {
	n := kvSize(&ev.KV)
	if ev.PrevKV != nil {
		n += kvSize(ev.PrevKV)
	}
	return n
}

func (w *Watcher) closeLocked(err error) {
	w.closed = true
	w.err = err
	w.queue, w.queueBytes = nil, 0
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Watcher) pump(ctx context.Context) {
	defer close(w.out)
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.done:
			return
		case <-w.wake:
		}
		w.mu.Lock()
		batch := w.queue
		w.queue, w.queueBytes = nil, 0
		closed := w.closed
		w.mu.Unlock()
		for _, ev := range batch {
			select {
			case w.out <- ev:
			case <-ctx.Done():
				return
			case <-w.done:
				return
			}
		}
		if closed {
			return
		}
	}
}
