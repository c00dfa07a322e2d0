package printers

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var controllerRevisionColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Controller", Type: "string", Description: "Controller of the object"},
	{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var replicationControllerColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
}

func init() {
	Register(&appsv1.ControllerRevision{}, controllerRevisionColumns, printControllerRevision)
	Register(&corev1.ReplicationController{}, replicationControllerColumns, printReplicationController)
}

// printControllerRevision is upstream's printControllerRevision: the
// controller as kind.group/name ("daemonset.apps/fluentd"), <none> for an
// orphan.
func printControllerRevision(obj runtime.Object, now time.Time) ([]any, error) {
	cr := obj.(*appsv1.ControllerRevision)
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return nil, err
		}
		controller = strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
	}
	return []any{cr.Name, controller, cr.Revision, Age(cr.CreationTimestamp, now)}, nil
}

// printReplicationController is upstream's printReplicationController.
func printReplicationController(obj runtime.Object, now time.Time) ([]any, error) {
	rc := obj.(*corev1.ReplicationController)
	var names, images string
	if rc.Spec.Template != nil {
		names, images = containerCells(rc.Spec.Template.Spec.Containers)
	}
	return []any{
		rc.Name, int64(replicas(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		Age(rc.CreationTimestamp, now), names, images, labels.FormatLabels(rc.Spec.Selector),
	}, nil
}
