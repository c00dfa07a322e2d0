package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/authz"
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

// BenchmarkAuthorizeComponent is what every in-process request of a
// component pays (core/client's identity.go): the authorizer over the
// bootstrap policy, for a controller's ServiceAccount (RBAC, the whole
// policy snapshot walked) and a kubelet (the Node authorizer's rules).
func BenchmarkAuthorizeComponent(b *testing.B) {
	s, reg := benchServer(b)
	ctx := context.Background()
	if err := reg.BootstrapRBAC(ctx); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		a    authz.Attributes
	}{
		{"replicaset-controller creates a pod", authz.Attributes{User: &authz.User{Name: "system:serviceaccount:kube-system:replicaset-controller",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", authz.GroupAuthenticated}},
			Verb: "create", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default", NoAllowReason: true}},
		{"kubelet updates a pod's status", authz.Attributes{User: &authz.User{Name: "system:node:node-1", Groups: []string{authz.NodesGroup, authz.GroupAuthenticated}},
			Verb: "update", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Subresource: "status", Namespace: "default", Name: "web", NoAllowReason: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if dec, _, err := s.Authorizer().Authorize(ctx, bc.a); dec != authz.DecisionAllow {
					b.Fatalf("denied: %v", err)
				}
			}
		})
	}
}
