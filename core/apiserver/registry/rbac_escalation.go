package registry

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/authz"
)

// The escalation check (upstream: pkg/registry/rbac/{role,clusterrole,
// rolebinding,clusterrolebinding}/policybased, escalation_check.go and
// validation.ConfirmNoEscalation). RBAC lets a user write roles and
// bindings, which would let anyone with `create roles` grant themselves
// anything; so the RBAC storage refuses a write that grants what its
// writer does not hold:
//
//	jane: create roles in dev        jane creates Role "reader" {get secrets}
//	        │                          │
//	        ├─ system:masters?  ───────┼─▶ yes: allowed
//	        ├─ may jane "escalate" roles in dev? ─▶ yes: allowed
//	        └─ do jane's own rules (cluster-wide + dev) cover {get secrets}?
//	               no ⇒ 403 roles.rbac.authorization.k8s.io "reader" is forbidden:
//	                    user "jane" (groups=[...]) is attempting to grant RBAC
//	                    permissions not currently held: {APIGroups:[""], ...}
//
// A binding is checked against the rules of the role it names, and the
// verb that waives the check is "bind" on that role (by name), so an
// administrator can delegate "may hand out view in dev" without handing
// out view's rules. Setting a ClusterRole's aggregationRule needs every
// permission (it can gather anything). An update that only changes the
// garbage collector's fields (finalizers, ownerReferences) is not checked.
//
// The check runs last of the mutating admission phase, as upstream's runs
// in the storage, after mutating admission and before validation. A
// request without a user is an in-process component (the clusterrole
// aggregation controller, the bootstrap policy): trusted, as everywhere
// in kubetab.

// fullAuthority is what using an aggregationRule requires.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// escalationCheck returns the admission plugin. Its rules come from the
// RBAC stores themselves, as upstream's storage-backed rule resolver.
func (r *Registry) escalationCheck() Admission {
	rules := authz.NewRBAC(rbacStores{r})
	authorizer := authz.Privileged{Next: rules}
	return func(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
		if res.Group != rbacv1.GroupName || op == Delete {
			return nil
		}
		u := authz.UserFrom(ctx)
		if u == nil || u.InGroup(authz.GroupMasters) {
			return nil // upstream's EscalationAllowed
		}
		if op == Update && onlyGCFields(obj, old) {
			return nil
		}
		e := escalation{ctx: ctx, u: u, rules: rules, authorizer: authorizer}
		switch o := obj.(type) {
		case *rbacv1.Role:
			return e.role(op, res, o.Namespace, o.Name, o.Rules, false)
		case *rbacv1.ClusterRole:
			agg := hasAggregationRule(o)
			if oldRole, ok := old.(*rbacv1.ClusterRole); ok && hasAggregationRule(oldRole) {
				agg = true
			}
			return e.role(op, res, "", o.Name, o.Rules, agg)
		case *rbacv1.RoleBinding:
			return e.binding(r, res, o.Namespace, o.Name, o.RoleRef)
		case *rbacv1.ClusterRoleBinding:
			return e.binding(r, res, "", o.Name, o.RoleRef)
		}
		return nil
	}
}

// escalation is one write being checked.
type escalation struct {
	ctx        context.Context
	u          *authz.User
	rules      *authz.RBAC
	authorizer authz.Authorizer
}

func (e escalation) allowed(a authz.Attributes) bool {
	a.User, a.ResourceRequest = e.u, true
	dec, _, _ := e.authorizer.Authorize(e.ctx, a)
	return dec == authz.DecisionAllow
}

// confirm checks want against the user's rules in namespace.
func (e escalation) confirm(res *Resource, namespace, name string, want []rbacv1.PolicyRule) error {
	owner, errs := e.rules.RulesFor(e.ctx, e.u, namespace)
	if err := authz.ConfirmNoEscalation(e.u, owner, errs, want); err != nil {
		return apierrors.NewForbidden(res.GroupResource(), name, err)
	}
	return nil
}

// role is RoleEscalationAuthorized then ConfirmNoEscalation. The
// "escalate" check names the object only on an update: a create's request
// is for the collection, as upstream's RequestInfo.
func (e escalation) role(op Operation, res *Resource, namespace, name string, rules []rbacv1.PolicyRule, aggregation bool) error {
	reqName := ""
	if op == Update {
		reqName = name
	}
	if e.allowed(authz.Attributes{Verb: "escalate", APIGroup: rbacv1.GroupName, APIVersion: "*", Resource: res.Resource, Namespace: namespace, Name: reqName}) {
		return nil
	}
	if err := e.confirm(res, namespace, name, rules); err != nil {
		return err
	}
	if aggregation {
		owner, errs := e.rules.RulesFor(e.ctx, e.u, namespace)
		if authz.ConfirmNoEscalation(e.u, owner, errs, fullAuthority) != nil {
			return apierrors.NewForbidden(res.GroupResource(), name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// binding is BindingAuthorized, then ConfirmNoEscalation with the rules of
// the role the binding names. A role that does not exist is its 404.
func (e escalation) binding(r *Registry, res *Resource, namespace, name string, ref rbacv1.RoleRef) error {
	group := ref.APIGroup
	if group == "" {
		group = rbacv1.GroupName // defaulted later (PrepareForCreate); upstream decodes it defaulted
	}
	bind := authz.Attributes{Verb: "bind", APIGroup: group, Namespace: namespace, Name: ref.Name}
	switch ref.Kind {
	case "ClusterRole":
		bind.Resource = "clusterroles"
	case "Role":
		bind.Resource = "roles"
	}
	if bind.Resource != "" && e.allowed(bind) {
		return nil
	}
	var rules []rbacv1.PolicyRule
	switch ref.Kind {
	case "ClusterRole":
		cr, err := (rbacStores{r}).ClusterRole(e.ctx, ref.Name)
		if err != nil {
			return err
		}
		rules = cr.Rules
	case "Role":
		role, err := (rbacStores{r}).Role(e.ctx, namespace, ref.Name)
		if err != nil {
			return err
		}
		rules = role.Rules
	default:
		return apierrors.NewInternalError(fmt.Errorf("unsupported role reference kind: %q", ref.Kind))
	}
	return e.confirm(res, namespace, name, rules)
}

func hasAggregationRule(cr *rbacv1.ClusterRole) bool {
	return cr.AggregationRule != nil && len(cr.AggregationRule.ClusterRoleSelectors) > 0
}

// onlyGCFields is upstream's IsOnlyMutatingGCFields: obj is old but for
// its ownerReferences and finalizers.
func onlyGCFields(obj, old runtime.Object) bool {
	if old == nil {
		return false
	}
	c := obj.DeepCopyObject()
	cm, err1 := meta.Accessor(c)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	// Upstream compares internal objects, which carry no apiVersion/kind.
	c.GetObjectKind().SetGroupVersionKind(old.GetObjectKind().GroupVersionKind())
	return apiequality.Semantic.DeepEqual(c, old)
}

// rbacStores reads the RBAC objects from the registry for the check (the
// rule resolver of upstream's RBAC storage). Its errors are the stores'
// own: roles.rbac.authorization.k8s.io "x" not found.
type rbacStores struct{ r *Registry }

var _ authz.Policy = rbacStores{}

func (p rbacStores) store(resource string) (*Store, error) {
	st, ok := p.r.Lookup(schema.GroupResource{Group: rbacv1.GroupName, Resource: resource})
	if !ok {
		return nil, fmt.Errorf("%s.%s is not served", resource, rbacv1.GroupName)
	}
	return st, nil
}

func (p rbacStores) list(resource, namespace string) ([]runtime.Object, error) {
	st, err := p.store(resource)
	if err != nil {
		return nil, err
	}
	return st.listShared(namespace)
}

func (p rbacStores) get(resource, namespace, name string) (runtime.Object, error) {
	st, err := p.store(resource)
	if err != nil {
		return nil, err
	}
	return st.getShared(namespace, name)
}

func (p rbacStores) ClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	objs, err := p.list("clusterrolebindings", "")
	out := make([]*rbacv1.ClusterRoleBinding, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*rbacv1.ClusterRoleBinding))
	}
	return out, err
}

func (p rbacStores) RoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	objs, err := p.list("rolebindings", namespace)
	out := make([]*rbacv1.RoleBinding, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*rbacv1.RoleBinding))
	}
	return out, err
}

func (p rbacStores) ClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	obj, err := p.get("clusterroles", "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (p rbacStores) Role(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	obj, err := p.get("roles", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.Role), nil
}
