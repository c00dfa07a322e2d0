package registry

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/store"
)

// The authorizers' view of the registry.
//
// The RBAC authorizer reads every binding on every request. Upstream reads
// them from informers' caches; kubetab keeps one in-memory copy of the
// RBAC objects in the API server (core/apiserver's policy cache) and drops
// it whenever an RBAC object is written. PolicyGeneration says when: the
// store tells the registry of every write as it publishes it, before the
// write returns to its client, so a RoleBinding kubectl has just created
// applies to kubectl's next request.

// observe sees every write to the store (store.SetObserver): it counts the
// writes to RBAC objects and records the write in the trace.
func (r *Registry) observe(ev store.Event) {
	if isPolicyKey(ev.KV.Key) {
		r.policyGen.Add(1)
	}
	if r.trace != nil {
		r.traceWrite(ev)
	}
}

// policyPrefixes are the keys of the RBAC objects.
var policyPrefixes = []string{"/registry/clusterroles/", "/registry/clusterrolebindings/", "/registry/roles/", "/registry/rolebindings/"}

func isPolicyKey(key string) bool {
	if !strings.HasPrefix(key, "/registry/") {
		return false
	}
	for _, p := range policyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// PolicyGeneration changes whenever a Role, ClusterRole, RoleBinding or
// ClusterRoleBinding is created, updated or deleted.
func (r *Registry) PolicyGeneration() uint64 { return r.policyGen.Load() }

// VisitShared calls visit with each object of namespace ("" for all), in
// key order, until it returns false. The objects are the registry's
// decoded cache, shared with every reader: visit must not modify or keep
// them. The Node authorizer walks pods this way.
func (s *Store) VisitShared(namespace string, visit func(runtime.Object) bool) error {
	kvs, _ := s.reg.kv.List(s.prefix(namespace))
	for _, kv := range kvs {
		obj, err := s.decodeShared(kv)
		if err != nil {
			return err
		}
		if !visit(obj) {
			return nil
		}
	}
	return nil
}

// GetShared returns the current object namespace/name from the decoded
// cache (NotFound if there is none): the caller must not modify it.
func (s *Store) GetShared(namespace, name string) (runtime.Object, error) {
	return s.getShared(namespace, name)
}
