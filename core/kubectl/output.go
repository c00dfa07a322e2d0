package kubectl

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	// gotemplate is text/template without method calls, which keeps the
	// browser build 1.9 MB (gzip) smaller; see its package comment.
	"github.com/kubetab/kubetab/core/kubectl/internal/gotemplate"
)

// getOutputFormats is what `kubectl get -o` accepts, as upstream lists it.
var getOutputFormats = []string{"custom-columns", "custom-columns-file", "go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "name", "template", "templatefile", "wide", "yaml"}

// objectOutputFormats is what commands that print the object they wrote
// accept (create, label, annotate, patch ...).
var objectOutputFormats = []string{"go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "name", "template", "templatefile", "yaml"}

// checkOutputFormat fails with upstream's NoCompatiblePrinterError wording
// when -o names no allowed format ("jsonpath=..." is format "jsonpath").
func checkOutputFormat(output string, allowed ...string) error {
	if output == "" {
		return nil
	}
	name, _, hasArg := strings.Cut(output, "=")
	if contains(allowed, name) && (!hasArg || templateFormats[name]) {
		return nil
	}
	sorted := append([]string(nil), allowed...)
	sort.Strings(sorted)
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", output, strings.Join(sorted, ","))
}

// templateFormats take an argument: -o jsonpath='{...}'.
var templateFormats = map[string]bool{
	"jsonpath": true, "jsonpath-file": true, "jsonpath-as-json": true,
	"go-template": true, "go-template-file": true, "template": true, "templatefile": true,
	"custom-columns": true, "custom-columns-file": true,
}

// printerOptions are the flags that shape an objectPrinter.
type printerOptions struct {
	// template is --template, the argument of -o jsonpath|go-template when
	// -o carries none.
	template string
	// allowMissing is --allow-missing-template-keys (default true).
	allowMissing bool
	noHeaders    bool // --no-headers, for custom-columns
	// readFile reads -o jsonpath-file=FILE and friends; nil refuses.
	readFile func(string) ([]byte, error)
}

// objectPrinter prints objects (JSON maps) as -o json, yaml, name,
// jsonpath, go-template or custom-columns (upstream: cli-runtime's
// printers and kubectl's CustomColumnsPrinter).
type objectPrinter struct {
	format  string // json yaml name jsonpath go-template custom-columns
	raw     string // the template as given
	jp      *jsonPath
	tmpl    *gotemplate.Template
	columns []customColumn

	noHeaders     bool
	printedHeader bool
}

// customColumn is one NAME:.json.path column.
type customColumn struct {
	header string
	path   *jsonPath
}

// newObjectPrinter reads -o. Errors are upstream's ("template format
// specified but no template given", "error parsing jsonpath ...").
func newObjectPrinter(output string, o printerOptions) (*objectPrinter, error) {
	name, arg, _ := strings.Cut(output, "=")
	p := &objectPrinter{format: name, noHeaders: o.noHeaders}
	if !templateFormats[name] {
		return p, nil
	}
	if arg == "" {
		arg = o.template
	}
	if strings.HasSuffix(name, "-file") || name == "templatefile" {
		if arg == "" {
			return nil, fmt.Errorf("template format specified but no template given")
		}
		if o.readFile == nil {
			return nil, fmt.Errorf("error reading --template %s, no files here", arg)
		}
		data, err := o.readFile(arg)
		if err != nil {
			return nil, fmt.Errorf("error reading --template %s, %v", arg, err)
		}
		arg = string(data)
	}
	p.raw = arg
	switch name {
	case "jsonpath", "jsonpath-file", "jsonpath-as-json":
		p.format = "jsonpath"
		if arg == "" {
			return nil, fmt.Errorf("template format specified but no template given")
		}
		jp, err := parseJSONPath(arg)
		if err != nil {
			return nil, fmt.Errorf("error parsing jsonpath %s, %v", arg, err)
		}
		jp.allowMissing = o.allowMissing
		jp.asJSON = name == "jsonpath-as-json"
		p.jp = jp
	case "go-template", "go-template-file", "template", "templatefile":
		p.format = "go-template"
		if arg == "" {
			return nil, fmt.Errorf("template format specified but no template given")
		}
		t, err := gotemplate.New("output").Funcs(gotemplate.FuncMap{"exists": templateExists, "base64decode": base64decode}).Parse(arg)
		if err != nil {
			return nil, fmt.Errorf("error parsing template %s, %v", arg, err)
		}
		if o.allowMissing {
			t.Option("missingkey=default")
		} else {
			t.Option("missingkey=error")
		}
		p.tmpl = t
	case "custom-columns", "custom-columns-file":
		p.format = "custom-columns"
		cols, err := parseCustomColumns(arg, name == "custom-columns-file")
		if err != nil {
			return nil, err
		}
		p.columns = cols
	}
	return p, nil
}

// parseCustomColumns reads "NAME:.metadata.name,IMAGE:.spec.containers[*].image",
// or for a file, a line of headers and a line of paths.
func parseCustomColumns(spec string, file bool) ([]customColumn, error) {
	var headers, paths []string
	if file {
		lines := strings.Split(strings.ReplaceAll(spec, "\r\n", "\n"), "\n")
		if len(lines) < 1 || strings.TrimSpace(lines[0]) == "" {
			return nil, fmt.Errorf("invalid template, missing header line. Expected format is one line of space separated headers, one line of space separated column specs.")
		}
		if len(lines) < 2 {
			return nil, fmt.Errorf("invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs.")
		}
		headers, paths = strings.Fields(lines[0]), strings.Fields(lines[1])
		if len(headers) != len(paths) {
			return nil, fmt.Errorf("number of headers (%d) and field specifications (%d) don't match", len(headers), len(paths))
		}
	} else {
		if spec == "" {
			return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
		}
		for _, part := range strings.Split(spec, ",") {
			h, path, ok := strings.Cut(part, ":")
			if !ok {
				return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
			}
			headers, paths = append(headers, h), append(paths, path)
		}
	}
	cols := make([]customColumn, len(headers))
	for i := range headers {
		expr, err := relaxedJSONPath(paths[i])
		if err != nil {
			return nil, err
		}
		jp, err := parseJSONPath(expr)
		if err != nil {
			return nil, err
		}
		cols[i] = customColumn{header: headers[i], path: jp}
	}
	return cols, nil
}

// printObject prints one object or list with a printer for output and
// default options (json, yaml, name or an inline template).
func printObject(w io.Writer, output string, obj map[string]any) error {
	p, err := newObjectPrinter(output, printerOptions{allowMissing: true})
	if err != nil {
		return err
	}
	return p.print(w, obj)
}

// print prints one object or list (a JSON map). YAML comes from the JSON
// (sigs.k8s.io/yaml), so its keys are sorted: apiVersion and kind come
// first, as in kubectl's output.
func (p *objectPrinter) print(w io.Writer, obj map[string]any) error {
	stripManagedFields(obj)
	switch p.format {
	case "json":
		data, err := json.MarshalIndent(obj, "", "    ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	case "yaml":
		data, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case "name":
		if items, ok := obj["items"].([]any); ok {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					fmt.Fprintln(w, objectName(m))
				}
			}
			return nil
		}
		_, err := fmt.Fprintln(w, objectName(obj))
		return err
	case "jsonpath":
		if err := p.jp.execute(w, obj); err != nil {
			var b strings.Builder
			fmt.Fprintf(&b, "Error executing template: %v. Printing more information for debugging the template:\n", err)
			fmt.Fprintf(&b, "\ttemplate was:\n\t\t%v\n", p.raw)
			fmt.Fprintf(&b, "\tobject given to jsonpath engine was:\n\t\t%#v\n\n", obj)
			return fmt.Errorf("error executing jsonpath %q: %v\n", p.raw, b.String())
		}
		return nil
	case "go-template":
		return p.executeTemplate(w, obj)
	case "custom-columns":
		return p.printColumns(w, obj)
	}
	return fmt.Errorf("unknown output format %q", p.format)
}

// executeTemplate runs a Go template; on failure it also prints what it
// was given, to the output, as upstream does.
func (p *objectPrinter) executeTemplate(w io.Writer, obj map[string]any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("caught panic: %+v", r)
		}
		if err != nil {
			data, _ := json.Marshal(obj)
			fmt.Fprintf(w, "Error executing template: %v. Printing more information for debugging the template:\n", err)
			fmt.Fprintf(w, "\ttemplate was:\n\t\t%v\n", p.raw)
			fmt.Fprintf(w, "\traw data was:\n\t\t%v\n", string(data))
			fmt.Fprintf(w, "\tobject given to template engine was:\n\t\t%+v\n\n", obj)
			err = fmt.Errorf("error executing template %q: %v", p.raw, err)
		}
	}()
	return p.tmpl.Execute(w, obj)
}

// printColumns prints custom columns: the header once, then a row per
// object (each item of a list). A column with no value shows <none>; a
// path with several values shows them comma separated.
func (p *objectPrinter) printColumns(w io.Writer, obj map[string]any) error {
	tw := newTabWriter(w)
	defer tw.Flush()
	if !p.noHeaders && !p.printedHeader {
		headers := make([]string, len(p.columns))
		for i, c := range p.columns {
			headers[i] = c.header
		}
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
		p.printedHeader = true
	}
	objs := []map[string]any{obj}
	if items, ok := obj["items"].([]any); ok {
		objs = objs[:0]
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				objs = append(objs, m)
			}
		}
	}
	for _, o := range objs {
		cells := make([]string, len(p.columns))
		for i, c := range p.columns {
			vals, err := c.path.find(o)
			if err != nil {
				return err
			}
			if len(vals) == 0 {
				cells[i] = "<none>"
				continue
			}
			strs := make([]string, len(vals))
			for j, v := range vals {
				strs[j] = escapeTerminal(fmt.Sprint(v))
			}
			cells[i] = strings.Join(strs, ",")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return nil
}

// templateExists is the go-template function "exists": whether indexing
// item by indices would find something.
func templateExists(item any, indices ...any) bool {
	cur := item
	for _, i := range indices {
		switch c := cur.(type) {
		case map[string]any:
			k, ok := i.(string)
			if !ok {
				return false
			}
			if cur, ok = c[k]; !ok {
				return false
			}
		case []any:
			var n int
			switch x := i.(type) {
			case int:
				n = x
			case int64:
				n = int(x)
			default:
				return false
			}
			if n < 0 || n >= len(c) {
				return false
			}
			cur = c[n]
		default:
			return false
		}
	}
	return cur != nil
}

// base64decode is the go-template function of that name (Secrets' data).
func base64decode(v string) (string, error) {
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", fmt.Errorf("base64 decode failed: %v", err)
	}
	return string(data), nil
}

// objectName is the -o name form: "pod/web", "deployment.apps/web".
func objectName(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	k := strings.ToLower(kind)
	if g, _, ok := strings.Cut(apiVersion, "/"); ok && g != "" {
		k += "." + g
	}
	return k + "/" + nestedString(obj, "metadata", "name")
}

// listOf wraps items into the v1 List kubectl prints for several objects.
func listOf(items []map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, it := range items {
		list[i] = it
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      list,
		"metadata":   map[string]any{"resourceVersion": ""},
	}
}

// stripManagedFields hides metadata.managedFields, as kubectl does unless
// --show-managed-fields.
func stripManagedFields(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	if items, ok := obj["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				stripManagedFields(m)
			}
		}
	}
}

// nestedString reads a string field: nestedString(obj, "metadata", "name").
func nestedString(obj map[string]any, fields ...string) string {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[f]
	}
	s, _ := cur.(string)
	return s
}

// nestedMap reads a map field, creating nothing.
func nestedMap(obj map[string]any, fields ...string) map[string]any {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	m, _ := cur.(map[string]any)
	return m
}
