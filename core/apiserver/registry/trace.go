package registry

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

// The registry's hops in the trace (core/trace): each write to etcd, and
// each watch event handed to a component that names itself in its context.

// Trace is the registry's trace recorder; nil records nothing.
func (r *Registry) Trace() *trace.Recorder { return r.trace }

// TraceName is how hops name the resource: "pods", "deployments.apps".
func (res *Resource) TraceName() string {
	if res.Group == "" {
		return res.Resource
	}
	return res.Resource + "." + res.Group
}

// traceWrite records a write to etcd: verb "put" or "delete". The store
// calls it as it publishes the write (store.SetObserver), before any
// watcher can see it, so in the trace the write always comes before the
// watch events it causes.
func (r *Registry) traceWrite(ev store.Event) {
	verb := "put"
	if ev.Type == store.Delete {
		verb = "delete"
	}
	h := trace.Hop{Kind: trace.Write, From: trace.APIServer, To: trace.Etcd, Verb: verb, Key: ev.KV.Key, Revision: ev.KV.ModRevision}
	if s := r.storeOfKey(ev.KV.Key); s != nil {
		h.Resource = s.Resource.TraceName()
		h.Namespace, h.Name = splitKey(s, ev.KV.Key)
	}
	r.trace.Record(h)
}

// storeOfKey is the store whose resource keeps key: <prefix>/<name> for a
// cluster-scoped resource, <prefix>/<namespace>/<name> for a namespaced one.
func (r *Registry) storeOfKey(key string) *Store {
	r.mu.RLock()
	defer r.mu.RUnlock()
	prefix := key
	for _, namespaced := range []bool{false, true} {
		i := strings.LastIndexByte(prefix, '/')
		if i <= 0 {
			return nil
		}
		prefix = prefix[:i]
		if s := r.byPrefix[prefix]; s != nil && s.Resource.Namespaced == namespaced {
			return s
		}
	}
	return nil
}

// splitKey reads namespace and name back from a key of s.
func splitKey(s *Store, key string) (namespace, name string) {
	rest := strings.TrimPrefix(key, s.Resource.KeyPrefix+"/")
	if s.Resource.Namespaced {
		namespace, name, _ = strings.Cut(rest, "/")
		return namespace, name
	}
	return "", rest
}

// TraceWatch records a watch event delivered to the component named by ctx
// (nothing if ctx names none, as for the page's own panels).
func (s *Store) TraceWatch(ctx context.Context, ev watch.Event) {
	if s.reg.trace == nil {
		return
	}
	who := trace.Component(ctx)
	if who == "" {
		return
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return // bookmarks and errors carry no change
	}
	acc, err := meta.Accessor(ev.Object)
	if err != nil {
		return
	}
	rev, _ := parseRV(acc.GetResourceVersion())
	s.reg.trace.Record(trace.Hop{
		Kind: trace.Watch, From: trace.APIServer, To: who, Verb: string(ev.Type),
		Resource: s.Resource.TraceName(), Namespace: acc.GetNamespace(), Name: acc.GetName(), Revision: rev,
	})
}

// Registry is the registry the store belongs to.
func (s *Store) Registry() *Registry { return s.reg }
