package printers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

var podTemplateColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
	{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
}

func init() { Register(&corev1.PodTemplate{}, podTemplateColumns, printPodTemplate) }

// printPodTemplate is upstream's printPodTemplate: the template's
// containers, images and labels (no age column).
func printPodTemplate(obj runtime.Object, _ time.Time) ([]any, error) {
	t := obj.(*corev1.PodTemplate)
	names, images := containerCells(t.Template.Spec.Containers)
	return []any{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}, nil
}
