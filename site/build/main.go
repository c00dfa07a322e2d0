// Command build bundles kubetab's web app (site/src) into site/dist with
// esbuild's Go API, so building the site needs Go and `npm ci`, and no
// JavaScript build tool.
//
//	go run ./site/build [-src site/src] [-out site/dist] [-lessons lessons] [-minify=true]
//	go run ./site/build -finish [-out site/dist] [-brotli 11] [-brotli-large 11]   after the wasm is in: sw.js, .br and .gz copies
//	go run ./site/build -sizes [-out site/dist]   the wire size of a first visit, file by file
//
// Outputs: main.js + main.css (the page, with xterm.js), worker.js (the Web
// Worker that runs kubetab.wasm), and the static files copied from src
// (index.html, favicon.svg), and the course: every lesson under -lessons
// parsed by core/lesson into lessons/index.json and lessons/<slug>.<lang>.json
// (site.LessonFiles); a malformed lesson fails the build with its
// file:line messages. build.sh then adds kubetab.wasm and wasm_exec.js.
// The output directory is emptied first, except for .keep, which lets the site
// package embed an unbuilt site.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/kubetab/kubetab/site"
)

func main() {
	src := flag.String("src", "site/src", "source directory")
	out := flag.String("out", "site/dist", "output directory")
	lessons := flag.String("lessons", "", "the course's folder (default: lessons/ beside site/, ../../lessons from -src)")
	minify := flag.Bool("minify", true, "minify JavaScript and CSS")
	sizes := flag.Bool("sizes", false, "print the wire size of a first visit instead of building")
	finish := flag.Bool("finish", false, "after kubetab.wasm and wasm_exec.js are in -out: write the service worker's build line and the .br and .gz copies")
	brotliQ := flag.Int("brotli", 11, "brotli quality of the .br copies (-finish)")
	brotliLarge := flag.Int("brotli-large", 11, "brotli quality of the .br copies of files over 4 MB (-finish; q11 of kubetab.wasm takes minutes of CPU)")
	flag.Parse()
	if *lessons == "" {
		*lessons = filepath.Join(*src, "..", "..", "lessons")
	}
	run := func() error {
		if err := build(*src, *out, *minify); err != nil {
			return err
		}
		return buildLessons(*lessons, *out)
	}
	if *sizes {
		run = func() error { return printSizes(os.Stdout, *out) }
	}
	if *finish {
		run = func() error { return finishSite(*out, *brotliQ, *brotliLarge) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "site/build:", err)
		os.Exit(1)
	}
}

// static are copied as they are.
var static = []string{"index.html", "favicon.svg", "sw.js", "manifest.webmanifest", "embed-example.html"}

func build(src, out string, minify bool) error {
	if err := emptyDir(out); err != nil {
		return err
	}
	// main.js and main.css get content-hashed names (main-2LQ4GZ7K.js), which
	// kubetab serve caches for a year: index.html, the only file naming them,
	// is rewritten below. worker.js keeps its name (the page starts it by
	// name; it is small and revalidates).
	// The Editor's CodeMirror 6 (views/editor/cm.js, about 115 kB brotli)
	// is its own file, loaded by a <script> when the Editor tab first opens
	// (a global, kubetabCM), so that the page's first paint does not wait
	// for it; main.js learns its hashed name as KUBETAB_CM_URL.
	cmNames, err := bundle(src, out, "views/editor/cm.js", "editor-[name]-[hash]", minify, "kubetabCM", nil)
	if err != nil {
		return err
	}
	cmURL, err := json.Marshal(cmNames["cm.js"])
	if err != nil {
		return err
	}
	mainNames, err := bundle(src, out, "main.js", "[name]-[hash]", minify, "", map[string]string{"KUBETAB_CM_URL": string(cmURL)})
	if err != nil {
		return err
	}
	if _, err := bundle(src, out, "worker.js", "[name]", minify, "", nil); err != nil {
		return err
	}
	// embed.js is loaded by other sites' pages, by its name.
	if _, err := bundle(src, out, "embed.js", "[name]", minify, "", nil); err != nil {
		return err
	}
	for _, name := range static {
		if err := copyFile(filepath.Join(src, name), filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return rewriteIndex(filepath.Join(out, "index.html"), mainNames)
}

// bundle builds one entry point of src into out and returns the names it
// wrote for each kind of output ("main.js" -> "main-2LQ4GZ7K.js", "main.css"
// -> "main-XXXXXXXX.css"), by their unhashed names.
//
// globalName, when set, is the global the IIFE's exports go to; define
// replaces identifiers with JSON values.
func bundle(src, out, entry, entryNames string, minify bool, globalName string, define map[string]string) (map[string]string, error) {
	result := api.Build(api.BuildOptions{
		GlobalName:        globalName,
		Define:            define,
		EntryPoints:       []string{filepath.Join(src, entry)},
		EntryNames:        entryNames,
		Metafile:          true,
		Outdir:            out,
		Bundle:            true,
		Write:             true,
		Format:            api.FormatIIFE, // worker.js is a classic worker (importScripts)
		Target:            api.ES2022,
		Platform:          api.PlatformBrowser,
		MinifyWhitespace:  minify,
		MinifyIdentifiers: minify,
		MinifySyntax:      minify,
		Sourcemap:         api.SourceMapLinked,
		LegalComments:     api.LegalCommentsLinked,
		NodePaths:         []string{filepath.Join(filepath.Dir(src), "node_modules")},
		LogLevel:          api.LogLevelWarning,
	})
	if len(result.Errors) > 0 {
		return nil, fmt.Errorf("esbuild: %d errors (see above)", len(result.Errors))
	}
	var meta struct {
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(result.Metafile), &meta); err != nil {
		return nil, fmt.Errorf("esbuild metafile: %w", err)
	}
	names := map[string]string{}
	base := strings.TrimSuffix(filepath.Base(entry), ".js")
	for outPath := range meta.Outputs {
		name := filepath.Base(outPath)
		ext := filepath.Ext(name)
		if ext != ".js" && ext != ".css" {
			continue
		}
		names[base+ext] = name
	}
	return names, nil
}

// rewriteIndex points index.html's href="main.css" and src="main.js" at
// their hashed names; a reference it cannot find fails the build.
func rewriteIndex(index string, names map[string]string) error {
	data, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	s := string(data)
	for _, plain := range []string{"main.js", "main.css"} {
		hashed, ok := names[plain]
		if !ok {
			return fmt.Errorf("esbuild wrote no %s", plain)
		}
		attr := `src="` + plain + `"`
		if strings.HasSuffix(plain, ".css") {
			attr = `href="` + plain + `"`
		}
		if !strings.Contains(s, attr) {
			return fmt.Errorf("%s: no %s to point at %s", index, attr, hashed)
		}
		s = strings.ReplaceAll(s, attr, strings.Replace(attr, plain, hashed, 1))
	}
	return os.WriteFile(index, []byte(s), 0o644)
}

// buildLessons writes the course's JSON into out/lessons.
func buildLessons(dir, out string) error {
	files, err := site.LessonFiles(os.DirFS(dir), ".")
	if err != nil {
		return fmt.Errorf("lessons in %s:\n%w", dir, err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		to := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, files[name], 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("site/build: %d lesson files from %s\n", len(names)-1, dir)
	return nil
}

func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == ".keep" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	outFile, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(outFile, in); err != nil {
		outFile.Close()
		return err
	}
	return outFile.Close()
}

// finishSite completes a built site in dir once build.sh has added
// kubetab.wasm and wasm_exec.js: sw.js learns the build's version and files
// (site.WriteServiceWorker), then every compressible file gets a gzip -9
// copy (name.gz) and a brotli copy (name.br, with Node's zlib) beside it,
// which kubetab serve sends to browsers that accept them and a static host
// can send as they are.
func finishSite(dir string, brotliQuality, largeQuality int) error {
	version, err := site.WriteServiceWorker(dir)
	if err != nil {
		return err
	}
	names, err := site.AppFiles(os.DirFS(dir))
	if err != nil {
		return err
	}
	names = append(names, "sw.js")
	var paths []string
	for _, name := range names {
		if !compressible(name) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if upToDate(p) {
			continue
		}
		paths = append(paths, p)
		if err := writeGzip(p); err != nil {
			return err
		}
	}
	if len(paths) == 0 {
		return nil
	}
	node := exec.Command("node", append([]string{filepath.Join(buildDir(), "brotli.mjs"), strconv.Itoa(brotliQuality), strconv.Itoa(largeQuality)}, paths...)...)
	node.Stdout, node.Stderr = os.Stdout, os.Stderr
	if err := node.Run(); err != nil {
		return fmt.Errorf("brotli (node): %w", err)
	}
	fmt.Printf("site/build: build %s, %d files, .gz and .br (q%d, q%d over 4 MB) beside %d of them\n", version, len(names), brotliQuality, largeQuality, len(paths))
	return nil
}

// upToDate reports whether p's .gz and .br copies are newer than p (a
// second -finish on the same build recompresses only what changed).
func upToDate(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	for _, suffix := range []string{".gz", ".br"} {
		ci, err := os.Stat(p + suffix)
		if err != nil || !ci.ModTime().After(fi.ModTime()) {
			return false
		}
	}
	return true
}

// buildDir is this command's source folder (brotli.mjs lives there).
func buildDir() string {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		return filepath.Dir(file)
	}
	return filepath.Join("site", "build")
}

// compressible: text and wasm; images would not shrink.
func compressible(name string) bool {
	switch filepath.Ext(name) {
	case ".wasm", ".js", ".css", ".html", ".json", ".svg", ".webmanifest":
		return true
	}
	return false
}

func writeGzip(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(p+".gz", buf.Bytes(), 0o644)
}

// printSizes prints what a first visit costs on the wire: every file the
// page, its worker and its service worker fetch (site.AppFiles and sw.js),
// raw, as gzip -9 and as brotli (the .gz and .br copies -finish wrote), and
// each part's share of the brotli total. The course's lesson files are one
// row: the service worker fetches them all on the first visit.
func printSizes(w io.Writer, dir string) error {
	names, err := site.AppFiles(os.DirFS(dir))
	if err != nil {
		return err
	}
	names = append(names, "sw.js")
	type row struct {
		name        string
		raw, gz, br int
	}
	var rows []*row
	byName := map[string]*row{}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		gz, br := len(data), len(data)
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)) + ".gz"); err == nil {
			gz = len(b)
		}
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)) + ".br"); err == nil {
			br = len(b)
		}
		key := name
		if strings.HasPrefix(name, "lessons/") {
			key = "lessons/*.json"
		}
		r := byName[key]
		if r == nil {
			r = &row{name: key}
			byName[key] = r
			rows = append(rows, r)
		}
		r.raw += len(data)
		r.gz += gz
		r.br += br
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].br > rows[j].br })
	total := row{name: "first visit"}
	for _, r := range rows {
		total.raw += r.raw
		total.gz += r.gz
		total.br += r.br
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\traw\tgzip -9\tbrotli\tshare\t")
	for _, r := range append(rows, &total) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f %%\t\n", r.name, mb(r.raw), mb(r.gz), mb(r.br), 100*float64(r.br)/float64(total.br))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	const budget = 4 << 20
	verdict := "within"
	if total.br > budget {
		verdict = "over"
	}
	fmt.Fprintf(w, "first visit: %s brotli on the wire, %s the 4 MB budget (issue 12)\n", mb(total.br), verdict)
	return nil
}

type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}

func mb(n int) string {
	if n < 100*1024 {
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.2f MB", float64(n)/1024/1024)
}
