package registry

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- policy/v1 PodDisruptionBudgets (pkg/registry/policy/poddisruptionbudget,
// pkg/apis/policy/validation) ---
//
// A PodDisruptionBudget says how many of the pods its selector picks must
// stay up while someone disrupts them on purpose (`kubectl drain`, a node
// upgrade): either minAvailable or maxUnavailable, a number or a
// percentage of the pods' controllers' scale.
//
//	spec:    selector {app: web}, minAvailable: 2
//	status:  (written by the disruption controller, core/controller/disruption)
//	         expectedPods 3, currentHealthy 3, desiredHealthy 2,
//	         disruptionsAllowed 1, conditions [DisruptionAllowed True SufficientPods]
//
// The budget only guards evictions (POST pods/{name}/eviction, see
// core/apiserver/eviction.go): each allowed eviction spends one
// disruptionsAllowed and records the pod in status.disruptedPods, and a
// budget with none left answers 429. A plain DELETE ignores budgets, as do
// involuntary disruptions (a node that dies).

type podDisruptionBudgetStrategy struct{}

// PrepareForCreate clears the status: only the controller writes it.
func (podDisruptionBudgetStrategy) PrepareForCreate(obj runtime.Object) {
	obj.(*policyv1.PodDisruptionBudget).Status = policyv1.PodDisruptionBudgetStatus{}
}

// PrepareForUpdate keeps the status; a changed spec bumps the generation
// (the registry does that for every kind with one), which the eviction
// handler compares with status.observedGeneration.
func (podDisruptionBudgetStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
}

// PrepareForStatusUpdate keeps the spec.
func (podDisruptionBudgetStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

// supportedUnhealthyPodEvictionPolicies, sorted as upstream's set lists them.
var supportedUnhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

// validatePodDisruptionBudgetSpec is upstream's ValidatePodDisruptionBudgetSpec.
// allowInvalidLabelValue lets an update keep a selector that was stored
// before label values in selectors were validated.
func validatePodDisruptionBudgetSpec(spec *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValue bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, internalSpec{spec}, "minAvailable and maxUnavailable cannot be both set"))
	}
	if v := spec.MinAvailable; v != nil {
		errs = append(errs, validatePositiveIntOrPercent(v, p.Child("minAvailable"))...)
		errs = append(errs, notMoreThan100Percent(v, p.Child("minAvailable"))...)
	}
	if v := spec.MaxUnavailable; v != nil {
		errs = append(errs, validatePositiveIntOrPercent(v, p.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(v, p.Child("maxUnavailable"))...)
	}
	// A nil selector is valid and selects no pods; {} selects every pod of
	// the namespace.
	errs = append(errs, metavalidation.ValidateLabelSelector(spec.Selector,
		metavalidation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}, p.Child("selector"))...)
	if pol := spec.UnhealthyPodEvictionPolicy; pol != nil && !hasString(supportedUnhealthyPodEvictionPolicies, string(*pol)) {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *pol, supportedUnhealthyPodEvictionPolicies))
	}
	return errs
}

// internalSpec prints a spec in an error the way kube-apiserver does. It
// validates its internal type, whose fields carry no json tags, and
// field.Invalid renders a struct as JSON, so the value reads
// {"MinAvailable":2,"Selector":{...},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}.
type internalSpec struct {
	s *policyv1.PodDisruptionBudgetSpec
}

func (i internalSpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MinAvailable               *intstr.IntOrString
		Selector                   *metav1.LabelSelector
		MaxUnavailable             *intstr.IntOrString
		UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType
	}{i.s.MinAvailable, i.s.Selector, i.s.MaxUnavailable, i.s.UnhealthyPodEvictionPolicy})
}

// Validate checks a new budget. Its name need only be a valid path segment
// (upstream validates no more for PodDisruptionBudgets).
func (podDisruptionBudgetStrategy) Validate(obj runtime.Object) field.ErrorList {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	errs := validatePodDisruptionBudgetSpec(&pdb.Spec, false, field.NewPath("spec"))
	return append(errs, validateMetaName(pdb, true, path.ValidatePathSegmentName)...)
}

// ValidateUpdate: the whole spec may change (since Kubernetes 1.15).
func (podDisruptionBudgetStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	pdb, o := obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget)
	errs := validateMetaNameUpdate(pdb, o)
	return append(errs, validatePodDisruptionBudgetSpec(&pdb.Spec, hasInvalidLabelValueInSelector(o), field.NewPath("spec"))...)
}

// ValidateStatusUpdate is upstream's ValidatePodDisruptionBudgetStatusUpdate
// for policy/v1: valid conditions and no negative counts.
func (podDisruptionBudgetStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	pdb, o := obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget)
	p := field.NewPath("status")
	errs := validateMetaNameUpdate(pdb, o)
	errs = append(errs, metavalidation.ValidateConditions(pdb.Status.Conditions, p.Child("conditions"))...)
	errs = append(errs, validateNonNegative(int64(pdb.Status.DisruptionsAllowed), p.Child("disruptionsAllowed"))...)
	errs = append(errs, validateNonNegative(int64(pdb.Status.CurrentHealthy), p.Child("currentHealthy"))...)
	errs = append(errs, validateNonNegative(int64(pdb.Status.DesiredHealthy), p.Child("desiredHealthy"))...)
	return append(errs, validateNonNegative(int64(pdb.Status.ExpectedPods), p.Child("expectedPods"))...)
}

// validateMetaNameUpdate is validateMetaUpdate with the path-segment name
// rule. On updates kube-apiserver checks metadata before the spec; on
// creates after it.
func validateMetaNameUpdate(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(pdb, old, field.NewPath("metadata"))
	return append(errs, validateMetaName(pdb, true, path.ValidatePathSegmentName)...)
}

func hasInvalidLabelValueInSelector(pdb *policyv1.PodDisruptionBudget) bool {
	return pdb.Spec.Selector != nil &&
		len(metavalidation.ValidateLabelSelector(pdb.Spec.Selector, metavalidation.LabelSelectorValidationOptions{}, nil)) > 0
}

func (podDisruptionBudgetStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*policyv1.PodDisruptionBudget))
}

// PodDisruptionBudgetSelects reports whether a budget guards a pod: same
// namespace and a selector that matches the pod's labels. An empty selector
// ({}) matches every pod of the namespace, a missing or invalid one none
// (upstream: the policy/v1 lister's GetPodPodDisruptionBudgets, which the
// eviction handler and the disruption controller both follow).
func PodDisruptionBudgetSelects(pdb *policyv1.PodDisruptionBudget, pod *corev1.Pod) bool {
	if pdb.Namespace != pod.Namespace {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	return err == nil && sel.Matches(labels.Set(pod.Labels))
}

// UpdateDisruptionAllowedCondition sets the DisruptionAllowed condition
// from status.disruptionsAllowed: True with reason SufficientPods when an
// eviction may happen, False with InsufficientPods when none may. now is
// the transition time if the status changes (upstream:
// k8s.io/component-helpers/apps/poddisruptionbudget, which takes the time
// from the wall clock).
func UpdateDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget, now time.Time) {
	c := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.InsufficientPodsReason,
		ObservedGeneration: pdb.Status.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		c.Status, c.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	if pdb.Status.Conditions == nil {
		pdb.Status.Conditions = []metav1.Condition{}
	}
	meta.SetStatusCondition(&pdb.Status.Conditions, c)
}

// DisruptionAllowedConditionUpToDate reports whether the DisruptionAllowed
// condition matches status.disruptionsAllowed and the status was computed
// for the current generation (upstream: ConditionsAreUpToDate).
func DisruptionAllowedConditionUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	c := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if c == nil || pdb.Status.ObservedGeneration != pdb.Generation {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return c.Status == metav1.ConditionTrue && c.Reason == policyv1.SufficientPodsReason
	}
	return c.Status == metav1.ConditionFalse && c.Reason == policyv1.InsufficientPodsReason
}
