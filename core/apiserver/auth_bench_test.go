package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// BenchmarkGetPodImpersonated is BenchmarkGetPod as jane (kubectl --as
// jane): impersonation, then RBAC over the bootstrap policy's bindings and
// jane's RoleBinding. The admin's requests skip all of it (compare with
// BenchmarkGetPod).
func BenchmarkGetPodImpersonated(b *testing.B) {
	s, reg := benchServer(b)
	ctx := context.Background()
	if err := reg.BootstrapRBAC(ctx); err != nil {
		b.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	bind := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "jane", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "jane"}}}
	if _, err := reg.MustLookup(rbacv1.GroupName, "roles").Create(ctx, "default", role, registry.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := reg.MustLookup(rbacv1.GroupName, "rolebindings").Create(ctx, "default", bind, registry.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if code := serve(b, s, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); code != http.StatusCreated {
		b.Fatalf("create: %d", code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods/web", strings.NewReader(""))
		req.Header.Set("Impersonate-User", "jane")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("get: %d %s", rec.Code, rec.Body)
		}
	}
}
