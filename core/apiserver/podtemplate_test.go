package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodTemplate: podtemplates are stored with the pod defaults, their
// template validated as a pod's (upstream's field paths under template.),
// printed with upstream's columns, and a change of the template bumps
// metadata.generation.
func TestPodTemplate(t *testing.T) {
	srv, reg := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/podtemplates"
	tmpl := func(name, image string) string {
		return `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"` + name + `"},` +
			`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"hello","image":"` + image + `"}]}}}`
	}
	tests := []struct {
		name, method, url, body string
		code                    int
		want                    string
	}{
		{"create", "POST", base, tmpl("web", "hello:1.0"), 201, `"restartPolicy":"Always"`},
		{"no containers", "POST", base, `{"metadata":{"name":"empty"},"template":{"spec":{}}}`, 422,
			`PodTemplate \"empty\" is invalid: template.spec.containers: Required value`},
		{"bad name", "POST", base, tmpl("Web_1", "hello:1.0"), 422, `metadata.name: Invalid value: \"Web_1\"`},
		{"same template again", "PUT", base + "/web", tmpl("web", "hello:1.0"), 200, `"generation":1,`},
		{"new image", "PUT", base + "/web", tmpl("web", "hello:2.0"), 200, `"generation":2,`},
		{"table", "GET", base, "", 200, `"cells":["web","hello","hello:2.0","app=web"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.name == "table" {
				hdr = []string{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}
			}
			ctype := "application/json"
			if tc.body == "" {
				ctype = ""
			}
			code, body, _ := do(t, tc.method, tc.url, ctype, tc.body, hdr...)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d containing %s", code, body, tc.code, tc.want)
			}
		})
	}
	if n := reg.KV().Count("/registry/podtemplates/"); n != 1 {
		t.Fatalf("%d podtemplates stored, want 1", n)
	}
	_, body, _ := do(t, "GET", base+"/web", "", "")
	var pt corev1.PodTemplate
	if err := json.Unmarshal([]byte(body), &pt); err != nil || pt.Template.Spec.Containers[0].Image != "hello:2.0" {
		t.Fatalf("stored %s (%v)", body, err)
	}
}
