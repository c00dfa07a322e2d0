package registry

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/authz"
)

// TestEscalationCheck is upstream's policybased storage: a user writes a
// role or a binding only when they hold its rules, or have "escalate"
// (roles) or "bind" (bindings); system:masters and in-process writers
// (no user) are not checked. The 403 lists what is missing as upstream.
func TestEscalationCheck(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	if err := reg.BootstrapRBAC(ctx); err != nil {
		t.Fatal(err)
	}
	// jane may write roles and bindings in default and read pods there;
	// ops may also escalate roles and bind the ClusterRole view there. (The
	// aggregated roles have no rules here: no aggregation controller runs,
	// so the bindings that must be refused name cluster-admin.)
	mustCreate(t, reg, &rbacv1.Role{ObjectMeta: objMeta("rbac-writer"), Rules: []rbacv1.PolicyRule{
		rule([]string{"create", "update", "get"}, rbacv1.GroupName, "roles", "rolebindings"),
		rule([]string{"get", "list"}, "", "pods"),
	}})
	mustCreate(t, reg, &rbacv1.Role{ObjectMeta: objMeta("pod-reader"), Rules: []rbacv1.PolicyRule{rule([]string{"get", "list"}, "", "pods")}})
	mustCreate(t, reg, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "delegate"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}},
		{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"view"}},
	}})
	for _, b := range []*rbacv1.RoleBinding{
		{ObjectMeta: objMeta("jane-writes"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "rbac-writer"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "jane"}, {Kind: "User", Name: "ops"}}},
		{ObjectMeta: objMeta("ops-delegates"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "delegate"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "ops"}}},
		{ObjectMeta: objMeta("jane-broken"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "gone"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "jane"}}},
	} {
		mustCreate(t, reg, b)
	}
	user := func(name string, groups ...string) context.Context {
		return authz.WithUser(ctx, &authz.User{Name: name, Groups: append(groups, authz.GroupAuthenticated)})
	}
	secrets := rule([]string{"get", "list"}, "", "secrets")
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: objMeta(name), Rules: rules}
	}
	binding := func(name, kind, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: objMeta(name), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}}
	}
	const notHeld = `is attempting to grant RBAC permissions not currently held:`
	for _, tc := range []struct {
		name string
		ctx  context.Context
		obj  runtime.Object
		code int32  // 0: created
		want string // the whole message
	}{
		{"a role within jane's rules", user("jane"), role("r1", rule([]string{"get"}, "", "pods")), 0, ""},
		{"a role beyond them", user("jane"), role("r2", secrets, rule([]string{"get", "watch"}, "", "pods")), 403,
			`roles.rbac.authorization.k8s.io "r2" is forbidden: user "jane" (groups=["system:authenticated"]) ` + notHeld + "\n" +
				`{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}` + "\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}` +
				`; resolution errors: [roles.rbac.authorization.k8s.io "gone" not found]`},
		{"resource names and URLs", user("ops"), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "b"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}, 403,
			`clusterroles.rbac.authorization.k8s.io "c1" is forbidden: user "ops" (groups=["system:authenticated"]) ` + notHeld + "\n" +
				`{APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["get"]}` + "\n" +
				`{APIGroups:[""], Resources:["configmaps"], ResourceNames:["b"], Verbs:["get"]}` + "\n" +
				`{NonResourceURLs:["/metrics"], Verbs:["get"]}`},
		{"escalate waives it", user("ops"), role("r3", secrets), 0, ""},
		{"system:masters is not checked", user("root", authz.GroupMasters), role("r4", secrets), 0, ""},
		{"nor an in-process component", ctx, role("r5", secrets), 0, ""},
		{"a binding to a role jane holds", user("jane"), binding("b1", "Role", "pod-reader"), 0, ""},
		{"a binding to one she does not", user("jane"), binding("b2", "ClusterRole", "cluster-admin"), 403,
			`rolebindings.rbac.authorization.k8s.io "b2" is forbidden: user "jane" (groups=["system:authenticated"]) ` + notHeld},
		{"bind waives it, for that role", user("ops"), binding("b3", "ClusterRole", "view"), 0, ""},
		{"only that role", user("ops"), binding("b4", "ClusterRole", "cluster-admin"), 403,
			`rolebindings.rbac.authorization.k8s.io "b4" is forbidden: user "ops" (groups=["system:authenticated"]) ` + notHeld},
		{"a binding to a missing role", user("jane"), binding("b5", "Role", "nope"), 404,
			`roles.rbac.authorization.k8s.io "nope" not found`},
		{"a cluster binding", user("ops"), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "cb"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}}, 403,
			`clusterrolebindings.rbac.authorization.k8s.io "cb" is forbidden: user "ops" (groups=["system:authenticated"]) ` + notHeld},
		{"an aggregationRule needs everything", user("ops"), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}}, 403,
			`clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc, _ := runtime.Object(tc.obj).(metav1.Object)
			_, err := storeFor(t, reg, tc.obj).Create(tc.ctx, acc.GetNamespace(), tc.obj, CreateOptions{})
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("created; want %d", tc.code)
			}
			wantStatus(t, err, tc.code, tc.want)
		})
	}

	// Updates: jane may not widen r1, but may change its finalizers alone
	// (the garbage collector's fields) even after the role outgrew her.
	obj, err := storeOf(t, reg, rbacv1.GroupName, "roles").Get(ctx, "default", "r1")
	if err != nil {
		t.Fatal(err)
	}
	r1 := obj.(*rbacv1.Role)
	r1.Rules = append(r1.Rules, secrets)
	_, err = storeOf(t, reg, rbacv1.GroupName, "roles").Update(user("jane"), r1.DeepCopy(), UpdateOptions{})
	if err == nil {
		t.Fatal("jane widened r1")
	}
	wantStatus(t, err, 403, `roles.rbac.authorization.k8s.io "r1" is forbidden: user "jane"`, `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`)
	r1 = mustUpdate(t, reg, r1) // as the admin (no user)
	r1.Finalizers = []string{"example.com/keep"}
	if _, err := storeOf(t, reg, rbacv1.GroupName, "roles").Update(user("jane"), r1, UpdateOptions{}); err != nil {
		t.Fatalf("a finalizer alone: %v", err)
	}
}

// Covers with the message's compaction: verbs of one resource merge into
// one line, each resource name keeps its own.
func TestConfirmNoEscalationMessage(t *testing.T) {
	u := &authz.User{Name: "jane", Groups: []string{"dev", authz.GroupAuthenticated}}
	owner := []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}}
	want := []rbacv1.PolicyRule{{Verbs: []string{"get", "update"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale", "deployments"}}}
	err := authz.ConfirmNoEscalation(u, owner, nil, want)
	if err == nil || err.Error() != `user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
		`{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "update"]}` {
		t.Fatalf("got %v", err)
	}
	if err := authz.ConfirmNoEscalation(u, append(owner, want...), nil, want); err != nil {
		t.Fatal(err)
	}
}
