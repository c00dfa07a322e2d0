package kubectl

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// newExplainCommand is `kubectl explain` (upstream pkg/cmd/explain with
// pkg/explain/v2's plaintext template): the documentation of a resource or
// one of its fields, read from the server's OpenAPI v3 schemas:
//
//	GET /openapi/v3                 which group/versions have a document
//	GET /openapi/v3/apis/apps/v1    the schemas of apps/v1
//
// The schema of the kind is the one whose x-kubernetes-group-version-kind
// names it; a field path (deployment.spec.replicas) walks its properties,
// following $ref, allOf, array items and map values.
func (s *session) newExplainCommand() *cobra.Command {
	var (
		recursive  bool
		apiVersion string
		output     string
	)
	cmd := &cobra.Command{
		Use:                   "explain TYPE [--recursive=FALSE|TRUE] [--api-version=api-version-group] [-o|--output=plaintext|plaintext-openapiv2]",
		DisableFlagsInUseLine: true,
		Short:                 "Get documentation for a resource",
		Long: `Describe fields and structure of various resources.

 This command describes the fields associated with each supported API resource. Fields are identified via a simple JSONPath identifier:

        <type>.<fieldName>[.<fieldName>]

 Information about each field is retrieved from the server in OpenAPI format.`,
		Example: `  # Get the documentation of the resource and its fields
  kubectl explain pods

  # Get the documentation of a specific field of a resource
  kubectl explain deployment.spec.replicas

  # Get all the fields in the resource
  kubectl explain pods --recursive`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				fmt.Fprint(s.errOut(), "You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.\n\n")
				return usageErrorf(cmd, "Required resource not specified.")
			}
			if len(args) > 1 {
				return usageErrorf(cmd, "We accept only this format: explain RESOURCE")
			}
			if output != "" && output != "plaintext" {
				return fmt.Errorf("unsupported output format: %s", output)
			}
			typ, fieldPath := args[0], []string(nil)
			if i := strings.Index(typ, "."); i >= 0 {
				typ, fieldPath = args[0][:i], strings.Split(args[0][i+1:], ".")
			}
			res, err := s.resolve(typ)
			if err != nil {
				return err
			}
			if apiVersion != "" {
				gv := strings.SplitN(apiVersion, "/", 2)
				res.Group, res.Version = "", gv[0]
				if len(gv) == 2 {
					res.Group, res.Version = gv[0], gv[1]
				}
			}
			doc, err := s.openAPIDocument(res)
			if err != nil {
				return err
			}
			e := &explainer{doc: doc, recursive: recursive}
			text, err := e.explain(res, fieldPath)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(s.out(), text)
			return err
		},
	}
	cmd.Flags().BoolVar(&recursive, "recursive", false, "When true, print the name of all the fields recursively. Otherwise, print the available fields with their description.")
	cmd.Flags().StringVar(&apiVersion, "api-version", "", "Use given api-version (group/version) of the resource.")
	cmd.Flags().StringVarP(&output, "output", "o", "plaintext", "Format in which to render the schema. Valid values are: (plaintext).")
	return cmd
}

// openAPIDocument fetches the OpenAPI v3 document of a resource's
// group/version.
func (s *session) openAPIDocument(res apiResource) (map[string]any, error) {
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/openapi/v3"}, &index); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the server does not serve OpenAPI v3 schemas (GET /openapi/v3: 404), which kubectl explain reads")
		}
		return nil, err
	}
	key := "apis/" + res.Group + "/" + res.Version
	if res.Group == "" {
		key = "api/" + res.Version
	}
	entry, ok := index.Paths[key]
	if !ok {
		return nil, fmt.Errorf("couldn't find resource for %q", res.GroupVersion().WithKind(res.Kind).String())
	}
	u := entry.ServerRelativeURL
	if u == "" {
		u = "/openapi/v3/" + key
	}
	path, rawQuery, _ := strings.Cut(u, "?")
	req := request{method: http.MethodGet, path: path}
	if rawQuery != "" {
		q, err := parseQuery(rawQuery)
		if err != nil {
			return nil, err
		}
		req.query = q
	}
	doc := map[string]any{}
	if err := s.client.into(s.ctx, req, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// explainer renders a schema the way upstream's plaintext template does.
type explainer struct {
	doc       map[string]any
	recursive bool
}

func (e *explainer) explain(res apiResource, fieldPath []string) (string, error) {
	schemas := nestedMap(e.doc, "components", "schemas")
	var schema map[string]any
	for _, name := range sortedKeys(schemas) {
		sc, _ := schemas[name].(map[string]any)
		gvks, _ := sc["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == res.Group && m["version"] == res.Version && m["kind"] == res.Kind {
				schema = sc
			}
		}
		if schema != nil {
			break
		}
	}
	if schema == nil {
		return "", fmt.Errorf("GVK %s not found in OpenAPI schema", res.GroupVersion().WithKind(res.Kind))
	}
	var b strings.Builder
	if res.Group != "" {
		fmt.Fprintf(&b, "GROUP:      %s\n", res.Group)
	}
	fmt.Fprintf(&b, "KIND:       %s\nVERSION:    %s\n\n", res.Kind, res.Version)
	out := e.output(schema, fieldPath, map[string]bool{})
	if out == "" {
		return "", fmt.Errorf("field %q does not exist", fieldPath[len(fieldPath)-1])
	}
	b.WriteString(out)
	b.WriteString("\n")
	return b.String(), nil
}

// resolve follows a "#/components/schemas/NAME" reference.
func (e *explainer) resolve(ref string) map[string]any {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		return nil
	}
	m, _ := nestedMap(e.doc, "components", "schemas")[name].(map[string]any)
	return m
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

func (e *explainer) output(schema map[string]any, fieldPath []string, history map[string]bool) string {
	ref, _ := schema["$ref"].(string)
	resolved := e.resolve(ref)
	if resolved == nil {
		resolved = schema
	}
	next := map[string]bool{ref: true}
	for k := range history {
		next[k] = true
	}
	props := mapOf(resolved["properties"])
	var b strings.Builder
	switch {
	case len(fieldPath) == 0:
		desc := e.description(resolved)
		if desc == "" {
			desc = "<empty>"
		}
		b.WriteString("DESCRIPTION:\n" + indentText(wordWrap(desc, 76), 4) + "\n")
		if fields := e.fieldList(resolved, 1, map[string]bool{}); fields != "" {
			b.WriteString("FIELDS:\n" + fields)
		}
	case ref != "" && history[ref]:
		// a cycle: stop
	case props[fieldPath[0]] != nil:
		sub := mapOf(props[fieldPath[0]])
		if len(fieldPath) == 1 {
			fmt.Fprintf(&b, "FIELD: %s <%s>\n%s\n\n", fieldPath[0], e.typeGuess(sub), e.enum(sub, true, -1, 0))
		}
		b.WriteString(e.output(sub, fieldPath[1:], map[string]bool{}))
	case resolved["items"] != nil:
		b.WriteString(e.output(mapOf(resolved["items"]), fieldPath, next))
	case mapOf(resolved["additionalProperties"]) != nil:
		b.WriteString(e.output(mapOf(resolved["additionalProperties"]), fieldPath, next))
	default:
		all, _ := resolved["allOf"].([]any)
		for _, a := range all {
			if out := e.output(mapOf(a), fieldPath, next); out != "" {
				return out
			}
		}
	}
	return b.String()
}

// description gathers a schema's description and those of what it is
// made of (allOf, items, map values).
func (e *explainer) description(schema map[string]any) string {
	ref, _ := schema["$ref"].(string)
	if r := e.resolve(ref); r != nil {
		schema = r
	}
	var b strings.Builder
	if d, _ := schema["description"].(string); d != "" {
		b.WriteString(d + "\n")
	}
	all, _ := schema["allOf"].([]any)
	for _, a := range all {
		b.WriteString(e.description(mapOf(a)))
	}
	if it := mapOf(schema["items"]); it != nil {
		b.WriteString(e.description(it))
	}
	if ap := mapOf(schema["additionalProperties"]); ap != nil {
		b.WriteString(e.description(ap))
	}
	return b.String()
}

// fieldList prints each property: name, <type>, -required-, description.
func (e *explainer) fieldList(schema map[string]any, level int, history map[string]bool) string {
	ref, _ := schema["$ref"].(string)
	if ref != "" && history[ref] {
		return ""
	}
	next := map[string]bool{ref: true}
	for k := range history {
		next[k] = true
	}
	resolved := e.resolve(ref)
	if resolved == nil {
		resolved = schema
	}
	var b strings.Builder
	props := mapOf(resolved["properties"])
	required, _ := resolved["required"].([]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	indent := level * 2
	for _, name := range names {
		fs := mapOf(props[name])
		b.WriteString(indentText(name, indent) + "\t<" + e.typeGuess(fs) + ">")
		for _, r := range required {
			if r == name {
				b.WriteString(" -required-")
			}
		}
		b.WriteString(e.enum(fs, false, 4, indent) + "\n")
		if !e.recursive {
			d, _ := fs["description"].(string)
			if d == "" {
				d = "<no description>"
			}
			b.WriteString(indentText(wordWrap(d, 78-indent), indent+2) + "\n\n")
		} else {
			b.WriteString(e.fieldList(fs, level+1, next))
		}
	}
	all, _ := resolved["allOf"].([]any)
	for _, a := range all {
		b.WriteString(e.fieldList(mapOf(a), level, next))
	}
	if it := mapOf(resolved["items"]); it != nil {
		b.WriteString(e.fieldList(it, level, next))
	}
	if ap := mapOf(resolved["additionalProperties"]); ap != nil {
		b.WriteString(e.fieldList(ap, level, next))
	}
	return b.String()
}

// typeGuess is the <type> hint: string, integer, Object, []Container,
// map[string]string ...
func (e *explainer) typeGuess(s map[string]any) string {
	if it := mapOf(s["items"]); it != nil {
		return "[]" + e.typeGuess(it)
	}
	if ap := mapOf(s["additionalProperties"]); ap != nil {
		return "map[string]" + e.typeGuess(ap)
	}
	if all, _ := s["allOf"].([]any); len(all) == 1 && s["properties"] == nil {
		return e.typeGuess(mapOf(all[0]))
	}
	if ref, _ := s["$ref"].(string); ref != "" {
		r := e.resolve(ref)
		t, _ := r["type"].(string)
		if r == nil || t == "" || t == "object" {
			parts := strings.Split(ref, "/")
			name := parts[len(parts)-1]
			if i := strings.LastIndex(name, "."); i >= 0 {
				name = name[i+1:]
			}
			if name == "" {
				return "Object"
			}
			return name
		}
		return t
	}
	t, _ := s["type"].(string)
	if t == "object" || t == "" {
		return "Object"
	}
	return t
}

// enum lists allowed values: "ENUM:" lines for one field, "enum: a, b"
// after a field in a list (at most limit of them).
func (e *explainer) enum(s map[string]any, long bool, limit, indent int) string {
	vals, _ := s["enum"].([]any)
	if len(vals) == 0 {
		return ""
	}
	var b strings.Builder
	if long {
		b.WriteString("ENUM:")
	} else {
		b.WriteString("\n" + strings.Repeat(" ", indent) + "enum: ")
	}
	for i, v := range vals {
		if limit > -1 && i >= limit {
			b.WriteString(", ....")
			break
		}
		if i > 0 && !long {
			b.WriteString(", ")
		} else if long {
			b.WriteString("\n    ")
		}
		if str, ok := v.(string); ok && str == "" {
			b.WriteString(`""`)
		} else {
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// indentText puts n spaces before the text and after each of its newlines.
func indentText(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// wordWrap breaks lines at spaces so that they are at most limit wide
// (longer words stay whole), keeping the text's own line breaks, as
// github.com/mitchellh/go-wordwrap (behind kubectl's wrap) does.
func wordWrap(s string, limit int) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for j, w := range strings.Fields(line) {
			switch {
			case j == 0:
			case col+1+len(w) > limit:
				b.WriteByte('\n')
				col = 0
			default:
				b.WriteByte(' ')
				col++
			}
			b.WriteString(w)
			col += len(w)
		}
	}
	return b.String()
}

func parseQuery(raw string) (map[string][]string, error) {
	q, err := url.ParseQuery(raw)
	return q, err
}
