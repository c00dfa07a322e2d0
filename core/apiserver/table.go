package apiserver

import (
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/printers"
)

// Tables and includeObject
//
// kubectl get asks for a meta.k8s.io Table: the printed columns, one row per
// object. Each row also carries the object, in the shape the query parameter
// includeObject asks for (upstream: asTable in
// k8s.io/apiserver/pkg/endpoints/handlers/response.go):
//
//	Metadata (the default)  a PartialObjectMetadata: enough for names and ages
//	Object                  the whole object: kubectl --sort-by and
//	                        custom columns read its fields
//	None                    nothing
//
// Any other value is a 400 "unrecognized includeObject value".

// includeObject reads and checks the includeObject parameter of a request
// answered with a Table.
func includeObject(r *http.Request, out output) (metav1.IncludeObjectPolicy, error) {
	v := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	if out.shape != shapeTable {
		return v, nil
	}
	switch v {
	case "", metav1.IncludeMetadata, metav1.IncludeObject, metav1.IncludeNone:
		return v, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", v))
}

// toTable prints obj (an object or a list) as a Table whose rows carry the
// objects as include asks.
func toTable(obj runtime.Object, out output, now time.Time) (*metav1.Table, error) {
	include := out.include
	convert := printers.ToTable
	if out.table != nil {
		convert = out.table
	}
	t, err := convert(obj, now)
	if err != nil {
		return nil, err
	}
	switch include {
	case metav1.IncludeNone:
		for i := range t.Rows {
			t.Rows[i].Object = runtime.RawExtension{}
		}
	case metav1.IncludeObject:
		items := []runtime.Object{obj}
		if meta.IsListType(obj) {
			if items, err = meta.ExtractList(obj); err != nil {
				return nil, err
			}
		}
		if len(items) != len(t.Rows) {
			return nil, fmt.Errorf("table: %d rows for %d objects", len(t.Rows), len(items))
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		if meta.IsListType(obj) && len(gvk.Kind) > len("List") {
			gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
		}
		for i, it := range items {
			if it.GetObjectKind().GroupVersionKind().Empty() && !gvk.Empty() {
				it = it.DeepCopyObject()
				it.GetObjectKind().SetGroupVersionKind(gvk)
			}
			t.Rows[i].Object = runtime.RawExtension{Object: it}
		}
	}
	return t, nil
}
