package clusterroleaggregation

import (
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func hasResource(rules []rbacv1.PolicyRule, group, resource string) bool {
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == group && res == resource {
					return true
				}
			}
		}
	}
	return false
}

// The bootstrap view, edit and admin roles fill from their aggregate-to
// roles; a new ClusterRole labelled aggregate-to-view joins view (and, as
// view aggregates to edit, edit too); removing the label takes it out.
func TestAggregation(t *testing.T) {
	e := controllertest.NewEnv(t)
	if err := e.Registry.BootstrapRBAC(e.Ctx); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(Component, c.Run)
	roles := clusterRoles(e.Client)
	has := func(role, group, resource string, want bool) func() (bool, string) {
		return func() (bool, string) {
			cr, err := roles.Get(e.Ctx, "", role)
			if err != nil {
				return false, err.Error()
			}
			return hasResource(cr.Rules, group, resource) == want, fmt.Sprintf("%s rules %v", role, cr.Rules)
		}
	}
	e.Eventually("view reads pods", has("view", "", "pods", true))
	e.Eventually("edit writes deployments", has("edit", "apps", "deployments", true))
	e.Eventually("admin writes roles", has("admin", "rbac.authorization.k8s.io", "roles", true))
	e.Eventually("admin has edit's rules", has("admin", "", "pods/exec", true))

	crontabs, err := roles.Create(e.Ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "crontab-reader", Labels: map[string]string{registry.AggregateToViewLabel: "true"}},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{"stable.example.com"}, Resources: []string{"crontabs"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Eventually("view reads crontabs", has("view", "stable.example.com", "crontabs", true))
	e.Eventually("edit reads crontabs", has("edit", "stable.example.com", "crontabs", true))

	crontabs.Labels = nil
	if _, err := roles.Update(e.Ctx, crontabs); err != nil {
		t.Fatal(err)
	}
	e.Eventually("view no longer reads crontabs", has("view", "stable.example.com", "crontabs", false))
}

// AggregatedRules takes matching roles in name order, skips duplicates and
// the role itself.
func TestAggregatedRules(t *testing.T) {
	sel := map[string]string{"agg": "true"}
	r1 := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	r2 := rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	self := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "self", Labels: sel},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: sel}}},
		Rules:           []rbacv1.PolicyRule{{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	b := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: sel}, Rules: []rbacv1.PolicyRule{r2, r1}}
	a := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: sel}, Rules: []rbacv1.PolicyRule{r1}}
	other := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}}}}
	got := AggregatedRules(self, []*rbacv1.ClusterRole{self, b, other, a})
	if len(got) != 2 || got[0].Verbs[0] != "get" || got[1].Verbs[0] != "list" {
		t.Fatalf("rules %+v; want get then list", got)
	}
}

// TestRuleEquality: rules are the same when equality.Semantic.DeepEqual
// says so (a nil list and an empty one are equal), and different when any
// list differs, even by where a string ends.
func TestRuleEquality(t *testing.T) {
	base := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	same := []rbacv1.PolicyRule{
		base,
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{}, NonResourceURLs: nil},
	}
	differ := []rbacv1.PolicyRule{
		{Verbs: []string{"getlist"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pod", "s"}},
		{Verbs: []string{"get", "list"}, APIGroups: []string{"", ""}, Resources: []string{"pods"}},
		{Verbs: []string{"get", "list"}, Resources: []string{"pods"}},
		{Verbs: []string{"list", "get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"web"}},
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, NonResourceURLs: []string{"pods"}},
	}
	for _, r := range same {
		if string(ruleKey(nil, r)) != string(ruleKey(nil, base)) || !sameRules([]rbacv1.PolicyRule{r}, []rbacv1.PolicyRule{base}) {
			t.Errorf("%+v and %+v should be the same rule", r, base)
		}
	}
	for _, r := range differ {
		if string(ruleKey(nil, r)) == string(ruleKey(nil, base)) || sameRules([]rbacv1.PolicyRule{r}, []rbacv1.PolicyRule{base}) {
			t.Errorf("%+v and %+v should differ", r, base)
		}
	}
	if !sameRules(nil, []rbacv1.PolicyRule{}) || sameRules(nil, same[:1]) {
		t.Error("sameRules: nil and empty lists of rules are the same; a rule is not nothing")
	}
}
