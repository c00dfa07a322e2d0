package kubectl

import (
	"context"
	"testing"
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
