package printers

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PodDisruptionBudgets: the budget as written (one of MIN AVAILABLE and MAX
// UNAVAILABLE, the other N/A) and what the disruption controller computed
// from it: how many evictions may happen now.
//
//	NAME   MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE
//	web    2               N/A               1                     5m

var podDisruptionBudgetColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
	{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
	{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

func init() {
	Register(&policyv1.PodDisruptionBudget{}, podDisruptionBudgetColumns, printPodDisruptionBudget)
}

// printPodDisruptionBudget is upstream's: an unset bound prints N/A; a
// percentage prints as written ("50%").
func printPodDisruptionBudget(obj runtime.Object, now time.Time) ([]any, error) {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), Age(pdb.CreationTimestamp, now)}, nil
}
