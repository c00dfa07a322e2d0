package apiserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The review APIs are in discovery as upstream serves them: after apps,
// authentication.k8s.io then authorization.k8s.io, create only, with
// LocalSubjectAccessReview the one namespaced; any other verb is 405.
func TestReviewDiscovery(t *testing.T) {
	srv, _ := newTestServer(t)
	want := map[string]string{
		"authentication.k8s.io/v1": "selfsubjectreviews SelfSubjectReview false [create]",
		"authorization.k8s.io/v1": "localsubjectaccessreviews LocalSubjectAccessReview true [create]; " +
			"selfsubjectaccessreviews SelfSubjectAccessReview false [create]; " +
			"selfsubjectrulesreviews SelfSubjectRulesReview false [create]; " +
			"subjectaccessreviews SubjectAccessReview false [create]",
	}
	// Legacy: /apis lists the groups in order, each version its resources.
	code, body, _ := do(t, "GET", srv.URL+"/apis", "", "", "Accept", "application/json")
	var groups metav1.APIGroupList
	if code != 200 || json.Unmarshal([]byte(body), &groups) != nil {
		t.Fatalf("/apis: %d %s", code, body)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	if got := strings.Join(names, " "); !strings.HasPrefix(got, "apps authentication.k8s.io authorization.k8s.io ") {
		t.Errorf("group order %s", got)
	}
	for gv, w := range want {
		code, body, _ := do(t, "GET", srv.URL+"/apis/"+gv, "", "", "Accept", "application/json")
		var list metav1.APIResourceList
		if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
			t.Fatalf("%s: %d %s", gv, code, body)
		}
		var got []string
		for _, r := range list.APIResources {
			got = append(got, fmt.Sprintf("%s %s %v %v", r.Name, r.Kind, r.Namespaced, r.Verbs))
			if r.SingularName+"s" != r.Name {
				t.Errorf("%s singular %q", r.Name, r.SingularName)
			}
		}
		if strings.Join(got, "; ") != w {
			t.Errorf("%s:\n got %s\nwant %s", gv, strings.Join(got, "; "), w)
		}
		group, _, _ := strings.Cut(gv, "/")
		if code, body, _ := do(t, "GET", srv.URL+"/apis/"+group, "", "", "Accept", "application/json"); code != 200 || !strings.Contains(body, `"preferredVersion":{"groupVersion":"`+gv+`"`) {
			t.Errorf("/apis/%s: %d %s", group, code, body)
		}
	}

	// Aggregated: the same, as kubectl reads it.
	code, body, _ = do(t, "GET", srv.URL+"/apis", "", "", "Accept", kubectlDiscoveryAccept)
	var agg apidiscoveryv2.APIGroupDiscoveryList
	if code != 200 || json.Unmarshal([]byte(body), &agg) != nil {
		t.Fatalf("aggregated /apis: %d %s", code, body)
	}
	names = nil
	got := map[string][]string{}
	for _, g := range agg.Items {
		names = append(names, g.Name)
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				got[g.Name+"/"+v.Version] = append(got[g.Name+"/"+v.Version], fmt.Sprintf("%s %s %v %v", r.Resource, r.ResponseKind.Kind, r.Scope == apidiscoveryv2.ScopeNamespace, r.Verbs))
			}
		}
	}
	if got := strings.Join(names, " "); !strings.HasPrefix(got, "apps authentication.k8s.io authorization.k8s.io ") {
		t.Errorf("aggregated group order %s", got)
	}
	for gv, w := range want {
		if g := strings.Join(got[gv], "; "); g != w {
			t.Errorf("aggregated %s:\n got %s\nwant %s", gv, g, w)
		}
	}

	for _, method := range []string{"GET", "PUT", "DELETE"} {
		code, body, _ := do(t, method, srv.URL+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "")
		if code != 405 {
			t.Errorf("%s selfsubjectaccessreviews: %d %s", method, code, body)
		}
	}
}

// An escalation over HTTP: jane, who may create roles in default but
// holds only get and list on pods, may not grant get on secrets; the 403
// is upstream's Status.
func TestEscalationForbidden(t *testing.T) {
	base := newRBACServer(t)
	code, body, _ := do(t, "POST", base+"/apis/rbac.authorization.k8s.io/v1/clusterroles", "application/json",
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"role-writer"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["create"]}]}`)
	if code != 201 {
		t.Fatalf("clusterrole: %d %s", code, body)
	}
	code, body, _ = do(t, "POST", base+"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", "application/json",
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"jane-writes"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"role-writer"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"jane"}]}`)
	if code != 201 {
		t.Fatalf("rolebinding: %d %s", code, body)
	}
	role := func(name, resource string) string {
		return `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"` + name + `"},"rules":[{"apiGroups":[""],"resources":["` + resource + `"],"verbs":["get"]}]}`
	}
	roles := base + "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
	code, body, _ = do(t, "POST", roles, "application/json", role("secret-reader", "secrets"), "Impersonate-User", "jane")
	if code != 403 {
		t.Fatalf("escalation: %d %s", code, body)
	}
	st := statusMessage(t, body)
	if st.Reason != metav1.StatusReasonForbidden || st.Details == nil || st.Details.Name != "secret-reader" || st.Details.Kind != "roles" ||
		st.Message != `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+
			`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}` {
		t.Errorf("status %+v", st)
	}
	if code, body, _ = do(t, "POST", roles, "application/json", role("pod-getter", "pods"), "Impersonate-User", "jane"); code != 201 {
		t.Errorf("a role within jane's rules: %d %s", code, body)
	}
	if code, body, _ = do(t, "POST", roles, "application/json", role("secret-reader", "secrets")); code != 201 {
		t.Errorf("the admin: %d %s", code, body)
	}
}

// The reviews are in OpenAPI (kubectl explain, client-side validation):
// a POST on the collection, no item path, the types' definitions.
func TestReviewOpenAPI(t *testing.T) {
	srv, _ := newTestServer(t)
	code, body, _ := do(t, "GET", srv.URL+"/openapi/v3/apis/authorization.k8s.io/v1", "", "", "Accept", "application/json")
	if code != 200 {
		t.Fatalf("openapi v3: %d %s", code, body)
	}
	var doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":                         "createAuthorizationV1SelfSubjectAccessReview",
		"/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews": "createAuthorizationV1NamespacedLocalSubjectAccessReview",
	} {
		p := doc.Paths[path]
		post, _ := p["post"].(map[string]any)
		if post == nil || post["operationId"] != want || p["get"] != nil || p["delete"] != nil {
			t.Errorf("%s: %v", path, p)
		}
		if _, ok := doc.Paths[path+"/{name}"]; ok {
			t.Errorf("%s has an item path", path)
		}
	}
	if _, ok := doc.Components.Schemas["io.k8s.api.authorization.v1.SelfSubjectRulesReview"]; !ok {
		t.Error("no SelfSubjectRulesReview definition")
	}
}
