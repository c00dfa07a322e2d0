package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// newTokenServer serves with the bootstrap policy and one token for the
// administrator, as `kubetab cluster` does.
func newTokenServer(t *testing.T) string {
	t.Helper()
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.Tokens = StaticTokens{"s3cret": Admin, "jane-token": &authz.User{Name: "jane"}}
	})
	if err := reg.BootstrapRBAC(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

// Bearer tokens: the admin's token is system:masters, a wrong one is 401
// with upstream's Status, none is system:anonymous, who may read /version
// and /healthz but not discover or list (the bootstrap policy gives
// system:unauthenticated only system:public-info-viewer).
func TestBearerTokenAuthentication(t *testing.T) {
	base := newTokenServer(t)
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	for _, tc := range []struct {
		name    string
		url     string
		hdr     []string
		code    int
		message string
		reason  metav1.StatusReason
	}{
		{"the admin's token", "/api/v1/pods", bearer("s3cret"), 200, "", ""},
		{"scheme in any case", "/api/v1/pods", []string{"Authorization", "bearer s3cret"}, 200, "", ""},
		{"a wrong token", "/api/v1/pods", bearer("nope"), 401, "Unauthorized", metav1.StatusReasonUnauthorized},
		{"a wrong token, even for /version", "/version", bearer("nope"), 401, "Unauthorized", metav1.StatusReasonUnauthorized},
		{"anonymous reads /version", "/version", nil, 200, "", ""},
		{"anonymous reads /healthz", "/healthz", nil, 200, "", ""},
		{"anonymous may not list pods", "/api/v1/pods", nil, 403,
			`pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope`, metav1.StatusReasonForbidden},
		{"anonymous may not discover", "/api", nil, 403, `forbidden: User "system:anonymous" cannot get path "/api"`, metav1.StatusReasonForbidden},
		{"another scheme is no credential", "/version", []string{"Authorization", "Basic YTpi"}, 200, "", ""},
		{"an empty bearer token is no credential", "/api/v1/pods", []string{"Authorization", "Bearer "}, 403, "", ""},
		{"jane's token: discovery for system:authenticated", "/apis", bearer("jane-token"), 200, "", ""},
		{"jane's token: no pods", "/api/v1/namespaces/default/pods", bearer("jane-token"), 403,
			`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"`, metav1.StatusReasonForbidden},
		{"anonymous may not impersonate", "/api/v1/pods", []string{"Impersonate-User", "jane"}, 403,
			`users "jane" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope`, metav1.StatusReasonForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, "GET", base+tc.url, "", "", tc.hdr...)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, body)
			}
			if tc.message == "" {
				return
			}
			st := statusMessage(t, body)
			if st.Message != tc.message || st.Reason != tc.reason || st.Code != int32(tc.code) || st.Kind != "Status" {
				t.Errorf("status %+v, want message %q reason %s", st, tc.message, tc.reason)
			}
		})
	}
}

// kubectl auth whoami shows who the token is; the groups include
// system:authenticated, which the authenticator adds.
func TestWhoAmIWithTokens(t *testing.T) {
	base := newTokenServer(t)
	for _, tc := range []struct {
		hdr    []string
		name   string
		groups string
	}{
		{[]string{"Authorization", "Bearer s3cret"}, "kubetab-admin", "system:masters,system:authenticated"},
		{[]string{"Authorization", "Bearer jane-token"}, "jane", "system:authenticated"},
	} {
		code, body, _ := do(t, "POST", base+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
			`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, tc.hdr...)
		var who authnv1.SelfSubjectReview
		_ = json.Unmarshal([]byte(body), &who)
		if code != 201 || who.Status.UserInfo.Username != tc.name || strings.Join(who.Status.UserInfo.Groups, ",") != tc.groups {
			t.Errorf("whoami: %d %s, want %s %s", code, body, tc.name, tc.groups)
		}
	}
}

// The token does not travel past the API server: a pod reached through
// pods/proxy would otherwise receive the administrator's credential.
func TestAuthorizationHeaderRemoved(t *testing.T) {
	var seen http.Header
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg, Tokens: StaticTokens{"s3cret": Admin}})
	if err != nil {
		t.Fatal(err)
	}
	s.mux.HandleFunc("/seen", func(w http.ResponseWriter, r *http.Request) { seen = r.Header })
	req := httptest.NewRequest("GET", "/seen", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 || seen == nil || seen.Get("Authorization") != "" {
		t.Fatalf("code %d, header seen %v", rec.Code, seen)
	}
	if req.Header.Get("Authorization") == "" {
		t.Error("the caller's request was modified")
	}
}

func TestStaticTokens(t *testing.T) {
	toks := StaticTokens{"a": Admin}
	if u, ok, err := toks.AuthenticateToken(context.Background(), "a"); !ok || err != nil || u != Admin {
		t.Errorf("a: %v %v %v", u, ok, err)
	}
	for _, bad := range []string{"", "b", "aa"} {
		if _, ok, _ := toks.AuthenticateToken(context.Background(), bad); ok {
			t.Errorf("%q authenticated", bad)
		}
	}
}
