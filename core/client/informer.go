package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/trace"
)

// Handler receives an informer's notifications. Any func may be nil. The
// objects are the cache's own, and a shared informer's cache is shared by
// every component of the process that watches the resource: read them,
// never modify them (copy first).
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
//
// An Informer made with NewInformer from a client that shares informers
// (Client.WithSharedInformers) is one component's view of the factory's
// informer for that resource: one list, one watch and one cache for every
// controller of kube-controller-manager, each with its own handlers (see
// SharedInformerFactory).
type Informer[T runtime.Object] struct {
	shared *sharedInformer
	view   *informerView
	// own: the informer is this view's alone, and Run runs it.
	own bool
}

// sharedInformer is the list+watch and the cache behind one or more
// Informers (views). It holds plain runtime.Objects, so that views of
// different Go types (a controller's Informer[*corev1.Pod], the garbage
// collector's Informer[runtime.Object]) can share it.
type sharedInformer struct {
	namespace string
	opts      ListOptions

	// mu guards items, indexers and indices. Handlers run without it.
	mu       sync.RWMutex
	items    map[string]runtime.Object
	indexers map[string]func(runtime.Object) []string
	indices  map[string]map[string]sets.Set[string]

	// views get the notifications, in the order they were made; the first
	// one's client makes the requests. Fixed once the informer runs.
	views   []*informerView
	synced  atomic.Bool
	started atomic.Bool
	// lastRV is the resourceVersion of the last event or list seen.
	lastRV string
	// mutations is nil unless KUBE_CACHE_MUTATION_DETECTOR is set
	// (mutation_detector.go).
	mutations *mutationDetector
}

// informerView is one component's use of a shared informer: its client
// (the trace names it as the receiver of the lists and events) and its
// handlers.
type informerView struct {
	res      Resource[runtime.Object]
	handlers []Handler[runtime.Object]
}

// NewInformer returns an informer over res, for namespace ("" for all) and the
// selectors in opts. When res comes from a client with a shared informer
// factory, the informer is a view of the factory's informer for the same
// resource, namespace and selectors (made on first use), which the factory
// runs (after the factory's Start, an informer of its own): see
// SharedInformerFactory.
func NewInformer[T runtime.Object](res Resource[T], namespace string, opts ListOptions) *Informer[T] {
	// The same client, untyped (Resource's fields do not depend on T).
	view := &informerView{res: Resource[runtime.Object](res)}
	if f := res.informers; f != nil {
		if s := f.informerFor(view, namespace, opts); s != nil {
			return &Informer[T]{shared: s, view: view}
		}
	}
	s := newSharedInformer(namespace, opts)
	s.views = []*informerView{view}
	return &Informer[T]{shared: s, view: view, own: true}
}

func newSharedInformer(namespace string, opts ListOptions) *sharedInformer {
	return &sharedInformer{
		namespace: namespace,
		opts:      opts,
		items:     map[string]runtime.Object{},
		indexers:  map[string]func(runtime.Object) []string{},
		indices:   map[string]map[string]sets.Set[string]{},
		mutations: newMutationDetector(),
	}
}

// AddHandler registers h. Call it before Run (for a shared informer: before
// the factory's Start).
func (i *Informer[T]) AddHandler(h Handler[T]) {
	if i.shared.started.Load() {
		panic("client: AddHandler after Run")
	}
	var g Handler[runtime.Object]
	if h.OnAdd != nil {
		g.OnAdd = func(obj runtime.Object) {
			if o, ok := obj.(T); ok {
				h.OnAdd(o)
			}
		}
	}
	if h.OnUpdate != nil {
		g.OnUpdate = func(old, obj runtime.Object) {
			o, ok1 := old.(T)
			n, ok2 := obj.(T)
			if ok1 && ok2 {
				h.OnUpdate(o, n)
			}
		}
	}
	if h.OnDelete != nil {
		g.OnDelete = func(obj runtime.Object) {
			if o, ok := obj.(T); ok {
				h.OnDelete(o)
			}
		}
	}
	i.view.handlers = append(i.view.handlers, g)
}

// AddIndex registers an index. Call it before Run (for a shared informer:
// before the factory's Start). The views of a shared informer share its
// indexes: a name already registered keeps its first function, so one name
// must mean one index in every component (as client-go's indexer names do:
// "namespace").
func (i *Informer[T]) AddIndex(name string, f IndexFunc[T]) {
	s := i.shared
	if s.started.Load() {
		panic("client: AddIndex after Run")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.indexers[name]; ok {
		return
	}
	s.indexers[name] = func(obj runtime.Object) []string {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		return f(o)
	}
	s.indices[name] = map[string]sets.Set[string]{}
}

// HasSynced reports whether the first list has been delivered to the handlers.
func (i *Informer[T]) HasSynced() bool { return i.shared.synced.Load() }

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
	return i.GetByKey(NamespacedKey(namespace, name))
}

// GetByKey returns the cached object with a cache key.
func (i *Informer[T]) GetByKey(key string) (T, bool) {
	s := i.shared
	s.mu.RLock()
	obj, ok := s.items[key]
	s.mu.RUnlock()
	if !ok {
		var zero T
		return zero, false
	}
	o, ok := obj.(T)
	return o, ok
}

// List returns every cached object, in no particular order.
func (i *Informer[T]) List() []T {
	s := i.shared
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.items))
	for _, obj := range s.items {
		if o, ok := obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// ByIndex returns the cached objects whose index name has value.
func (i *Informer[T]) ByIndex(name, value string) []T {
	s := i.shared
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := s.indices[name][value]
	out := make([]T, 0, len(keys))
	for k := range keys {
		if o, ok := s.items[k].(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// Run lists, watches and relists until ctx is done. A view of a shared
// informer only waits for ctx: its factory runs the informer.
func (i *Informer[T]) Run(ctx context.Context) {
	if !i.own {
		<-ctx.Done()
		return
	}
	i.shared.run(ctx)
}

func (s *sharedInformer) run(ctx context.Context) {
	s.started.Store(true)
	if s.mutations != nil {
		defer func() {
			s.mu.RLock()
			defer s.mu.RUnlock()
			s.mutations.checkAll(s.items)
		}()
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := s.listAndWatch(ctx); err != nil && ctx.Err() == nil {
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

// The first view's client makes the list and the watch, so the API server
// sees the request of a component, as it would of its own informer; the
// trace then shows the same list and watch, and each event, reaching every
// other view's component too: what the learner follows is which controller
// reacts to a change, and every one of them gets it.

func (s *sharedInformer) listAndWatch(ctx context.Context) error {
	res := s.views[0].res
	objs, rv, err := res.List(ctx, s.namespace, s.opts)
	for _, v := range s.views[1:] {
		_, done, denied := v.res.call(ctx, "list", "", s.namespace, "")
		done(http.StatusOK, errors.Join(denied, err))
	}
	if err != nil {
		return err
	}
	s.replace(objs)
	s.lastRV = rv
	s.synced.Store(true)
	for ctx.Err() == nil {
		opts := s.opts
		opts.ResourceVersion = s.lastRV
		w, err := res.Watch(ctx, s.namespace, opts)
		for _, v := range s.views[1:] {
			_, done, denied := v.res.call(ctx, "watch", "", s.namespace, "")
			if err != nil || denied != nil {
				done(http.StatusOK, errors.Join(denied, err)) // a watch that starts answers only when it ends
			}
		}
		if err != nil {
			return err // 410 Gone and friends: relist
		}
		if err := s.consume(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// consume handles one watch until it ends; a nil error means "watch again
// from lastRV", an error means "relist".
func (s *sharedInformer) consume(ctx context.Context, w watch.Interface) error {
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
					s.lastRV = acc.GetResourceVersion()
				}
				continue
			}
			obj := ev.Object
			acc, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			s.lastRV = acc.GetResourceVersion()
			for _, v := range s.views[1:] {
				v.res.store.TraceWatch(trace.WithComponent(ctx, v.res.component), ev)
			}
			if ev.Type == watch.Deleted {
				s.remove(Key(obj))
			} else {
				s.upsert(obj)
			}
		}
	}
}

type informerError string

func (e informerError) Error() string { return string(e) }

const errWatch = informerError("client: watch ended with an error event")

func (s *sharedInformer) upsert(obj runtime.Object) {
	key := Key(obj)
	s.mu.Lock()
	old, existed := s.items[key]
	s.items[key] = obj
	s.reindex(key, old, existed, obj, true)
	s.mutations.cached(key, old, obj)
	s.mu.Unlock()
	for _, v := range s.views {
		for _, h := range v.handlers {
			if existed {
				if h.OnUpdate != nil {
					h.OnUpdate(old, obj)
				}
			} else if h.OnAdd != nil {
				h.OnAdd(obj)
			}
		}
	}
}

func (s *sharedInformer) remove(key string) {
	s.mu.Lock()
	old, existed := s.items[key]
	if existed {
		delete(s.items, key)
		s.reindex(key, old, true, nil, false)
		s.mutations.cached(key, old, nil)
	}
	s.mu.Unlock()
	if !existed {
		return
	}
	for _, v := range s.views {
		for _, h := range v.handlers {
			if h.OnDelete != nil {
				h.OnDelete(old)
			}
		}
	}
}

// replace makes the cache equal to a fresh list, notifying the differences.
func (s *sharedInformer) replace(objs []runtime.Object) {
	seen := make(map[string]bool, len(objs))
	for _, obj := range objs {
		key := Key(obj)
		seen[key] = true
		s.mu.RLock()
		old, ok := s.items[key]
		s.mu.RUnlock()
		if ok && resourceVersion(old) == resourceVersion(obj) {
			continue
		}
		s.upsert(obj)
	}
	s.mu.RLock()
	var gone []string
	for key := range s.items {
		if !seen[key] {
			gone = append(gone, key)
		}
	}
	s.mu.RUnlock()
	for _, key := range gone {
		s.remove(key)
	}
}

// reindex updates the indices for key. Called with mu held.
func (s *sharedInformer) reindex(key string, old runtime.Object, hadOld bool, obj runtime.Object, hasNew bool) {
	for name, f := range s.indexers {
		idx := s.indices[name]
		if hadOld {
			for _, v := range f(old) {
				if set := idx[v]; set != nil {
					set.Delete(key)
					if set.Len() == 0 {
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
