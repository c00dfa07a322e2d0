// Command build bundles kubetab's web app (site/src) into site/dist with
// esbuild's Go API, so building the site needs Go and `npm ci`, and no
// JavaScript build tool.
//
//	go run ./site/build [-src site/src] [-out site/dist] [-minify=true]
//
// Outputs: main.js + main.css (the page, with xterm.js), worker.js (the Web
// Worker that runs kubetab.wasm), and the static files copied from src
// (index.html, favicon.svg). build.sh then adds kubetab.wasm and wasm_exec.js.
// The output directory is emptied first, except for .keep, which lets the site
// package embed an unbuilt site.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	src := flag.String("src", "site/src", "source directory")
	out := flag.String("out", "site/dist", "output directory")
	minify := flag.Bool("minify", true, "minify JavaScript and CSS")
	flag.Parse()
	if err := build(*src, *out, *minify); err != nil {
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
