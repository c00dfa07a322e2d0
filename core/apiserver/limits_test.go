package apiserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// copyBomb is a JSON patch of n "copy" operations that each copy a
// ConfigMap's data into itself, so each doubles the document: 40 of them
// are 1.8 KB and ask for terabytes.
func copyBomb(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/data","path":"/data/%d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

const bombConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bomb"},"data":{"k":"0123456789"}}`

// The limits kube-apiserver put in after CVE-2019-1002100, with its codes
// and words. Nothing is stored on any of these.
func TestRequestLimits(t *testing.T) {
	srv, reg := newTestServer(t)
	cms := srv.URL + "/api/v1/namespaces/default/configmaps"
	if code, body, _ := do(t, "POST", cms, "application/json", bombConfigMap); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	if code, body, _ := do(t, "POST", srv.URL+"/apis/apps/v1/namespaces/default/deployments", "application/json", deploymentJSON); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	manyOps := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k","value":"0123456789"},`, 10001), ",") + "]"
	bigPod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big"},"spec":{"containers":[{"name":"c","image":"hello",
		"env":[{"name":"A","value":"` + strings.Repeat("x", 2<<20) + `"}]}]}}`
	cases := []struct {
		name, method, url, ctype, body string
		code                           int
		want                           string
	}{
		// Upstream answers every JSON patch that does not apply with 422
		// and a generic message (the library's own error is not passed on).
		{"copy bomb stops at the accumulated copy limit", "PATCH", cms + "/bomb", "application/json-patch+json", copyBomb(20), 422,
			`"message":"the server rejected our request due to an error in our request","reason":"Invalid"`},
		{"the 1.8 KB bomb", "PATCH", cms + "/bomb", "application/json-patch+json", copyBomb(40), 422, "the server rejected our request due to an error in our request"},
		{"10,000 operations at most", "PATCH", cms + "/bomb", "application/json-patch+json", manyOps, 413,
			"Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{"10,000 operations pass", "PATCH", cms + "/bomb", "application/json-patch+json",
			"[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k","value":"0123456789"},`, 10000), ",") + "]", 200, `"k":"0123456789"`},
		{"a patch that does not apply is 422", "PATCH", cms + "/bomb", "application/json-patch+json", `[{"op":"remove","path":"/data/nope"}]`, 422, "the server rejected our request"},
		{"request body over 3 MiB", "POST", cms, "application/json", `{"data":{"k":"` + strings.Repeat("x", 3<<20) + `"}}`, 413,
			"Request entity too large: limit is 3145728"},
		{"patch body over 3 MiB", "PATCH", cms + "/bomb", "application/merge-patch+json", `{"data":{"k":"` + strings.Repeat("x", 3<<20) + `"}}`, 413,
			"Request entity too large: limit is 3145728"},
		{"an object over etcd's request limit", "POST", srv.URL + "/api/v1/namespaces/default/pods", "application/json", bigPod, 500,
			`"message":"etcdserver: request is too large"`},
		{"a merge patch growing the object past etcd's limit", "PATCH", srv.URL + "/apis/apps/v1/namespaces/default/deployments/web", "application/merge-patch+json",
			`{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"hello","env":[{"name":"A","value":"` + strings.Repeat("x", 1600<<10) + `"}]}]}}}}`,
			500, "etcdserver: request is too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.KV().Revision()
			code, body, _ := do(t, tc.method, tc.url, tc.ctype, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				if len(body) > 400 {
					body = body[:400]
				}
				t.Fatalf("%d %s; want %d containing %q", code, body, tc.code, tc.want)
			}
			if after := reg.KV().Revision(); after != before && code != 200 {
				t.Fatalf("a refused request wrote: revision %d -> %d", before, after)
			}
		})
	}
}

// The 1.8 KB copy bomb (40 doublings) costs a bounded amount of memory:
// the copies stop at 3 MiB. Before the limit it asked for terabytes (one
// took the native server from 1.6 to 5.6 GB before it was killed).
func TestCopyBombAllocationsBounded(t *testing.T) {
	srv, _ := newTestServer(t)
	if code, body, _ := do(t, "POST", srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", bombConfigMap); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	h := srv.Config.Handler
	patch := copyBomb(40)
	if len(patch) > 1900 {
		t.Fatalf("the bomb is %d bytes", len(patch))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := httptest.NewRequest("PATCH", "/api/v1/namespaces/default/configmaps/bomb", strings.NewReader(patch))
	req.Header.Set("Content-Type", "application/json-patch+json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	const bound = 64 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
		t.Fatalf("the %d-byte bomb allocated %d MB; want under %d MB", len(patch), alloc>>20, bound>>20)
	} else {
		t.Logf("the %d-byte bomb allocated %.1f MB", len(patch), float64(alloc)/(1<<20))
	}
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// BenchmarkCopyBomb: the 1.8 KB bomb end to end through the handler; see
// allocs/op and B/op.
func BenchmarkCopyBomb(b *testing.B) {
	srv, _ := newTestServer(&testing.T{})
	defer srv.Close()
	if code, body, _ := do(&testing.T{}, "POST", srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", bombConfigMap); code != 201 {
		b.Fatalf("%d %s", code, body)
	}
	h := srv.Config.Handler
	patch := copyBomb(40)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("PATCH", "/api/v1/namespaces/default/configmaps/bomb", strings.NewReader(patch))
		req.Header.Set("Content-Type", "application/json-patch+json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnprocessableEntity {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
