package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	googleuuid "github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/store"
)

// How objects are kept in the store, and decoded only once.
//
// # Storage media type
//
// kube-apiserver writes built-in objects to etcd as protobuf (its default
// --storage-media-type is application/vnd.kubernetes.protobuf): the four
// bytes "k8s\x00", then a runtime.Unknown envelope naming apiVersion and kind
// around the object's own protobuf encoding (upstream:
// k8s.io/apimachinery/pkg/runtime/serializer/protobuf). kubetab does the
// same, which is why `etcdctl get /registry/pods/default/web-x` prints
// mostly binary with readable strings, as it does against a real cluster.
// Objects without a protobuf encoding (kubetab's own kinds) are stored as
// JSON, as upstream stores custom resources; decode reads both.
//
// Protobuf is also much cheaper: a Pod decodes in ~3 µs natively and ~15 µs
// in the browser, against ~18 µs and ~117 µs with encoding/json, whose
// reflection is slow in WebAssembly.
//
// # Decoded once
//
// Each write is read back by every watcher (the scheduler, the controllers,
// each kubelet) and by the next read-modify-write. Decoding it once per
// reader would repeat the same work many times, so the registry keeps the
// decoded form of each key's latest values, as upstream's watch cache
// (k8s.io/apiserver/pkg/storage/cacher) keeps decoded objects. A cached
// object is shared and never modified: readers get a deep copy (a few µs),
// or the object itself where they only read it (admission lookups).
//
// An entry is found by the stored value itself: the store never modifies a
// value's bytes, so the same backing array means the same object, whatever
// happened to the store since (a snapshot restore brings new arrays).

// storageMagic starts a protobuf value, as in kube-apiserver.
var storageMagic = []byte("k8s\x00")

// protoObject is what the protobuf encoding needs of a stored object; the
// generated code of k8s.io/api provides it.
type protoObject interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
	Unmarshal([]byte) error
}

// marshalStorage encodes stored (its resourceVersion already cleared) for the
// store.
func marshalStorage(stored runtime.Object) ([]byte, error) {
	p, ok := stored.(protoObject)
	if !ok {
		return json.Marshal(stored)
	}
	gvk := stored.GetObjectKind().GroupVersionKind()
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
	// The envelope's Raw is the object's bytes: size both, then write the
	// object at the end of one buffer and the envelope's header before it.
	n := p.Size()
	unk.Raw = make([]byte, n)
	if _, err := p.MarshalToSizedBuffer(unk.Raw); err != nil {
		return nil, err
	}
	data := make([]byte, len(storageMagic)+unk.Size())
	copy(data, storageMagic)
	if _, err := unk.MarshalToSizedBuffer(data[len(storageMagic):]); err != nil {
		return nil, err
	}
	return data, nil
}

// unmarshalStorage decodes a stored value into into, which has the stored
// kind kind.
func unmarshalStorage(value []byte, into runtime.Object, kind string) error {
	if !bytes.HasPrefix(value, storageMagic) {
		return json.Unmarshal(value, into)
	}
	p, ok := into.(protoObject)
	if !ok {
		return fmt.Errorf("%T has no protobuf encoding", into)
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(value[len(storageMagic):]); err != nil {
		return err
	}
	if unk.Kind != kind {
		return fmt.Errorf("stored kind %s, want %s", unk.Kind, kind)
	}
	return p.Unmarshal(unk.Raw)
}

// decodeFresh decodes a stored value into a new object, with resourceVersion
// set to the key's mod revision.
func (s *Store) decodeFresh(kv store.KeyValue) (runtime.Object, error) {
	var obj runtime.Object
	if c := s.Resource.Codec; c != nil {
		stored := c.NewStorage()
		if err := unmarshalStorage(kv.Value, stored, c.Storage.Kind); err != nil {
			return nil, fmt.Errorf("registry: decode %s: %w", kv.Key, err)
		}
		obj = c.FromStorage(stored)
	} else {
		obj = s.Resource.New()
		if err := unmarshalStorage(kv.Value, obj, s.Resource.Kind); err != nil {
			return nil, fmt.Errorf("registry: decode %s: %w", kv.Key, err)
		}
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	obj.GetObjectKind().SetGroupVersionKind(s.Resource.GroupVersionKind())
	return obj, nil
}

// decode returns the object of a stored value for the caller to keep and
// modify.
func (s *Store) decode(kv store.KeyValue) (runtime.Object, error) {
	obj, err := s.decodeShared(kv)
	if err != nil {
		return nil, err
	}
	return obj.DeepCopyObject(), nil
}

// decodeShared returns the object of a stored value from the decoded cache,
// decoding it on a miss. The object is shared: do not modify it.
func (s *Store) decodeShared(kv store.KeyValue) (runtime.Object, error) {
	if obj := s.decoded.get(kv); obj != nil {
		return obj, nil
	}
	obj, err := s.decodeFresh(kv)
	if err != nil {
		return nil, err
	}
	s.decoded.put(kv, obj)
	return obj, nil
}

// decodedCache holds the decoded form of the two latest values of each key
// of one resource (the current one, and the one before it, which watchers
// need as the previous state of the next event), and of a bounded number of
// recently deleted keys.
type decodedCache struct {
	mu   sync.Mutex
	keys map[string]*decodedKey
}

type decodedKey struct {
	cur, prev decodedValue
}

type decodedValue struct {
	value []byte // the stored value (its identity is what matches)
	rev   int64  // its mod revision
	obj   runtime.Object
}

func (v *decodedValue) is(value []byte) bool {
	return v.obj != nil && len(v.value) == len(value) && len(value) > 0 && &v.value[0] == &value[0]
}

func (c *decodedCache) get(kv store.KeyValue) runtime.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.keys[kv.Key]
	switch {
	case k == nil:
		return nil
	case k.cur.is(kv.Value):
		return k.cur.obj
	case k.prev.is(kv.Value):
		return k.prev.obj
	}
	return nil
}

func (c *decodedCache) put(kv store.KeyValue, obj runtime.Object) {
	if len(kv.Value) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[string]*decodedKey{}
	}
	k := c.keys[kv.Key]
	if k == nil {
		k = &decodedKey{}
		c.keys[kv.Key] = k
	}
	if k.cur.is(kv.Value) || k.prev.is(kv.Value) {
		return
	}
	v := decodedValue{value: kv.Value, rev: kv.ModRevision, obj: obj}
	if v.rev > k.cur.rev {
		k.prev, k.cur = k.cur, v
	} else {
		k.prev = v // an older value a lagging watcher reads
	}
}

// forget drops a deleted key. Watchers still to see the deletion decode its
// last value again.
func (c *decodedCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.keys, key)
}

func init() {
	// Every created object gets a random UID. Draw the random bytes from a
	// pool refilled 256 UIDs at a time rather than asking the platform for
	// each: in the browser every ask is a call out to JavaScript's
	// crypto.getRandomValues. Called here, before any UID is made, because
	// enabling the pool is not safe while UIDs are being made.
	googleuuid.EnableRandPool()
}
