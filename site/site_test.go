package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func builtFS() fstest.MapFS {
	return fstest.MapFS{
		".keep":        {},
		"index.html":   {Data: []byte("<!doctype html><title>kubetab</title>")},
		"worker.js":    {Data: []byte("importScripts('wasm_exec.js')")},
		"wasm_exec.js": {Data: []byte("// Go")},
		"kubetab.wasm": {Data: bytes.Repeat([]byte("\x00asm"), 4096)},
		"main.css":     {Data: []byte("body{}")},
	}
}

func get(t *testing.T, h http.Handler, target string, header ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func TestHandler(t *testing.T) {
	h := Handler(builtFS())
	tests := []struct {
		target     string
		wantStatus int
		wantType   string
	}{
		{"/", 200, "text/html; charset=utf-8"},
		{"/index.html", 200, "text/html; charset=utf-8"},
		{"/kubetab.wasm", 200, "application/wasm"},
		{"/worker.js", 200, "text/javascript; charset=utf-8"},
		{"/main.css", 200, "text/css; charset=utf-8"},
		{"/missing.js", 404, ""},
		{"/.keep", 404, ""},
		{"/../site.go", 404, ""},  // cleaned to "/site.go", which is not in the site
		{"/favicon.ico", 301, ""}, // to favicon.svg (see TestFaviconICO)
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res := get(t, h, tt.target)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d", res.StatusCode, tt.wantStatus)
			}
			if tt.wantType != "" && res.Header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", res.Header.Get("Content-Type"), tt.wantType)
			}
			if res.StatusCode == 200 && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("no same-origin Content-Security-Policy: %q", res.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := Handler(builtFS())
	res := get(t, h, "/index.html")
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, res.Header.Get("Cache-Control"))
	}
	if res := get(t, h, "/index.html", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation status = %d, want 304", res.StatusCode)
	}
}

// TestHandlerGzip waits (with a deadline) for the background compression of
// kubetab.wasm, then checks that the compressed response decodes to the file
// and announces the decoded size for the progress bar.
func TestHandlerGzip(t *testing.T) {
	fsys := builtFS()
	h := Handler(fsys)
	deadline := time.Now().Add(10 * time.Second)
	var res *http.Response
	for {
		res = get(t, h, "/kubetab.wasm", "Accept-Encoding", "gzip, br")
		if res.Header.Get("Content-Encoding") == "gzip" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("kubetab.wasm was never served compressed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, fsys["kubetab.wasm"].Data) {
		t.Error("decoded body differs from the file")
	}
	if res.Header.Get("X-Decoded-Content-Length") != "16384" {
		t.Errorf("X-Decoded-Content-Length = %q, want 16384", res.Header.Get("X-Decoded-Content-Length"))
	}
	if plain := get(t, h, "/kubetab.wasm"); plain.Header.Get("Content-Encoding") != "" {
		t.Error("served gzip to a client that did not ask for it")
	}
}

func TestNotBuilt(t *testing.T) {
	h := Handler(fstest.MapFS{".keep": {}})
	res := get(t, h, "/")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "./build.sh build") {
		t.Errorf("unbuilt site: %d %q", res.StatusCode, body)
	}
}

// Every file may be framed by any page (the embedding of issue 12) and
// sends no referrer.
func TestHandlerEmbeddingHeaders(t *testing.T) {
	h := Handler(builtFS())
	for _, target := range []string{"/", "/kubetab.wasm", "/worker.js"} {
		res := get(t, h, target)
		if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q", target, got)
		}
		if got := res.Header.Get("Content-Security-Policy"); !strings.HasSuffix(got, "; frame-ancestors *") {
			t.Errorf("%s: Content-Security-Policy %q has no frame-ancestors *", target, got)
		}
	}
}

// A browser's own request for /favicon.ico (on a page that names no icon)
// goes to the site's favicon.svg, under whatever path the site is served.
func TestFaviconICO(t *testing.T) {
	h := Handler(builtFS())
	res := get(t, h, "/favicon.ico")
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/favicon.svg" {
		t.Errorf("/favicon.ico: %d to %q, want 301 to /favicon.svg", res.StatusCode, res.Header.Get("Location"))
	}
	withICO := builtFS()
	withICO["favicon.ico"] = &fstest.MapFile{Data: []byte("\x00\x00\x01\x00")}
	if res := get(t, Handler(withICO), "/favicon.ico"); res.StatusCode != 200 {
		t.Errorf("a site with its own favicon.ico: %d, want 200", res.StatusCode)
	}
}
