package kubectl

import (
	"fmt"
	"io"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/internal/rbacrule"
)

// The RBAC describers (upstream pkg/describe/describe.go: RoleDescriber,
// ClusterRoleDescriber, RoleBindingDescriber, ClusterRoleBindingDescriber).
// A role's rules are shown one line per (resource, names), with the verbs
// merged, whatever shape they were written in:
//
//	PolicyRule:
//	  Resources         Non-Resource URLs  Resource Names  Verbs
//	  ---------         -----------------  --------------  -----
//	  pods              []                 []              [get list watch]
//	  deployments.apps  []                 []              [get list watch]
//
// No namespace line and no events, as upstream.

// describeRole is the Role and ClusterRole description.
func describeRole(meta *metav1.ObjectMeta, rules []rbacv1.PolicyRule) (string, error) {
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", meta.Name)
		printLabels(w, "Labels", meta.Labels)
		printAnnotations(w, "Annotations", meta.Annotations)
		w.Write(level0, "PolicyRule:\n")
		w.Write(level1, "Resources\tNon-Resource URLs\tResource Names\tVerbs\n")
		w.Write(level1, "---------\t-----------------\t--------------\t-----\n")
		for _, r := range rbacrule.ForDisplay(rules) {
			w.Write(level1, "%s\n", ruleColumns(r))
		}
		return nil
	})
}

// ruleColumns is one line of the rules table (describe, auth can-i --list):
// the lists print as Go prints them, [] when empty.
func ruleColumns(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("%s\t%v\t%v\t%v", rbacrule.CombineResourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs)
}

// describeBinding is the RoleBinding and ClusterRoleBinding description.
func describeBinding(meta *metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject) (string, error) {
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", meta.Name)
		printLabels(w, "Labels", meta.Labels)
		printAnnotations(w, "Annotations", meta.Annotations)
		w.Write(level0, "Role:\n")
		w.Write(level1, "Kind:\t%s\n", ref.Kind)
		w.Write(level1, "Name:\t%s\n", ref.Name)
		w.Write(level0, "Subjects:\n")
		w.Write(level1, "Kind\tName\tNamespace\n")
		w.Write(level1, "----\t----\t---------\n")
		for _, s := range subjects {
			w.Write(level1, "%s\t%s\t%s\n", s.Kind, s.Name, s.Namespace)
		}
		return nil
	})
}

// describeRBAC describes the four RBAC kinds; ok is false for any other.
func describeRBAC(kind string, obj map[string]any) (text string, ok bool, err error) {
	switch kind {
	case "Role":
		var r rbacv1.Role
		if err := fromMap(obj, &r); err != nil {
			return "", true, err
		}
		text, err = describeRole(&r.ObjectMeta, r.Rules)
	case "ClusterRole":
		var r rbacv1.ClusterRole
		if err := fromMap(obj, &r); err != nil {
			return "", true, err
		}
		text, err = describeRole(&r.ObjectMeta, r.Rules)
	case "RoleBinding":
		var b rbacv1.RoleBinding
		if err := fromMap(obj, &b); err != nil {
			return "", true, err
		}
		text, err = describeBinding(&b.ObjectMeta, b.RoleRef, b.Subjects)
	case "ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		if err := fromMap(obj, &b); err != nil {
			return "", true, err
		}
		text, err = describeBinding(&b.ObjectMeta, b.RoleRef, b.Subjects)
	default:
		return "", false, nil
	}
	return text, true, err
}
