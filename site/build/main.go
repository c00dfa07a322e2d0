// Command build bundles kubetab's web app (site/src) into site/dist with
// esbuild's Go API, so building the site needs Go and `npm ci`, and no
// JavaScript build tool.
//
//	go run ./site/build [-src site/src] [-out site/dist] [-lessons lessons] [-minify=true]
//	go run ./site/build -sizes [-out site/dist]   print raw, gzip and brotli sizes
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
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/andybalholm/brotli"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/kubetab/kubetab/site"
)

func main() {
	src := flag.String("src", "site/src", "source directory")
	out := flag.String("out", "site/dist", "output directory")
	lessons := flag.String("lessons", "", "the course's folder (default: lessons/ beside site/, ../../lessons from -src)")
	minify := flag.Bool("minify", true, "minify JavaScript and CSS")
	sizes := flag.Bool("sizes", false, "print the sizes of the built files instead of building")
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
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "site/build:", err)
		os.Exit(1)
	}
}

// static are copied as they are.
var static = []string{"index.html", "favicon.svg"}

func build(src, out string, minify bool) error {
	if err := emptyDir(out); err != nil {
		return err
	}
	result := api.Build(api.BuildOptions{
		EntryPoints: []string{
			filepath.Join(src, "main.js"),
			filepath.Join(src, "worker.js"),
		},
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
		return fmt.Errorf("esbuild: %d errors (see above)", len(result.Errors))
	}
	for _, name := range static {
		if err := copyFile(filepath.Join(src, name), filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return nil
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

// printSizes prints what each file costs a visitor: raw, gzip (what
// `kubetab serve` sends) and brotli (what a static host can precompress).
func printSizes(w io.Writer, dir string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\traw\tgzip -6\tbrotli -9\t")
	for _, name := range []string{"kubetab.wasm", "main.js", "main.css", "worker.js", "wasm_exec.js"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		gz := countingWriter{}
		zw, _ := gzip.NewWriterLevel(&gz, 6)
		zw.Write(data)
		zw.Close()
		br := countingWriter{}
		bw := brotli.NewWriterLevel(&br, 9)
		bw.Write(data)
		bw.Close()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, mb(len(data)), mb(gz.n), mb(br.n))
	}
	return tw.Flush()
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
