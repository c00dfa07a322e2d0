package gotemplate_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"text/template"

	apijson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubetab/kubetab/core/kubectl/internal/gotemplate"
)

// The objects kubectl renders: unstructured JSON as the API server sends it.
const (
	podJSON = `{
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-7d4b9-x2x8q", "namespace": "default", "uid": "0b7c",
    "creationTimestamp": "2024-05-01T10:00:00Z", "deletionTimestamp": null,
    "labels": {"app": "web", "pod-template-hash": "7d4b9", "tier": "front"},
    "annotations": {"note": "<b>fish & chips</b>"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9", "controller": true}]
  },
  "spec": {
    "nodeName": "node-1", "priority": 0, "terminationGracePeriodSeconds": 30,
    "containers": [
      {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
      {"name": "sidecar", "image": "busybox", "args": ["sleep", "3600"]}
    ]
  },
  "status": {
    "phase": "Running", "podIP": "10.244.0.5", "ratio": 0.5,
    "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]
  }
}`
	secretJSON = `{
  "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
  "metadata": {"name": "db", "namespace": "default"},
  "data": {"password": "czNjcjN0", "user": "YWRtaW4="}
}`
	listJSON = `{
  "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
  "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "x"}}, "status": {"phase": "Running"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "status": {"phase": "Pending"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c", "labels": {}}, "status": {}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}}
  ]
}`
)

// templates exercise the whole language on the objects above. A template
// may fail on some objects; then the error text must match too.
var templates = []struct{ name, text string }{
	{"field", `{{.kind}} {{.apiVersion}}`},
	{"nested field", `{{.metadata.name}}/{{.metadata.namespace}} {{.metadata.labels.app}}`},
	{"map value", `{{.metadata.labels}} {{.spec.containers}}`},
	{"missing key", `{{.metadata.nope}}|{{.nope}}`},
	{"missing nested", `{{.nope.deeper}}`},
	{"field of null", `{{.metadata.deletionTimestamp.seconds}}`},
	{"field of string", `{{.kind.length}}`},
	{"field of list", `{{.items.name}}`},
	{"field of number", `{{.spec.priority.value}}`},
	{"field with args", `{{.kind 1}}`},
	{"range list", `{{range .spec.containers}}{{.name}}={{.image}};{{end}}`},
	{"range items", `{{range .items}}{{.metadata.name}}:{{.status.phase}}{{"\n"}}{{end}}`},
	{"range map sorted", `{{range $k, $v := .metadata.labels}}{{$k}}={{$v}},{{end}}`},
	{"range index", `{{range $i, $c := .spec.containers}}{{$i}}:{{$c.name}} {{end}}`},
	{"range else", `{{range .spec.nothing}}x{{else}}empty{{end}}`},
	{"range int", `{{range 3}}{{.}}{{end}}`},
	{"range string", `{{range .kind}}{{.}}{{end}}`},
	{"break continue", `{{range .items}}{{if eq .metadata.name "b"}}{{continue}}{{end}}{{if eq .metadata.name "d"}}{{break}}{{end}}{{.metadata.name}} {{end}}`},
	{"if else", `{{if .status.podIP}}ip {{.status.podIP}}{{else if .status.phase}}phase{{else}}none{{end}}`},
	{"if assign", `{{if $ip := .status.podIP}}{{$ip}}{{end}}`},
	{"with else", `{{with .metadata.labels}}{{.app}}{{else}}no labels{{end}}`},
	{"else with", `{{with .nope}}x{{else with .kind}}<{{.}}>{{end}}`},
	{"variables", `{{$n := .metadata.name}}{{$n = printf "%s!" $n}}{{$n}} {{$.kind}}{{range .items}} {{$.kind}}/{{.metadata.name}}{{end}}`},
	{"pipeline", `{{.metadata.name | printf "%q" | len}} {{.kind | printf "%s-%s" "x"}}`},
	{"printf", `{{printf "%v %T %d %5.2f %s" .spec.priority .spec.priority 3 1.5 .kind}}`},
	{"printf status", `{{printf "%v|%v" .status .status.ratio}}`},
	{"print println", `{{print .kind 1 2 "x"}}{{println .kind .metadata.name}}`},
	{"len", `{{len .metadata.labels}} {{len .metadata.name}} {{len .items}}`},
	{"len of number", `{{len .spec.priority}}`},
	{"index", `{{index .metadata.labels "app"}} {{index .spec.containers 1 "args" 0}}`},
	{"index items", `{{(index .items 1).metadata.name}} {{index .items 1 "metadata" "name"}}`},
	{"index out of range", `{{index .items 10}}`},
	{"index missing", `{{index .metadata.labels "nope"}}`},
	{"eq ne lt", `{{eq .kind "Pod"}} {{ne .kind "Pod"}} {{lt 1 2}} {{eq .kind "Service" "Pod" "List"}}`},
	{"compare numbers", `{{lt .spec.priority 5}} {{ge .spec.terminationGracePeriodSeconds 30}}`},
	{"compare mixed", `{{eq .spec.priority "0"}}`},
	{"compare nil", `{{eq .metadata.deletionTimestamp nil}}`},
	{"and or not", `{{and .metadata.name .nope}} {{or .nope .kind}} {{not .status.podIP}} {{and 1 0 2}} {{or 0 "" "z"}}`},
	{"slice", `{{slice .metadata.name 0 3}} {{slice .items 1}}`},
	{"slice bad", `{{slice .metadata.name 5 2}}`},
	{"define template", `{{define "c"}}[{{.name}}]{{end}}{{range .spec.containers}}{{template "c" .}}{{end}}{{range .items}}{{template "c" .metadata}}{{end}}`},
	{"block", `{{block "b" .kind}}<{{.}}>{{end}}`},
	{"template missing", `{{template "nope" .}}`},
	{"html js urlquery", `{{html "<a&b>"}} {{js "it's \"x\" <y>"}} {{urlquery "a b&c=d"}} {{.metadata.annotations.note | html}} {{.metadata.annotations.note | js}}`},
	{"call non-function", `{{call .kind}}`},
	{"trim comments", "{{- .kind -}}  \n {{/* a comment */}} {{- .apiVersion }}"},
	{"constants", `{{1.5}} {{0x10}} {{'a'}} {{1e3}} {{true}} {{nil | print}}`},
	{"exists", `{{exists . "metadata" "labels" "app"}} {{exists . "metadata" "nope"}} {{exists . "spec" "containers" 0 "name"}} {{exists . "items" 2 "metadata" "labels"}}`},
	{"exists in if", `{{range .items}}{{if exists . "metadata" "labels" "app"}}{{.metadata.name}}{{end}}{{end}}`},
	{"base64decode", `{{base64decode .data.password}}:{{.data.user | base64decode}}`},
	{"base64decode bad", `{{base64decode "!!"}}`},
	{"undefined function", `{{nosuch 1}}`},
	{"unclosed action", `{{`},
	{"bad range", `{{range .kind .kind}}{{end}}`},
	{"undefined variable", `{{$x}}`},
	{"break outside range", `{{break}}`},
}

// TestDifferential renders every template over every object with both the
// standard text/template and this fork, for each way kubectl decodes JSON
// (encoding/json gives float64 numbers, apimachinery's json gives int64)
// and each missingkey option kubectl sets, and requires the same output
// and the same error text.
func TestDifferential(t *testing.T) {
	decoders := []struct {
		name      string
		unmarshal func([]byte, any) error
	}{
		{"encoding-json", json.Unmarshal},
		{"apimachinery-json", apijson.Unmarshal},
	}
	objects := []struct{ name, json string }{
		{"pod", podJSON}, {"secret", secretJSON}, {"list", listJSON},
	}
	for _, tc := range templates {
		t.Run(tc.name, func(t *testing.T) {
			for _, option := range []string{"missingkey=default", "missingkey=error"} {
				for _, d := range decoders {
					for _, o := range objects {
						var obj map[string]any
						if err := d.unmarshal([]byte(o.json), &obj); err != nil {
							t.Fatalf("decode %s: %v", o.name, err)
						}
						wantOut, wantErr := renderStd(tc.text, option, obj)
						gotOut, gotErr := renderFork(tc.text, option, obj)
						if gotOut != wantOut || gotErr != wantErr {
							t.Errorf("%s, %s, %s:\n  text/template: %q, error %q\n  gotemplate:    %q, error %q",
								option, d.name, o.name, wantOut, wantErr, gotOut, gotErr)
						}
					}
				}
			}
		})
	}
}

// TestDifferentialCoversBothPaths guards the table: it must keep cases
// that render and cases that fail, or the comparison proves little.
func TestDifferentialCoversBothPaths(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(podJSON), &obj); err != nil {
		t.Fatal(err)
	}
	var ok, failed int
	for _, tc := range templates {
		if _, err := renderStd(tc.text, "missingkey=default", obj); err == "" {
			ok++
		} else {
			failed++
		}
	}
	if ok < 30 || failed < 10 {
		t.Errorf("templates over the pod: %d render, %d fail; want at least 30 and 10", ok, failed)
	}
}

// withMethod has what a template cannot reach in the fork: a method.
type withMethod struct{ Field string }

func (withMethod) Name() string { return "from a method" }

// TestNoMethodCalls pins the one intended difference: {{.Name}} calls a
// method in text/template and is "can't evaluate field" here, just as for
// any name that is neither a field nor a key. Fields still work.
func TestNoMethodCalls(t *testing.T) {
	data := withMethod{Field: "f"}
	for _, tc := range []struct{ text, wantStd, wantFork, wantForkErr string }{
		{text: `{{.Field}}`, wantStd: "f", wantFork: "f"},
		{text: `{{.Name}}`, wantStd: "from a method",
			wantForkErr: `template: t:1:2: executing "t" at <.Name>: can't evaluate field Name in type gotemplate_test.withMethod`},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if out, err := renderStd(tc.text, "missingkey=default", data); out != tc.wantStd || err != "" {
				t.Errorf("text/template: %q, error %q; want %q", out, err, tc.wantStd)
			}
			if out, err := renderFork(tc.text, "missingkey=default", data); out != tc.wantFork || err != tc.wantForkErr {
				t.Errorf("gotemplate: %q, error %q; want %q, error %q", out, err, tc.wantFork, tc.wantForkErr)
			}
		})
	}
}

// funcs stand in for kubectl's "exists" and "base64decode" (core/kubectl's
// output.go, whose own tests run them for real): same signatures, so the
// engines call them, pass variadic arguments and report their errors the
// way they will in kubectl.
var funcs = map[string]any{
	"exists": func(item any, indices ...any) bool {
		cur := item
		for _, i := range indices {
			switch c := cur.(type) {
			case map[string]any:
				k, _ := i.(string)
				var ok bool
				if cur, ok = c[k]; !ok {
					return false
				}
			case []any:
				n, ok := i.(int)
				if !ok || n < 0 || n >= len(c) {
					return false
				}
				cur = c[n]
			default:
				return false
			}
		}
		return cur != nil
	},
	"base64decode": func(v string) (string, error) {
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", fmt.Errorf("base64 decode failed: %v", err)
		}
		return string(data), nil
	},
}

// renderStd and renderFork parse and execute text as kubectl does and
// return the output (what was written before any failure) and the error
// text ("" for none).
func renderStd(text, option string, data any) (string, string) {
	var b strings.Builder
	t, err := template.New("t").Funcs(template.FuncMap(funcs)).Option(option).Parse(text)
	if err == nil {
		err = t.Execute(&b, data)
	}
	return b.String(), errText(err)
}

func renderFork(text, option string, data any) (string, string) {
	var b strings.Builder
	t, err := gotemplate.New("t").Funcs(gotemplate.FuncMap(funcs)).Option(option).Parse(text)
	if err == nil {
		err = t.Execute(&b, data)
	}
	return b.String(), errText(err)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
