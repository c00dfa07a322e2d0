package site

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
)

// precompressedFS is a built site with the .br and .gz copies that
// site/build -finish writes beside kubetab.wasm and a hashed bundle.
func precompressedFS(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := builtFS()
	fsys["main-2LQ4GZ7K.js"] = &fstest.MapFile{Data: bytes.Repeat([]byte("console.log('kubetab');"), 200)}
	for _, name := range []string{"kubetab.wasm", "main-2LQ4GZ7K.js"} {
		data := fsys[name].Data
		var br, gz bytes.Buffer
		bw := brotli.NewWriterLevel(&br, 5)
		bw.Write(data)
		bw.Close()
		zw, _ := gzip.NewWriterLevel(&gz, 9)
		zw.Write(data)
		zw.Close()
		fsys[name+".br"] = &fstest.MapFile{Data: br.Bytes()}
		fsys[name+".gz"] = &fstest.MapFile{Data: gz.Bytes()}
	}
	return fsys
}

// TestHandlerEncodings: the precompressed copies go to the browsers that
// ask for them, brotli first, each with its own ETag, Vary and the decoded
// size for the progress bar; the bytes decode to the file.
func TestHandlerEncodings(t *testing.T) {
	fsys := precompressedFS(t)
	h := Handler(fsys)
	tests := []struct {
		target, accept, wantEnc string
	}{
		{"/kubetab.wasm", "gzip, deflate, br, zstd", "br"}, // what Chromium sends
		{"/kubetab.wasm", "br", "br"},
		{"/kubetab.wasm", "gzip", "gzip"},
		{"/kubetab.wasm", "br;q=0, gzip", "gzip"},
		{"/kubetab.wasm", "BR ; q=0.5", "br"},
		{"/kubetab.wasm", "", ""},
		{"/kubetab.wasm", "identity", ""},
		{"/kubetab.wasm", "br;q=0,gzip;q=0", ""},
		{"/main-2LQ4GZ7K.js", "br", "br"},
		{"/index.html", "br, gzip", ""}, // no copy: identity
	}
	etags := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.target+" "+tt.accept, func(t *testing.T) {
			res := get(t, h, tt.target, "Accept-Encoding", tt.accept)
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			if got := res.Header.Get("Content-Encoding"); got != tt.wantEnc {
				t.Fatalf("Content-Encoding %q, want %q", got, tt.wantEnc)
			}
			if res.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("Vary %q", res.Header.Get("Vary"))
			}
			var body io.Reader = res.Body
			switch tt.wantEnc {
			case "br":
				body = brotli.NewReader(res.Body)
			case "gzip":
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			got, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			want := fsys[strings.TrimPrefix(tt.target, "/")].Data
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes differ from the file's %d", len(got), len(want))
			}
			if tt.wantEnc != "" {
				if got := res.Header.Get("X-Decoded-Content-Length"); got != itoa(len(want)) {
					t.Errorf("X-Decoded-Content-Length %q, want %d", got, len(want))
				}
			}
			etag := res.Header.Get("ETag")
			if prev, ok := etags[tt.target+tt.wantEnc]; ok && prev != etag {
				t.Errorf("ETag %q, earlier %q for the same encoding", etag, prev)
			}
			etags[tt.target+tt.wantEnc] = etag
			for enc, other := range etags {
				if strings.HasPrefix(enc, tt.target) && enc != tt.target+tt.wantEnc && other == etag {
					t.Errorf("ETag %q is also %s's", etag, enc)
				}
			}
			// A revalidation with this encoding's ETag answers 304.
			if res := get(t, h, tt.target, "Accept-Encoding", tt.accept, "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match %s: status %d, want 304", etag, res.StatusCode)
			}
		})
	}
}

// TestHandlerCacheControl: hashed names are immutable for a year, the rest
// revalidate; a Range request is answered from the plain bytes.
func TestHandlerCacheControl(t *testing.T) {
	h := Handler(precompressedFS(t))
	for target, want := range map[string]string{
		"/main-2LQ4GZ7K.js": "public, max-age=31536000, immutable",
		"/kubetab.wasm":     "no-cache",
		"/index.html":       "no-cache",
		"/worker.js":        "no-cache",
	} {
		if got := get(t, h, target).Header.Get("Cache-Control"); got != want {
			t.Errorf("%s: Cache-Control %q, want %q", target, got, want)
		}
	}
	res := get(t, h, "/kubetab.wasm", "Accept-Encoding", "br", "Range", "bytes=0-3")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusPartialContent || res.Header.Get("Content-Encoding") != "" || string(body) != "\x00asm" {
		t.Errorf("Range: %d %q %q", res.StatusCode, res.Header.Get("Content-Encoding"), body)
	}
}

// TestWriteServiceWorker: sw.js's first line names every app file and a
// version that changes with any byte of any file.
func TestWriteServiceWorker(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sw.js", "const BUILD = { version: 'unbuilt', files: [] };\nself.x = 1;\n")
	write("index.html", "<!doctype html>")
	write("main-2LQ4GZ7K.js", "1")
	write("main-2LQ4GZ7K.js.map", "{}")
	write("main-2LQ4GZ7K.js.gz", "z")
	write("main-2LQ4GZ7K.js.LEGAL.txt", "MIT")
	write("lessons/index.json", "{}")
	write(".keep", "")
	v1, err := WriteServiceWorker(dir)
	if err != nil {
		t.Fatal(err)
	}
	sw, _ := os.ReadFile(filepath.Join(dir, "sw.js"))
	first, rest, _ := strings.Cut(string(sw), "\n")
	wantFirst := `const BUILD = {"version":"` + v1 + `","files":["./","lessons/index.json","main-2LQ4GZ7K.js"]}; // written by site/build -finish (site.WriteServiceWorker)`
	if first != wantFirst || rest != "self.x = 1;\n" {
		t.Fatalf("sw.js:\n%s\nwant first line\n%s", sw, wantFirst)
	}
	if v, _ := WriteServiceWorker(dir); v != v1 {
		t.Errorf("rewriting an unchanged build changed the version: %s, then %s", v1, v)
	}
	write("lessons/index.json", "{ }")
	if v, _ := WriteServiceWorker(dir); v == v1 {
		t.Error("a changed file kept the version")
	}
	write("sw.js", "self.x = 1;\n")
	if _, err := WriteServiceWorker(dir); err == nil {
		t.Error("an sw.js without the BUILD line was accepted")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestWithLessonsServiceWorker: serve --lessons serves an sw.js that names
// its lessons and has a version of its own (so no browser keeps serving the
// embedded course from its cache), and no stale compressed copy of sw.js.
func TestWithLessonsServiceWorker(t *testing.T) {
	base := builtFS()
	base["sw.js"] = &fstest.MapFile{Data: []byte(`const BUILD = {"version":"abc","files":["./","lessons/index.json","lessons/01-a.en.json","worker.js"]}; // written by site/build -finish (site.WriteServiceWorker)` + "\nself.x = 1;\n")}
	base["sw.js.br"] = &fstest.MapFile{Data: []byte("stale")}
	fsys := WithLessons(base, map[string][]byte{"lessons/index.json": []byte("{}"), "lessons/09-b.ja.json": []byte("{}")})
	sw, err := fs.ReadFile(fsys, "sw.js")
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(sw), "\n")
	if !strings.HasPrefix(first, `const BUILD = {"version":"abc-`) ||
		!strings.Contains(first, `"files":["./","lessons/09-b.ja.json","lessons/index.json","worker.js"]`) || rest != "self.x = 1;\n" {
		t.Errorf("sw.js with lessons:\n%s", sw)
	}
	if _, err := fs.Stat(fsys, "sw.js.br"); err == nil {
		t.Error("the base's sw.js.br shows through")
	}
	if res := get(t, Handler(fsys), "/sw.js", "Accept-Encoding", "br"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("sw.js sent as %q", res.Header.Get("Content-Encoding"))
	}
}
