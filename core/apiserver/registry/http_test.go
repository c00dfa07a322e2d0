package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// The same rules over HTTP, as kubectl meets them: the registry's resources
// served by core/apiserver.

func newServer(t *testing.T) (*httptest.Server, *registry.Registry) {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Bootstrap(context.Background(), registry.BootstrapConfig{}); err != nil {
		t.Fatal(err)
	}
	s, err := apiserver.New(apiserver.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, reg
}

func call(t *testing.T, method, url, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHTTPServices(t *testing.T) {
	srv, reg := newServer(t)
	base := srv.URL + "/api/v1/namespaces/default/services"
	code, body := call(t, "POST", base, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"NodePort","selector":{"app":"web"},"ports":[{"port":80}]}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var svc corev1.Service
	if err := json.Unmarshal([]byte(body), &svc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svc.Spec.ClusterIP, "10.") || svc.Spec.Ports[0].NodePort < 30000 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("service %+v", svc.Spec)
	}

	keys := reg.KV().Count("/registry/")
	code, body = call(t, "POST", base, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"bad"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":80}]}}`)
	var st metav1.Status
	_ = json.Unmarshal([]byte(body), &st)
	if code != 422 || st.Reason != metav1.StatusReasonInvalid || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Field != "spec.ports[0].nodePort" ||
		!strings.Contains(st.Message, "provided port is not in the valid range. The range of valid ports is 30000-32767") {
		t.Errorf("bad nodePort: %d %s", code, body)
	}
	if n := reg.KV().Count("/registry/"); n != keys {
		t.Errorf("%d keys after a refused create, want %d", n, keys)
	}

	code, body = call(t, "GET", base, "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if code != 200 || !strings.Contains(body, `"name":"Cluster-IP"`) || !strings.Contains(body, "80:") {
		t.Errorf("table: %d %s", code, body)
	}
	code, body = call(t, "GET", srv.URL+"/api/v1/services?fieldSelector=spec.type%3DNodePort", "")
	if code != 200 || !strings.Contains(body, `"name":"web"`) || strings.Contains(body, `"name":"kubernetes"`) {
		t.Errorf("fieldSelector spec.type: %d %s", code, body)
	}
}

func TestHTTPDiscoveryAndEvents(t *testing.T) {
	srv, _ := newServer(t)
	code, body := call(t, "GET", srv.URL+"/apis/batch/v1", "")
	if code != 200 || !strings.Contains(body, `"name":"cronjobs"`) || !strings.Contains(body, `"shortNames":["cj"]`) {
		t.Errorf("batch/v1 discovery: %d %s", code, body)
	}
	code, body = call(t, "POST", srv.URL+"/apis/events.k8s.io/v1/namespaces/default/events",
		`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"eventTime":"2026-11-29T12:00:00.000000Z","reportingController":"kubetab.io/test","reportingInstance":"t","action":"Test","reason":"Tested","note":"hello","type":"Normal","regarding":{"kind":"Pod","name":"p","namespace":"default"}}`)
	if code != 201 {
		t.Fatalf("events.k8s.io create: %d %s", code, body)
	}
	code, body = call(t, "GET", srv.URL+"/api/v1/namespaces/default/events/e1", "")
	if code != 200 || !strings.Contains(body, `"message":"hello"`) || !strings.Contains(body, `"apiVersion":"v1"`) {
		t.Errorf("the event through core/v1: %d %s", code, body)
	}
	code, body = call(t, "POST", srv.URL+"/apis/events.k8s.io/v1/namespaces/default/events",
		`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e2"},"reason":"Tested","type":"Normal"}`)
	if code != 422 || !strings.Contains(body, "eventTime: Required value") {
		t.Errorf("events.k8s.io without eventTime: %d %s", code, body)
	}
}

func TestHTTPNamespaceDelete(t *testing.T) {
	srv, _ := newServer(t)
	code, body := call(t, "DELETE", srv.URL+"/api/v1/namespaces/kube-system", "")
	if code != 403 || !strings.Contains(body, `namespaces \"kube-system\" is forbidden: this namespace may not be deleted`) {
		t.Errorf("delete kube-system: %d %s", code, body)
	}
	call(t, "POST", srv.URL+"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gone-soon"}}`)
	code, body = call(t, "DELETE", srv.URL+"/api/v1/namespaces/gone-soon", "")
	if code != 200 || !strings.Contains(body, `"phase":"Terminating"`) {
		t.Errorf("delete namespace: %d %s", code, body)
	}
	code, body = call(t, "POST", srv.URL+"/api/v1/namespaces/gone-soon/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)
	if code != 403 || !strings.Contains(body, "because it is being terminated") {
		t.Errorf("create in a terminating namespace: %d %s", code, body)
	}
}
