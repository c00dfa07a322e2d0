package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- replicationcontrollers (pkg/registry/core/replicationcontroller/strategy.go) ---
//
// A ReplicationController is the ReplicaSet's ancestor in core/v1: the same
// job (keep spec.replicas pods of spec.template running) with an equality
// selector (a plain map, every pair must match) instead of a label
// selector. Defaults as upstream's SetDefaults_ReplicationController: an
// empty selector, and empty labels, are the template's labels; replicas 1.

type replicationControllerStrategy struct{}

func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil {
		if t.Labels != nil {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = t.Labels
			}
			if len(rc.Labels) == 0 {
				rc.Labels = t.Labels
			}
		}
		DefaultPodSpec(&t.Spec)
	}
	if rc.Spec.Replicas == nil {
		one := int32(1)
		rc.Spec.Replicas = &one
	}
}

func (replicationControllerStrategy) PrepareForCreate(obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	rc.Status = corev1.ReplicationControllerStatus{}
	defaultReplicationController(rc)
}

func (replicationControllerStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultReplicationController(obj.(*corev1.ReplicationController))
}

func (replicationControllerStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	rc, o := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	rc.Spec = o.Spec
	rc.Labels = o.Labels
}

// validateReplicationControllerSpec is upstream's
// ValidateReplicationControllerSpec with ValidatePodTemplateSpecForRC.
func validateReplicationControllerSpec(s *corev1.ReplicationControllerSpec, p *field.Path) field.ErrorList {
	errs := validateNonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))
	if len(s.Selector) == 0 {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	errs = append(errs, validateReplicas(s.Replicas, p)...)
	tp := p.Child("template")
	t := s.Template
	if t == nil {
		return append(errs, field.Required(tp, ""))
	}
	if sel := labels.Set(s.Selector).AsSelector(); len(s.Selector) > 0 && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplate(t, tp)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

func (replicationControllerStrategy) Validate(obj runtime.Object) field.ErrorList {
	rc := obj.(*corev1.ReplicationController)
	return append(validateMeta(rc, true), validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

func (replicationControllerStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	rc, o := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	errs := validateMetaUpdate(rc, o, true)
	return append(errs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

func (replicationControllerStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	rc := obj.(*corev1.ReplicationController)
	errs := validateMetaUpdate(rc, old.(*corev1.ReplicationController), true)
	return append(errs, validateNonNegative(int64(rc.Status.Replicas), field.NewPath("status", "replicas"))...)
}

func (replicationControllerStrategy) Fields(obj runtime.Object) fields.Set {
	rc := obj.(*corev1.ReplicationController)
	f := metaFields(rc)
	f["status.replicas"] = fmt.Sprint(rc.Status.Replicas)
	return f
}
