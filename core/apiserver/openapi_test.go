package apiserver

import (
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/kube-openapi/pkg/spec3"
)

// Every served kind is in the v3 document of its group version, found the
// way clients find it: by x-kubernetes-group-version-kind.
func TestOpenAPIV3ServesEveryKind(t *testing.T) {
	srv, reg := newTestServer(t)
	code, body, _ := do(t, "GET", srv.URL+"/openapi/v3", "", "", "Accept", "application/json")
	var root struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &root) != nil {
		t.Fatalf("%d %.300s", code, body)
	}
	docs := map[string]*spec3.OpenAPI{}
	for p, e := range root.Paths {
		code, body, hdr := do(t, "GET", srv.URL+e.ServerRelativeURL, "", "", "Accept", "application/json")
		if code != 200 || hdr.Get("Cache-Control") != "public, immutable" || hdr.Get("ETag") == "" {
			t.Fatalf("%s: %d %v", e.ServerRelativeURL, code, hdr)
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		docs[p] = &doc
	}
	for _, st := range reg.Resources() {
		res := st.Resource
		p := "apis/" + res.Group + "/" + res.Version
		if res.Group == "" {
			p = "api/" + res.Version
		}
		doc := docs[p]
		if doc == nil {
			t.Fatalf("no document %s for %s", p, res.Kind)
		}
		found := false
		for _, s := range doc.Components.Schemas {
			list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
			for _, x := range list {
				m := x.(map[string]any)
				found = found || (m["group"] == res.Group && m["version"] == res.Version && m["kind"] == res.Kind)
			}
		}
		if !found {
			t.Errorf("%s/%s %s has no schema", res.Group, res.Version, res.Kind)
		}
	}
	// An old hash redirects to the current document; an unknown path is 404.
	req, _ := http.NewRequest("GET", srv.URL+"/openapi/v3/api/v1?hash=OLD", nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "/openapi/v3/api/v1?hash=") {
		t.Fatalf("old hash: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, _, _ := do(t, "GET", srv.URL+"/openapi/v3/apis/nope/v1", "", ""); code != 404 {
		t.Fatalf("unknown group version: %d", code)
	}
}

// client-go's OpenAPISchema asks for the v2 document in protobuf only.
func TestOpenAPIV2(t *testing.T) {
	srv, _ := newTestServer(t)
	code, body, hdr := do(t, "GET", srv.URL+"/openapi/v2", "", "", "Accept", openAPIV2ProtoAccept)
	if runtime.GOOS == "js" {
		// The browser build has no protobuf form (openapi/v2proto.go).
		if code != 406 {
			t.Fatalf("protobuf in the browser: %d", code)
		}
	} else {
		if code != 200 || hdr.Get("Content-Type") != openAPIV2ProtoType {
			t.Fatalf("%d %s", code, hdr.Get("Content-Type"))
		}
		var doc openapi_v2.Document
		if err := proto.Unmarshal([]byte(body), &doc); err != nil || doc.GetSwagger() != "2.0" {
			t.Fatalf("protobuf: %v %q", err, doc.GetSwagger())
		}
	}
	code, body, hdr = do(t, "GET", srv.URL+"/openapi/v2", "", "", "Accept", "application/json")
	if code != 200 || hdr.Get("Content-Type") != "application/json" || !strings.Contains(body, `"swagger":"2.0"`) {
		t.Fatalf("json: %d %s", code, hdr.Get("Content-Type"))
	}
	if code, _, _ := do(t, "GET", srv.URL+"/openapi/v2", "", "", "Accept", "text/html"); code != 406 {
		t.Fatalf("text/html: %d", code)
	}
	etag := hdr.Get("ETag")
	if code, _, _ := do(t, "GET", srv.URL+"/openapi/v2", "", "", "If-None-Match", etag); code != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", code)
	}
}
