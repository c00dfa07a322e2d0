package kubectl

import (
	"strings"
	"testing"
)

// jpData is a small List of pods, decoded the way kubectl decodes answers
// (integers stay int64).
func jpData(t *testing.T) map[string]any {
	t.Helper()
	obj := map[string]any{}
	err := decodeJSON([]byte(`{
  "kind": "List", "apiVersion": "v1",
  "items": [
    {"kind": "Pod", "metadata": {"name": "web-1", "labels": {"app": "web", "tier": "front"},
      "annotations": {"kubernetes.io/change-cause": "rollout"}},
     "spec": {"nodeName": "node-1", "containers": [{"name": "hello", "image": "hello:1.0"}, {"name": "side", "image": "busy"}]},
     "status": {"phase": "Running", "restarts": 2, "ratio": 0.5, "ready": true,
       "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}]}},
    {"kind": "Pod", "metadata": {"name": "web-2", "labels": {"app": "web"}},
     "spec": {"nodeName": "node-2", "containers": [{"name": "hello", "image": "hello:2.0"}]},
     "status": {"phase": "Pending", "restarts": 0, "ratio": 1.5, "ready": false, "nothing": null,
       "conditions": [{"type": "Ready", "status": "False"}]}}
  ]
}`), &obj)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestJSONPath(t *testing.T) {
	data := jpData(t)
	tests := []struct {
		name, template, want string
		strict               bool // --allow-missing-template-keys=false
		asJSON               bool
	}{
		{name: "field", template: "{.kind}", want: "List"},
		{name: "text around", template: "kind={.kind}!", want: "kind=List!"},
		{name: "no braces is text", template: "just text", want: "just text"},
		{name: "root $", template: "{$.items[0].metadata.name}", want: "web-1"},
		{name: "index", template: "{.items[1].metadata.name}", want: "web-2"},
		{name: "negative index", template: "{.items[-1].metadata.name}", want: "web-2"},
		{name: "wildcard index", template: "{.items[*].metadata.name}", want: "web-1 web-2"},
		{name: "slice", template: "{.items[0:1].metadata.name}", want: "web-1"},
		{name: "open slice", template: "{.items[1:].metadata.name}", want: "web-2"},
		{name: "slice step", template: "{.items[0:2:2].metadata.name}", want: "web-1"},
		{name: "empty slice", template: "{.items[1:1]}", want: ""},
		{name: "union", template: "{.items[*].metadata['name','labels']}", want: `web-1 web-2 {"app":"web","tier":"front"} {"app":"web"}`},
		{name: "quoted key", template: "{.items[0].metadata.labels['tier']}", want: "front"},
		{name: "escaped dot", template: `{.items[0].metadata.annotations.kubernetes\.io/change-cause}`, want: "rollout"},
		{name: "map prints as JSON", template: "{.items[1].metadata.labels}", want: `{"app":"web"}`},
		{name: "list prints as JSON", template: "{.items[1].spec.containers[*].name}", want: "hello"},
		{name: "int", template: "{.items[0].status.restarts}", want: "2"},
		{name: "float", template: "{.items[1].status.ratio}", want: "1.5"},
		{name: "bool", template: "{.items[0].status.ready}", want: "true"},
		{name: "null", template: "{.items[1].status.nothing}", want: "null"},
		{name: "missing is empty", template: "[{.items[0].spec.nope}]", want: "[]"},
		{name: "string literal", template: `{.kind}{"\t"}{'x'}{"\n"}`, want: "List\tx\n"},
		{name: "range", template: `{range .items[*]}{.metadata.name}:{.status.phase}{"\n"}{end}`, want: "web-1:Running\nweb-2:Pending\n"},
		{name: "nested range", template: `{range .items[*]}{.metadata.name}[{range .spec.containers[*]}{.image};{end}]{end}`, want: "web-1[hello:1.0;busy;]web-2[hello:2.0;]"},
		{name: "range over nothing", template: `a{range .items[*].nope}x{end}b`, want: "ab"},
		{name: "filter ==", template: `{.items[?(@.status.phase=="Pending")].metadata.name}`, want: "web-2"},
		{name: "filter on conditions", template: `{.items[0].status.conditions[?(@.type=="Ready")].status}`, want: "True"},
		{name: "filter !=", template: `{.items[?(@.metadata.name!="web-1")].metadata.name}`, want: "web-2"},
		{name: "filter int >", template: `{.items[?(@.status.restarts>1)].metadata.name}`, want: "web-1"},
		{name: "filter float <=", template: `{.items[?(@.status.ratio<=0.5)].metadata.name}`, want: "web-1"},
		{name: "filter bool", template: `{.items[?(@.status.ready==true)].metadata.name}`, want: "web-1"},
		{name: "filter exists", template: `{.items[?(@.metadata.labels.tier)].metadata.name}`, want: "web-1"},
		{name: "filter path vs path", template: `{.items[?(@.metadata.name==@.metadata.name)].metadata.name}`, want: "web-1 web-2"},
		{name: "recursive", template: "{..image}", want: "hello:1.0 busy hello:2.0"},
		{name: "recursive names", template: "{.items[0]..name}", want: "web-1 hello side"},
		{name: "wildcard field", template: "{.items[0].metadata.labels.*}", want: "web front"},
		{name: "identity", template: "{.items[1].metadata.labels.}", want: `{"app":"web"}`},
		{name: "as JSON", template: "{.items[*].metadata.name}", asJSON: true, want: "[\n    \"web-1\",\n    \"web-2\"\n]\n"},
		{name: "as JSON nothing", template: "{.nope}", asJSON: true, want: "[]\n"},
		{name: "strict missing", template: "{.items[0].nope}", strict: true, want: "error: nope is not found"},
		{name: "out of bounds", template: "{.items[5]}", want: "error: array index out of bounds: index 5, length 2"},
		{name: "slice past end", template: "{.items[0:9]}", want: "error: array index out of bounds: index 8, length 2"},
		{name: "bad step", template: "{.items[0:2:0]}", want: "error: step must be > 0"},
		{name: "index a map", template: "{.items[0].metadata[0]}", want: "error: map[string]interface {} is not array or slice"},
		{name: "compare mixed", template: `{.items[?(@.status.restarts=="2")]}`, want: "error: incompatible types for comparison"},
		{name: "filter a map", template: `{.kind[?(@.x)]}`, want: "error: List is not array or slice and cannot be filtered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jp, err := parseJSONPath(tt.template)
			if err != nil {
				t.Fatalf("parse %q: %v", tt.template, err)
			}
			jp.allowMissing = !tt.strict
			jp.asJSON = tt.asJSON
			var b strings.Builder
			err = jp.execute(&b, data)
			got := b.String()
			if err != nil {
				got = "error: " + err.Error()
			}
			if got != tt.want {
				t.Errorf("%s\n got %q\nwant %q", tt.template, got, tt.want)
			}
		})
	}
}

func TestJSONPathParseErrors(t *testing.T) {
	tests := map[string]string{
		"{.items[0].metadata.name":   "unclosed action",
		"{.items[0}":                 "unterminated array",
		"{.items[x]}":                "invalid array index x",
		`{.items[?(@.a=="b"]}`:       "unterminated filter",
		`{.items[?(@.a=="b")}`:       "unclosed array expect ]",
		`{.items[?(@.a=<"b")]}`:      "unrecognized filter operator =<",
		`{.items[?(@.a=~"b")]}`:      "unrecognized character in action: U+007E '~'",
		`{"abc}`:                     "unterminated quoted string",
		"{end}":                      "not in range, nothing to end",
		"{foo}":                      "unrecognized identifier foo",
		"{#}":                        "unrecognized character in action: U+0023 '#'",
		"{.a....b}":                  "invalid multiple recursive descent",
		"{.items[1.5]}":              "invalid array index 1.5",
		"{range .items[*]}{.a}\n{.x": "unclosed action",
	}
	for tmpl, want := range tests {
		_, err := parseJSONPath(tmpl)
		if err == nil || err.Error() != want {
			t.Errorf("parse %q: got %v, want %q", tmpl, err, want)
		}
	}
}

func TestRelaxedJSONPath(t *testing.T) {
	for in, want := range map[string]string{
		"metadata.name": "{.metadata.name}", ".metadata.name": "{.metadata.name}",
		"{metadata.name}": "{.metadata.name}", "{.metadata.name}": "{.metadata.name}", "": "",
	} {
		got, err := relaxedJSONPath(in)
		if err != nil || got != want {
			t.Errorf("relaxedJSONPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := relaxedJSONPath("{.a}{.b}"); err == nil {
		t.Error("two actions should not be a relaxed path")
	}
}

func TestSortByPath(t *testing.T) {
	objs := func() []map[string]any {
		var out []map[string]any
		for _, js := range []string{
			`{"n": "c", "cpu": "1", "count": 3, "f": 0.5}`,
			`{"n": "a", "cpu": "500m", "count": 10}`,
			`{"n": "b", "cpu": "2", "count": 1, "f": 0.25}`,
		} {
			m := map[string]any{}
			if err := decodeJSON([]byte(js), &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	names := func(os []map[string]any) string {
		var s []string
		for _, o := range os {
			s = append(s, o["n"].(string))
		}
		return strings.Join(s, ",")
	}
	for field, want := range map[string]string{
		".n": "a,b,c", "count": "b,c,a", "{.cpu}": "a,c,b", ".f": "a,b,c",
	} {
		o := objs()
		if err := sortByPath(o, field); err != nil {
			t.Fatalf("--sort-by=%s: %v", field, err)
		}
		if got := names(o); got != want {
			t.Errorf("--sort-by=%s: %s, want %s", field, got, want)
		}
	}
	if err := sortByPath(objs(), ".nope"); err == nil || err.Error() != `couldn't find any field with path "{.nope}" in the list of objects` {
		t.Errorf("--sort-by=.nope: %v", err)
	}
}
