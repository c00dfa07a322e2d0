package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duplicate fields, in JSON and in YAML bodies and in patches, are strict
// errors as upstream: 400 (422 for a patch) under fieldValidation=Strict,
// Warning headers by default, nothing under Ignore.
func TestDuplicateFields(t *testing.T) {
	srv, reg := newTestServer(t)
	pods := srv.URL + "/api/v1/namespaces/default/pods"
	dupJSON := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dup","name":"dup"},"spec":{"containers":[{"name":"c","image":"a","image":"b"}]}}`
	dupYAML := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dup\n  name: dup\nspec:\n  containers:\n  - name: c\n    image: hello\n"
	cases := []struct {
		name, method, url, ctype, body string
		code                           int
		want                           string // in the message
		warning                        string // in a Warning header
	}{
		{"JSON, Strict", "POST", pods + "?fieldValidation=Strict", "application/json", dupJSON, 400,
			`Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name", duplicate field "spec.containers[0].image"`, ""},
		{"YAML, Strict", "POST", pods + "?fieldValidation=Strict", "application/yaml", dupYAML, 400,
			"Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map", ""},
		{"JSON, Warn", "POST", pods, "application/json", dupJSON, 201, "", `299 - "duplicate field \"metadata.name\""`},
		{"YAML, Warn", "POST", pods + "?fieldValidation=Warn", "application/yaml", strings.Replace(dupYAML, "dup", "dup2", 2), 201, "", `299 - "line 5: key \"name\" already set in map"`},
		{"YAML, Ignore", "POST", pods + "?fieldValidation=Ignore", "application/yaml", strings.Replace(dupYAML, "dup", "dup3", 2), 201, "", ""},
		{"merge patch, Strict", "PATCH", pods + "/dup?fieldValidation=Strict", "application/merge-patch+json", `{"metadata":{"labels":{"a":"1","a":"2"}}}`, 422,
			`strict decoding error: duplicate field "metadata.labels.a"`, ""},
		{"JSON patch, Strict", "PATCH", pods + "/dup?fieldValidation=Strict", "application/json-patch+json", `[{"op":"add","op":"add","path":"/metadata/labels","value":{}}]`, 422,
			`strict decoding error: json patch duplicate field "[0].op"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.KV().Revision()
			code, body, hdr := do(t, tc.method, tc.url, tc.ctype, tc.body)
			if code != tc.code {
				t.Fatalf("%d %s; want %d", code, body, tc.code)
			}
			if tc.want != "" {
				var st metav1.Status
				if err := json.Unmarshal([]byte(body), &st); err != nil || !strings.Contains(st.Message, tc.want) {
					t.Fatalf("message %q; want it to contain %q", st.Message, tc.want)
				}
				if reg.KV().Revision() != before {
					t.Fatal("a refused request wrote")
				}
			}
			warnings := strings.Join(hdr.Values("Warning"), "\n")
			if tc.warning != "" && !strings.Contains(warnings, tc.warning) || tc.warning == "" && warnings != "" {
				t.Fatalf("warnings %q; want %q", warnings, tc.warning)
			}
		})
	}
}
