package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/step"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

const flowBase = "/apis/flow.kubetab.dev/v1alpha1/"

// newFlowServer is a server with a trace of ringSize hops and a step gate.
func newFlowServer(t *testing.T, ringSize int) (*httptest.Server, *registry.Registry) {
	t.Helper()
	rec := trace.New(ringSize, nil)
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Trace: rec})
	if err != nil {
		t.Fatal(err)
	}
	reg.SetStepGate(step.NewGate(nil))
	if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, registry.CreateOptions{}); err != nil {
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

// kubectlDo sends a request as kubectl would name itself (so it is traced).
func kubectlDo(t *testing.T, method, u, ctype, body string) (int, string) {
	t.Helper()
	code, out, _ := do(t, method, u, ctype, body, "User-Agent", "kubectl/v1.32.4 (linux/amd64) kubernetes/test")
	return code, out
}

func createConfigMap(t *testing.T, srv *httptest.Server, name string) {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"a":"1"}}`
	if code, out := kubectlDo(t, "POST", srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", body); code != 201 {
		t.Fatalf("create %s: %d %s", name, code, out)
	}
}

type hopList struct {
	Metadata metav1.ListMeta    `json:"metadata"`
	Items    []flowv1alpha1.Hop `json:"items"`
}

func getHops(t *testing.T, srv *httptest.Server, query string) hopList {
	t.Helper()
	code, out, _ := do(t, "GET", srv.URL+flowBase+"hops?"+query, "", "")
	if code != 200 {
		t.Fatalf("list hops ?%s: %d %s", query, code, out)
	}
	var l hopList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// watchLines opens a watch and returns a function that reads the next event.
func watchLines(t *testing.T, u string) (next func() (string, map[string]any), code int, closeFn func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next = func() (string, map[string]any) {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				return "", nil
			}
			var ev struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("watch line %q: %v", l, err)
			}
			return ev.Type, ev.Object
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event")
			return "", nil
		}
	}
	return next, resp.StatusCode, func() { cancel(); resp.Body.Close() }
}

func TestHopsListWatchAndFilter(t *testing.T) {
	srv, _ := newFlowServer(t, 64)
	createConfigMap(t, srv, "a")
	all := getHops(t, srv, "")
	if len(all.Items) == 0 {
		t.Fatal("no hops after a create")
	}
	rv, _ := strconv.Atoi(all.Metadata.ResourceVersion)
	if last := all.Items[len(all.Items)-1]; int(last.Seq) != rv || last.Name != all.Metadata.ResourceVersion {
		t.Fatalf("list rv %d, last hop %+v", rv, last)
	}

	// Filter by the object and the hop's type: the one etcd write of "a".
	writes := getHops(t, srv, "fieldSelector="+url.QueryEscape("object.name=a,type=write"))
	if len(writes.Items) != 1 || writes.Items[0].Key != "/registry/configmaps/default/a" || writes.Items[0].Revision == 0 {
		t.Fatalf("writes of a: %+v", writes.Items)
	}
	if code, out, _ := do(t, "GET", srv.URL+flowBase+"hops?fieldSelector=spec.bogus%3D1", "", ""); code != 400 || !strings.Contains(out, "field label not supported: spec.bogus") {
		t.Fatalf("bad field: %d %s", code, out)
	}
	// limit and continue walk the same list.
	page := getHops(t, srv, "limit=2")
	if len(page.Items) != 2 || page.Metadata.Continue == "" {
		t.Fatalf("page 1: %d items, continue %q", len(page.Items), page.Metadata.Continue)
	}
	rest := getHops(t, srv, "limit=1000&continue="+url.QueryEscape(page.Metadata.Continue))
	if len(page.Items)+len(rest.Items) != len(all.Items) || rest.Items[0].Seq != page.Items[1].Seq+1 {
		t.Fatalf("pages %d + %d, list %d", len(page.Items), len(rest.Items), len(all.Items))
	}

	// A watch from the list's resourceVersion sees only what comes after,
	// filtered by object.
	next, code, stop := watchLines(t, srv.URL+flowBase+"hops?watch=1&resourceVersion="+all.Metadata.ResourceVersion+"&fieldSelector="+url.QueryEscape("object.name=b"))
	defer stop()
	if code != 200 {
		t.Fatalf("watch: %d", code)
	}
	createConfigMap(t, srv, "b")
	typ, obj := next()
	if typ != "ADDED" || obj["kind"] != "Hop" || obj["object"].(map[string]any)["name"] != "b" {
		t.Fatalf("first event %s %v", typ, obj)
	}
	if seq := int(obj["seq"].(float64)); seq <= rv {
		t.Fatalf("watch from %d sent hop %d", rv, seq)
	}

	// The ring keeps 64 hops: a watch from the first one is too old.
	for i := 0; i < 20; i++ {
		createConfigMap(t, srv, "c"+strconv.Itoa(i))
	}
	code, out, _ := do(t, "GET", srv.URL+flowBase+"hops?watch=1&resourceVersion=1", "", "")
	if code != http.StatusGone || !strings.Contains(out, "too old resource version: 1") {
		t.Fatalf("watch from 1 after the ring wrapped: %d %s", code, out)
	}
	// One hop by name.
	last := getHops(t, srv, "")
	name := last.Items[len(last.Items)-1].Name
	if code, out, _ := do(t, "GET", srv.URL+flowBase+"hops/"+name, "", ""); code != 200 || !strings.Contains(out, `"seq":`+name) {
		t.Fatalf("get hop %s: %d %s", name, code, out)
	}
	if code, _, _ := do(t, "GET", srv.URL+flowBase+"hops/1", "", ""); code != 404 {
		t.Fatalf("get an overwritten hop: %d", code)
	}
}

func TestHopsWatchFromZeroSendsTheKeptHops(t *testing.T) {
	srv, _ := newFlowServer(t, 0)
	createConfigMap(t, srv, "a")
	n := len(getHops(t, srv, "").Items)
	next, _, stop := watchLines(t, srv.URL+flowBase+"hops?watch=1")
	defer stop()
	for i := 0; i < n; i++ {
		if typ, _ := next(); typ != "ADDED" {
			t.Fatalf("initial event %d: %s", i, typ)
		}
	}
	createConfigMap(t, srv, "b")
	if typ, obj := next(); typ != "ADDED" || int(obj["seq"].(float64)) != n+1 {
		t.Fatalf("after the initial events: %s %v", typ, obj)
	}
}

type storeKeyList struct {
	Metadata        metav1.ListMeta         `json:"metadata"`
	CompactRevision int64                   `json:"compactRevision"`
	Items           []flowv1alpha1.StoreKey `json:"items"`
}

func TestStoreKeysListWatchHistory(t *testing.T) {
	srv, reg := newFlowServer(t, 0)
	createConfigMap(t, srv, "app.conf")
	code, out, _ := do(t, "GET", srv.URL+flowBase+"storekeys?fieldSelector="+url.QueryEscape("object.resource=configmaps,object.namespace=default,object.name!=kube-root-ca.crt"), "", "")
	if code != 200 {
		t.Fatalf("list: %d %s", code, out)
	}
	var l storeKeyList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 {
		t.Fatalf("configmaps in default: %+v", l.Items)
	}
	k := l.Items[0]
	kv, _ := reg.KV().Get("/registry/configmaps/default/app.conf")
	if k.Key != kv.Key || k.Name != "registry.configmaps.default.app.conf" || k.ModRevision != kv.ModRevision || k.CreateRevision != kv.CreateRevision || k.Version != 1 || k.Size != len(kv.Value) {
		t.Fatalf("key %+v, store %+v", k, kv)
	}
	if l.Metadata.ResourceVersion != strconv.FormatInt(reg.KV().Revision(), 10) || l.CompactRevision != reg.KV().CompactedRevision() {
		t.Fatalf("list at %s compact %d, store at %d", l.Metadata.ResourceVersion, l.CompactRevision, reg.KV().Revision())
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(k.Value.Raw, &cm); err != nil || cm.Data["a"] != "1" || cm.Kind != "ConfigMap" || cm.ResourceVersion != strconv.FormatInt(kv.ModRevision, 10) {
		t.Fatalf("decoded value %s (%v)", k.Value.Raw, err)
	}

	// A watch from the list's revision sees the update and the delete.
	next, _, stop := watchLines(t, srv.URL+flowBase+"storekeys?watch=1&resourceVersion="+l.Metadata.ResourceVersion+"&fieldSelector="+url.QueryEscape("object.name=app.conf"))
	defer stop()
	patch := `{"data":{"a":"2"}}`
	if code, out := kubectlDo(t, "PATCH", srv.URL+"/api/v1/namespaces/default/configmaps/app.conf", "application/merge-patch+json", patch); code != 200 {
		t.Fatalf("patch: %d %s", code, out)
	}
	typ, obj := next()
	if typ != "MODIFIED" || obj["version"].(float64) != 2 || obj["value"].(map[string]any)["data"].(map[string]any)["a"] != "2" {
		t.Fatalf("after the patch: %s %v", typ, obj)
	}
	if code, out := kubectlDo(t, "DELETE", srv.URL+"/api/v1/namespaces/default/configmaps/app.conf", "", ""); code != 200 {
		t.Fatalf("delete: %d %s", code, out)
	}
	if typ, obj := next(); typ != "DELETED" || obj["key"] != kv.Key {
		t.Fatalf("after the delete: %s %v", typ, obj)
	}

	// The history holds the three writes.
	code, out, _ = do(t, "GET", srv.URL+flowBase+"storekeys/registry.configmaps.default.app.conf/history", "", "")
	var h flowv1alpha1.StoreKeyHistory
	if code != 200 || json.Unmarshal([]byte(out), &h) != nil {
		t.Fatalf("history: %d %s", code, out)
	}
	var got []string
	for _, r := range h.Revisions {
		got = append(got, r.Type+" v"+strconv.FormatInt(r.Version, 10))
	}
	if strings.Join(got, ",") != "PUT v1,PUT v2,DELETE v0" || h.Revisions[1].Value.Raw == nil {
		t.Fatalf("history %v", got)
	}
	if code, _, _ := do(t, "GET", srv.URL+flowBase+"storekeys/registry.configmaps.default.app.conf", "", ""); code != 404 {
		t.Fatalf("get a deleted key: %d", code)
	}

	// After compaction a watch from before it is 410 Gone.
	if err := reg.KV().Compact(reg.KV().Revision()); err != nil {
		t.Fatal(err)
	}
	code, out, _ = do(t, "GET", srv.URL+flowBase+"storekeys?watch=1&resourceVersion=2", "", "")
	if code != http.StatusGone || !strings.Contains(out, "too old resource version: 2") {
		t.Fatalf("watch from a compacted revision: %d %s", code, out)
	}
}

// The real kubectl finds the flow resources by discovery, prints their
// tables, watches them raw, and drives step mode.
func TestFlowWithRealKubectl(t *testing.T) {
	srv, reg := newFlowServer(t, 0)
	e := newKubectlEnvFor(t, srv.URL)
	createConfigMap(t, srv, "app")
	kv, _ := reg.KV().Get("/registry/configmaps/default/app")
	rev := strconv.FormatInt(kv.ModRevision, 10)
	hops := getHops(t, srv, "")
	cases := []struct {
		name string
		args []string
		want string // a pattern of the output
	}{
		{"api-resources", []string{"api-resources", "--api-group=flow.kubetab.dev"}, `hops\s+flow.kubetab.dev/v1alpha1\s+false\s+Hop`},
		{"get hops", []string{"get", "hops", "--field-selector", "object.name=app,type=write"},
			`NAME\s+TYPE\s+FROM\s+TO\s+VERB\s+OBJECT\s+REVISION\n\d+\s+write\s+kube-apiserver\s+etcd\s+put\s+configmaps/default/app\s+` + rev + `\n$`},
		{"get storekeys", []string{"get", "storekeys", "--field-selector", "object.name=app"},
			`KEY\s+CREATE-REVISION\s+MOD-REVISION\s+VERSION\s+SIZE\n/registry/configmaps/default/app\s+` + rev + `\s+` + rev + `\s+1\s+\d+\n$`},
		{"get storekey -o jsonpath", []string{"get", "storekey", "registry.configmaps.default.app", "-o", "jsonpath={.modRevision} {.value.data.a}"}, `^` + rev + ` 1$`},
		{"watch raw", []string{"get", "--raw", flowBase + "hops?watch=1&timeoutSeconds=1&resourceVersion=" + strconv.Itoa(len(hops.Items)-1)},
			`^\{"type":"ADDED","object":\{"kind":"Hop".*"seq":` + strconv.Itoa(len(hops.Items)) + `,.*\}\n$`},
		{"step mode on", []string{"patch", "stepmode", "cluster", "--type=merge", "-p", `{"spec":{"enabled":true}}`}, `stepmode.flow.kubetab.dev/cluster patched`},
		{"get stepmode", []string{"get", "stepmode"}, `NAME\s+ENABLED\s+PENDING\s+RELEASED\s+CLOCK\ncluster\s+true\s+0\s+0\s+running`},
		{"step with nothing held", []string{"create", "--raw", flowBase + "stepmodes/cluster/step", "-f", "/dev/null"}, `no write is waiting`},
		{"continue", []string{"create", "--raw", flowBase + "stepmodes/cluster/continue", "-f", "/dev/null"}, `"enabled":false`},
		{"pendingwrites", []string{"get", "pendingwrites"}, `No resources found`},
	}
	for _, tc := range cases {
		out, _ := e.run(tc.args...)
		if !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("%s: kubectl %v:\n%s\nwant /%s/", tc.name, tc.args, out, tc.want)
		}
	}
}

// TestStepModeWatchSeesOnAndOff: turning step mode on or off is a change a
// watch of stepmodes is told (a page's informer shows the switch from it),
// and a watch of pendingwrites is not (no write was held or released).
func TestStepModeWatchSeesOnAndOff(t *testing.T) {
	srv, reg := newFlowServer(t, 0)
	code, out, _ := do(t, "GET", srv.URL+flowBase+"stepmodes", "", "")
	if code != 200 {
		t.Fatalf("list stepmodes: %d %s", code, out)
	}
	var l struct {
		Metadata metav1.ListMeta `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	modes, _, stopModes := watchLines(t, srv.URL+flowBase+"stepmodes?watch=1&resourceVersion="+l.Metadata.ResourceVersion)
	defer stopModes()
	writes, _, stopWrites := watchLines(t, srv.URL+flowBase+"pendingwrites?watch=1&resourceVersion="+l.Metadata.ResourceVersion)
	defer stopWrites()

	enabled := func(obj map[string]any) any { return obj["spec"].(map[string]any)["enabled"] }
	// From resourceVersion 0 a watch first sends what is there now.
	if typ, obj := modes(); typ != "ADDED" || enabled(obj) != false {
		t.Fatalf("first event %s %v, want ADDED of the StepMode, off", typ, obj)
	}
	for i, tc := range []struct {
		method, path, ctype, body string
		want                      bool
	}{
		{"PATCH", "stepmodes/cluster", "application/merge-patch+json", `{"spec":{"enabled":true}}`, true},
		{"POST", "stepmodes/cluster/continue", "", "", false},
		{"PUT", "stepmodes/cluster", "application/json", `{"spec":{"enabled":true}}`, true},
		{"PATCH", "stepmodes/cluster", "application/merge-patch+json", `{"spec":{"enabled":false}}`, false},
	} {
		if code, out, _ := do(t, tc.method, srv.URL+flowBase+tc.path, tc.ctype, tc.body); code != 200 {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, code, out)
		}
		typ, obj := modes()
		if typ != "MODIFIED" || enabled(obj) != tc.want {
			t.Fatalf("change %d (%s %s): watch event %s %v, want MODIFIED enabled=%v", i, tc.method, tc.path, typ, obj, tc.want)
		}
		if rv := obj["metadata"].(map[string]any)["resourceVersion"]; rv != strconv.Itoa(i+1) {
			t.Errorf("change %d: resourceVersion %v, want %d", i, rv, i+1)
		}
	}
	// The pendingwrites watch got nothing for the toggles: its first event
	// is a held write.
	do(t, "PATCH", srv.URL+flowBase+"stepmodes/cluster", "application/merge-patch+json", `{"spec":{"enabled":true}}`)
	go reg.StepGate().Hold(context.Background(), step.Write{Component: "kube-scheduler", Verb: "create", Resource: "pods/binding", Namespace: "default", Name: "p"})
	typ, obj := writes()
	if spec, _ := obj["spec"].(map[string]any); typ != "ADDED" || spec["component"] != "kube-scheduler" {
		t.Fatalf("pendingwrites watch: %s %v, want ADDED of the held write first", typ, obj)
	}
	reg.StepGate().Continue()
}
