package registry

import (
	"fmt"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubetab/kubetab/core/store"
)

// StoreOfKey is the store whose resource keeps an etcd key, with the
// namespace and name the key names; nil for a key no resource keeps. The
// API server's storekeys resource (flow.kubetab.dev) uses it to decode and
// name any key.
func (r *Registry) StoreOfKey(key string) (s *Store, namespace, name string) {
	if s = r.storeOfKey(key); s == nil {
		return nil, "", ""
	}
	namespace, name = splitKey(s, key)
	return s, namespace, name
}

// DecodeValue decodes any stored value of the store's resource (an old
// revision too) into a new object, without touching the decoded cache,
// which keeps only the latest values.
func (s *Store) DecodeValue(kv store.KeyValue) (k8sruntime.Object, error) {
	return s.decodeFresh(kv)
}

// DecodeCurrent decodes a key's current value (from the store's List or
// Get) through the decoded cache, where the components' first lists find
// it: checking a restored snapshot's keys thus decodes each of them once
// for the whole cluster. The object is shared: read it, never modify it.
func (s *Store) DecodeCurrent(kv store.KeyValue) (k8sruntime.Object, error) {
	return s.decodeShared(kv)
}

// DecodeYAML decodes a stored key's value to the YAML of its object, with
// apiVersion, kind and the resourceVersion the key's mod revision: what
// the console's `etcdctl get KEY --decode` prints.
func (r *Registry) DecodeYAML(kv store.KeyValue) ([]byte, error) {
	s, _, _ := r.StoreOfKey(kv.Key)
	if s == nil {
		return nil, fmt.Errorf("no resource of the API server keeps %s", kv.Key)
	}
	obj, err := s.DecodeValue(kv)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(obj)
}
