package apiserver

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

// The HTTP side of the trace: a client that names itself in its User-Agent
// gets its requests, answers and watch events recorded; the page (a
// browser) does not.
func TestTraceHTTP(t *testing.T) {
	rec := trace.New(0, nil)
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Trace: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	const kubectl = "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"
	const browser = "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0"

	// A watch from kubectl, started first, sees the create below.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods?watch=true&resourceVersion=1", nil)
	req.Header.Set("User-Agent", kubectl)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	_, before, _ := rec.Since(0) // the namespace's own write
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-"},"spec":{"containers":[{"name":"hello","image":"hello"}]}}`
	if code, out, _ := do(t, http.MethodPost, srv.URL+"/api/v1/namespaces/default/pods", "application/json", body, "User-Agent", kubectl); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, out)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil { // the ADDED event went out
		t.Fatal(err)
	}
	if code, _, _ := do(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods", "", "", "User-Agent", browser); code != http.StatusOK {
		t.Fatalf("list from the browser: %d", code)
	}
	if code, _, _ := do(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/nope", "", "", "User-Agent", kubectl); code != http.StatusNotFound {
		t.Fatalf("get nope: %d", code)
	}

	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		hops, _, _ := rec.Since(before)
		got = got[:0]
		for _, h := range hops {
			got = append(got, h.From+" → "+h.To+": "+trace.What(h))
		}
		if len(got) >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	name := ""
	for _, g := range got {
		if i := strings.Index(g, "put /registry/pods/default/"); i >= 0 {
			name = strings.Fields(g[i+len("put /registry/pods/default/"):])[0]
		}
	}
	want := []string{
		"kubectl → kube-apiserver: watch pods -n default",
		"kubectl → kube-apiserver: create pods default/web-",
		"kube-apiserver → etcd: put /registry/pods/default/" + name,
		"kube-apiserver → kubectl: 201 Created pods default/" + name,
		"kube-apiserver → kubectl: ADDED pods default/" + name,
		"kubectl → kube-apiserver: get pods default/nope",
		"kube-apiserver → kubectl: 404 Not Found pods default/nope",
	}
	// The watch request was recorded before the namespace write's Seq was read.
	want = want[1:]
	if name == "" || !strings.HasPrefix(name, "web-") {
		t.Fatalf("no write of a web- pod in %q", got)
	}
	// The answer and the watch event race: either may be recorded first.
	got = stripRev(got)
	if len(got) == len(want) && got[2] == want[3] && got[3] == want[2] {
		got[2], got[3] = got[3], got[2]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// stripRev drops the " (rev N)" ends, which depend on the store.
func stripRev(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if j := strings.Index(l, " (rev "); j >= 0 {
			l = l[:j]
		}
		out[i] = l
	}
	return out
}
