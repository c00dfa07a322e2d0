package client

import (
	"context"
	"sync"
)

// SharedInformerFactory shares informers among the components of one
// process: one list, one watch and one cache per resource, namespace and
// selectors, whatever the number of controllers that watch it. It is
// client-go's informers.SharedInformerFactory, which kube-controller-manager
// makes once and hands to every controller it starts
// (cmd/kube-controller-manager/app/controllermanager.go
// CreateControllerContext, then InformerFactory.Start after the controllers).
//
// Without it each of the twenty controllers would list the pods and receive
// (and copy) every pod event through a watch of its own:
//
//	                                 ┌─▶ replicaset-controller's handlers
//	API server ── one pods watch ──▶ cache ─▶ deployment-controller's handlers
//	                                 └─▶ ... (endpoints, disruption, gc, ...)
//
// The objects in a shared cache are shared by every controller: handlers
// and readers must not modify them (copy first), as client-go documents.
// The scheduler, the kubelets and kube-proxy are other processes upstream,
// with informers of their own: they do not use the controller manager's
// factory.
//
// A client shares informers once WithSharedInformers gives it the factory:
// NewInformer over its resources returns views of the factory's informers.
// Views are made (and their handlers and indexes added) before Start, which
// runs every informer of the factory; an informer made after Start is its
// component's own, run by the component, as without a factory.
type SharedInformerFactory struct {
	mu        sync.Mutex
	informers map[informerKey]*sharedInformer
	// ctx is Start's context: nil until Start.
	ctx context.Context
	// running counts the informers' goroutines (Shutdown waits for them).
	running sync.WaitGroup
}

// informerKey names what a shared informer lists: the resource (its
// registry store), the namespace ("" for all) and the selectors.
type informerKey struct {
	store     any
	namespace string
	labels    string
	fields    string
}

// NewSharedInformerFactory returns a factory with no informers yet.
func NewSharedInformerFactory() *SharedInformerFactory {
	return &SharedInformerFactory{informers: map[informerKey]*sharedInformer{}}
}

// WithSharedInformers returns a copy of c whose informers (NewInformer over
// its resources) are views of f's.
func (c *Client) WithSharedInformers(f *SharedInformerFactory) *Client {
	cp := *c
	cp.informers = f
	return &cp
}

// informerFor adds view to the factory's informer for namespace and opts
// over the view's resource, made now if there is none. After Start it
// returns nil: the caller's informer is its own.
func (f *SharedInformerFactory) informerFor(view *informerView, namespace string, opts ListOptions) *sharedInformer {
	key := informerKey{store: view.res.store, namespace: namespace}
	if opts.LabelSelector != nil {
		key.labels = opts.LabelSelector.String()
	}
	if opts.FieldSelector != nil {
		key.fields = opts.FieldSelector.String()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil {
		return nil
	}
	s := f.informers[key]
	if s == nil {
		s = newSharedInformer(namespace, opts)
		f.informers[key] = s
	}
	s.views = append(s.views, view)
	return s
}

// Start runs every informer of the factory until ctx is done. Call it once,
// after the components have made their informers; a second call does
// nothing.
func (f *SharedInformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil {
		return
	}
	f.ctx = ctx
	for _, s := range f.informers {
		s.started.Store(true) // before run: no handler may join once the first one runs
		f.running.Add(1)
		go func() {
			defer f.running.Done()
			s.run(ctx)
		}()
	}
}

// Shutdown waits until the informers Start ran have returned, which they do
// once Start's context is done.
func (f *SharedInformerFactory) Shutdown() { f.running.Wait() }
