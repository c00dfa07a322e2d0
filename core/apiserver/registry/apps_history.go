package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- controllerrevisions (pkg/registry/apps/controllerrevision/strategy.go) ---
//
// A ControllerRevision is one remembered version of a DaemonSet's or a
// StatefulSet's pod template: the controllers write one per template they
// have run, named <owner>-<hash>, and `kubectl rollout history` and `undo`
// read them. data is the revision's content (a patch that restores the
// template); revision is its number, the highest being the newest. Only
// revision may change after creation: data is immutable.

type controllerRevisionStrategy struct{}

func (controllerRevisionStrategy) PrepareForCreate(runtime.Object)          {}
func (controllerRevisionStrategy) PrepareForUpdate(obj, old runtime.Object) {}

func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	var errs field.ErrorList
	if cr.Data.Raw == nil && cr.Data.Object == nil {
		errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(errs, validateNonNegative(cr.Revision, field.NewPath("revision"))...)
}

func (controllerRevisionStrategy) Validate(obj runtime.Object) field.ErrorList {
	cr := obj.(*appsv1.ControllerRevision)
	return append(validateMeta(cr, true), validateControllerRevision(cr)...)
}

func (controllerRevisionStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	cr, o := obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision)
	errs := validateMetaUpdate(cr, o, true)
	errs = append(errs, immutable(cr.Data, o.Data, field.NewPath("data"))...)
	return append(errs, validateControllerRevision(cr)...)
}

func (controllerRevisionStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*appsv1.ControllerRevision))
}
