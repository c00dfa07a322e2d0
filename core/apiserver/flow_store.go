package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
	"github.com/kubetab/kubetab/core/store"
)

// storekeys serves a read-only view of the store, etcd's keys as
// kube-apiserver writes them, as the resource storekeys: one object per
// key, its resourceVersion the key's modRevision, its value decoded to the
// object (what `etcdctl get` prints as protobuf). A list is at one store
// revision (its resourceVersion), a watch streams every write after a
// revision (PUT of a new key: ADDED, of an existing one: MODIFIED; DELETE:
// DELETED) and answers 410 Gone from a compacted revision, as a watch of
// pods does. storekeys/NAME/history is every write of the key the store
// still holds.
//
//	kubectl get storekeys --field-selector object.resource=deployments.apps
//	kubectl get storekey registry.deployments.default.web -o yaml
//	kubectl get --raw /apis/flow.kubetab.dev/v1alpha1/storekeys/registry.deployments.default.web/history
var storeKeysResource = &flowResource{
	resource: "storekeys", singular: "storekey", kind: "StoreKey", listKind: "StoreKeyList",
	verbs:        []string{"get", "list", "watch"},
	subresources: []string{"history"},
	fields:       []string{"key", "object.resource", "object.namespace", "object.name"},
	columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "The key with its slashes as dots."},
		{Name: "Key", Type: "string", Description: "The etcd key."},
		{Name: "Create-Revision", Type: "integer"},
		{Name: "Mod-Revision", Type: "integer"},
		{Name: "Version", Type: "integer"},
		{Name: "Size", Type: "integer", Description: "The stored value's bytes."},
		{Name: "Encoding", Type: "string", Priority: 1},
	},
	list: func(s *Server, rv int64) ([]flowObject, int64, error) {
		kv := s.reg.KV()
		kvs, at, err := kv.ListAt("/", rv)
		switch {
		case errors.Is(err, store.ErrCompacted):
			return nil, 0, apierrors.NewResourceExpired(expiredList)
		case errors.Is(err, store.ErrFuture):
			return nil, 0, tooLargeResourceVersion(rv, kv.Revision())
		case err != nil:
			return nil, 0, apierrors.NewInternalError(err)
		}
		out := make([]flowObject, 0, len(kvs))
		for _, x := range kvs {
			out = append(out, s.storeKeyObject(x))
		}
		return out, at, nil
	},
	watch: func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error) {
		kv := s.reg.KV()
		if rv == 0 {
			rv = kv.Revision()
		}
		sw, err := kv.Watch(ctx, "/", rv)
		switch {
		case errors.Is(err, store.ErrCompacted):
			return nil, tooOld(rv, kv.CompactedRevision())
		case errors.Is(err, store.ErrFuture):
			return nil, tooLargeResourceVersion(rv, kv.Revision())
		case err != nil:
			return nil, apierrors.NewInternalError(err)
		}
		ch := make(chan flowEvent, 64)
		go func() {
			defer close(ch)
			defer sw.Stop()
			for {
				var ev flowEvent
				select {
				case <-ctx.Done():
					return
				case sev, ok := <-sw.ResultChan():
					if !ok {
						if err := sw.Err(); err != nil {
							ev = flowEvent{err: apierrors.NewResourceExpired(err.Error())}
						} else {
							return
						}
					} else {
						ev = flowEvent{rv: sev.Revision()}
						switch {
						case sev.Type == store.Progress:
						case sev.Type == store.Delete:
							ev.typ, ev.obj = watch.Deleted, s.storeKeyObject(sev.KV)
						case sev.PrevKV == nil:
							ev.typ, ev.obj = watch.Added, s.storeKeyObject(sev.KV)
						default:
							ev.typ, ev.obj = watch.Modified, s.storeKeyObject(sev.KV)
						}
					}
				}
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
				if ev.err != nil {
					return
				}
			}
		}()
		return ch, nil
	},
	get: func(s *Server, name string) (flowObject, error) {
		x, ok := s.keyOfName(name)
		if !ok {
			return flowObject{}, apierrors.NewNotFound(storeKeysGR, name)
		}
		return s.storeKeyObject(x), nil
	},
	serveNamed: func(s *Server, w http.ResponseWriter, r *http.Request, name, sub string) {
		if sub != "history" || r.Method != http.MethodGet {
			writeError(w, r, apierrors.NewMethodNotSupported(storeKeysGR, verbOfMethod(r.Method, true)))
			return
		}
		s.storeKeyHistory(w, r, name)
	},
}

var storeKeysGR = schema.GroupResource{Group: flowGV.Group, Resource: "storekeys"}

// keyName is the storekeys name of an etcd key: no leading "/", and every
// "/" a ".".
func keyName(key string) string {
	return strings.ReplaceAll(strings.TrimPrefix(key, "/"), "/", ".")
}

// keyOfName finds the key a name stands for. A name's dots are the key's
// slashes and maybe dots of the object's name (kube-root-ca.crt), so it
// tries the splits from the fewest slashes: registry.configmaps.default.a.b
// is /registry/configmaps/default/a.b if that key exists. A key that was
// deleted may still have a history: then the first split the store knows
// anything of answers.
func (s *Server) keyOfName(name string) (store.KeyValue, bool) {
	kv := s.reg.KV()
	for _, key := range keyCandidates(name) {
		if x, err := kv.Get(key); err == nil {
			return x, true
		}
	}
	return store.KeyValue{}, false
}

func keyCandidates(name string) []string {
	parts := strings.Split(name, ".")
	var out []string
	// With k slashes: the first k dots are slashes, the rest stay dots.
	for k := 1; k < len(parts); k++ {
		out = append(out, "/"+strings.Join(parts[:k], "/")+"/"+strings.Join(parts[k:], "."))
	}
	// Prefer the keys kube-apiserver writes: /registry/<resource>/<ns>/<name>
	// (3 slashes after the first), then cluster-scoped, then the others.
	order := []int{3, 2, 4, 1, 5}
	var sorted []string
	for _, k := range order {
		if k-1 < len(out) {
			sorted = append(sorted, out[k-1])
		}
	}
	for i, c := range out {
		if i+1 > 5 {
			sorted = append(sorted, c)
		}
	}
	return sorted
}

// storeKeyObject is a key as a StoreKey object.
func (s *Server) storeKeyObject(x store.KeyValue) flowObject {
	name := keyName(x.Key)
	rv := strconv.FormatInt(x.ModRevision, 10)
	m := metav1.ObjectMeta{Name: name, ResourceVersion: rv}
	sk := &flowv1alpha1.StoreKey{
		TypeMeta:   metav1.TypeMeta{Kind: "StoreKey", APIVersion: flowGV.String()},
		ObjectMeta: m,
		Key:        x.Key, CreateRevision: x.CreateRevision, ModRevision: x.ModRevision, Version: x.Version,
		Size: len(x.Value), Encoding: valueEncoding(x.Value),
	}
	f := fields.Set{"key": x.Key}
	if st, ns, n := s.reg.StoreOfKey(x.Key); st != nil {
		sk.Object = &flowv1alpha1.ObjectReference{Resource: st.Resource.TraceName(), Namespace: ns, Name: n}
		f["object.resource"], f["object.namespace"], f["object.name"] = sk.Object.Resource, ns, n
		sk.Value = s.decodeValue(x)
	}
	return flowObject{
		obj: sk, name: name, order: x.Key, rv: x.ModRevision, meta: m, fields: f,
		cells: []any{name, x.Key, x.CreateRevision, x.ModRevision, x.Version, len(x.Value), sk.Encoding},
	}
}

// valueEncoding says how a value is stored: kube-apiserver's protobuf
// envelope starts with the magic "k8s\x00".
func valueEncoding(v []byte) string {
	switch {
	case bytes.HasPrefix(v, []byte("k8s\x00")):
		return "protobuf"
	case len(v) > 0 && v[0] == '{':
		return "json"
	case len(v) == 0:
		return ""
	}
	return "bytes"
}

// decodeValue decodes a stored value to its object's JSON; a value that
// does not decode is left out (Size and Encoding still tell of it).
func (s *Server) decodeValue(x store.KeyValue) runtime.RawExtension {
	st, _, _ := s.reg.StoreOfKey(x.Key)
	if st == nil || len(x.Value) == 0 {
		return runtime.RawExtension{}
	}
	obj, err := st.DecodeValue(x)
	if err != nil {
		return runtime.RawExtension{}
	}
	// The stored bytes hold no resourceVersion (the key's mod revision is
	// it, set on the way out of the API server): show them as stored.
	if acc, err := meta.Accessor(obj); err == nil {
		acc.SetResourceVersion("")
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return runtime.RawExtension{}
	}
	return runtime.RawExtension{Raw: raw}
}

// storeKeyHistory serves storekeys/NAME/history.
func (s *Server) storeKeyHistory(w http.ResponseWriter, r *http.Request, name string) {
	out, err := negotiate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	kv := s.reg.KV()
	var revs []store.KeyRevision
	var rev int64
	key := ""
	for _, c := range keyCandidates(name) {
		if revs, rev = kv.History(c); len(revs) > 0 {
			key = c
			break
		}
	}
	if key == "" {
		writeError(w, r, apierrors.NewNotFound(storeKeysGR, name))
		return
	}
	h := &flowv1alpha1.StoreKeyHistory{
		TypeMeta:   metav1.TypeMeta{Kind: "StoreKeyHistory", APIVersion: flowGV.String()},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatInt(rev, 10)},
		Key:        key, Revision: rev, CompactRevision: kv.CompactedRevision(),
		Revisions: []flowv1alpha1.StoreKeyRevision{},
	}
	for _, x := range revs {
		kr := flowv1alpha1.StoreKeyRevision{Type: "PUT", CreateRevision: x.KV.CreateRevision, ModRevision: x.KV.ModRevision, Version: x.KV.Version, Size: len(x.KV.Value)}
		if x.Deleted {
			kr.Type = "DELETE"
		} else {
			kr.Value = s.decodeValue(x.KV)
		}
		h.Revisions = append(h.Revisions, kr)
	}
	writeEncoded(w, out, http.StatusOK, h)
}
