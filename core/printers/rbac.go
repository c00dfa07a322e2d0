package printers

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RoleBindings and ClusterRoleBindings (upstream's printRoleBinding and
// printClusterRoleBinding); Roles and ClusterRoles print with the default
// columns, NAME and CREATED AT, as upstream's.

var roleBindingColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Role", Type: "string", Description: rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Users", Type: "string", Priority: 1, Description: "Users in the roleBinding"},
	{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the roleBinding"},
	{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the roleBinding"},
}

var clusterRoleBindingColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Role", Type: "string", Description: rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Users", Type: "string", Priority: 1, Description: "Users in the clusterRoleBinding"},
	{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the clusterRoleBinding"},
	{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the clusterRoleBinding"},
}

func init() {
	Register(&rbacv1.RoleBinding{}, roleBindingColumns, func(obj runtime.Object, now time.Time) ([]any, error) {
		b := obj.(*rbacv1.RoleBinding)
		return bindingRow(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now), nil
	})
	Register(&rbacv1.ClusterRoleBinding{}, clusterRoleBindingColumns, func(obj runtime.Object, now time.Time) ([]any, error) {
		b := obj.(*rbacv1.ClusterRoleBinding)
		return bindingRow(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now), nil
	})
}

// bindingRow: ROLE is Kind/name; the subjects are joined with ", ", a
// ServiceAccount as namespace/name (upstream's rbac.SubjectsStrings).
func bindingRow(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return []any{name, ref.Kind + "/" + ref.Name, Age(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
