package client

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// The objects in an informer's cache are shared (with every handler, and in
// a shared informer with every controller): a component that modifies one
// instead of a copy corrupts what the others read, a bug that shows up far
// from its cause. client-go's cache mutation detector finds it, and so does
// this one, turned on the same way: KUBE_CACHE_MUTATION_DETECTOR=true in the
// environment (tests: `KUBE_CACHE_MUTATION_DETECTOR=true go test ./core/...`).
// It keeps a copy of every object the cache holds and panics, naming the
// object, when the cached one no longer equals its copy: checked when the
// object leaves the cache (replaced by a newer one, or deleted) and when the
// informer stops. It doubles the cache's memory and copies every object: a
// debugging aid, off by default.
// Upstream: k8s.io/client-go/tools/cache/mutation_detector.go.
var mutationDetection, _ = strconv.ParseBool(os.Getenv("KUBE_CACHE_MUTATION_DETECTOR"))

// mutationDetector holds the copies of one informer's cached objects.
type mutationDetector struct {
	mu     sync.Mutex
	copies map[string]runtime.Object
}

func newMutationDetector() *mutationDetector {
	if !mutationDetection {
		return nil
	}
	return &mutationDetector{copies: map[string]runtime.Object{}}
}

// cached notes that key now holds obj (nil: nothing), after checking the
// object it held.
func (d *mutationDetector) cached(key string, old, obj runtime.Object) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checkLocked(key, old)
	if obj == nil {
		delete(d.copies, key)
		return
	}
	d.copies[key] = obj.DeepCopyObject()
}

// checkAll checks every cached object against its copy.
func (d *mutationDetector) checkAll(items map[string]runtime.Object) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, obj := range items {
		d.checkLocked(key, obj)
	}
}

func (d *mutationDetector) checkLocked(key string, obj runtime.Object) {
	if obj == nil {
		return
	}
	if c, ok := d.copies[key]; ok && !equality.Semantic.DeepEqual(c, obj) {
		panic(fmt.Sprintf("client: cache mutation detected for %s %q: a component modified an object of an informer's cache instead of a copy\ncached:\n%#v\nas it came:\n%#v", fmt.Sprintf("%T", obj), key, obj, c))
	}
}
