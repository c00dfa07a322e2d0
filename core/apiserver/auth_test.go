package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// newRBACServer is newTestServer with the bootstrap policy and jane
// allowed to read pods in default.
func newRBACServer(t *testing.T) string {
	t.Helper()
	srv, reg := newTestServer(t)
	ctx := context.Background()
	if err := reg.BootstrapRBAC(ctx); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := reg.MustLookup(rbacv1.GroupName, "roles").Create(ctx, "default", role, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "jane-reads", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "jane"}}}
	if _, err := reg.MustLookup(rbacv1.GroupName, "rolebindings").Create(ctx, "default", b, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

func statusMessage(t *testing.T, body string) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("not a Status: %s", body)
	}
	return st
}

// Every request is authorized: without credentials as the admin; with
// impersonation headers as the user asked for, after the admin's
// "impersonate" check; a 403 has upstream's Status.
func TestAuthorizationAndImpersonation(t *testing.T) {
	base := newRBACServer(t)
	pods := base + "/api/v1/namespaces/default/pods"
	for _, tc := range []struct {
		name    string
		method  string
		url     string
		hdr     []string
		code    int
		message string
	}{
		{"admin, no credentials", "GET", base + "/api/v1/nodes", nil, 200, ""},
		{"jane lists pods in default", "GET", pods, []string{"Impersonate-User", "jane"}, 200, ""},
		{"jane may not delete", "DELETE", pods + "/web", []string{"Impersonate-User", "jane"}, 403,
			`pods "web" is forbidden: User "jane" cannot delete resource "pods" in API group "" in the namespace "default"`},
		{"jane may not list elsewhere", "GET", base + "/api/v1/namespaces/kube-system/pods", []string{"Impersonate-User", "jane"}, 403,
			`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "kube-system"`},
		{"nor nodes", "GET", base + "/api/v1/nodes", []string{"Impersonate-User", "jane"}, 403,
			`nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope`},
		{"nor a subresource", "GET", pods + "/web/log", []string{"Impersonate-User", "jane"}, 403,
			`pods "web" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace "default"`},
		{"discovery for system:authenticated", "GET", base + "/apis", []string{"Impersonate-User", "jane"}, 200, ""},
		{"a group of the impersonated user", "GET", base + "/api/v1/nodes", []string{"Impersonate-User", "jane", "Impersonate-Group", "system:masters"}, 200, ""},
		{"anonymous gets /healthz", "GET", base + "/healthz", []string{"Impersonate-User", "system:anonymous"}, 200, ""},
		{"anonymous may not discover", "GET", base + "/api", []string{"Impersonate-User", "system:anonymous"}, 403,
			`forbidden: User "system:anonymous" cannot get path "/api"`},
		{"groups without a user", "GET", pods, []string{"Impersonate-Group", "dev"}, 400, "requested [group dev] without impersonating a user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, tc.method, tc.url, "", "", tc.hdr...)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			if tc.message == "" {
				return
			}
			st := statusMessage(t, body)
			if st.Message != tc.message {
				t.Errorf("message\n got %s\nwant %s", st.Message, tc.message)
			}
			if tc.code == 403 && (st.Reason != metav1.StatusReasonForbidden || st.Kind != "Status") {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// Only who has the impersonate verb may impersonate: jane may not become
// bob, nor join a group; an editor may act as a ServiceAccount (edit grants
// impersonate on serviceaccounts).
func TestImpersonationNeedsTheVerb(t *testing.T) {
	_, reg := newTestServer(t)
	if err := reg.BootstrapRBAC(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	jane := &authz.User{Name: "jane", Groups: []string{authz.GroupAuthenticated}}
	h := http.Header{}
	h.Set("Impersonate-User", "bob")
	_, err = s.impersonate(context.Background(), jane, h)
	if err == nil || err.Error() != `users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope` {
		t.Errorf("jane as bob: %v", err)
	}
	h.Set("Impersonate-User", "system:serviceaccount:dev:bot")
	_, err = s.impersonate(context.Background(), jane, h)
	if err == nil || err.Error() != `serviceaccounts "bot" is forbidden: User "jane" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "dev"` {
		t.Errorf("jane as a ServiceAccount: %v", err)
	}
	u, err := s.impersonate(context.Background(), Admin, h)
	if err != nil || strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:dev,system:authenticated" {
		t.Errorf("admin as a ServiceAccount: %+v %v", u, err)
	}
}

// The review APIs kubectl auth can-i and whoami use.
func TestReviews(t *testing.T) {
	base := newRBACServer(t)
	ssar := func(verb, ns string, hdr ...string) authzv1.SelfSubjectAccessReview {
		t.Helper()
		code, body, _ := do(t, "POST", base+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"`+verb+`","resource":"pods","namespace":"`+ns+`"}}}`, hdr...)
		if code != 201 {
			t.Fatalf("ssar: %d %s", code, body)
		}
		var r authzv1.SelfSubjectAccessReview
		_ = json.Unmarshal([]byte(body), &r)
		return r
	}
	if r := ssar("list", "default", "Impersonate-User", "jane"); !r.Status.Allowed ||
		r.Status.Reason != `RBAC: allowed by RoleBinding "jane-reads/default" of Role "pod-reader" to User "jane"` || r.Kind != "SelfSubjectAccessReview" {
		t.Errorf("jane list pods: %+v", r)
	}
	if r := ssar("delete", "default", "Impersonate-User", "jane"); r.Status.Allowed {
		t.Errorf("jane delete pods allowed: %+v", r.Status)
	}
	if r := ssar("delete", "default"); !r.Status.Allowed {
		t.Errorf("admin delete pods denied: %+v", r.Status)
	}

	code, body, _ := do(t, "POST", base+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}`)
	if code != 422 || !strings.Contains(statusMessage(t, body).Message,
		`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`) {
		t.Errorf("empty spec: %d %s", code, body)
	}

	// SubjectAccessReview asks for someone else; jane may not.
	sar := `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"jane","resourceAttributes":{"verb":"get","resource":"pods","namespace":"default"}}}`
	code, body, _ = do(t, "POST", base+"/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", sar)
	if code != 201 || !strings.Contains(body, `"allowed":true`) {
		t.Errorf("sar: %d %s", code, body)
	}
	code, body, _ = do(t, "POST", base+"/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", sar, "Impersonate-User", "jane")
	if code != 403 || statusMessage(t, body).Message !=
		`subjectaccessreviews.authorization.k8s.io is forbidden: User "jane" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope` {
		t.Errorf("sar as jane: %d %s", code, body)
	}

	code, body, _ = do(t, "POST", base+"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", "application/json",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}`, "Impersonate-User", "jane")
	var rr authzv1.SelfSubjectRulesReview
	_ = json.Unmarshal([]byte(body), &rr)
	found := false
	for _, r := range rr.Status.ResourceRules {
		if len(r.Resources) == 1 && r.Resources[0] == "pods" && strings.Join(r.Verbs, ",") == "get,list" {
			found = true
		}
	}
	if code != 201 || !found || len(rr.Status.NonResourceRules) == 0 || rr.Status.Incomplete {
		t.Errorf("rules review: %d %s", code, body)
	}

	code, body, _ = do(t, "POST", base+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, "Impersonate-User", "jane", "Impersonate-Group", "dev")
	var who authnv1.SelfSubjectReview
	_ = json.Unmarshal([]byte(body), &who)
	if code != 201 || who.Status.UserInfo.Username != "jane" || strings.Join(who.Status.UserInfo.Groups, ",") != "dev,system:authenticated" {
		t.Errorf("whoami: %d %s", code, body)
	}
	code, body, _ = do(t, "POST", base+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	_ = json.Unmarshal([]byte(body), &who)
	if code != 201 || who.Status.UserInfo.Username != Admin.Name {
		t.Errorf("whoami as admin: %d %s", code, body)
	}
}

// The Node authorizer: a kubelet (system:node:<node>, system:nodes) may get
// a secret only when a pod bound to its node uses it, and does what the
// system:node role allows otherwise.
func TestNodeAuthorizer(t *testing.T) {
	srv, reg := newTestServer(t)
	ctx := context.Background()
	for _, name := range []string{"used", "unused"} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := reg.MustLookup("", "secrets").Create(ctx, "default", sec, registry.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeName:   "node-1",
		Containers: []corev1.Container{{Name: "c", Image: "hello", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "used"}}}}}},
	}}
	if _, err := reg.MustLookup("", "pods").Create(ctx, "default", pod, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubelet := func(node string) []string {
		return []string{"Impersonate-User", "system:node:" + node, "Impersonate-Group", "system:nodes"}
	}
	for _, tc := range []struct {
		name, url string
		hdr       []string
		code      int
		message   string
	}{
		{"its pod's secret", "/api/v1/namespaces/default/secrets/used", kubelet("node-1"), 200, ""},
		{"another secret", "/api/v1/namespaces/default/secrets/unused", kubelet("node-1"), 403,
			`secrets "unused" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node-1' and this object`},
		{"another node's kubelet", "/api/v1/namespaces/default/secrets/used", kubelet("node-2"), 403, ""},
		{"a list of secrets", "/api/v1/namespaces/default/secrets", kubelet("node-1"), 403,
			`secrets is forbidden: User "system:node:node-1" cannot list resource "secrets" in API group "" in the namespace "default": No Object name found`},
		{"pods, by the system:node rules", "/api/v1/pods", kubelet("node-1"), 200, ""},
		{"not deployments", "/apis/apps/v1/deployments", kubelet("node-1"), 403, ""},
		{"a user named like a node without the group", "/api/v1/pods", []string{"Impersonate-User", "system:node:node-1"}, 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, "GET", srv.URL+tc.url, "", "", tc.hdr...)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			if tc.message != "" && statusMessage(t, body).Message != tc.message {
				t.Errorf("message\n got %s\nwant %s", statusMessage(t, body).Message, tc.message)
			}
		})
	}
}
