// Package site is kubetab's web app: the page with the console and the live
// cluster panel, and the Web Worker that runs the control plane.
//
//	site/src/     the sources (JavaScript, CSS, HTML), see src/main.js
//	site/build/   bundles src/ into dist/ with esbuild's Go API
//	site/dist/    the built site plus kubetab.wasm and wasm_exec.js (build.sh)
//
// This package embeds dist/ so that one native binary (`kubetab serve`) can
// serve the whole site on a machine with no network, the way a classroom
// kiosk runs it. A checkout that has not been built yet embeds only
// dist/.keep; Built reports that, and Handler then answers with a page that
// says how to build.
package site

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed all:dist
var embedded embed.FS

// FS returns the built site (the contents of dist/).
func FS() fs.FS {
	sub, err := fs.Sub(embedded, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path; fs.Sub fails only on invalid ones
	}
	return sub
}

// Built reports whether the embedded site was built (has index.html and
// kubetab.wasm).
func Built() bool {
	return BuiltFS(FS())
}

// BuiltFS reports whether fsys holds a built site.
func BuiltFS(fsys fs.FS) bool {
	for _, name := range []string{"index.html", "kubetab.wasm", "wasm_exec.js", "worker.js"} {
		if _, err := fs.Stat(fsys, name); err != nil {
			return false
		}
	}
	return true
}

// contentTypes are set explicitly rather than from the system's mime.types,
// which differ between machines. The browser refuses to stream-compile wasm
// served without application/wasm.
var contentTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".wasm":        "application/wasm",
	".svg":         "image/svg+xml",
	".map":         "application/json",
	".json":        "application/json",
	".txt":         "text/plain; charset=utf-8",
	".png":         "image/png",
	".md":          "text/markdown; charset=utf-8",
	".webmanifest": "application/manifest+json",
}

// ContentType returns the Content-Type for a file name.
func ContentType(name string) string {
	if ct, ok := contentTypes[path.Ext(name)]; ok {
		return ct
	}
	return "application/octet-stream"
}

// csp keeps every request on the page's own origin: scripts, styles, workers,
// fetches and images come from 'self' only. 'wasm-unsafe-eval' allows
// compiling WebAssembly; 'unsafe-inline' styles are needed by xterm.js, which
// sizes its rows with <style> elements.
const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; worker-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; " +
	frameAncestors

// frameAncestors lets any page embed kubetab in an <iframe>: that is the
// embedding the delivery issue (12) describes, a lesson author's own blog
// post or course site with a live console. The page holds no session and no
// secret (the cluster runs in the visitor's own tab), so a page that frames
// it has nothing to take by clickjacking. The policy is explicit so that a
// reader sees the choice; a host that wants less sends its own.
const frameAncestors = "frame-ancestors *"

// referrerPolicy: links out of the page (to the Kubernetes documentation)
// do not tell the other site which lesson the learner was on.
const referrerPolicy = "no-referrer"

// Handler serves fsys (usually FS()). Files are read once and kept in
// memory, and sent the way the browser asks (Accept-Encoding): brotli or
// gzip when fsys holds a precompressed copy beside the file (name.br,
// name.gz, which site/build -finish writes), otherwise identity, and for
// kubetab.wasm without a copy, gzip made in the background once that is
// done (a classroom of kiosks downloads a quarter of the bytes). A
// compressed answer carries X-Decoded-Content-Length, the real size, for
// the page's progress bar. Every answer has an ETag (one per encoding) and
// Vary: Accept-Encoding; content-hashed names (main-2LQ4GZ7K.js) are cached
// for a year as immutable, every other file revalidates (no-cache), so a
// reload costs a 304.
func Handler(fsys fs.FS) http.Handler {
	if !BuiltFS(fsys) {
		return notBuilt{}
	}
	h := &handler{fsys: fsys, files: map[string]*file{}}
	if f, err := h.load("kubetab.wasm"); err == nil && f.encoded("gzip") == nil {
		go f.compress()
	}
	return h
}

type handler struct {
	fsys fs.FS

	mu    sync.Mutex // guards files
	files map[string]*file
}

type file struct {
	name string
	data []byte
	etag string

	mu  sync.Mutex        // guards enc
	enc map[string][]byte // Content-Encoding ("br", "gzip") to the encoded bytes
}

// encodings are the Content-Encodings the handler sends, best first, and
// the suffix of their precompressed copies.
var encodings = []struct{ name, suffix string }{{"br", ".br"}, {"gzip", ".gz"}}

func (f *file) compress() {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	zw.Write(f.data)
	zw.Close()
	f.mu.Lock()
	f.enc["gzip"] = buf.Bytes()
	f.mu.Unlock()
}

func (f *file) encoded(enc string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enc[enc]
}

func (h *handler) load(name string) (*file, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.files[name]; ok {
		return f, nil
	}
	data, err := fs.ReadFile(h.fsys, name)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	f := &file{name: name, data: data, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, enc: map[string][]byte{}}
	for _, e := range encodings {
		if b, err := fs.ReadFile(h.fsys, name+e.suffix); err == nil {
			f.enc[e.name] = b
		}
	}
	h.files[name] = f
	return f, nil
}

// hashedName matches the names esbuild gives with [hash] in EntryNames
// (site/build): a dash and eight base32 characters before the extension.
var hashedName = regexp.MustCompile(`-[A-Z2-7]{8}\.[a-z]+$`)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if name == ".keep" || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	f, err := h.load(name)
	if err != nil && name == "favicon.ico" {
		// Browsers ask for /favicon.ico on pages that name no icon (a
		// file opened by itself, an old bookmark): send them the site's.
		http.Redirect(w, r, "favicon.svg", http.StatusMovedPermanently)
		return
	}
	if err != nil {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", ContentType(name))
	if hashedName.MatchString(name) {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hdr.Set("Cache-Control", "no-cache")
	}
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("Referrer-Policy", referrerPolicy)
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	if name == "embed.js" {
		// Loaded by other sites' pages (embed.js turns their code blocks
		// into Run buttons for an embedded kubetab).
		hdr.Set("Cross-Origin-Resource-Policy", "cross-origin")
	} else {
		hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	}
	hdr.Set("ETag", f.etag)
	body := f.data
	if compressible(name) {
		hdr.Set("Vary", "Accept-Encoding")
		if enc := negotiate(r, f); enc != "" {
			hdr.Set("ETag", strings.TrimSuffix(f.etag, `"`)+"-"+enc+`"`)
			hdr.Set("Content-Encoding", enc)
			hdr.Set("X-Decoded-Content-Length", strconv.Itoa(len(f.data)))
			body = f.encoded(enc)
		}
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}

// compressible reports whether name is text or wasm, which compress well;
// images and fonts already are compressed (favicon.svg is text).
func compressible(name string) bool {
	switch path.Ext(name) {
	case ".wasm", ".js", ".css", ".html", ".json", ".svg", ".webmanifest", ".txt", ".map", ".md":
		return true
	}
	return false
}

// negotiate picks the Content-Encoding for r among those f has: the first
// of encodings that the request accepts (q > 0), or "" for identity. A
// Range request gets identity: ranges count the file's own bytes.
func negotiate(r *http.Request, f *file) string {
	if r.Header.Get("Range") != "" {
		return ""
	}
	accepted := map[string]bool{}
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		enc = strings.ToLower(strings.TrimSpace(enc))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = x
				}
			}
		}
		accepted[enc] = q > 0
	}
	for _, e := range encodings {
		if accepted[e.name] && f.encoded(e.name) != nil {
			return e.name
		}
	}
	return ""
}

// notBuilt answers every request of an unbuilt binary.
type notBuilt struct{}

// NotBuiltMessage says what to do when the site was not built into the binary.
const NotBuiltMessage = "kubetab: this binary was built without the web app (site/dist held no built site when it was compiled). Run ./build.sh build, which bundles the site and the wasm, then builds bin/kubetab."

func (notBuilt) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(NotBuiltMessage + "\n"))
}
