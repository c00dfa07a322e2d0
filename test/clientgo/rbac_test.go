package clientgo_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// TestRBACInformersSync: client-go's shared informers for the four RBAC
// kinds list and watch kubetab in protobuf: they hold the bootstrap policy
// from the start, and see what the clusterrole-aggregation controller
// writes when a ClusterRole joins view by its label.
func TestRBACInformersSync(t *testing.T) {
	tc := startCluster(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(tc.cs, 0)
	rbac := f.Rbac().V1()
	roles, clusterRoles := rbac.Roles(), rbac.ClusterRoles()
	bindings, clusterBindings := rbac.RoleBindings(), rbac.ClusterRoleBindings()
	synced := []cache.InformerSynced{roles.Informer().HasSynced, clusterRoles.Informer().HasSynced,
		bindings.Informer().HasSynced, clusterBindings.Informer().HasSynced}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	if b, err := clusterBindings.Lister().Get("cluster-admin"); err != nil || len(b.Subjects) != 1 || b.Subjects[0].Name != "system:masters" {
		t.Fatalf("the bootstrap binding cluster-admin: %+v, %v", b, err)
	}
	if _, err := tc.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "crontab-reader", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"stable.example.com"}, Resources: []string{"crontabs"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.cs.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "jane-reads"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "jane"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "view to aggregate crontab-reader", func() bool {
		view, err := clusterRoles.Lister().Get("view")
		if err != nil {
			return false
		}
		for _, r := range view.Rules {
			for _, res := range r.Resources {
				if res == "crontabs" {
					return true
				}
			}
		}
		return false
	})
	waitFor(t, "the Role and its binding", func() bool {
		_, err1 := roles.Lister().Roles("default").Get("pod-reader")
		b, err2 := bindings.Lister().RoleBindings("default").Get("jane-reads")
		return err1 == nil && err2 == nil && b.RoleRef.Name == "pod-reader"
	})
}
