package rbacrule

import (
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func res(verbs, groups, resources, names []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func l(s ...string) []string { return s }

// Covers as upstream's policy_comparator_test: stars, subresources,
// resource names and non-resource URL prefixes.
func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		name           string
		owner, servant []rbacv1.PolicyRule
		missing        string // the CompactString of each missing piece, "; "-joined
	}{
		{"exact", []rbacv1.PolicyRule{res(l("get", "list"), l(""), l("pods"), nil)}, []rbacv1.PolicyRule{res(l("get"), l(""), l("pods"), nil)}, ""},
		{"stars", []rbacv1.PolicyRule{res(l("*"), l("*"), l("*"), nil)}, []rbacv1.PolicyRule{res(l("delete"), l("apps"), l("deployments/scale"), l("web"))}, ""},
		{"a verb short", []rbacv1.PolicyRule{res(l("get"), l(""), l("pods"), nil)}, []rbacv1.PolicyRule{res(l("get", "watch"), l(""), l("pods", "services"), nil)},
			`{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}; {APIGroups:[""], Resources:["services"], Verbs:["get"]}; {APIGroups:[""], Resources:["services"], Verbs:["watch"]}`},
		{"*/subresource", []rbacv1.PolicyRule{res(l("get"), l("apps"), l("*/scale"), nil)}, []rbacv1.PolicyRule{res(l("get"), l("apps"), l("deployments/scale", "deployments"), nil)},
			`{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`},
		{"names narrow the owner", []rbacv1.PolicyRule{res(l("get"), l(""), l("secrets"), l("a"))}, []rbacv1.PolicyRule{res(l("get"), l(""), l("secrets"), nil)},
			`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"a named piece", []rbacv1.PolicyRule{res(l("get"), l(""), l("secrets"), l("a"))}, []rbacv1.PolicyRule{res(l("get"), l(""), l("secrets"), l("a", "b"))},
			`{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}`},
		{"URL prefix", []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/logs/*")}}, []rbacv1.PolicyRule{{Verbs: l("get", "post"), NonResourceURLs: l("/logs/a", "/healthz")}},
			`{NonResourceURLs:["/logs/a"], Verbs:["post"]}; {NonResourceURLs:["/healthz"], Verbs:["get"]}; {NonResourceURLs:["/healthz"], Verbs:["post"]}`},
		{"resources never cover URLs", []rbacv1.PolicyRule{res(l("*"), l("*"), l("*"), nil)}, []rbacv1.PolicyRule{{Verbs: l("get"), NonResourceURLs: l("/metrics")}},
			`{NonResourceURLs:["/metrics"], Verbs:["get"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, missing := Covers(tc.owner, tc.servant)
			var got []string
			for _, m := range missing {
				got = append(got, CompactString(m))
			}
			if ok != (tc.missing == "") || strings.Join(got, "; ") != tc.missing {
				t.Errorf("Covers = %v, missing\n %s\nwant\n %s", ok, strings.Join(got, "; "), tc.missing)
			}
		})
	}
}

// ForDisplay is what kubectl's describe and can-i --list print: merged by
// resource (kubectl drops repeated verbs), sorted by PolicyRule.String().
func TestForDisplay(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		res(l("list", "get", "watch"), l("", "apps"), l("pods", "deployments/scale"), nil),
		res(l("get", "get"), l(""), l("pods"), nil),
		res(l("get"), l(""), l("secrets"), l("a", "b")),
		{Verbs: l("get"), NonResourceURLs: l("/healthz", "/version")},
	}
	var got []string
	for _, r := range ForDisplay(rules) {
		got = append(got, fmt.Sprintf("%s %v %v %v", CombineResourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs))
	}
	want := []string{
		" [/healthz] [] [get]", // "Resources:[]" sorts before "Resources:[secrets]"
		" [/version] [] [get]",
		"secrets [] [a] [get]",
		"secrets [] [b] [get]",
		"deployments/scale [] [] [list get watch]", // "APIGroups:[]" before "APIGroups:[apps]"
		"pods [] [] [list get watch]",
		"deployments.apps/scale [] [] [list get watch]",
		"pods.apps [] [] [list get watch]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The API server's compaction keeps repeated verbs.
	if c := Compact(BreakdownAll([]rbacv1.PolicyRule{res(l("get", "get"), l(""), l("pods"), nil)}), false); len(c) != 1 || len(c[0].Verbs) != 2 {
		t.Errorf("server compaction %+v", c)
	}
}
