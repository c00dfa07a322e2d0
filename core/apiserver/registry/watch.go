package registry

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/store"
)

func secondsDuration(s int64) time.Duration { return time.Duration(s) * time.Second }

// Watch streams changes as watch.Events, like the watch verb of kube-apiserver
// (upstream: k8s.io/apiserver/pkg/storage/etcd3/watcher.go).
//
// With ResourceVersion "" or "0" the stream starts with an ADDED event for
// every object that exists now, then follows changes; with any other
// resourceVersion it follows the changes after it. A resourceVersion older than
// the store keeps is 410 Gone ("too old resource version").
//
// Selectors are applied to the old and the new state: an object that stops
// matching arrives as DELETED, one that starts matching as ADDED.
func (s *Store) Watch(ctx context.Context, namespace string, opts ListOptions) (watch.Interface, error) {
	var after int64
	initial := []watch.Event(nil)
	if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
		kvs, rev := s.reg.kv.List(s.prefix(namespace))
		for _, kv := range kvs {
			obj, err := s.decodeShared(kv)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if s.matches(obj, opts) {
				initial = append(initial, watch.Event{Type: watch.Added, Object: obj.DeepCopyObject()})
			}
		}
		after = rev
	} else {
		n, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil || n < 0 {
			return nil, apierrors.NewBadRequest("invalid resource version: " + opts.ResourceVersion)
		}
		after = n
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := s.reg.kv.Watch(ctx, s.prefix(namespace), after)
	if errors.Is(err, store.ErrCompacted) {
		cancel()
		return nil, apierrors.NewResourceExpired("too old resource version: " + opts.ResourceVersion + " (" + strconv.FormatInt(s.reg.kv.CompactedRevision(), 10) + ")")
	}
	if errors.Is(err, store.ErrFuture) {
		cancel()
		return nil, apierrors.NewTimeoutError("Too large resource version: "+opts.ResourceVersion+", current: "+strconv.FormatInt(s.reg.kv.Revision(), 10), 1)
	}
	if err != nil {
		cancel()
		return nil, apierrors.NewInternalError(err)
	}
	rw := &resultWatcher{out: make(chan watch.Event), cancel: cancel}
	go rw.run(ctx, s, w, opts, initial)
	return rw, nil
}

type resultWatcher struct {
	out    chan watch.Event
	cancel context.CancelFunc
	once   sync.Once
}

func (w *resultWatcher) Stop()                          { w.once.Do(w.cancel) }
func (w *resultWatcher) ResultChan() <-chan watch.Event { return w.out }

func (w *resultWatcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *resultWatcher) run(ctx context.Context, s *Store, sw *store.Watcher, opts ListOptions, initial []watch.Event) {
	defer close(w.out)
	defer sw.Stop()
	for _, ev := range initial {
		s.TraceWatch(ctx, ev)
		if !w.send(ctx, ev) {
			return
		}
	}
	// Once the store is no longer served the watch ends, after the changes
	// made before: the store's Progress event at that revision follows
	// them all.
	gone, endRev := (<-chan struct{})(s.gone), int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
			gone, endRev = nil, s.reg.kv.Revision()
			sw.RequestProgress()
		case ev, ok := <-sw.ResultChan():
			if !ok {
				if err := sw.Err(); err != nil {
					// The reader fell behind: tell it to relist, as the
					// apiserver does when its watch cache drops a watcher.
					w.send(ctx, watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired(err.Error()).ErrStatus})
				}
				return
			}
			if ev.Type == store.Progress && gone == nil && ev.Revision() >= endRev {
				return
			}
			out, ok, err := s.convert(ev, opts)
			if err != nil {
				w.send(ctx, watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return
			}
			if !ok {
				continue
			}
			s.TraceWatch(ctx, out)
			if !w.send(ctx, out) {
				return
			}
		}
	}
}

// convert turns a store event into a watch event, applying the selectors to
// the object before and after the write. The object it returns is the
// watcher's own copy.
func (s *Store) convert(ev store.Event, opts ListOptions) (watch.Event, bool, error) {
	// Without selectors every object matches, and the previous state
	// matters only to a deletion, which carries it.
	filtered := opts.filters()
	var cur, prev runtime.Object // shared: copied before they leave
	var err error
	if ev.Type == store.Put {
		if cur, err = s.decodeShared(ev.KV); err != nil {
			return watch.Event{}, false, err
		}
	}
	if ev.PrevKV != nil && (filtered || ev.Type == store.Delete) {
		if prev, err = s.decodeShared(*ev.PrevKV); err != nil {
			return watch.Event{}, false, err
		}
	}
	curOK := cur != nil && s.matches(cur, opts)
	prevOK := ev.PrevKV != nil && (!filtered || s.matches(prev, opts))
	deleted := func() (watch.Event, bool, error) {
		out := prev.DeepCopyObject()
		setRV(out, strconv.FormatInt(ev.Revision(), 10))
		return watch.Event{Type: watch.Deleted, Object: out}, true, nil
	}
	switch {
	case ev.Type == store.Delete && prevOK:
		return deleted()
	case curOK && prevOK:
		return watch.Event{Type: watch.Modified, Object: cur.DeepCopyObject()}, true, nil
	case curOK:
		return watch.Event{Type: watch.Added, Object: cur.DeepCopyObject()}, true, nil
	case prevOK && prev != nil:
		return deleted() // it stopped matching
	}
	return watch.Event{}, false, nil
}

func setRV(obj runtime.Object, rv string) {
	if acc, err := meta.Accessor(obj); err == nil {
		acc.SetResourceVersion(rv)
	}
}

var _ watch.Interface = (*resultWatcher)(nil)
var _ = metav1.Now
