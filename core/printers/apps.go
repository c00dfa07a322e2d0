package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Upstream takes these descriptions from extensions/v1beta1. Most read the
// same in apps/v1; the two selector texts differ, so they are copied here
// rather than linking the whole extensions/v1beta1 package into the wasm.
const (
	deploymentSelectorDoc = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."
	replicaSetSelectorDoc = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
)

var deploymentColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
	{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: deploymentSelectorDoc},
}

var replicaSetColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: replicaSetSelectorDoc},
}

var daemonSetColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
	{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
	{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
	{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
	{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
	{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
}

var statefulSetColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
}

func init() {
	Register(&appsv1.Deployment{}, deploymentColumns, printDeployment)
	Register(&appsv1.ReplicaSet{}, replicaSetColumns, printReplicaSet)
	Register(&appsv1.DaemonSet{}, daemonSetColumns, printDaemonSet)
	Register(&appsv1.StatefulSet{}, statefulSetColumns, printStatefulSet)
}

// printDaemonSet is upstream's printDaemonSet: the scheduled, ready,
// up-to-date and available counts, and the template's nodeSelector.
func printDaemonSet(obj runtime.Object, now time.Time) ([]any, error) {
	ds := obj.(*appsv1.DaemonSet)
	st := ds.Status
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []any{
		ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		Age(ds.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
	}, nil
}

// printStatefulSet is upstream's printStatefulSet: READY is ready/desired.
func printStatefulSet(obj runtime.Object, now time.Time) ([]any, error) {
	ss := obj.(*appsv1.StatefulSet)
	names, images := containerCells(ss.Spec.Template.Spec.Containers)
	return []any{
		ss.Name, fmt.Sprintf("%d/%d", int64(ss.Status.ReadyReplicas), int64(replicas(ss.Spec.Replicas))),
		Age(ss.CreationTimestamp, now), names, images,
	}, nil
}

// printDeployment is upstream's printDeployment: READY is ready/desired
// replicas, UP-TO-DATE the pods of the newest template, AVAILABLE the ready
// ones that stayed ready for minReadySeconds.
func printDeployment(obj runtime.Object, now time.Time) ([]any, error) {
	d := obj.(*appsv1.Deployment)
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []any{
		d.Name, fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), int64(replicas(d.Spec.Replicas))),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), Age(d.CreationTimestamp, now),
		names, images, selector,
	}, nil
}

// printReplicaSet is upstream's printReplicaSet.
func printReplicaSet(obj runtime.Object, now time.Time) ([]any, error) {
	rs := obj.(*appsv1.ReplicaSet)
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []any{
		rs.Name, int64(replicas(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		Age(rs.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
	}, nil
}

// replicas reads spec.replicas; the server defaults it to 1, so nil is only
// seen on objects that never went through the API.
func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// containerCells lays out the containers of a template on one line each for
// names and images (upstream layoutContainerCells).
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}
