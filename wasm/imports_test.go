package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSyscallJSStaysInOneFile enforces the house rule: core/ is a plain Go
// library (no syscall/js, so its tests run natively and under -race), and in
// wasm/ only wasm/worker/rawbody.go touches syscall/js; everything else goes
// through hack-pad/safejs.
func TestSyscallJSStaysInOneFile(t *testing.T) {
	allowed := map[string]bool{filepath.Join("worker", "rawbody.go"): true}
	for _, root := range []string{".", filepath.Join("..", "core")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == "syscall/js" && !allowed[path] {
					t.Errorf("%s imports syscall/js; use github.com/hack-pad/safejs (only wasm/worker/rawbody.go may import syscall/js)", path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
