// Package gotemplate is a fork of Go's text/template executor (upstream:
// text/template, Go 1.26.8) for kubectl's -o go-template, go-template-file,
// template and templatefile (upstream kubectl: k8s.io/cli-runtime's
// pkg/printers/template.go). It exists for one reason: download size.
//
// # Why a fork
//
// The Go linker drops the exported methods nobody calls ("dead-code
// elimination"), unless the program can look a method up by a name known
// only at run time. One such call anywhere that is reachable,
// reflect.Value.MethodByName with a non-constant name, and the linker must
// keep every exported method of every type that could be converted to an
// interface, because any of them might be asked for. text/template has that
// call: for {{.Name}} its executor (state.evalField) first looks for a
// method Name on dot, then for a struct field or map key. In kubetab's
// browser build it was the only such call (`go build -ldflags=-dumpdep`
// lists it as the one <ReflectMethod> function), and it cost:
//
//	GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' ./wasm
//
//	                   raw                   gzip -6
//	text/template      63.8 MB (63,781,071)  12.5 MB (12,524,418)
//	this fork          51.9 MB (51,939,101)  10.6 MB (10,643,309)
//
// (measured with Go 1.26.8 when the fork came in) about 1.9 MB less to
// download on every page load, for a feature (calling a method from a
// template) that kubectl cannot use: the data it renders is unstructured
// JSON, map[string]any, []any, string, float64/int64, bool and nil, and none
// of these has a method a template could name.
//
// # Changes from upstream
//
// exec.go, funcs.go, helper.go, option.go and template.go are Go 1.26.8's
// src/text/template files; fmtsort/sort.go is its src/internal/fmtsort/sort.go.
// Each keeps Go's BSD license header; the license is the LICENSE file here.
// Every change but the package name is marked "[kubetab]" in the source,
// and they are all:
//
//   - package template is renamed package gotemplate (in every file).
//   - exec.go: state.evalField no longer takes the address of dot and calls
//     reflect.Value.MethodByName on it (seven lines, now a comment), so {{.Name}} never calls a method: it reads a struct field or a map key
//     exactly as upstream does when there is no method of that name. On a
//     value that has a method Name but no such field or key this is
//     "can't evaluate field Name in type T" where upstream would call it.
//   - exec.go imports the copy in ./fmtsort instead of internal/fmtsort,
//     which only the standard library may import; range over a map still
//     visits the keys in sorted order.
//   - fmtsort/sort.go: a comment saying where it comes from.
//   - doc.go (this file), differential_test.go and LICENSE are new.
//
// Nothing is trimmed, so the rest is upstream's text/template: the same
// parser (the standard text/template/parse, which uses no reflection), the
// same builtin functions (and, or, not, len, index, slice, print, printf,
// println, html, js, urlquery, call, eq, ne, lt, le, gt, ge), the same
// options (missingkey=...) and the same error text; differential_test.go
// checks that, on real objects, against the standard package. See
// text/template's documentation for the language.
//
// To update: copy the five files and sort.go from the new Go version,
// reapply the changes above, run the tests, and check that
//
//	GOOS=js GOARCH=wasm go build -ldflags=-dumpdep -o /tmp/k.wasm ./wasm 2>&1 | grep '<ReflectMethod>'
//
// prints nothing.
package gotemplate
