package site

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A built site is two things to a visitor: files to download once (their
// wire size is what `./build.sh bench` prints) and an app that must keep
// working with no network (the service worker, src/sw.js). This file holds
// what both need: which files make up the app, and the service worker's
// first line, which names them and the build.

// AppFiles returns the files of the built site in dir that the app needs at
// run time, sorted: everything except precompressed copies (.br, .gz),
// source maps and license notes (a visitor's browser never asks for them),
// .keep, and the service worker itself.
func AppFiles(dir fs.FS) ([]string, error) {
	var names []string
	err := fs.WalkDir(dir, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		base := path.Base(name)
		switch {
		case base == ".keep", name == "sw.js",
			strings.HasSuffix(base, ".br"), strings.HasSuffix(base, ".gz"),
			strings.HasSuffix(base, ".map"), strings.HasSuffix(base, ".LEGAL.txt"):
			return nil
		}
		names = append(names, name)
		return nil
	})
	sort.Strings(names)
	return names, err
}

// swBuildLine is the first line of sw.js: the build's version and files.
const swBuildPrefix = "const BUILD = "

// WriteServiceWorker rewrites the first line of dir/sw.js with the build:
// the version (a hash of every app file's name and bytes, so any change
// makes a new version and the browser installs the new service worker) and
// the files to cache, relative to the site's root; index.html is cached as
// "./" (the page a visitor opens). It returns the version.
func WriteServiceWorker(dir string) (string, error) {
	swPath := filepath.Join(dir, "sw.js")
	sw, err := os.ReadFile(swPath)
	if err != nil {
		return "", err
	}
	first, rest, _ := strings.Cut(string(sw), "\n")
	if !strings.HasPrefix(first, swBuildPrefix) {
		return "", fmt.Errorf("%s: the first line must start with %q", swPath, swBuildPrefix)
	}
	names, err := AppFiles(os.DirFS(dir))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	urls := make([]string, 0, len(names))
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
		if name == "index.html" {
			name = "./"
		}
		urls = append(urls, name)
	}
	build := swBuild{Version: hex.EncodeToString(h.Sum(nil)[:8]), Files: urls}
	line, err := build.line()
	if err != nil {
		return "", err
	}
	return build.Version, os.WriteFile(swPath, []byte(line+"\n"+rest), 0o644)
}

// swBuild is the object on sw.js's first line.
type swBuild struct {
	Version string   `json:"version"`
	Files   []string `json:"files"`
}

func (b swBuild) line() (string, error) {
	js, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	return swBuildPrefix + string(js) + "; // written by site/build -finish (site.WriteServiceWorker)", nil
}
