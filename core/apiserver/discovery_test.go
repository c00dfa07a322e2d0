package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlDiscoveryAccept is what kubectl v1.32 sends to /api and /apis.
const kubectlDiscoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

// Asked the way kubectl asks, /api and /apis answer with aggregated
// discovery, marked so by the Content-Type client-go switches on.
func TestAggregatedDiscovery(t *testing.T) {
	srv, _ := newTestServer(t)
	get := func(path string) (*apidiscoveryv2.APIGroupDiscoveryList, http.Header) {
		code, body, hdr := do(t, "GET", srv.URL+path, "", "", "Accept", kubectlDiscoveryAccept)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if ct := hdr.Get("Content-Type"); ct != discoveryContentType {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
			t.Fatalf("%s: %s %s", path, list.APIVersion, list.Kind)
		}
		return &list, hdr
	}
	find := func(list *apidiscoveryv2.APIGroupDiscoveryList, group, version, resource string) *apidiscoveryv2.APIResourceDiscovery {
		for _, g := range list.Items {
			if g.Name != group {
				continue
			}
			for _, v := range g.Versions {
				if v.Version != version {
					continue
				}
				if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
					t.Errorf("%s/%s freshness %q", group, version, v.Freshness)
				}
				for i := range v.Resources {
					if v.Resources[i].Resource == resource {
						return &v.Resources[i]
					}
				}
			}
		}
		t.Fatalf("%s/%s %s not in discovery", group, version, resource)
		return nil
	}

	core, hdr := get("/api")
	if len(core.Items) != 1 || core.Items[0].Name != "" {
		t.Fatalf("/api items: %+v", core.Items)
	}
	pods := find(core, "", "v1", "pods")
	if pods.Scope != apidiscoveryv2.ScopeNamespace || pods.SingularResource != "pod" || pods.ResponseKind.Kind != "Pod" ||
		strings.Join(pods.ShortNames, ",") != "po" || strings.Join(pods.Categories, ",") != "all" || len(pods.Verbs) != 8 {
		t.Fatalf("pods: %+v", pods)
	}
	subs := map[string]apidiscoveryv2.APISubresourceDiscovery{}
	for _, s := range pods.Subresources {
		subs[s.Subresource] = s
	}
	if subs["binding"].ResponseKind.Kind != "Binding" || strings.Join(subs["log"].Verbs, ",") != "get" || subs["status"].ResponseKind.Kind != "Pod" {
		t.Fatalf("pod subresources: %+v", pods.Subresources)
	}
	if nodes := find(core, "", "v1", "nodes"); nodes.Scope != apidiscoveryv2.ScopeCluster {
		t.Fatalf("nodes scope %q", nodes.Scope)
	}

	named, _ := get("/apis")
	deploy := find(named, "apps", "v1", "deployments")
	for _, s := range deploy.Subresources {
		if s.Subresource == "scale" && (s.ResponseKind.Group != "autoscaling" || s.ResponseKind.Version != "v1" || s.ResponseKind.Kind != "Scale") {
			t.Fatalf("deployments/scale response kind: %+v", s.ResponseKind)
		}
	}
	for _, g := range named.Items {
		if g.Name == "" {
			t.Fatal("the core group is in /apis")
		}
	}

	// The ETag lets a client revalidate.
	code, _, _ := do(t, "GET", srv.URL+"/api", "", "", "Accept", kubectlDiscoveryAccept, "If-None-Match", hdr.Get("ETag"))
	if code != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", code)
	}
}

// A client that does not ask for aggregated discovery gets the legacy
// documents, as before.
func TestLegacyDiscovery(t *testing.T) {
	srv, _ := newTestServer(t)
	for path, want := range map[string]any{
		"/api":          &metav1.APIVersions{},
		"/apis":         &metav1.APIGroupList{},
		"/apis/apps":    &metav1.APIGroup{},
		"/api/v1":       &metav1.APIResourceList{},
		"/apis/apps/v1": &metav1.APIResourceList{},
	} {
		code, body, hdr := do(t, "GET", srv.URL+path, "", "", "Accept", "application/json")
		if code != 200 || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s %s", path, code, hdr.Get("Content-Type"), body)
		}
		if err := json.Unmarshal([]byte(body), want); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	for _, path := range []string{"/apis/nope", "/apis/nope/v1", "/apis/apps/v9"} {
		if code, body, _ := do(t, "GET", srv.URL+path, "", ""); code != 404 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}
