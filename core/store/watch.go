package store

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Watcher streams the events of one key prefix in revision order, with no gaps.
//
// Events are queued for the watcher inside the writer's critical section, so
// the order is the store's order; a goroutine hands them to ResultChan. A
// watcher whose queue grows past Config.WatcherQueueLimit is dropped: its
// channel closes and Err returns ErrWatcherTooSlow. Its reader must list again
// (that is what a Kubernetes reflector does on a watch error).
type Watcher struct {
	prefix string
	out    chan Event
	done   chan struct{}
	stop   sync.Once
	store  *Store

	// mu guards queue, err and closed.
	mu     sync.Mutex
	queue  []Event
	wake   chan struct{} // capacity 1: "the queue has something"
	err    error
	closed bool
}

// Watch streams every event under prefix with a revision greater than
// afterRevision. afterRevision zero means "from now on". An afterRevision older
// than the store's history is ErrCompacted; one newer than the current
// revision is ErrFuture. The watch ends when ctx is done or Stop is called.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (*Watcher, error) {
	w := &Watcher{
		prefix: prefix,
		out:    make(chan Event),
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		store:  s,
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
		i := sort.Search(len(s.history), func(i int) bool { return s.history[i].Revision() > afterRevision })
		for _, ev := range s.history[i:] {
			if strings.HasPrefix(ev.KV.Key, prefix) {
				w.queue = append(w.queue, ev)
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
// ErrWatcherTooSlow when the watcher was dropped.
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

// enqueue adds ev; it reports false (and marks the watcher dropped) when the
// queue is over limit. Called with the store's lock held.
func (w *Watcher) enqueue(ev Event, limit int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if len(w.queue) >= limit {
		w.closed = true
		w.err = ErrWatcherTooSlow
		w.queue = nil
		select {
		case w.wake <- struct{}{}:
		default:
		}
		return false
	}
	w.queue = append(w.queue, ev)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
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
		w.queue = nil
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
