package registry

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestRBACValidation is upstream's pkg/apis/rbac/validation: rules need
// verbs, groups and resources (or non-resource URLs, never both, never in a
// namespaced Role); a binding's roleRef and subjects are checked; apiGroups
// are defaulted.
func TestRBACValidation(t *testing.T) {
	bind := func(mutate func(*rbacv1.RoleBinding)) *rbacv1.RoleBinding {
		b := &rbacv1.RoleBinding{ObjectMeta: objMeta("jane-reads"),
			RoleRef:  rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "jane"}}}
		if mutate != nil {
			mutate(b)
		}
		return b
	}
	role := func(rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: objMeta("pod-reader"), Rules: rules}
	}
	for _, tc := range []struct {
		name string
		obj  interface{ GetName() string }
		want string // a substring of the 422's message; "": valid
	}{
		{"role", role(rule([]string{"get"}, "", "pods")), ""},
		{"role without verbs", role(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}}),
			`Role.rbac.authorization.k8s.io "pod-reader" is invalid: rules[0].verbs: Required value: verbs must contain at least one value`},
		{"role without apiGroups", role(rbacv1.PolicyRule{Verbs: []string{"get"}, Resources: []string{"pods"}}),
			"rules[0].apiGroups: Required value: resource rules must supply at least one api group"},
		{"role without resources", role(rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}}),
			"rules[0].resources: Required value: resource rules must supply at least one resource"},
		{"role with URLs", role(urlRule([]string{"get"}, "/healthz")),
			`rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`},
		{"cluster role with URLs and resources", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "x"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}, Resources: []string{"pods"}}}},
			"rules cannot apply to both regular resources and non-resource URLs"},
		{"empty aggregationRule", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "x"}, AggregationRule: &rbacv1.AggregationRule{}},
			"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"},
		{"name with a slash", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}}, `metadata.name: Invalid value: "a/b": may not contain '/'`},
		{"name with a colon", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "team:reader"}}, ""},
		{"binding", bind(nil), ""},
		{"binding of an unknown kind", bind(func(b *rbacv1.RoleBinding) { b.RoleRef.Kind = "Policy" }),
			`roleRef.kind: Unsupported value: "Policy": supported values: "Role", "ClusterRole"`},
		{"binding without a role name", bind(func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "" }), "roleRef.name: Required value"},
		{"binding of a bad subject kind", bind(func(b *rbacv1.RoleBinding) { b.Subjects[0].Kind = "Robot" }),
			`subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`},
		{"service account in another apiGroup", bind(func(b *rbacv1.RoleBinding) {
			b.Subjects[0] = rbacv1.Subject{Kind: "ServiceAccount", Name: "bot", APIGroup: "rbac.authorization.k8s.io"}
		}), `subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""`},
		{"cluster binding to a Role", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"},
			RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}},
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`},
		{"cluster binding of a service account without namespace", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "bot"}}},
			"subjects[0].namespace: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			_, err := create(t, reg, tc.obj.(runtime.Object))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("created; want 422")
			}
			wantStatus(t, err, 422, tc.want)
		})
	}
}

// A binding's apiGroups default, and its roleRef cannot change.
func TestRoleBindingDefaultsAndImmutableRoleRef(t *testing.T) {
	reg := newRegistry(t)
	b := mustCreate(t, reg, &rbacv1.RoleBinding{ObjectMeta: objMeta("b"),
		RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "jane"}, {Kind: "ServiceAccount", Name: "bot"}}})
	if b.RoleRef.APIGroup != rbacv1.GroupName || b.Subjects[0].APIGroup != rbacv1.GroupName || b.Subjects[1].APIGroup != "" {
		t.Fatalf("defaults: roleRef %+v subjects %+v", b.RoleRef, b.Subjects)
	}
	b.RoleRef.Name = "edit"
	_, err := update(t, reg, b)
	if err == nil {
		t.Fatal("roleRef changed")
	}
	wantStatus(t, err, 422, "roleRef: Invalid value: ", "cannot change roleRef")
}

// The bootstrap policy is created once, is valid, and leaves a user's edit
// of a default role alone on the next start.
func TestBootstrapRBAC(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	if err := reg.BootstrapRBAC(ctx); err != nil {
		t.Fatal(err)
	}
	roles := storeOf(t, reg, rbacv1.GroupName, "clusterroles")
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:basic-user", "system:discovery",
		"system:public-info-viewer", "system:kube-scheduler", "system:kube-controller-manager", "system:node",
		"system:aggregate-to-view"} {
		obj, err := roles.Get(ctx, "", name)
		if err != nil {
			t.Fatalf("clusterrole %s: %v", name, err)
		}
		if cr := obj.(*rbacv1.ClusterRole); cr.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" {
			t.Errorf("%s labels %v", name, cr.Labels)
		}
	}
	obj, err := storeOf(t, reg, rbacv1.GroupName, "clusterrolebindings").Get(ctx, "", "cluster-admin")
	if err != nil {
		t.Fatal(err)
	}
	if b := obj.(*rbacv1.ClusterRoleBinding); len(b.Subjects) != 1 || b.Subjects[0].Kind != "Group" || b.Subjects[0].Name != "system:masters" {
		t.Fatalf("cluster-admin binding subjects %+v", b.Subjects)
	}
	obj, _ = roles.Get(ctx, "", "view")
	view := obj.(*rbacv1.ClusterRole)
	if view.AggregationRule == nil || view.AggregationRule.ClusterRoleSelectors[0].MatchLabels[AggregateToViewLabel] != "true" {
		t.Fatalf("view aggregationRule %+v", view.AggregationRule)
	}
	view.Labels["changed"] = "by-user"
	if _, err := update(t, reg, view); err != nil {
		t.Fatal(err)
	}
	if err := reg.BootstrapRBAC(ctx); err != nil {
		t.Fatal(err)
	}
	obj, _ = roles.Get(ctx, "", "view")
	if obj.(*rbacv1.ClusterRole).Labels["changed"] != "by-user" {
		t.Fatal("a second bootstrap overwrote view")
	}
}
