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

// traceWrite records a write to etcd: verb "put" or "delete".
func (s *Store) traceWrite(verb string, kv store.KeyValue) {
	if s.reg.trace == nil {
		return
	}
	ns, name := splitKey(s, kv.Key)
	s.reg.trace.Record(trace.Hop{
		Kind: trace.Write, From: trace.APIServer, To: trace.Etcd, Verb: verb,
		Resource: s.Resource.TraceName(), Namespace: ns, Name: name, Key: kv.Key, Revision: kv.ModRevision,
	})
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
