package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- nodes (pkg/registry/core/node/strategy.go) ---

type nodeStrategy struct{}

func (nodeStrategy) PrepareForCreate(obj runtime.Object) {
	n := obj.(*corev1.Node)
	setLabel(&n.ObjectMeta, corev1.LabelHostname, n.Name)
}

func (nodeStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
}

func (nodeStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func (nodeStrategy) Validate(obj runtime.Object) field.ErrorList {
	n := obj.(*corev1.Node)
	errs := validateMeta(n, false)
	errs = append(errs, validateTaints(n.Spec.Taints, field.NewPath("spec", "taints"))...)
	return errs
}

func (nodeStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*corev1.Node), old.(*corev1.Node)
	errs := validateMetaUpdate(n, o, false)
	if o.Spec.PodCIDR != "" && n.Spec.PodCIDR != o.Spec.PodCIDR {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDR"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	errs = append(errs, validateTaints(n.Spec.Taints, field.NewPath("spec", "taints"))...)
	return errs
}

func (s nodeStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return validateMetaUpdate(obj.(*corev1.Node), old.(*corev1.Node), false)
}

func (nodeStrategy) Fields(obj runtime.Object) fields.Set {
	n := obj.(*corev1.Node)
	f := metaFields(n)
	f["spec.unschedulable"] = fmt.Sprint(n.Spec.Unschedulable)
	return f
}

func validateTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	effects := sets.New(string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute))
	for i, t := range taints {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Index(i).Child("key"), t.Key, msg))
		}
		if !effects.Has(string(t.Effect)) {
			errs = append(errs, field.NotSupported(p.Index(i).Child("effect"), t.Effect, sets.List(effects)))
		}
	}
	return errs
}
