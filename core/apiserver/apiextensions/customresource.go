package apiextensions

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// customResource builds the registry.Resource of one served version of a
// CRD: the custom resource's store, under upstream's key prefix
// /registry/<group>/<plural>.
func customResource(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) *registry.Resource {
	n := crd.Status.AcceptedNames
	gvk := metav1.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: n.Kind}
	st := &crStrategy{gvk: gvk, namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}
	var openAPI []byte
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		st.schema = v.Schema.OpenAPIV3Schema
		openAPI, _ = json.Marshal(st.schema)
	}
	var subs []string
	if s := v.Subresources; s != nil {
		if s.Status != nil {
			st.status = true
			subs = append(subs, "status")
		}
		if s.Scale != nil {
			st.scale = s.Scale
			subs = append(subs, "scale")
		}
	}
	st.columns = printerColumns(v)
	listKind := n.ListKind
	if listKind == "" {
		listKind = n.Kind + "List"
	}
	newObj := func() runtime.Object {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(crd.Spec.Group + "/" + v.Name)
		u.SetKind(n.Kind)
		return u
	}
	return &registry.Resource{
		Group: crd.Spec.Group, Version: v.Name, Kind: n.Kind,
		Resource: n.Plural, Singular: n.Singular, ShortNames: n.ShortNames, Categories: n.Categories,
		Namespaced:   st.namespaced,
		KeyPrefix:    "/registry/" + crd.Spec.Group + "/" + n.Plural,
		Subresources: subs,
		New:          newObj,
		NewList: func() runtime.Object {
			l := &unstructured.UnstructuredList{Object: map[string]any{}}
			l.SetAPIVersion(crd.Spec.Group + "/" + v.Name)
			l.SetKind(listKind)
			return l
		},
		Strategy:      st,
		Table:         st.table,
		OpenAPISchema: openAPI,
	}
}

// crStrategy is upstream's pkg/registry/customresource strategy, for one
// version of one CRD.
type crStrategy struct {
	gvk        metav1.GroupVersionKind
	namespaced bool
	schema     *apiextensionsv1.JSONSchemaProps
	status     bool // the status subresource is served
	scale      *apiextensionsv1.CustomResourceSubresourceScale
	columns    []apiextensionsv1.CustomResourceColumnDefinition
}

var (
	_ registry.Strategy       = (*crStrategy)(nil)
	_ registry.StatusStrategy = (*crStrategy)(nil)
	_ registry.ScaleStrategy  = (*crStrategy)(nil)
)

func content(obj runtime.Object) map[string]any {
	return obj.(*unstructured.Unstructured).Object
}

// normalize prunes and defaults an object as it is written.
func (s *crStrategy) normalize(obj runtime.Object) {
	if s.schema == nil {
		return
	}
	m := content(obj)
	prune(m, s.schema, true)
	applyDefaults(m, s.schema)
}

// PrepareForCreate: with a status subresource the status is the
// controller's, so a create drops it.
func (s *crStrategy) PrepareForCreate(obj runtime.Object) {
	if s.status {
		delete(content(obj), "status")
	}
	s.normalize(obj)
}

// PrepareForUpdate keeps the status (with a status subresource) and bumps
// metadata.generation when anything but metadata (and status) changed.
func (s *crStrategy) PrepareForUpdate(obj, old runtime.Object) {
	m, o := content(obj), content(old)
	if s.status {
		if st, ok := o["status"]; ok {
			m["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(m, "status")
		}
	}
	s.normalize(obj)
	if !apiequality.Semantic.DeepEqual(withoutMeta(m, s.status), withoutMeta(o, s.status)) {
		obj.(*unstructured.Unstructured).SetGeneration(old.(*unstructured.Unstructured).GetGeneration() + 1)
	}
}

func withoutMeta(m map[string]any, status bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "metadata" || k == "apiVersion" || k == "kind" || status && k == "status" {
			continue
		}
		out[k] = v
	}
	return out
}

// PrepareForStatusUpdate writes the status only.
func (s *crStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	m, o := content(obj), content(old)
	st, hasStatus := m["status"]
	u := obj.(*unstructured.Unstructured)
	meta := u.GetObjectKind().GroupVersionKind()
	rv := u.GetResourceVersion()
	for k := range m {
		delete(m, k)
	}
	for k, v := range o {
		if k != "status" {
			m[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	if hasStatus {
		m["status"] = st
	}
	u.GetObjectKind().SetGroupVersionKind(meta)
	u.SetResourceVersion(rv)
	s.normalize(obj)
}

func (s *crStrategy) Validate(obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	errs := s.validateMeta(u)
	if s.schema != nil {
		errs = append(errs, validateObject(u.Object, s.schema)...)
	}
	return errs
}

func (s *crStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return s.Validate(obj)
}

func (s *crStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return s.Validate(obj)
}

// validateMeta is ObjectMeta validation (names are DNS subdomains, as for
// any custom resource) plus the kind and apiVersion the body must carry.
func (s *crStrategy) validateMeta(u *unstructured.Unstructured) field.ErrorList {
	om := metav1.ObjectMeta{
		Name: u.GetName(), GenerateName: u.GetGenerateName(), Namespace: u.GetNamespace(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations(), Finalizers: u.GetFinalizers(),
		OwnerReferences: u.GetOwnerReferences(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
	}
	errs := metavalidation.ValidateObjectMeta(&om, s.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if u.GetKind() == "" {
		errs = append(errs, field.Required(field.NewPath("kind"), ""))
	}
	if u.GetAPIVersion() == "" {
		errs = append(errs, field.Required(field.NewPath("apiVersion"), ""))
	}
	return errs
}

// Fields: custom resources select by metadata.name and metadata.namespace.
func (s *crStrategy) Fields(obj runtime.Object) fields.Set {
	u := obj.(*unstructured.Unstructured)
	f := fields.Set{"metadata.name": u.GetName()}
	if s.namespaced {
		f["metadata.namespace"] = u.GetNamespace()
	}
	return f
}

// Scale reads the Scale through the CRD's specReplicasPath,
// statusReplicasPath and labelSelectorPath (upstream: customresource's
// ScaleREST).
func (s *crStrategy) Scale(obj runtime.Object) (*autoscalingv1.Scale, error) {
	if s.scale == nil {
		return nil, apierrors.NewNotFound(autoscalingv1.Resource("scale"), "")
	}
	u := obj.(*unstructured.Unstructured)
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp(),
		},
	}
	if n, ok, err := intAt(u.Object, s.scale.SpecReplicasPath); err != nil {
		return nil, apierrors.NewInternalError(err)
	} else if ok {
		sc.Spec.Replicas = n
	}
	if n, ok, err := intAt(u.Object, s.scale.StatusReplicasPath); err != nil {
		return nil, apierrors.NewInternalError(err)
	} else if ok {
		sc.Status.Replicas = n
	}
	if l := s.scale.LabelSelectorPath; l != nil && *l != "" {
		if p, err := parseJSONPath(*l); err == nil {
			if vs := p.eval(u.Object); len(vs) == 1 {
				if str, ok := vs[0].(string); ok {
					sc.Status.Selector = str
				}
			}
		}
	}
	return sc, nil
}

func intAt(m map[string]any, path string) (int32, bool, error) {
	p, err := parseJSONPath(path)
	if err != nil {
		return 0, false, err
	}
	vs := p.eval(m)
	if len(vs) == 0 {
		return 0, false, nil
	}
	switch x := vs[0].(type) {
	case int64:
		return int32(x), true, nil
	case float64:
		return int32(x), true, nil
	}
	return 0, false, fmt.Errorf("value at %s is not an integer", path)
}

// SetReplicas writes spec replicas at specReplicasPath, creating the
// objects on the way.
func (s *crStrategy) SetReplicas(obj runtime.Object, replicas int32) error {
	if s.scale == nil {
		return apierrors.NewNotFound(autoscalingv1.Resource("scale"), "")
	}
	p, err := parseJSONPath(s.scale.SpecReplicasPath)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var keys []string
	for _, st := range p {
		if st.index != -1 {
			return apierrors.NewInternalError(fmt.Errorf("specReplicasPath %s indexes an array", s.scale.SpecReplicasPath))
		}
		keys = append(keys, st.key)
	}
	if err := unstructured.SetNestedField(content(obj), int64(replicas), keys...); err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

// printerColumns are the version's additionalPrinterColumns, or the Age
// column upstream serves when there are none.
func printerColumns(v *apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
}

// table is upstream's tableconvertor: Name, then one column per printer
// column, the JSONPath evaluated on each object. A date column prints
// the age (5m), as kube-apiserver does.
func (s *crStrategy) table(obj runtime.Object, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}}
	t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{
		Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"],
	})
	paths := make([]jsonPath, len(s.columns))
	for i, c := range s.columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority,
		})
		paths[i], _ = parseJSONPath(c.JSONPath)
	}
	var items []unstructured.Unstructured
	switch o := obj.(type) {
	case *unstructured.UnstructuredList:
		items = o.Items
		t.ResourceVersion, t.Continue = o.GetResourceVersion(), o.GetContinue()
	case *unstructured.Unstructured:
		items = []unstructured.Unstructured{*o}
		t.ResourceVersion = o.GetResourceVersion()
	default:
		return nil, fmt.Errorf("table: %T is not a custom resource", obj)
	}
	t.Rows = make([]metav1.TableRow, 0, len(items))
	for i := range items {
		it := &items[i]
		cells := []any{it.GetName()}
		for j, c := range s.columns {
			cells = append(cells, cell(paths[j], c.Type, it.Object, now))
		}
		pom := &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: metav1.ObjectMeta{
				Name: it.GetName(), Namespace: it.GetNamespace(), UID: it.GetUID(), ResourceVersion: it.GetResourceVersion(),
				Generation: it.GetGeneration(), CreationTimestamp: it.GetCreationTimestamp(), DeletionTimestamp: it.GetDeletionTimestamp(),
				Labels: it.GetLabels(), Annotations: it.GetAnnotations(), OwnerReferences: it.GetOwnerReferences(), Finalizers: it.GetFinalizers(),
			},
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: pom}})
	}
	return t, nil
}

// cell renders one printer column's value: nil when the path selects
// nothing (kubectl prints <none>), an age for dates, the value itself
// otherwise (several values joined by commas).
func cell(p jsonPath, typ string, obj map[string]any, now time.Time) any {
	if p == nil {
		return nil
	}
	vs := p.eval(obj)
	if len(vs) == 0 {
		return nil
	}
	if typ == "date" {
		if str, ok := vs[0].(string); ok {
			if ts, err := time.Parse(time.RFC3339, str); err == nil {
				return duration.HumanDuration(now.Sub(ts))
			}
		}
	}
	if len(vs) == 1 {
		switch x := vs[0].(type) {
		case string, bool, int64, float64:
			return x
		}
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		if str, ok := v.(string); ok {
			parts[i] = str
			continue
		}
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ",")
}

type objectName struct{ namespace, name string }

func listItems(list any) ([]objectName, error) {
	l, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return nil, fmt.Errorf("%T is not a custom resource list", list)
	}
	out := make([]objectName, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, objectName{it.GetNamespace(), it.GetName()})
	}
	return out, nil
}
