package apiserver

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/yaml"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Server-side apply and managedFields
//
// `kubectl apply --server-side` sends the fields it cares about as
// PATCH application/apply-patch+yaml with a fieldManager. The server merges
// them into the live object (creating it when absent) and records, in
// metadata.managedFields, which manager owns which field. Applying a field
// another manager owns, with a different value, is a conflict:
//
//	409 Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas
//
// unless the request says force=true, which takes the field over. Ordinary
// writes through the API (create, update, patch) record their manager too
// (the fieldManager parameter or the client's User-Agent), so conflicts name
// who last set a field, as upstream. Writes that controllers make in-process
// bypass the HTTP handler and are not recorded.
//
// The merging is upstream's own: k8s.io/apimachinery's managedfields
// FieldManager over sigs.k8s.io/structured-merge-diff, with a type converter
// built from the OpenAPI definitions (package openapi), where lists with a
// patch merge key are maps keyed by it (containers by name) and other lists
// are atomic.

// fieldManagers builds and caches a FieldManager per kind and subresource.
type fieldManagers struct {
	s *Server

	mu         sync.Mutex // guards the fields below
	generation uint64     // of the definitions tc was built from
	tc         managedfields.TypeConverter
	scheme     *runtime.Scheme
	byKind     map[fieldManagerKey]*managedfields.FieldManager
}

type fieldManagerKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

// get returns the FieldManager of a resource's objects, rebuilding the type
// converter when the served resources (and so the definitions) changed.
func (f *fieldManagers) get(st *registry.Store, subresource string) (*managedfields.FieldManager, error) {
	defs, generation := f.s.openapi.Definitions()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tc == nil || f.generation != generation {
		tc, err := managedfields.NewTypeConverter(defs, false)
		if err != nil {
			return nil, err
		}
		f.generation, f.tc = generation, tc
		f.scheme = runtime.NewScheme()
		for _, rs := range f.s.reg.Resources() {
			f.scheme.AddKnownTypeWithName(rs.Resource.GroupVersionKind(), rs.Resource.New())
		}
		// A kind served in two versions (HPA v1 and v2, events.k8s.io and
		// core Events) keeps one managedFields list, each entry in the
		// version its manager wrote: the field manager converts between
		// them, as upstream's scheme does through the internal version.
		for _, rs := range f.s.reg.Resources() {
			if c := rs.Resource.Codec; c != nil {
				if err := addCodecConversions(f.scheme, rs.Resource.New(), c); err != nil {
					return nil, err
				}
			}
		}
		f.byKind = map[fieldManagerKey]*managedfields.FieldManager{}
	}
	gvk := st.Resource.GroupVersionKind()
	key := fieldManagerKey{gvk, subresource}
	if fm, ok := f.byKind[key]; ok {
		return fm, nil
	}
	// One version per kind: the hub is the served version, and the scheme
	// converts between typed and unstructured objects of it.
	fm, err := managedfields.NewDefaultFieldManager(f.tc, f.scheme, f.scheme, f.scheme, gvk, gvk.GroupVersion(), subresource, nil)
	if err != nil {
		return nil, err
	}
	f.byKind[key] = fm
	return fm, nil
}

// addCodecConversions teaches scheme a codec's two conversions, served kind
// to stored kind and back.
func addCodecConversions(scheme *runtime.Scheme, served runtime.Object, c *registry.Codec) error {
	set := func(out any, v runtime.Object) {
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(v).Elem())
	}
	if err := scheme.AddConversionFunc(served, c.NewStorage(), func(a, b any, _ conversion.Scope) error {
		set(b, c.ToStorage(a.(runtime.Object)))
		return nil
	}); err != nil {
		return err
	}
	return scheme.AddConversionFunc(c.NewStorage(), served, func(a, b any, _ conversion.Scope) error {
		set(b, c.FromStorage(a.(runtime.Object)))
		return nil
	})
}

// trackUpdate records the manager of a create, update or patch in newObj's
// managedFields (live is the stored object, or an empty one on create).
// It never fails the request: on trouble the live managedFields stay, as
// upstream's UpdateNoErrors does.
func (s *Server) trackUpdate(r *http.Request, st *registry.Store, subresource string, live, newObj runtime.Object, wo writeOptions) runtime.Object {
	fm, err := s.fields.get(st, subresource)
	if err != nil {
		return newObj
	}
	if live == nil {
		live = st.Resource.New()
	}
	return fm.UpdateNoErrors(live, newObj, managerFor(r, wo))
}

// apply serves PATCH application/apply-patch+yaml.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo, wo writeOptions, body []byte) error {
	switch info.Subresource {
	case "", "status":
	default:
		return apierrors.NewMethodNotSupported(st.Resource.GroupResource(), "apply")
	}
	fm, err := s.fields.get(st, info.Subresource)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	patch := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &patch.Object); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if wo.FieldValidation == metav1.FieldValidationStrict || wo.FieldValidation == metav1.FieldValidationWarn {
		if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
			if wo.FieldValidation == metav1.FieldValidationStrict {
				return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
			}
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", err.Error()))
		}
	}
	ctx := r.Context()
	ns := namespaceOf(st, info)
	for attempt := 0; attempt < 5; attempt++ {
		live, err := st.Get(ctx, ns, info.Name)
		created := false
		switch {
		case apierrors.IsNotFound(err) && info.Subresource == "":
			live, created = st.Resource.New(), true
		case err != nil:
			return err
		}
		out, err := fm.Apply(live, patch, wo.FieldManager, wo.Force)
		if err != nil {
			return err
		}
		if err := checkNames(out, info); err != nil {
			return err
		}
		if created {
			stored, err := st.Create(ctx, info.Namespace, out, registry.CreateOptions{DryRun: wo.DryRun})
			if apierrors.IsAlreadyExists(err) {
				continue // created meanwhile: apply to it
			}
			if err != nil {
				return err
			}
			return s.writeObject(w, info, http.StatusCreated, stored)
		}
		// Compare-and-swap against the object the merge started from.
		lacc, _ := meta.Accessor(live)
		oacc, _ := meta.Accessor(out)
		oacc.SetResourceVersion(lacc.GetResourceVersion())
		stored, err := st.Update(ctx, out, registry.UpdateOptions{DryRun: wo.DryRun, Subresource: info.Subresource})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return err
		}
		return s.writeObject(w, info, http.StatusOK, stored)
	}
	return apierrors.NewConflict(st.Resource.GroupResource(), info.Name, fmt.Errorf("too many conflicts while applying"))
}
