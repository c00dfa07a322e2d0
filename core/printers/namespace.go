package printers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var namespaceColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Status", Type: "string", Description: "The status of the namespace"},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

func init() { Register(&corev1.Namespace{}, namespaceColumns, printNamespace) }

// printNamespace is upstream's printNamespace: STATUS is Active or
// Terminating (status.phase).
func printNamespace(obj runtime.Object, now time.Time) ([]any, error) {
	ns := obj.(*corev1.Namespace)
	return []any{ns.Name, string(ns.Status.Phase), Age(ns.CreationTimestamp, now)}, nil
}
