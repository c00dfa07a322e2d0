package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- rbac.authorization.k8s.io/v1 (pkg/registry/rbac, pkg/apis/rbac/validation,
// pkg/apis/rbac/v1/defaults.go) ---
//
// A Role (namespaced) or ClusterRole lists rules, each a set of verbs on a
// set of resources in a set of API groups (or on non-resource URLs such as
// /healthz); nothing is denied by a rule, rules only grant. A RoleBinding or
// ClusterRoleBinding grants one role's rules to subjects: users, groups and
// ServiceAccounts. A RoleBinding may name a ClusterRole, granting its rules
// in the binding's namespace only:
//
//	RoleBinding  jane-reads (ns dev) ──roleRef──▶ ClusterRole view
//	   subjects: User jane                          rules: get,list,watch pods ...
//	⇒ jane may list pods in dev, and nowhere else
//
// The API server's RBAC authorizer (core/apiserver/authz) reads these
// objects on every request. A ClusterRole with an aggregationRule has its
// rules written by the clusterrole-aggregation controller
// (core/controller/clusterroleaggregation): the union of the rules of every
// ClusterRole its selectors match. The default roles are in
// rbac_bootstrap.go. A user may only write a role granting what they hold
// themselves, or a binding to such a role, unless they have the "escalate"
// or "bind" verb: rbac_escalation.go.

func rbacResources() []*Resource {
	g := rbacv1.GroupName
	return []*Resource{
		{
			Group: g, Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", Singular: "clusterrole",
			KeyPrefix: "/registry/clusterroles", NoGeneration: true,
			New:      func() runtime.Object { return &rbacv1.ClusterRole{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			Strategy: clusterRoleStrategy{},
		},
		{
			Group: g, Version: "v1", Kind: "ClusterRoleBinding", Resource: "clusterrolebindings", Singular: "clusterrolebinding",
			KeyPrefix: "/registry/clusterrolebindings", NoGeneration: true,
			New:      func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			Strategy: clusterRoleBindingStrategy{},
		},
		{
			Group: g, Version: "v1", Kind: "Role", Resource: "roles", Singular: "role", Namespaced: true,
			KeyPrefix: "/registry/roles", NoGeneration: true,
			New:      func() runtime.Object { return &rbacv1.Role{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleList{} },
			Strategy: roleStrategy{},
		},
		{
			Group: g, Version: "v1", Kind: "RoleBinding", Resource: "rolebindings", Singular: "rolebinding", Namespaced: true,
			KeyPrefix: "/registry/rolebindings", NoGeneration: true,
			New:      func() runtime.Object { return &rbacv1.RoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleBindingList{} },
			Strategy: roleBindingStrategy{},
		},
	}
}

// validateRBACName is upstream's ValidateRBACName: any name that is safe as
// a path segment ("system:node" is fine; "a/b", "." and ".." are not).
func validateRBACName(name string, prefix bool) []string {
	return path.IsValidPathSegmentName(name)
}

// validatePolicyRule is ValidatePolicyRule.
func validatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

func validateRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		errs = append(errs, validatePolicyRule(r, namespaced, field.NewPath("rules").Index(i))...)
	}
	return errs
}

// validateRoleRef and validateSubject are the binding halves of
// ValidateRoleBinding and ValidateClusterRoleBinding.
func validateRoleRef(ref rbacv1.RoleRef, kinds []string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(p.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	if !hasString(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range validateRBACName(ref.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

func validateSubject(s rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.NameIsDNSSubdomain(s.Name, false) {
				errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	errs := validateRoleRef(ref, kinds)
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

// defaultBinding is pkg/apis/rbac/v1's SetDefaults_RoleRef and
// SetDefaults_Subject: an empty apiGroup is rbac.authorization.k8s.io for
// the roleRef and for User and Group subjects.
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

// immutableRoleRef: a binding's roleRef may not change (delete and recreate
// the binding instead; `kubectl auth reconcile` does).
func immutableRoleRef(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref == old {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
}

func validateRBACMeta(obj metav1.Object, namespaced bool) field.ErrorList {
	return validateMetaName(obj, namespaced, validateRBACName)
}

func validateRBACMetaUpdate(obj, old metav1.Object, namespaced bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))
	return append(errs, validateRBACMeta(obj, namespaced)...)
}

type roleStrategy struct{}

func (roleStrategy) PrepareForCreate(runtime.Object)      {}
func (roleStrategy) PrepareForUpdate(_, _ runtime.Object) {}
func (roleStrategy) Validate(obj runtime.Object) field.ErrorList {
	r := obj.(*rbacv1.Role)
	return append(validateRBACMeta(r, true), validateRules(r.Rules, true)...)
}
func (s roleStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	r := obj.(*rbacv1.Role)
	return append(validateRBACMetaUpdate(r, old.(*rbacv1.Role), true), validateRules(r.Rules, true)...)
}
func (roleStrategy) Fields(obj runtime.Object) fields.Set { return metaFields(obj.(*rbacv1.Role)) }

type clusterRoleStrategy struct{}

func (clusterRoleStrategy) PrepareForCreate(runtime.Object)      {}
func (clusterRoleStrategy) PrepareForUpdate(_, _ runtime.Object) {}

// validateClusterRole is ValidateClusterRole: the rules, and an
// aggregationRule with at least one valid selector.
func validateClusterRole(cr *rbacv1.ClusterRole) field.ErrorList {
	errs := validateRules(cr.Rules, false)
	if ar := cr.AggregationRule; ar != nil {
		p := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(ar.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range ar.ClusterRoleSelectors {
			sel := &ar.ClusterRoleSelectors[i]
			errs = append(errs, metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, p.Index(i))...)
			if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
				errs = append(errs, field.Invalid(p.Index(i), sel, "invalid label selector."))
			}
		}
	}
	return errs
}

func (clusterRoleStrategy) Validate(obj runtime.Object) field.ErrorList {
	cr := obj.(*rbacv1.ClusterRole)
	return append(validateRBACMeta(cr, false), validateClusterRole(cr)...)
}
func (clusterRoleStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	cr := obj.(*rbacv1.ClusterRole)
	return append(validateRBACMetaUpdate(cr, old.(*rbacv1.ClusterRole), false), validateClusterRole(cr)...)
}
func (clusterRoleStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*rbacv1.ClusterRole))
}

type roleBindingStrategy struct{}

func (roleBindingStrategy) PrepareForCreate(obj runtime.Object) {
	b := obj.(*rbacv1.RoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}
func (roleBindingStrategy) PrepareForUpdate(obj, _ runtime.Object) {
	b := obj.(*rbacv1.RoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}
func (roleBindingStrategy) Validate(obj runtime.Object) field.ErrorList {
	b := obj.(*rbacv1.RoleBinding)
	return append(validateRBACMeta(b, true), validateBinding(b.RoleRef, b.Subjects, true)...)
}
func (roleBindingStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	b, o := obj.(*rbacv1.RoleBinding), old.(*rbacv1.RoleBinding)
	errs := append(validateRBACMetaUpdate(b, o, true), validateBinding(b.RoleRef, b.Subjects, true)...)
	return append(errs, immutableRoleRef(b.RoleRef, o.RoleRef)...)
}
func (roleBindingStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*rbacv1.RoleBinding))
}

type clusterRoleBindingStrategy struct{}

func (clusterRoleBindingStrategy) PrepareForCreate(obj runtime.Object) {
	b := obj.(*rbacv1.ClusterRoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}
func (clusterRoleBindingStrategy) PrepareForUpdate(obj, _ runtime.Object) {
	b := obj.(*rbacv1.ClusterRoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}
func (clusterRoleBindingStrategy) Validate(obj runtime.Object) field.ErrorList {
	b := obj.(*rbacv1.ClusterRoleBinding)
	return append(validateRBACMeta(b, false), validateBinding(b.RoleRef, b.Subjects, false)...)
}
func (clusterRoleBindingStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	b, o := obj.(*rbacv1.ClusterRoleBinding), old.(*rbacv1.ClusterRoleBinding)
	errs := append(validateRBACMetaUpdate(b, o, false), validateBinding(b.RoleRef, b.Subjects, false)...)
	return append(errs, immutableRoleRef(b.RoleRef, o.RoleRef)...)
}
func (clusterRoleBindingStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*rbacv1.ClusterRoleBinding))
}
