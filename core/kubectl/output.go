package kubectl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// outputFormats lists what -o accepts in kubetab (upstream also has
// jsonpath, go-template and custom-columns).
var outputFormats = []string{"json", "name", "wide", "yaml"}

func checkOutputFormat(format string, allowed ...string) error {
	if format == "" || contains(allowed, format) {
		return nil
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", format, strings.Join(allowed, ","))
}

// printObject prints one object or list (a JSON map) as -o yaml, json or
// name would. YAML comes from the JSON (sigs.k8s.io/yaml), so its keys are
// sorted: apiVersion and kind come first, as in kubectl's output.
func printObject(w io.Writer, format string, obj map[string]any) error {
	stripManagedFields(obj)
	switch format {
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
	}
	return fmt.Errorf("unknown output format %q", format)
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
