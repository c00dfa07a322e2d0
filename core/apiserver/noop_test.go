package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestNoOpUpdate: an update that changes nothing (the same body again, or
// one that differs only in encoding: "args": [] where the stored object has
// none) writes nothing, so neither metadata.generation nor resourceVersion
// move; a real spec change bumps both (upstream: etcd3 GuaranteedUpdate
// skips an unchanged write; the strategies compare specs semantically).
func TestNoOpUpdate(t *testing.T) {
	srv, _ := newTestServer(t)
	base := srv.URL + "/apis/apps/v1/namespaces/default/deployments"
	body := func(image string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"site","labels":{"app":"site"}},` +
			`"spec":{"replicas":1,"selector":{"matchLabels":{"app":"site"}},"template":{"metadata":{"labels":{"app":"site"}},` +
			`"spec":{"containers":[{"name":"hello","image":"` + image + `","args":[],"env":[]}],"volumes":[]}}}}`
	}
	read := func(s string) appsv1.Deployment {
		t.Helper()
		var d appsv1.Deployment
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		return d
	}
	code, out, _ := do(t, "POST", base, "application/json", body("hello:1.0"))
	if code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	created := read(out)
	tests := []struct {
		name           string
		image          string
		wantGeneration int64
		wantSameRV     bool
	}{
		{"same body", "hello:1.0", 1, true},
		{"same body again", "hello:1.0", 1, true},
		{"new image", "hello:2.0", 2, false},
		{"new image again", "hello:2.0", 2, true},
	}
	prev := created.ResourceVersion
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := do(t, "PUT", base+"/site", "application/json", body(tc.image))
			if code != 200 {
				t.Fatalf("update: %d %s", code, out)
			}
			d := read(out)
			if d.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", d.Generation, tc.wantGeneration)
			}
			if same := d.ResourceVersion == prev; same != tc.wantSameRV {
				t.Errorf("resourceVersion %s after %s: same=%v, want %v", d.ResourceVersion, prev, same, tc.wantSameRV)
			}
			_, got, _ := do(t, "GET", base+"/site", "", "")
			if g := read(got); g.ResourceVersion != d.ResourceVersion || g.Generation != d.Generation {
				t.Errorf("stored rv %s gen %d, answered rv %s gen %d", g.ResourceVersion, g.Generation, d.ResourceVersion, d.Generation)
			}
			prev = d.ResourceVersion
		})
	}
	if !strings.Contains(body("x"), `"args":[]`) {
		t.Fatal("the body must carry an empty list")
	}
}
