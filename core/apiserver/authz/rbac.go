package authz

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Policy is where the RBAC authorizer reads the cluster's RBAC objects
// (upstream: the listers of rule.go's StaticRoles). A missing role is an
// error, not a panic: a binding may name a role that does not exist yet.
type Policy interface {
	ClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error)
	RoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error)
	ClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error)
	Role(ctx context.Context, namespace, name string) (*rbacv1.Role, error)
}

// RBAC is the RBAC authorizer.
type RBAC struct{ policy Policy }

var _ Authorizer = (*RBAC)(nil)

// NewRBAC returns an authorizer over policy.
func NewRBAC(policy Policy) *RBAC { return &RBAC{policy: policy} }

// Authorize allows a when a rule bound to its user allows it; the reason
// names the binding, as upstream's:
//
//	RBAC: allowed by RoleBinding "jane-reads/dev" of Role "pod-reader" to User "jane"
func (r *RBAC) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	if a.User == nil {
		return DecisionNoOpinion, "", nil
	}
	reason, allowed := "", false
	var errs []string
	r.visitRules(ctx, a.User, a.Namespace, func(source ruleSource, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err.Error())
			return true
		}
		if RuleAllows(a, rule) {
			allowed = true
			if !a.NoAllowReason {
				reason = "RBAC: allowed by " + source.String()
			}
			return false
		}
		return true
	})
	if allowed {
		return DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		return DecisionNoOpinion, "", fmt.Errorf("%s", strings.Join(errs, ", "))
	}
	return DecisionNoOpinion, "", nil
}

// RulesFor returns the rules that apply to u in namespace (cluster-wide
// ones too), as SelfSubjectRulesReview reports them, and the errors met
// (a binding to a missing role) which make the list incomplete.
func (r *RBAC) RulesFor(ctx context.Context, u *User, namespace string) ([]rbacv1.PolicyRule, []error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	r.visitRules(ctx, u, namespace, func(_ ruleSource, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			rules = append(rules, *rule)
		}
		return true
	})
	return rules, errs
}

// visitRules calls visit with each rule bound to u: those of the
// ClusterRoleBindings, then those of namespace's RoleBindings; it stops
// when visit returns false (upstream: VisitRulesFor). source names the
// binding; its text is built only when asked for (the reason of an
// allowed request), since components ask on every call.
func (r *RBAC) visitRules(ctx context.Context, u *User, namespace string, visit func(source ruleSource, rule *rbacv1.PolicyRule, err error) bool) {
	crbs, err := r.policy.ClusterRoleBindings(ctx)
	if err != nil && !visit(ruleSource{}, nil, err) {
		return
	}
	for _, b := range crbs {
		subj, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := r.roleRules(ctx, b.RoleRef, "")
		if err != nil {
			if !visit(ruleSource{}, nil, err) {
				return
			}
			continue
		}
		source := ruleSource{kind: "ClusterRoleBinding", name: b.Name, ref: &b.RoleRef, subject: subj}
		for i := range rules {
			if !visit(source, &rules[i], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	rbs, err := r.policy.RoleBindings(ctx, namespace)
	if err != nil && !visit(ruleSource{}, nil, err) {
		return
	}
	for _, b := range rbs {
		subj, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := r.roleRules(ctx, b.RoleRef, namespace)
		if err != nil {
			if !visit(ruleSource{}, nil, err) {
				return
			}
			continue
		}
		source := ruleSource{kind: "RoleBinding", name: b.Name, namespace: namespace, ref: &b.RoleRef, subject: subj}
		for i := range rules {
			if !visit(source, &rules[i], nil) {
				return
			}
		}
	}
}

// ruleSource is the binding a rule comes from, for the reason of an
// allowed request:
//
//	ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"
type ruleSource struct {
	kind, name, namespace string
	ref                   *rbacv1.RoleRef
	subject               *rbacv1.Subject
}

func (s ruleSource) String() string {
	name := s.name
	if s.namespace != "" {
		name += "/" + s.namespace
	}
	return fmt.Sprintf("%s %q of %s %q to %s", s.kind, name, s.ref.Kind, s.ref.Name, describeSubject(s.subject, s.namespace))
}

func (r *RBAC) roleRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		cr, err := r.policy.ClusterRole(ctx, ref.Name)
		if err != nil {
			return nil, err
		}
		return cr.Rules, nil
	case "Role":
		if namespace == "" {
			return nil, fmt.Errorf("a ClusterRoleBinding may not name Role %q", ref.Name)
		}
		role, err := r.policy.Role(ctx, namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appliesTo returns the first subject that is u (upstream: appliesTo). A
// ServiceAccount subject without a namespace, in a RoleBinding, means the
// binding's namespace.
func appliesTo(u *User, subjects []rbacv1.Subject, bindingNamespace string) (*rbacv1.Subject, bool) {
	for i := range subjects {
		s := &subjects[i]
		switch s.Kind {
		case rbacv1.UserKind:
			if u.Name == s.Name {
				return s, true
			}
		case rbacv1.GroupKind:
			if u.InGroup(s.Name) {
				return s, true
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && isServiceAccount(u.Name, ns, s.Name) {
				return s, true
			}
		}
	}
	return nil, false
}

// isServiceAccount reports whether user is system:serviceaccount:ns:name,
// without building that string (every request walks every binding).
func isServiceAccount(user, ns, name string) bool {
	rest, ok := strings.CutPrefix(user, ServiceAccountPrefix)
	return ok && len(rest) == len(ns)+1+len(name) && rest[len(ns)] == ':' &&
		strings.HasPrefix(rest, ns) && strings.HasSuffix(rest, name)
}

func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, ns+"/"+s.Name)
	default:
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
}
