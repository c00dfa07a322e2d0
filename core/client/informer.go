package client

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
)

// Handler receives an informer's notifications. Any func may be nil. The
// objects are the cache's own: read them, never modify them (copy first).
type Handler[T runtime.Object] struct {
	OnAdd    func(obj T)
	OnUpdate func(old, obj T)
	OnDelete func(obj T)
}

// IndexFunc returns the index values of an object (for example the node name
// of a pod), so the cache can answer "pods on node-1" without a scan.
type IndexFunc[T runtime.Object] func(obj T) []string

// Informer keeps a local copy of one resource current by listing once and
// then watching, and tells its handlers about every change. It is the
// reflector + store + processor of client-go's SharedIndexInformer, in one
// small type.
//
// When the watch breaks (the watcher fell behind, or its resourceVersion was
// compacted: 410 Gone), the informer lists again and reports the difference
// between its cache and the new list as adds, updates and deletes, so a
// handler never misses a final state (it may miss intermediate ones: that is
// why controllers are level-based).
type Informer[T runtime.Object] struct {
	res       Resource[T]
	namespace string
	opts      ListOptions

	// mu guards items, indexers and indices. Handlers run without it.
	mu       sync.RWMutex
	items    map[string]T
	indexers map[string]IndexFunc[T]
	indices  map[string]map[string]sets.Set[string]

	handlers []Handler[T]
	synced   atomic.Bool
	started  atomic.Bool
	// lastRV is the resourceVersion of the last event or list seen.
	lastRV string
}

// NewInformer returns an informer over res, for namespace ("" for all) and the
// selectors in opts.
func NewInformer[T runtime.Object](res Resource[T], namespace string, opts ListOptions) *Informer[T] {
	return &Informer[T]{
		res:       res,
		namespace: namespace,
		opts:      opts,
		items:     map[string]T{},
		indexers:  map[string]IndexFunc[T]{},
		indices:   map[string]map[string]sets.Set[string]{},
	}
}

// AddHandler registers h. Call it before Run.
func (i *Informer[T]) AddHandler(h Handler[T]) {
	if i.started.Load() {
		panic("client: AddHandler after Run")
	}
	i.handlers = append(i.handlers, h)
}

// AddIndex registers an index. Call it before Run.
func (i *Informer[T]) AddIndex(name string, f IndexFunc[T]) {
	if i.started.Load() {
		panic("client: AddIndex after Run")
	}
	i.indexers[name] = f
	i.indices[name] = map[string]sets.Set[string]{}
}

// HasSynced reports whether the first list has been delivered to the handlers.
func (i *Informer[T]) HasSynced() bool { return i.synced.Load() }

// Key is the cache key of an object: "namespace/name", or "name".
func Key(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return NamespacedKey(acc.GetNamespace(), acc.GetName())
}

// NamespacedKey builds a cache key.
func NamespacedKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Get returns the cached object namespace/name.
func (i *Informer[T]) Get(namespace, name string) (T, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	obj, ok := i.items[NamespacedKey(namespace, name)]
	return obj, ok
}

// GetByKey returns the cached object with a cache key.
func (i *Informer[T]) GetByKey(key string) (T, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	obj, ok := i.items[key]
	return obj, ok
}

// List returns every cached object, in no particular order.
func (i *Informer[T]) List() []T {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]T, 0, len(i.items))
	for _, obj := range i.items {
		out = append(out, obj)
	}
	return out
}

// ByIndex returns the cached objects whose index name has value.
func (i *Informer[T]) ByIndex(name, value string) []T {
	i.mu.RLock()
	defer i.mu.RUnlock()
	keys := i.indices[name][value]
	out := make([]T, 0, len(keys))
	for k := range keys {
		out = append(out, i.items[k])
	}
	return out
}

// Run lists, watches and relists until ctx is done.
func (i *Informer[T]) Run(ctx context.Context) {
	i.started.Store(true)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := i.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			if backoff < 5*time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 100 * time.Millisecond
	}
}

func (i *Informer[T]) listAndWatch(ctx context.Context) error {
	objs, rv, err := i.res.List(ctx, i.namespace, i.opts)
	if err != nil {
		return err
	}
	i.replace(objs)
	i.lastRV = rv
	i.synced.Store(true)
	for ctx.Err() == nil {
		opts := i.opts
		opts.ResourceVersion = i.lastRV
		w, err := i.res.Watch(ctx, i.namespace, opts)
		if err != nil {
			return err // 410 Gone and friends: relist
		}
		if err := i.consume(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// consume handles one watch until it ends; a nil error means "watch again
// from lastRV", an error means "relist".
func (i *Informer[T]) consume(ctx context.Context, w watch.Interface) error {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Error:
				return errWatch
			case watch.Bookmark:
				if acc, err := meta.Accessor(ev.Object); err == nil {
					i.lastRV = acc.GetResourceVersion()
				}
				continue
			}
			obj, ok := ev.Object.(T)
			if !ok {
				continue
			}
			if acc, err := meta.Accessor(obj); err == nil {
				i.lastRV = acc.GetResourceVersion()
			}
			if ev.Type == watch.Deleted {
				i.remove(Key(obj))
			} else {
				i.upsert(obj)
			}
		}
	}
}

type informerError string

func (e informerError) Error() string { return string(e) }

const errWatch = informerError("client: watch ended with an error event")

func (i *Informer[T]) upsert(obj T) {
	key := Key(obj)
	i.mu.Lock()
	old, existed := i.items[key]
	i.items[key] = obj
	i.reindex(key, old, existed, obj, true)
	i.mu.Unlock()
	for _, h := range i.handlers {
		if existed {
			if h.OnUpdate != nil {
				h.OnUpdate(old, obj)
			}
		} else if h.OnAdd != nil {
			h.OnAdd(obj)
		}
	}
}

func (i *Informer[T]) remove(key string) {
	i.mu.Lock()
	old, existed := i.items[key]
	if existed {
		delete(i.items, key)
		var zero T
		i.reindex(key, old, true, zero, false)
	}
	i.mu.Unlock()
	if !existed {
		return
	}
	for _, h := range i.handlers {
		if h.OnDelete != nil {
			h.OnDelete(old)
		}
	}
}

// replace makes the cache equal to a fresh list, notifying the differences.
func (i *Informer[T]) replace(objs []T) {
	seen := make(map[string]bool, len(objs))
	for _, obj := range objs {
		key := Key(obj)
		seen[key] = true
		if old, ok := i.GetByKey(key); ok && resourceVersion(old) == resourceVersion(obj) {
			continue
		}
		i.upsert(obj)
	}
	i.mu.RLock()
	var gone []string
	for key := range i.items {
		if !seen[key] {
			gone = append(gone, key)
		}
	}
	i.mu.RUnlock()
	for _, key := range gone {
		i.remove(key)
	}
}

// reindex updates the indices for key. Called with mu held.
func (i *Informer[T]) reindex(key string, old T, hadOld bool, obj T, hasNew bool) {
	for name, f := range i.indexers {
		idx := i.indices[name]
		if hadOld {
			for _, v := range f(old) {
				if s := idx[v]; s != nil {
					s.Delete(key)
					if s.Len() == 0 {
						delete(idx, v)
					}
				}
			}
		}
		if hasNew {
			for _, v := range f(obj) {
				if idx[v] == nil {
					idx[v] = sets.New[string]()
				}
				idx[v].Insert(key)
			}
		}
	}
}

func resourceVersion(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetResourceVersion()
}

// WaitForCacheSync waits until every informer has synced or ctx is done.
func WaitForCacheSync(ctx context.Context, synced ...func() bool) bool {
	for {
		all := true
		for _, s := range synced {
			if !s() {
				all = false
				break
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}
