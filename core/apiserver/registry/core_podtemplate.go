package registry

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- podtemplates (pkg/registry/core/podtemplate/strategy.go) ---
//
// A PodTemplate is a pod's template stored on its own: nothing acts on it;
// it is there to be read (old tutorials, and tools that stamp pods from
// it). Its template is validated as a workload's would be, and a change to
// the template bumps metadata.generation (upstream does the same; there is
// no spec field).

type podTemplateStrategy struct{}

func (podTemplateStrategy) PrepareForCreate(obj runtime.Object) {
	DefaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec)
}

func (podTemplateStrategy) PrepareForUpdate(obj, old runtime.Object) {
	t, o := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	DefaultPodSpec(&t.Template.Spec)
	if !apiequality.Semantic.DeepEqual(t.Template, o.Template) {
		t.Generation = o.Generation + 1
	}
}

func (podTemplateStrategy) Validate(obj runtime.Object) field.ErrorList {
	t := obj.(*corev1.PodTemplate)
	return append(validateMeta(t, true), validatePodTemplate(&t.Template, field.NewPath("template"))...)
}

func (podTemplateStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	t, o := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	errs := validateMetaUpdate(t, o, true)
	return append(errs, validatePodTemplate(&t.Template, field.NewPath("template"))...)
}

func (podTemplateStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.PodTemplate))
}
