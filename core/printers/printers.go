// Package printers turns objects into the rows and columns of `kubectl get`.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/printers/internalversion/printers.go
// (the column handlers kube-apiserver uses to answer a request for
// `application/json;as=Table;v=v1;g=meta.k8s.io`) and k8s.io/cli-runtime's
// table printer. In a real cluster the server builds the table and kubectl
// only draws it; kubetab does the same, so the in-browser kubectl and the real
// kubectl print the same columns.
//
// Registered here, with upstream's columns and cell logic: pods (pod.go: the
// STATUS column's reasoning), nodes, namespaces, events of both APIs
// (event.go), services, endpoints and endpointslices (service.go),
// configmaps, secrets, serviceaccounts, leases and priorityclasses
// (config.go), deployments, replicasets, daemonsets and statefulsets
// (apps.go), jobs and cronjobs (batch.go), poddisruptionbudgets (policy.go),
// horizontalpodautoscalers and resourcequotas (autoscaling.go).
// Any other object gets the default NAME / CREATED AT columns.
//
// Like kube-apiserver (which generates tables with Wide: true), a row always
// carries every column; columns with Priority 1 are the ones kubectl draws
// only for -o wide.
package printers

import (
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// RowFunc prints one object as the cells of one row, matching its columns.
type RowFunc func(obj runtime.Object, now time.Time) ([]any, error)

type handler struct {
	columns []metav1.TableColumnDefinition
	row     RowFunc
}

var (
	mu       sync.RWMutex
	handlers = map[reflect.Type]handler{} // by Go type of the object, e.g. *v1.Pod; guarded by mu
)

// Register installs the columns and row function of one object type; sample
// is any value of that type. Packages register their printers in init.
func Register(sample runtime.Object, columns []metav1.TableColumnDefinition, row RowFunc) {
	mu.Lock()
	defer mu.Unlock()
	handlers[reflect.TypeOf(sample)] = handler{columns: columns, row: row}
}

// defaultColumns are the columns of an object without a printer, as upstream's
// default table convertor.
var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// ToTable converts an object or a list into a Table. Each row carries the
// object's metadata (PartialObjectMetadata), as upstream's default
// includeObject=Metadata.
func ToTable(obj runtime.Object, now time.Time) (*metav1.Table, error) {
	var items []runtime.Object
	table := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, err
		}
		if acc, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion = acc.GetResourceVersion()
			table.Continue = acc.GetContinue()
		}
		obj = listElem(obj)
	} else {
		items = []runtime.Object{obj}
		if acc, err := meta.Accessor(obj); err == nil {
			table.ResourceVersion = acc.GetResourceVersion()
		}
	}
	mu.RLock()
	h, ok := handlers[reflect.TypeOf(obj)]
	mu.RUnlock()
	if !ok {
		h = handler{columns: defaultColumns, row: func(o runtime.Object, now time.Time) ([]any, error) {
			acc, err := meta.Accessor(o)
			if err != nil {
				return nil, err
			}
			return []any{acc.GetName(), acc.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
		}}
	}
	table.ColumnDefinitions = h.columns
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for _, it := range items {
		cells, err := h.row(it, now)
		if err != nil {
			return nil, err
		}
		row := metav1.TableRow{Cells: cells}
		if acc, err := meta.Accessor(it); err == nil {
			pom := &metav1.PartialObjectMetadata{ObjectMeta: *metaOf(acc)}
			pom.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}
			row.Object = runtime.RawExtension{Object: pom}
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}

func metaOf(acc metav1.Object) *metav1.ObjectMeta {
	if m, ok := acc.(*metav1.ObjectMeta); ok {
		return m.DeepCopy()
	}
	return &metav1.ObjectMeta{
		Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID(),
		ResourceVersion: acc.GetResourceVersion(), Generation: acc.GetGeneration(),
		CreationTimestamp: acc.GetCreationTimestamp(), DeletionTimestamp: acc.GetDeletionTimestamp(),
		Labels: acc.GetLabels(), Annotations: acc.GetAnnotations(), OwnerReferences: acc.GetOwnerReferences(),
		Finalizers: acc.GetFinalizers(),
	}
}

// HumanDuration prints an age the way kubectl does: 5s, 3m2s, 4h, 12d.
func HumanDuration(d time.Duration) string { return duration.HumanDuration(d) }

// Age prints the age of a timestamp at now, or <unknown>.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
