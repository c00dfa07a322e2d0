package kubectl

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/controller/clusterroleaggregation"
)

// create role, clusterrole, rolebinding and clusterrolebinding with
// upstream's flag checks (bad input sends nothing), then auth can-i and
// auth whoami, as the admin and, with --as/--as-group, as jane: the 403s
// are the API server's.
func TestRBACCommands(t *testing.T) {
	e := newEnv(t)
	if err := e.reg.BootstrapRBAC(context.Background()); err != nil {
		t.Fatal(err)
	}
	golden(t, "rbac-client", e.transcript(
		"create role pod-reader --verb=get,list --resource=pods,pods/log,rs.apps --resource-name=web --dry-run=client -o yaml",
		"create clusterrole monitoring --aggregation-rule=rbac.example.com/aggregate-to-monitoring=true --dry-run=client -o yaml",
		"create clusterrole logs --verb=get --non-resource-url=/logs/* --dry-run=client -o yaml",
		"create rolebinding admins --clusterrole=admin --user=u1 --group=g1 --serviceaccount=dev:bot --dry-run=client -o yaml",
		"create role bad --verb=fly --resource=pods",
		"create role bad --resource=pods",
		"create role bad --verb=get",
		"create role bad --verb=get --resource=crontabs.stable.example.com",
		"create role bad --verb=impersonate --resource=pods",
		"create clusterrole bad --verb=get --non-resource-url=logs",
		"create clusterrole bad --verb=get --non-resource-url=/a*/b",
		"create clusterrole bad --aggregation-rule=a=b --verb=get",
		"create rolebinding bad --role=r --clusterrole=c",
		"create rolebinding bad",
		"create rolebinding bad --role=r --serviceaccount=bot",
		"create clusterrolebinding bad --user=jane",
		"auth can-i",
	))
	if w := e.takeWrites(); len(w) != 0 {
		t.Errorf("dry runs and bad input sent writes: %v", w)
	}
	golden(t, "rbac-server", e.transcript(
		"create role pod-reader --verb=get,list --resource=pods",
		"create rolebinding jane-reads --role=pod-reader --user=jane",
		"get rolebindings -o wide",
		"auth can-i list pods --as jane",
		"auth can-i delete pods --as jane",
		"auth can-i list pods --as jane -n kube-system",
		"auth can-i get nodes --as jane",
		"auth can-i -q list pods --as jane",
		"auth can-i '*' '*' -A",
		"auth can-i get /healthz --as jane",
		"get pods --as jane",
		"get pods --as jane -n kube-system",
		"get nodes --as jane --as-group dev",
		"get nodes --as jane --as-group system:masters",
		"auth whoami",
		"auth whoami --as jane --as-group dev --as-group qa",
		"create clusterrole deployment-reader --verb=get,list --resource=deploy.apps",
		"create clusterrolebinding jane-deployments --clusterrole=deployment-reader --user=jane",
		"auth can-i list deployments.apps --as jane -n kube-system",
		"get deploy -A --as jane",
		"create rolebinding bad --role=r --user=jane --as jane",
	))
}

// aggregateRoles fills the aggregated ClusterRoles (admin, edit, view) as
// the clusterrole-aggregation controller does in a running cluster: edit
// gathers view's rules and admin edit's, so three passes settle them.
func (e *env) aggregateRoles() {
	e.t.Helper()
	ctx := context.Background()
	st := e.reg.MustLookup(rbacv1.GroupName, "clusterroles")
	for pass := 0; pass < 3; pass++ {
		list, err := st.List(ctx, "", registry.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		items := list.(*rbacv1.ClusterRoleList).Items
		var roles []*rbacv1.ClusterRole
		for i := range items {
			roles = append(roles, &items[i])
		}
		for _, cr := range roles {
			if cr.AggregationRule == nil {
				continue
			}
			cr.Rules = clusterroleaggregation.AggregatedRules(cr, roles)
			if _, err := st.Update(ctx, cr.DeepCopy(), registry.UpdateOptions{}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
}

// describe role, clusterrole, rolebinding and clusterrolebinding, and auth
// can-i --list, with upstream's rules table (broken down, merged by
// resource, sorted) as the real kubectl v1.32 prints them against
// `kubetab cluster` (checked by hand; the conformance script checks a few
// lines), can-i's warnings, and the escalation check's 403 for a user who
// may create roles.
func TestRBACDescribeAndList(t *testing.T) {
	e := newEnv(t)
	if err := e.reg.BootstrapRBAC(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.aggregateRoles()
	golden(t, "rbac-describe", e.transcript(
		"create role pod-reader --verb=get,list,watch --resource=pods,pods/log,deployments.apps",
		"create role web-only --verb=get --verb=update --resource=deployments.apps/scale,configmaps --resource-name=web --resource-name=api",
		"create rolebinding jane-reads --role=pod-reader --user=jane --group=dev --serviceaccount=default:bot",
		"create clusterrolebinding jane-views --clusterrole=view --user=jane",
		"describe role pod-reader",
		"describe role web-only",
		"describe rolebinding jane-reads",
		"describe clusterrole view",
		"describe clusterrole system:discovery",
		"describe clusterrole cluster-admin",
		"describe clusterrolebinding cluster-admin jane-views",
		"auth can-i --list",
		"auth can-i --list --as jane",
		"auth can-i --list --as jane -n kube-system --no-headers",
		"auth can-i --list --as bob --as-group dev",
		"auth can-i --list pods",
		"auth can-i --list -A",
		"auth can-i get pods --no-headers",
		"auth can-i get nodes --as jane",
		"auth can-i fly pods",
		"auth can-i fly /healthz",
		"auth can-i get foos.bar",
		"auth can-i get clusterroles.rbac.authorization.k8s.io",
		"auth can-i impersonate users",
		"create clusterrole role-creator --verb=create --resource=roles,rolebindings",
		"create rolebinding sam-creates --clusterrole=role-creator --user=sam",
		"create role secret-reader --verb=get,list --resource=secrets,pods --as sam",
		"create rolebinding sam-views --clusterrole=view --user=sam --as sam",
		"create clusterrole sam-escalates --verb=escalate --resource=roles",
		"create rolebinding sam-escalates --clusterrole=sam-escalates --user=sam",
		"create role secret-reader --verb=get,list --resource=secrets,pods --as sam",
	))
}
