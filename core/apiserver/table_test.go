package apiserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTableIncludeObject checks each includeObject value on a list, a get
// and a watch, as kubectl get --sort-by and -o custom-columns rely on it.
func TestTableIncludeObject(t *testing.T) {
	srv, _ := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"
	if code, body, _ := do(t, "POST", base, "application/json", podJSON); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	type row struct {
		Object map[string]any `json:"object"`
	}
	tests := []struct {
		name, url  string
		wantKind   string // kind of each row's object; "" for none
		wantSpec   bool
		wantCode   int
		wantSubstr string
	}{
		{name: "default is metadata", url: base, wantKind: "PartialObjectMetadata", wantCode: 200},
		{name: "Metadata", url: base + "?includeObject=Metadata", wantKind: "PartialObjectMetadata", wantCode: 200},
		{name: "Object list", url: base + "?includeObject=Object", wantKind: "Pod", wantSpec: true, wantCode: 200},
		{name: "Object get", url: base + "/web?includeObject=Object", wantKind: "Pod", wantSpec: true, wantCode: 200},
		{name: "None", url: base + "?includeObject=None", wantCode: 200},
		{name: "unknown", url: base + "?includeObject=Everything", wantCode: 400, wantSubstr: `unrecognized includeObject value: \"Everything\"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, "GET", tc.url, "", "", "Accept", table)
			if code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", code, tc.wantCode, body)
			}
			if tc.wantSubstr != "" {
				if !strings.Contains(body, tc.wantSubstr) {
					t.Fatalf("body %s lacks %s", body, tc.wantSubstr)
				}
				return
			}
			var tab struct {
				Kind string `json:"kind"`
				Rows []row  `json:"rows"`
			}
			if err := json.Unmarshal([]byte(body), &tab); err != nil {
				t.Fatal(err)
			}
			if tab.Kind != "Table" || len(tab.Rows) != 1 {
				t.Fatalf("want a Table with one row: %s", body)
			}
			obj := tab.Rows[0].Object
			if tc.wantKind == "" {
				if obj != nil {
					t.Fatalf("want no object, got %v", obj)
				}
				return
			}
			if obj["kind"] != tc.wantKind {
				t.Fatalf("row object kind %v, want %s: %s", obj["kind"], tc.wantKind, body)
			}
			_, hasSpec := obj["spec"]
			if hasSpec != tc.wantSpec {
				t.Fatalf("row object has spec %v, want %v: %s", hasSpec, tc.wantSpec, body)
			}
		})
	}
}
