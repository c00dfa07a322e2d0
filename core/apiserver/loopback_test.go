package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A forged Host (DNS rebinding) and a body without a Content-Type from a
// web page (a cross-origin "simple" request) are refused before the API
// sees them; what kubectl sends passes, a body without a Content-Type
// included (kubectl create --raw sends none; it is read as JSON, as
// upstream).
func TestLoopbackOnly(t *testing.T) {
	srv, reg := newTestServer(t)
	h := LoopbackOnly(srv.Config.Handler, "127.0.0.1:6444")
	pods := "/api/v1/namespaces/default/pods"
	cases := []struct {
		name, method, host, ctype, body string
		code                            int
		want                            string
		origin                          string // the Origin header a browser adds
	}{
		{"the served address", "GET", "127.0.0.1:6444", "", "", 200, `"kind":"PodList"`, ""},
		{"another loopback IP", "GET", "127.0.0.2:6444", "", "", 200, `"kind":"PodList"`, ""},
		{"IPv6 loopback", "GET", "[::1]:6444", "", "", 200, `"kind":"PodList"`, ""},
		{"localhost", "GET", "localhost:6444", "", "", 200, `"kind":"PodList"`, ""},
		{"a .localhost name", "GET", "kubetab.localhost", "", "", 200, `"kind":"PodList"`, ""},
		{"LOCALHOST.", "GET", "LOCALHOST.:6444", "", "", 200, `"kind":"PodList"`, ""},
		{"create with JSON", "POST", "127.0.0.1:6444", "application/json", podJSON, 201, `"name":"web"`, ""},
		{"rebound name", "GET", "evil.example:6444", "", "", 403, `forbidden: the Host \"evil.example:6444\" is neither 127.0.0.1:6444 nor a loopback name`, ""},
		{"rebound name, write", "POST", "evil.example", "application/json", podJSON, 403, `"reason":"Forbidden"`, ""},
		{"a LAN address", "GET", "192.168.1.20:6444", "", "", 403, `"code":403`, ""},
		{"a name that only starts like localhost", "GET", "localhost.evil.example", "", "", 403, `"code":403`, ""},
		{"no Host", "GET", "", "", "", 403, `"code":403`, ""},
		{"a page's body without a Content-Type", "POST", "127.0.0.1:6444", "", strings.Replace(podJSON, `"web"`, `"other"`, 1), 415,
			`"message":"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"UnsupportedMediaType"`, "https://evil.example"},
		{"a page's body without a Content-Type, Origin null", "POST", "127.0.0.1:6444", "", strings.Replace(podJSON, `"web"`, `"other"`, 1), 415, `"reason":"UnsupportedMediaType"`, "null"},
		{"kubectl create --raw: a body without a Content-Type", "POST", "127.0.0.1:6444", "", strings.Replace(podJSON, `"web"`, `"raw"`, 1), 201, `"name":"raw"`, ""},
		{"text/plain", "POST", "127.0.0.1:6444", "text/plain", strings.Replace(podJSON, `"web"`, `"other"`, 1), 415, `"reason":"UnsupportedMediaType"`, ""},
		{"form", "POST", "127.0.0.1:6444", "application/x-www-form-urlencoded", strings.Replace(podJSON, `"web"`, `"other"`, 1), 415, `"reason":"UnsupportedMediaType"`, ""},
		{"delete without a body", "DELETE", "127.0.0.1:6444", "", "", 200, `"name":"web"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.KV().Revision()
			var req *http.Request
			if tc.body == "" {
				req = httptest.NewRequest(tc.method, pods, nil)
			} else {
				req = httptest.NewRequest(tc.method, pods, strings.NewReader(tc.body))
			}
			if tc.method == "DELETE" {
				req.URL.Path += "/web"
			}
			req.Host = tc.host
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%d %s; want %d containing %s", rec.Code, rec.Body, tc.code, tc.want)
			}
			if tc.code >= 400 && reg.KV().Revision() != before {
				t.Fatal("a refused request wrote")
			}
		})
	}
}
