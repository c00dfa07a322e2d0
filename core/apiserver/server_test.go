package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

func newTestServer(t *testing.T) (*httptest.Server, *registry.Registry) {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", ns, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, reg
}

func do(t *testing.T, method, url, ctype, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
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
	return resp.StatusCode, string(b), resp.Header
}

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"hello","image":"hello:1.0"}]}}`

func TestCRUD(t *testing.T) {
	srv, _ := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"

	code, body, _ := do(t, "POST", base, "application/json", podJSON)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(body), &pod); err != nil {
		t.Fatal(err)
	}
	if pod.UID == "" || pod.ResourceVersion == "" || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways ||
		pod.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || pod.Status.Phase != corev1.PodPending {
		t.Fatalf("defaults not applied: %+v", pod)
	}

	code, body, _ = do(t, "POST", base, "application/json", podJSON)
	if code != 409 || !strings.Contains(body, `pods \"web\" already exists`) {
		t.Fatalf("duplicate create: %d %s", code, body)
	}

	// A stale resourceVersion is a conflict, with upstream's message.
	stale := strings.Replace(podJSON, `"name":"web"`, `"name":"web","resourceVersion":"1","labels":{"a":"b"}`, 1)
	code, body, _ = do(t, "PUT", base+"/web", "application/json", stale)
	if code != 409 || !strings.Contains(body, "the object has been modified; please apply your changes to the latest version and try again") {
		t.Fatalf("stale update: %d %s", code, body)
	}

	code, body, _ = do(t, "PATCH", base+"/web", "application/merge-patch+json", `{"metadata":{"labels":{"app":"web"}}}`)
	if code != 200 || !strings.Contains(body, `"app":"web"`) {
		t.Fatalf("merge patch: %d %s", code, body)
	}

	code, body, _ = do(t, "GET", base+"?labelSelector=app%3Dweb", "", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	if code != 200 || !strings.Contains(body, `"kind":"Table"`) || !strings.Contains(body, `"web"`) {
		t.Fatalf("table list: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", base+"?labelSelector=app%3Dother", "", "")
	if code != 200 || strings.Contains(body, `"name":"web"`) {
		t.Fatalf("selector list: %d %s", code, body)
	}

	// An unbound pod is deleted at once.
	code, body, _ = do(t, "DELETE", base+"/web", "", "")
	if code != 200 || !strings.Contains(body, `"status":"Success"`) {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", base+"/web", "", "")
	if code != 404 || !strings.Contains(body, `pods \"web\" not found`) {
		t.Fatalf("get after delete: %d %s", code, body)
	}
}

func TestBadInputStoresNothing(t *testing.T) {
	srv, reg := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"
	cases := []struct {
		name, ctype, body string
		code              int
		msg               string
	}{
		{"malformed json", "application/json", `{"apiVersion":`, 400, `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":)`},
		{"malformed yaml", "application/yaml", "a: [b", 400, "the object provided is unrecognized (must be of type Pod): yaml: line 1: did not find expected ',' or ']' (613a205b62)"},
		{"YAML sent as JSON (kubectl create --raw)", "application/json", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: raw\n", 400,
			"the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (61706956657273696f6e3a2076310a6b696e643a20506f640a6d65746164 ...)"},
		{"YAML body", "application/yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"Web_1\"\nspec:\n  containers: [{name: a, image: hello}]\n", 422, `metadata.name: Invalid value: "Web_1"`},
		{"empty body", "application/json", "", 400, "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"},
		{"wrong kind", "application/json", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}}`, 400, `no kind "Service" is registered`},
		{"wrong apiVersion", "application/json", `{"apiVersion":"apps/v1","kind":"Pod","metadata":{"name":"x"}}`, 400, "does not match the expected API version (v1)"},
		{"invalid name", "application/json", strings.Replace(podJSON, `"web"`, `"Web_1"`, 1), 422, `metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`},
		{"no containers", "application/json", `{"metadata":{"name":"x"},"spec":{}}`, 422, "spec.containers: Required value"},
		{"content type", "text/plain", podJSON, 415, "unknown format"},
		{"strict unknown field", "application/json", strings.Replace(podJSON, `"spec":{`, `"spec":{"bogus":1,`, 1), 400, `unknown field "spec.bogus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := base
			if strings.Contains(tc.name, "strict") {
				url += "?fieldValidation=Strict"
			}
			code, body, _ := do(t, "POST", url, tc.ctype, tc.body)
			var st metav1.Status
			if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" || int(st.Code) != tc.code {
				t.Fatalf("not a Status with code %d: %d %s", tc.code, code, body)
			}
			if code != tc.code || !strings.Contains(st.Message, tc.msg) {
				t.Fatalf("got %d %q; want %d containing %q", code, st.Message, tc.code, tc.msg)
			}
		})
	}
	if n := reg.KV().Count("/registry/pods/"); n != 0 {
		t.Fatalf("bad input stored %d pods", n)
	}
	code, body, _ := do(t, "POST", srv.URL+"/api/v1/namespaces/nope/pods", "application/json", podJSON)
	if code != 404 || !strings.Contains(body, `namespaces \"nope\" not found`) {
		t.Fatalf("missing namespace: %d %s", code, body)
	}
}

func TestWatchStream(t *testing.T) {
	srv, _ := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"?watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, body, _ := do(t, "POST", base, "application/json", podJSON); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	do(t, "DELETE", base+"/web", "", "")
	sc := bufio.NewScanner(resp.Body)
	var types []string
	for len(types) < 2 && sc.Scan() {
		var ev struct {
			Type   string
			Object corev1.Pod
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if ev.Object.Name != "web" {
			t.Fatalf("event for %q", ev.Object.Name)
		}
		types = append(types, ev.Type)
	}
	if strings.Join(types, ",") != "ADDED,DELETED" {
		t.Fatalf("events %v", types)
	}
}

func TestDiscovery(t *testing.T) {
	srv, _ := newTestServer(t)
	for path, want := range map[string]string{
		"/version":      `"major":"1"`,
		"/api":          `"versions":["v1"]`,
		"/apis":         `"name":"apps"`,
		"/api/v1":       `"name":"pods/log"`,
		"/apis/apps/v1": `"name":"deployments/scale"`,
	} {
		code, body, _ := do(t, "GET", srv.URL+path, "", "")
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}

// The real kubectl's typed clients send protobuf (kubectl create deployment).
func TestCreateProtobuf(t *testing.T) {
	srv, _ := newTestServer(t)
	n := int32(2)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
			},
		},
	}
	raw, err := dep.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, Raw: raw}).Marshal()
	body := append([]byte("k8s\x00"), env...)
	code, out, _ := do(t, "POST", srv.URL+"/apis/apps/v1/namespaces/default/deployments", "application/vnd.kubernetes.protobuf", string(body))
	if code != 201 || !strings.Contains(out, `"replicas":2`) {
		t.Fatalf("protobuf create: %d %s", code, out)
	}
	code, out, _ = do(t, "POST", srv.URL+"/apis/apps/v1/namespaces/default/deployments", "application/vnd.kubernetes.protobuf", "not protobuf")
	if code != 400 || !strings.Contains(out, "protobuf prefix") {
		t.Fatalf("bad protobuf: %d %s", code, out)
	}
}
