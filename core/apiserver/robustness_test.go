package apiserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"hello","image":"hello"}]}}}}`

// dryRun=All runs a request through every step and stores nothing, on
// every verb; the answer is what a real request would have answered.
func TestDryRunStoresNothing(t *testing.T) {
	srv, reg := newTestServer(t)
	createPods(t, srv.URL, "web")
	pods := srv.URL + "/api/v1/namespaces/default/pods"
	deploys := srv.URL + "/apis/apps/v1/namespaces/default/deployments"
	if code, body, _ := do(t, "POST", deploys, "application/json", deploymentJSON); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	_, cur, _ := do(t, "GET", pods+"/web", "", "")
	cases := []struct {
		name, method, url, ctype, body string
		code                           int
		want                           string
	}{
		{"create", "POST", pods, "application/json", strings.Replace(podJSON, `"web"`, `"other"`, 1), 201, `"name":"other"`},
		{"create conflict still found", "POST", pods, "application/json", podJSON, 409, "already exists"},
		{"create invalid still refused", "POST", pods, "application/json", `{"metadata":{"name":"x"},"spec":{}}`, 422, "spec.containers: Required value"},
		{"update", "PUT", pods + "/web", "application/json", strings.Replace(cur, `"app":"web"`, `"app":"changed"`, 1), 200, `"app":"changed"`},
		{"merge patch", "PATCH", pods + "/web", "application/merge-patch+json", `{"metadata":{"labels":{"dry":"yes"}}}`, 200, `"dry":"yes"`},
		{"strategic patch", "PATCH", pods + "/web", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"dry":"yes"}}}`, 200, `"dry":"yes"`},
		{"json patch", "PATCH", pods + "/web", "application/json-patch+json", `[{"op":"add","path":"/metadata/labels/dry","value":"yes"}]`, 200, `"dry":"yes"`},
		{"status", "PATCH", pods + "/web/status", "application/merge-patch+json", `{"status":{"phase":"Running"}}`, 200, `"phase":"Running"`},
		{"scale", "PATCH", deploys + "/web/scale", "application/merge-patch+json", `{"spec":{"replicas":7}}`, 200, `"replicas":7`},
		{"binding", "POST", pods + "/web/binding", "application/json", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"name":"node-1"}}`, 201, `"Success"`},
		{"delete", "DELETE", pods + "/web", "", "", 200, `"Success"`},
		{"deletecollection", "DELETE", pods, "", "", 200, `"name":"web"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.KV().Revision()
			code, body, _ := do(t, tc.method, tc.url+"?dryRun=All", tc.ctype, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d containing %s", code, body, tc.code, tc.want)
			}
			if after := reg.KV().Revision(); after != before {
				t.Fatalf("dry run wrote: revision %d -> %d", before, after)
			}
		})
	}
	if _, body, _ := do(t, "GET", pods+"/web", "", ""); body != cur {
		t.Fatalf("the pod changed:\n%s\n%s", cur, body)
	}
	code, body, _ := do(t, "POST", pods+"?dryRun=Some", "application/json", podJSON)
	if code != 422 || !strings.Contains(body, `CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Some\"]: supported values: \"All\"`) {
		t.Fatalf("bad dryRun: %d %s", code, body)
	}
	code, body, _ = do(t, "DELETE", pods+"/web?dryRun=Some", "", "")
	if code != 422 || !strings.Contains(body, `DeleteOptions.meta.k8s.io`) {
		t.Fatalf("bad dryRun on delete: %d %s", code, body)
	}
}

func TestWriteOptionValidation(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "web")
	pods := srv.URL + "/api/v1/namespaces/default/pods"
	cases := []struct {
		name, method, url, ctype, body string
		code                           int
		want                           string
	}{
		{"fieldValidation", "POST", pods + "?fieldValidation=Loud", "application/json", podJSON, 422, `fieldValidation: Unsupported value: "Loud"`},
		{"force on merge patch", "PATCH", pods + "/web?force=true", "application/merge-patch+json", `{}`, 422, "force: Forbidden: may not be specified for non-apply patch"},
		{"fieldManager too long", "PATCH", pods + "/web?fieldManager=" + strings.Repeat("m", 129), "application/merge-patch+json", `{}`, 422, "fieldManager: Too long"},
		{"propagationPolicy", "DELETE", pods + "/web?propagationPolicy=Sometimes", "", "", 422, `propagationPolicy: Unsupported value: "Sometimes"`},
		{"gracePeriodSeconds", "DELETE", pods + "/web?gracePeriodSeconds=soon", "", "", 400, "invalid syntax"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, tc.method, tc.url, tc.ctype, tc.body)
			var st metav1.Status
			_ = json.Unmarshal([]byte(body), &st)
			if code != tc.code || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("%d %s; want %d containing %s", code, body, tc.code, tc.want)
			}
		})
	}
}

// The Accept header picks the encoding and the shape of the answer.
func TestContentNegotiation(t *testing.T) {
	srv, reg := newTestServer(t)
	createPods(t, srv.URL, "web")
	pod := srv.URL + "/api/v1/namespaces/default/pods/web"
	cases := []struct {
		accept string
		code   int
		ctype  string
		want   string
	}{
		{"", 200, "application/json", `"kind":"Pod"`},
		{"*/*", 200, "application/json", `"kind":"Pod"`},
		{"application/vnd.kubernetes.protobuf, application/json", 200, "application/json", `"kind":"Pod"`},
		{"application/vnd.kubernetes.protobuf;q=1, application/json;q=0.5", 200, "application/json", `"kind":"Pod"`},
		{"application/yaml", 200, "application/yaml", "kind: Pod\n"},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", 200, "application/json", `"kind":"Table"`},
		{"application/json;as=Table;v=v2;g=meta.k8s.io, application/json", 200, "application/json", `"kind":"Pod"`},
		{"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", 200, "application/json", `"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web"`},
		{"application/vnd.kubernetes.protobuf", 406, "application/json", "only the following media types are accepted: application/json, application/yaml"},
		{"text/html", 406, "application/json", `"reason":"NotAcceptable"`},
		{"application/json;as=Table;v=v2;g=meta.k8s.io", 406, "application/json", "NotAcceptable"},
	}
	for _, tc := range cases {
		t.Run(tc.accept, func(t *testing.T) {
			code, body, hdr := do(t, "GET", pod, "", "", "Accept", tc.accept)
			if code != tc.code || hdr.Get("Content-Type") != tc.ctype || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s %s; want %d %s containing %s", code, hdr.Get("Content-Type"), body, tc.code, tc.ctype, tc.want)
			}
		})
	}
	// A list as metadata only.
	code, body, _ := do(t, "GET", srv.URL+"/api/v1/pods", "", "", "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	var pl metav1.PartialObjectMetadataList
	if code != 200 || json.Unmarshal([]byte(body), &pl) != nil || len(pl.Items) != 1 || pl.Items[0].Name != "web" || pl.ResourceVersion == "" {
		t.Fatalf("metadata list: %d %s", code, body)
	}
	// A create the client could not read is not applied.
	before := reg.KV().Revision()
	code, body, _ = do(t, "POST", srv.URL+"/api/v1/namespaces/default/pods", "application/json", strings.Replace(podJSON, `"web"`, `"x"`, 1), "Accept", "application/vnd.kubernetes.protobuf")
	if code != 406 || reg.KV().Revision() != before {
		t.Fatalf("406 create: %d %s (stored: %v)", code, body, reg.KV().Revision() != before)
	}
	// YAML out is the same object.
	_, y, _ := do(t, "GET", pod, "", "", "Accept", "application/yaml")
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(y), &fromYAML); err != nil || fromYAML["kind"] != "Pod" {
		t.Fatalf("yaml: %v %s", err, y)
	}
}

// Methods no route has are 405, as go-restful answers upstream.
func TestMethodNotAllowed(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, tc := range []struct{ method, path string }{
		{"HEAD", "/api/v1/namespaces/default/pods"},
		{"OPTIONS", "/api/v1/namespaces/default/pods/web"},
		{"TRACE", "/apis/apps/v1/deployments"},
		{"POST", "/api"},
		{"DELETE", "/apis/apps/v1"},
	} {
		code, body, _ := do(t, tc.method, srv.URL+tc.path, "", "")
		if code != 405 || (tc.method != "HEAD" && !strings.Contains(body, `"reason":"MethodNotAllowed"`)) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, code, body)
		}
	}
}

// A request that outlives the request timeout is 504 with upstream's
// message; the handler's context is done, so its work stops.
func TestRequestTimeout(t *testing.T) {
	srv, reg := newTestServerWith(t, func(c *Config) { c.RequestTimeout = 50 * time.Millisecond })
	// An admission step that waits for as long as the request may take.
	reg.AddAdmission(func(ctx context.Context, op registry.Operation, res *registry.Resource, obj, old runtime.Object) error {
		if res.Resource == "pods" {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	base := srv.URL + "/api/v1/namespaces/default/pods"
	code, body, _ := do(t, "POST", base, "application/json", podJSON)
	var st metav1.Status
	_ = json.Unmarshal([]byte(body), &st)
	if code != 504 || st.Reason != metav1.StatusReasonTimeout || st.Message != "Timeout: request did not complete within the allotted timeout" {
		t.Fatalf("timeout: %d %s", code, body)
	}
	// The client's own ?timeout= shortens it; a bad one is 400.
	code, body, _ = do(t, "POST", base+"?timeout=1ms", "application/json", podJSON)
	if code != 504 {
		t.Fatalf("client timeout: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", base+"?timeout=soon", "", "")
	if code != 400 || !strings.Contains(body, "invalid timeout specified in the request URL") {
		t.Fatalf("bad timeout: %d %s", code, body)
	}
	// Reads are quick and unaffected; watches are long-running and are not cut.
	if code, body, _ := do(t, "GET", base, "", ""); code != 200 {
		t.Fatalf("list: %d %s", code, body)
	}
	events := openWatch(t, base+"?watch=true&allowWatchBookmarks=true&timeoutSeconds=1")
	select {
	case ev, ok := <-events:
		if ok {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("watch did not end")
	}
}

// Bodies over 3 MiB are 413 and store nothing.
func TestBodyTooLarge(t *testing.T) {
	srv, reg := newTestServer(t)
	big := strings.Replace(podJSON, `"name":"web"`, `"name":"web","annotations":{"a":"`+strings.Repeat("x", 3<<20)+`"}`, 1)
	before := reg.KV().Revision()
	code, body, _ := do(t, "POST", srv.URL+"/api/v1/namespaces/default/pods", "application/json", big)
	if code != 413 || !strings.Contains(body, `"reason":"RequestEntityTooLarge"`) || reg.KV().Revision() != before {
		t.Fatalf("%d %.200s", code, body)
	}
}
