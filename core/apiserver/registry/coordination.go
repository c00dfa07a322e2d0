package registry

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- coordination.k8s.io/v1 Leases (pkg/registry/coordination/lease,
// pkg/apis/coordination/validation) ---
//
// Kubelets renew a Lease in kube-node-lease as their heartbeat; controllers
// use Leases for leader election.

type leaseStrategy struct{}

func (leaseStrategy) PrepareForCreate(obj runtime.Object)      {}
func (leaseStrategy) PrepareForUpdate(obj, old runtime.Object) {}

func validateLeaseSpec(s *coordinationv1.LeaseSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := s.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if t := s.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), t, "must be greater than or equal to 0"))
	}
	if h := s.PreferredHolder; h != nil && *h != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

func (leaseStrategy) Validate(obj runtime.Object) field.ErrorList {
	l := obj.(*coordinationv1.Lease)
	return append(validateMeta(l, true), validateLeaseSpec(&l.Spec, field.NewPath("spec"))...)
}

func (s leaseStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease), field.NewPath("metadata"))
	return append(errs, s.Validate(obj)...)
}

func (leaseStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*coordinationv1.Lease))
}
