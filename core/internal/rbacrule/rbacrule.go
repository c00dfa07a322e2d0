// Package rbacrule takes RBAC PolicyRules apart and puts them back
// together: the arithmetic both the API server's escalation check and
// kubectl's describe and `auth can-i --list` are built on.
//
// Upstream counterparts: k8s.io/component-helpers/auth/rbac/validation
// (policy_comparator.go: BreakdownRule, Covers), the API server's
// pkg/registry/rbac/validation/policy_compact.go (CompactRules),
// pkg/apis/rbac/v1/evaluation_helpers.go (CompactString) and kubectl's
// k8s.io/kubectl/pkg/util/rbac (its CompactRules and SortableRuleSlice).
//
// A rule is a cross product. Broken down, it is one rule per tuple, each
// with at most one API group, resource, verb and resource name:
//
//	verbs [get list]  apiGroups [""]  resources [pods services]
//	  ⇒ get pods, list pods, get services, list services
//
// One owner rule either covers a tuple whole or not at all, so "do these
// rules cover those?" is: break the second set down and look for an owner
// rule that covers each piece. Compacting goes the other way for reading:
// the tuples that differ only by verb merge back into one rule per
// (group, resource, name): get pods + list pods ⇒ [get list] pods.
package rbacrule

import (
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Breakdown returns the one-verb, one-group, one-resource (and at most
// one-name) rules that together grant what rule grants; a non-resource
// rule breaks down into one rule per (URL, verb).
func Breakdown(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range rule.APIGroups {
		for _, r := range rule.Resources {
			for _, v := range rule.Verbs {
				if len(rule.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{r}, Verbs: []string{v}})
					continue
				}
				for _, n := range rule.ResourceNames {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{r}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range rule.NonResourceURLs {
		for _, v := range rule.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// BreakdownAll is Breakdown of every rule, in order.
func BreakdownAll(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		out = append(out, Breakdown(r)...)
	}
	return out
}

// Covers reports whether owner grants everything servant grants, and the
// broken-down servant rules it does not.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, sub := range BreakdownAll(servant) {
		covered := false
		for i := range owner {
			if ruleCovers(&owner[i], &sub) {
				covered = true
				break
			}
		}
		if !covered {
			missing = append(missing, sub)
		}
	}
	return len(missing) == 0, missing
}

// ruleCovers: owner (any shape) grants sub (one verb, resource and name).
// A resource name narrows a rule: an owner rule with names covers only
// those names, never the whole resource.
func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	if !has(owner.Verbs, rbacv1.VerbAll) && !hasAll(owner.Verbs, sub.Verbs) {
		return false
	}
	if !has(owner.APIGroups, rbacv1.APIGroupAll) && !hasAll(owner.APIGroups, sub.APIGroups) {
		return false
	}
	if !resourcesCover(owner.Resources, sub.Resources) || !urlsCover(owner.NonResourceURLs, sub.NonResourceURLs) {
		return false
	}
	if len(owner.ResourceNames) == 0 {
		return true
	}
	return len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames)
}

// resourcesCover: "*" covers everything, "*/scale" every resource's scale.
func resourcesCover(owner, want []string) bool {
	if has(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, r := range want {
		if has(owner, r) {
			continue
		}
		_, sub, ok := strings.Cut(r, "/")
		if !ok || !has(owner, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCover: a URL ending in "*" covers every path it prefixes.
func urlsCover(owner, want []string) bool {
	for _, p := range want {
		covered := false
		for _, o := range owner {
			if o == p || (strings.HasSuffix(o, "*") && strings.HasPrefix(p, strings.TrimRight(o, "*"))) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasAll(list, want []string) bool {
	for _, w := range want {
		if !has(list, w) {
			return false
		}
	}
	return true
}

// simpleKey is what a "simple" rule (one group, one resource, at most one
// name, nothing else) is compacted by.
type simpleKey struct {
	group, resource string
	named           bool
	name            string
}

// Compact merges the simple rules that differ only by verb into one rule
// each (verbs in the order met); every other rule is kept as it is, first.
// dedupVerbs drops a verb already merged: kubectl's version does, the API
// server's (whose output only names what is missing) does not.
//
// Upstream appends the merged rules in map order; here they come in the
// order their first piece was met. Every caller sorts or sets them after.
func Compact(rules []rbacv1.PolicyRule, dedupVerbs bool) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	var merged []rbacv1.PolicyRule
	index := map[simpleKey]int{}
	for _, r := range rules {
		key, ok := simple(&r)
		if !ok {
			out = append(out, r)
			continue
		}
		i, seen := index[key]
		if !seen {
			index[key] = len(merged)
			merged = append(merged, *r.DeepCopy())
			continue
		}
		m := &merged[i]
		if m.Verbs == nil {
			m.Verbs = []string{}
		}
		for _, v := range r.Verbs {
			if !dedupVerbs || !has(m.Verbs, v) {
				m.Verbs = append(m.Verbs, v)
			}
		}
	}
	return append(out, merged...)
}

func simple(r *rbacv1.PolicyRule) (simpleKey, bool) {
	if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
		return simpleKey{}, false
	}
	k := simpleKey{group: r.APIGroups[0], resource: r.Resources[0]}
	if len(r.ResourceNames) == 1 {
		k.named, k.name = true, r.ResourceNames[0]
	}
	return k, true
}

// Sort orders rules as kubectl's SortableRuleSlice does: by the text of
// the generated PolicyRule.String() ("&PolicyRule{Verbs:[get],APIGroups:
// ..."), so verbs first, stable for equal texts.
func Sort(rules []rbacv1.PolicyRule) {
	keys := make([]string, len(rules))
	for i := range rules {
		keys[i] = rules[i].String()
	}
	sort.Stable(byKey{rules, keys})
}

type byKey struct {
	rules []rbacv1.PolicyRule
	keys  []string
}

func (b byKey) Len() int           { return len(b.rules) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.rules[i], b.rules[j] = b.rules[j], b.rules[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

// CompactString is a rule as the escalation error names it:
//
//	{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
//
// with only the fields that are set, each a Go-quoted list.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, list []string) {
		if len(list) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, list))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// ForDisplay is what kubectl prints for a set of rules (describe role,
// auth can-i --list): broken down, compacted with verbs merged, sorted.
func ForDisplay(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := Compact(BreakdownAll(rules), true)
	Sort(out)
	return out
}

// CombineResourceGroup is the Resources column of those tables: the first
// resource qualified by the first group, the subresource after it
// ("deployments.apps/scale"); the core group adds nothing.
func CombineResourceGroup(resources, groups []string) string {
	if len(resources) == 0 {
		return ""
	}
	res, sub, hasSub := strings.Cut(resources[0], "/")
	if len(groups) > 0 && groups[0] != "" {
		res += "." + groups[0]
	}
	if hasSub {
		res += "/" + sub
	}
	return res
}
