package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/store"
)

// This file opens the registry's view of the store to the HTTP handler
// (core/apiserver), which pages lists (limit/continue, resourceVersionMatch)
// and streams watches with bookmarks straight from the store, the way
// upstream's etcd3 store and watch cache do below the generic registry.
// Objects still go through the same decoding and selectors as List and Watch.

// KeyPrefix is the store prefix a list of namespace ("" for all) reads:
// "/registry/pods/default/" or "/registry/pods/".
func (s *Store) KeyPrefix(namespace string) string { return s.prefix(namespace) }

// DecodeKV turns a stored key/value into an object whose resourceVersion is
// the key's mod revision.
func (s *Store) DecodeKV(kv store.KeyValue) (runtime.Object, error) { return s.decode(kv) }

// Matches reports whether obj passes the label and field selectors of opts.
func (s *Store) Matches(obj runtime.Object, opts ListOptions) bool { return s.matches(obj, opts) }

// WatchEvent turns a store event into the watch event a client with opts
// sees (ADDED, MODIFIED or DELETED after the selectors); ok is false when
// the client sees nothing.
func (s *Store) WatchEvent(ev store.Event, opts ListOptions) (out watch.Event, ok bool, err error) {
	return s.convert(ev, opts)
}

// Gone is closed once the store is no longer served (Registry.Unregister):
// a watch the API server streams from the store's prefix ends then.
func (s *Store) Gone() <-chan struct{} { return s.gone }
