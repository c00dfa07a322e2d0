package authz

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func res(verb, group, resource, sub, ns, name string) Attributes {
	return Attributes{User: &User{Name: "jane"}, ResourceRequest: true, Verb: verb, APIGroup: group,
		Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func path(verb, p string) Attributes {
	return Attributes{User: &User{Name: "jane"}, Verb: verb, Path: p}
}

// TestRuleAllows is upstream's RuleAllows: verbs, groups, resources with
// subresources, resourceNames and nonResourceURLs, each with "*".
func TestRuleAllows(t *testing.T) {
	pods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		a    Attributes
		want bool
	}{
		{"verb and resource", pods, res("list", "", "pods", "", "dev", ""), true},
		{"other verb", pods, res("delete", "", "pods", "", "dev", "web"), false},
		{"other group", pods, res("list", "apps", "pods", "", "dev", ""), false},
		{"resource does not grant a subresource", pods, res("get", "", "pods", "log", "dev", "web"), false},
		{"subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}},
			res("get", "", "pods", "log", "dev", "web"), true},
		{"subresource does not grant the resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}},
			res("get", "", "pods", "", "dev", "web"), false},
		{"*/scale", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}},
			res("update", "apps", "deployments", "scale", "dev", "web"), true},
		{"pods/*", rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods/*"}},
			res("create", "", "pods", "exec", "dev", "web"), true},
		{"everything", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			res("deletecollection", "batch", "jobs", "status", "dev", ""), true},
		{"resourceNames", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"app"}},
			res("get", "", "configmaps", "", "dev", "app"), true},
		{"resourceNames: other name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"app"}},
			res("get", "", "configmaps", "", "dev", "other"), false},
		{"resourceNames: a list has no name", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"app"}},
			res("list", "", "configmaps", "", "dev", ""), false},
		{"a resource rule does not grant a path", pods, path("get", "/api"), false},
		{"URL", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, path("get", "/healthz"), true},
		{"URL prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/apis/apps/v1"), true},
		{"URL prefix is not the bare path", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/apis"), false},
		{"URL: other verb", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, path("post", "/healthz"), false},
		{"a URL rule does not grant a resource", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", "dev", "web"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(tc.a, &tc.rule); got != tc.want {
				t.Errorf("RuleAllows = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestForbidden is the wording of k8s.io/apiserver's forbidden responses.
func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		a    Attributes
		want string
	}{
		{res("list", "", "pods", "", "default", ""),
			`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"`},
		{res("get", "", "nodes", "", "", "node-1"),
			`nodes "node-1" is forbidden: User "jane" cannot get resource "nodes" in API group "" at the cluster scope`},
		{res("update", "apps", "deployments", "scale", "dev", "web"),
			`deployments.apps "web" is forbidden: User "jane" cannot update resource "deployments/scale" in API group "apps" in the namespace "dev"`},
		{path("get", "/healthz"), `forbidden: User "jane" cannot get path "/healthz"`},
	} {
		err := Forbidden(tc.a, "")
		if got := err.ErrStatus.Message; got != tc.want {
			t.Errorf("message\n got %s\nwant %s", got, tc.want)
		}
		if err.ErrStatus.Code != 403 || err.ErrStatus.Reason != metav1.StatusReasonForbidden {
			t.Errorf("status %d %s", err.ErrStatus.Code, err.ErrStatus.Reason)
		}
	}
	if d := Forbidden(res("get", "", "nodes", "", "", "node-1"), "").ErrStatus.Details; d == nil || d.Kind != "nodes" || d.Name != "node-1" {
		t.Errorf("details %+v", d)
	}
}

// fakePolicy is an in-memory Policy.
type fakePolicy struct {
	crbs  []*rbacv1.ClusterRoleBinding
	rbs   map[string][]*rbacv1.RoleBinding
	crs   map[string]*rbacv1.ClusterRole
	roles map[string]*rbacv1.Role // by namespace/name
}

func (p *fakePolicy) ClusterRoleBindings(context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return p.crbs, nil
}
func (p *fakePolicy) RoleBindings(_ context.Context, ns string) ([]*rbacv1.RoleBinding, error) {
	return p.rbs[ns], nil
}
func (p *fakePolicy) ClusterRole(_ context.Context, name string) (*rbacv1.ClusterRole, error) {
	if cr, ok := p.crs[name]; ok {
		return cr, nil
	}
	return nil, fmt.Errorf("clusterrole.rbac.authorization.k8s.io %q not found", name)
}
func (p *fakePolicy) Role(_ context.Context, ns, name string) (*rbacv1.Role, error) {
	if r, ok := p.roles[ns+"/"+name]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("role.rbac.authorization.k8s.io %q not found", name)
}

// TestRBACAuthorize: a RoleBinding grants its Role, or a ClusterRole, in
// its namespace only; a ClusterRoleBinding everywhere; groups and
// ServiceAccounts are subjects; system:masters needs no binding.
func TestRBACAuthorize(t *testing.T) {
	read := []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	p := &fakePolicy{
		crs:   map[string]*rbacv1.ClusterRole{"view": {ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}}}}},
		roles: map[string]*rbacv1.Role{"dev/pod-reader": {Rules: read}},
		rbs: map[string][]*rbacv1.RoleBinding{"dev": {
			{ObjectMeta: metav1.ObjectMeta{Name: "jane-reads", Namespace: "dev"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
				Subjects: []rbacv1.Subject{{Kind: "User", Name: "jane"}, {Kind: "ServiceAccount", Name: "bot"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "team-views", Namespace: "dev"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: "Group", Name: "team"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "dangling", Namespace: "dev"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "gone"},
				Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}},
		}},
		crbs: []*rbacv1.ClusterRoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "ops-view"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "ops"}}}},
	}
	authz := Privileged{Next: NewRBAC(p)}
	jane := &User{Name: "jane", Groups: []string{GroupAuthenticated}}
	as := func(u *User, a Attributes) Attributes { a.User = u; return a }
	for _, tc := range []struct {
		name       string
		a          Attributes
		want       bool
		wantReason string
	}{
		{"jane lists pods in dev", as(jane, res("list", "", "pods", "", "dev", "")), true,
			`RBAC: allowed by RoleBinding "jane-reads/dev" of Role "pod-reader" to User "jane"`},
		{"not in prod", as(jane, res("list", "", "pods", "", "prod", "")), false, ""},
		{"not across namespaces", as(jane, res("list", "", "pods", "", "", "")), false, ""},
		{"not delete", as(jane, res("delete", "", "pods", "", "dev", "web")), false, ""},
		{"the ServiceAccount of the binding's namespace", as(&User{Name: "system:serviceaccount:dev:bot"}, res("get", "", "pods", "", "dev", "web")), true,
			`RBAC: allowed by RoleBinding "jane-reads/dev" of Role "pod-reader" to ServiceAccount "dev/bot"`},
		{"a ServiceAccount of another namespace", as(&User{Name: "system:serviceaccount:prod:bot"}, res("get", "", "pods", "", "dev", "web")), false, ""},
		{"a group, a ClusterRole in one namespace", as(&User{Name: "kim", Groups: []string{"team"}}, res("get", "apps", "deployments", "", "dev", "web")), true,
			`RBAC: allowed by RoleBinding "team-views/dev" of ClusterRole "view" to Group "team"`},
		{"a ClusterRoleBinding: everywhere", as(&User{Name: "ops"}, res("get", "apps", "deployments", "", "prod", "web")), true,
			`RBAC: allowed by ClusterRoleBinding "ops-view" of ClusterRole "view" to User "ops"`},
		{"system:masters", as(&User{Name: "root", Groups: []string{GroupMasters}}, res("delete", "", "nodes", "", "", "node-1")), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec, reason, _ := authz.Authorize(context.Background(), tc.a)
			if (dec == DecisionAllow) != tc.want || reason != tc.wantReason {
				t.Errorf("decision %v reason %q; want allowed=%v %q", dec, reason, tc.want, tc.wantReason)
			}
		})
	}
	// A binding to a missing role is an evaluation error, and an
	// incomplete rules list.
	_, _, err := authz.Authorize(context.Background(), as(&User{Name: "bob"}, res("get", "", "pods", "", "dev", "web")))
	if err == nil || err.Error() != `role.rbac.authorization.k8s.io "gone" not found` {
		t.Errorf("err %v", err)
	}
	rules, errs := NewRBAC(p).RulesFor(context.Background(), jane, "dev")
	if len(rules) != 1 || len(errs) != 0 || rules[0].Resources[0] != "pods" {
		t.Errorf("RulesFor jane in dev: %+v %v", rules, errs)
	}
}
