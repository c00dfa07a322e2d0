package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- scheduling.k8s.io/v1 PriorityClasses (pkg/registry/scheduling/priorityclass,
// pkg/apis/scheduling/validation, plugin/pkg/admission/priority) ---
//
// A PriorityClass names a priority; the Priority admission plugin copies its
// value into every new pod's spec.priority, which the scheduler sorts its
// queue by and preempts with.

// System priority classes: every cluster has them (upstream creates them in
// a post-start hook of kube-apiserver; see bootstrap.go).
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
	// HighestUserDefinablePriority is the highest priority a user's class
	// may have; higher ones are for the system classes.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is system-cluster-critical's value.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	systemPriorityPrefix   = "system-"
)

// SystemPriorityClasses are the classes kube-apiserver creates.
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{
			ObjectMeta:  metav1.ObjectMeta{Name: SystemNodeCritical},
			Value:       SystemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node.",
		},
		{
			ObjectMeta:  metav1.ObjectMeta{Name: SystemClusterCritical},
			Value:       SystemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
		},
	}
}

// isKnownSystemPriorityClass is upstream's IsKnownSystemPriorityClass.
func isKnownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name == name {
			if spc.Value != value {
				return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
			}
			if spc.GlobalDefault != globalDefault {
				return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

var preemptionPolicies = []string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)}

type priorityClassStrategy struct{}

func defaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		p := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

func (priorityClassStrategy) PrepareForCreate(obj runtime.Object) {
	defaultPriorityClass(obj.(*schedulingv1.PriorityClass))
}

func (priorityClassStrategy) PrepareForUpdate(obj, old runtime.Object) {
	defaultPriorityClass(obj.(*schedulingv1.PriorityClass))
}

func (priorityClassStrategy) Validate(obj runtime.Object) field.ErrorList {
	pc := obj.(*schedulingv1.PriorityClass)
	errs := validateMeta(pc, false)
	if strings.HasPrefix(pc.Name, systemPriorityPrefix) {
		if err := isKnownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with '"+systemPriorityPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil && !hasString(preemptionPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), p, preemptionPolicies))
	}
	return errs
}

// ValidateUpdate is ValidatePriorityClassUpdate: value and preemptionPolicy
// are immutable.
func (priorityClassStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	pc, o := obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(pc, o, field.NewPath("metadata"))
	if pc.Value != o.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, immutable(pc.PreemptionPolicy, o.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

func (priorityClassStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*schedulingv1.PriorityClass))
}

// priorityClasses is the registry's PriorityClass store.
func (r *Registry) priorityClasses() (*Store, bool) {
	return r.Lookup(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses").GroupResource())
}

// defaultPriorityClass returns the globalDefault class with the lowest
// value, or nil.
func (r *Registry) globalDefaultPriorityClass(ctx context.Context) (*schedulingv1.PriorityClass, error) {
	pcs, ok := r.priorityClasses()
	if !ok {
		return nil, nil
	}
	list, err := pcs.listShared("")
	if err != nil {
		return nil, err
	}
	var def *schedulingv1.PriorityClass
	for _, obj := range list {
		if pc := obj.(*schedulingv1.PriorityClass); pc.GlobalDefault && (def == nil || def.Value > pc.Value) {
			def = pc
		}
	}
	return def, nil // shared: read only
}

// admitPodPriority is the mutating half of the Priority admission plugin: a
// new pod's priorityClassName (or the global default) is resolved to
// spec.priority and spec.preemptionPolicy; an update keeps them.
func (r *Registry) admitPodPriority(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	if res.Group != "" || res.Resource != "pods" {
		return nil
	}
	pod := obj.(*corev1.Pod)
	switch op {
	case Update:
		o := old.(*corev1.Pod)
		if pod.Spec.Priority == nil && o.Spec.Priority != nil {
			pod.Spec.Priority = o.Spec.Priority
		}
		if pod.Spec.PreemptionPolicy == nil && o.Spec.PreemptionPolicy != nil {
			pod.Spec.PreemptionPolicy = o.Spec.PreemptionPolicy
		}
		return nil
	case Create:
	default:
		return nil
	}
	var priority int32
	var policy *corev1.PreemptionPolicy
	if pod.Spec.PriorityClassName == "" {
		def, err := r.globalDefaultPriorityClass(ctx)
		if err != nil {
			return fmt.Errorf("failed to get default priority class: %v", err)
		}
		if def != nil {
			pod.Spec.PriorityClassName, priority, policy = def.Name, def.Value, def.PreemptionPolicy
		} else {
			// No default class: priority 0, and preemption as usual.
			lower := corev1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		pcs, ok := r.priorityClasses()
		if !ok {
			return nil
		}
		obj, err := pcs.getShared("", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return apierrors.NewForbidden(res.GroupResource(), pod.Name, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return fmt.Errorf("failed to get PriorityClass with name %s: %v", pod.Spec.PriorityClassName, err)
		}
		pc := obj.(*schedulingv1.PriorityClass)
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return apierrors.NewForbidden(res.GroupResource(), pod.Name, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return apierrors.NewForbidden(res.GroupResource(), pod.Name, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		p := *policy
		pod.Spec.PreemptionPolicy = &p
	}
	return nil
}

// admitPriorityClass is the validating half of the Priority admission
// plugin: one globalDefault class at most. It also refuses to delete the
// system classes (upstream's priorityclass storage Delete).
func (r *Registry) admitPriorityClass(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	if res.Group != schedulingv1.GroupName || res.Resource != "priorityclasses" {
		return nil
	}
	pc := obj.(*schedulingv1.PriorityClass)
	if op == Delete {
		for _, spc := range SystemPriorityClasses() {
			if spc.Name == pc.Name {
				return apierrors.NewForbidden(res.GroupResource(), pc.Name, errors.New("this is a system priority class and cannot be deleted"))
			}
		}
		return nil
	}
	if !pc.GlobalDefault {
		return nil
	}
	def, err := r.globalDefaultPriorityClass(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if def != nil && (op == Create || def.Name != pc.Name) {
		return apierrors.NewForbidden(res.GroupResource(), pc.Name, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}
