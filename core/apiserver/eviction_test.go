package apiserver

import (
	"strings"
	"testing"
)

func TestEviction(t *testing.T) {
	srv, reg := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"
	if code, body, _ := do(t, "POST", base, "application/json", podJSON); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	const ev = `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web","namespace":"default"}}`
	for _, tc := range []struct {
		name, url, body string
		code            int
		msg             string
	}{
		{"name mismatch", base + "/web/eviction", strings.Replace(ev, `"name":"web"`, `"name":"other"`, 1), 400, "name in URL does not match name in Eviction object"},
		{"dry run", base + "/web/eviction?dryRun=All", ev, 201, `"status":"Success"`},
		{"evict", base + "/web/eviction", ev, 201, `"status":"Success"`},
		{"gone", base + "/web/eviction", ev, 404, `pods \"web\" not found`},
	} {
		code, body, _ := do(t, "POST", tc.url, "application/json", tc.body)
		if code != tc.code || !strings.Contains(body, tc.msg) {
			t.Errorf("%s: %d %s; want %d containing %q", tc.name, code, body, tc.code, tc.msg)
		}
		if tc.name == "dry run" && reg.KV().Count("/registry/pods/") != 1 {
			t.Errorf("a dry-run eviction deleted the pod")
		}
	}
	if n := reg.KV().Count("/registry/pods/"); n != 0 {
		t.Fatalf("%d pods left after the eviction", n)
	}
}
