package lesson

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// Front matter is read as a YAML node tree (go.yaml.in/yaml/v3, the parser
// under sigs.k8s.io/yaml) rather than decoded straight into a struct, so
// that every problem names its line: an unknown field, a wrong type, a
// missing title. Unknown fields are errors, as in sigs.k8s.io/yaml's
// UnmarshalStrict, with the same wording (unknown field "titel").

const maxMinutes = 120

var frontMatterFields = "title, summary, minutes, setup and nodes"

var yamlLine = regexp.MustCompile(`line ([0-9]+): ([^\n]*)`)

// frontMatter reads the YAML between the --- lines; line0 is the file's
// line of its first line.
func (p *parser) frontMatter(src []byte, line0 int) {
	at := func(n *yaml.Node) int { return line0 + n.Line - 1 }
	// sigs.k8s.io/yaml (strict: a key given twice is an error) reports
	// syntax errors at the right line more often than yaml.v3 does.
	if _, err := sigsyaml.YAMLToJSONStrict(src); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		found := false
		for _, m := range yamlLine.FindAllStringSubmatch(msg, -1) {
			n, _ := strconv.Atoi(m[1])
			p.errorf(line0+n-1, "front matter: %s", m[2])
			found = true
		}
		if !found {
			p.errorf(1, "front matter: %s", strings.TrimPrefix(msg, "yaml: "))
		}
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		p.errorf(1, "front matter: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	var m *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		m = doc.Content[0]
	}
	if m != nil && m.Kind != yaml.MappingNode {
		p.errorf(at(m), "front matter must be fields (title: ..., summary: ..., minutes: ...), not a %s", kindName(m))
		return
	}
	seen := map[string]int{}
	if m != nil {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			line := at(k)
			seen[k.Value] = line
			switch k.Value {
			case "title":
				p.l.Title = p.text(v, "title", at)
			case "summary":
				p.l.Summary = p.text(v, "summary", at)
			case "minutes":
				n, err := strconv.Atoi(v.Value)
				if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > maxMinutes {
					p.errorf(at(v), "minutes must be a whole number from 1 to %d, not %s", maxMinutes, shown(v))
					continue
				}
				p.l.Minutes = n
			case "setup":
				p.setup(v, at)
			case "nodes":
				p.nodes(v, at)
			default:
				p.errorf(line, "front matter: unknown field %q (the fields are %s)", k.Value, frontMatterFields)
			}
		}
	}
	for _, f := range []string{"title", "summary", "minutes"} {
		if _, ok := seen[f]; !ok {
			p.errorf(1, "front matter: %s is missing", f)
		}
	}
}

// text reads a field that is one line of text.
func (p *parser) text(v *yaml.Node, field string, at func(*yaml.Node) int) string {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" {
		p.errorf(at(v), "%s must be text, not %s", field, shown(v))
		return ""
	}
	return strings.TrimSpace(v.Value)
}

func (p *parser) setup(v *yaml.Node, at func(*yaml.Node) int) {
	if v.Kind != yaml.SequenceNode {
		p.errorf(at(v), "setup must be a list of console lines (- kubectl create namespace shop), not %s", shown(v))
		return
	}
	for i, item := range v.Content {
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" || strings.TrimSpace(item.Value) == "" {
			p.errorf(at(item), "setup[%d] must be a console line, not %s", i, shown(item))
			continue
		}
		p.l.Setup = append(p.l.Setup, strings.TrimRight(item.Value, "\n"))
		p.l.setupLines = append(p.l.setupLines, at(item))
	}
}

var nodeFields = "name, cpu, memory, labels and taints"

func (p *parser) nodes(v *yaml.Node, at func(*yaml.Node) int) {
	if v.Kind != yaml.SequenceNode {
		p.errorf(at(v), "nodes must be a list of nodes (- name: node-1), not %s", shown(v))
		return
	}
	names := map[string]int{}
	for i, item := range v.Content {
		if item.Kind != yaml.MappingNode {
			p.errorf(at(item), "nodes[%d] must be fields (name:, cpu:, memory:, labels:, taints:), not %s", i, shown(item))
			continue
		}
		var n Node
		ok := true
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, val := item.Content[j], item.Content[j+1]
			field := fmt.Sprintf("nodes[%d].%s", i, k.Value)
			switch k.Value {
			case "name", "cpu", "memory":
				if val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
					p.errorf(at(val), "%s must be text, not %s", field, shown(val))
					ok = false
					continue
				}
				switch k.Value {
				case "name":
					n.Name = val.Value
				case "cpu":
					n.CPU = val.Value
				case "memory":
					n.Memory = val.Value
				}
			case "labels":
				if val.Kind != yaml.MappingNode {
					p.errorf(at(val), "%s must be a map (labels: {disktype: ssd}), not %s", field, shown(val))
					ok = false
					continue
				}
				n.Labels = map[string]string{}
				for l := 0; l+1 < len(val.Content); l += 2 {
					lk, lv := val.Content[l], val.Content[l+1]
					if lk.Kind != yaml.ScalarNode || lv.Kind != yaml.ScalarNode {
						p.errorf(at(lk), "%s: a label is key: value, not %s", field, shown(lv))
						ok = false
						continue
					}
					value := lv.Value
					if lv.Tag == "!!null" {
						value = ""
					}
					n.Labels[lk.Value] = value
				}
			case "taints":
				if val.Kind != yaml.SequenceNode {
					p.errorf(at(val), "%s must be a list (taints: [\"dedicated=infra:NoSchedule\"]), not %s", field, shown(val))
					ok = false
					continue
				}
				for _, t := range val.Content {
					if t.Kind != yaml.ScalarNode {
						p.errorf(at(t), "%s: a taint is key=value:Effect, not %s", field, shown(t))
						ok = false
						continue
					}
					n.Taints = append(n.Taints, t.Value)
				}
			default:
				p.errorf(at(k), "nodes[%d]: unknown field %q (the fields are %s)", i, k.Value, nodeFields)
				ok = false
			}
		}
		if !ok {
			continue
		}
		if _, err := nodeSpec(n); err != nil {
			p.errorf(at(item), "nodes[%d]: %v", i, err)
			continue
		}
		if first, dup := names[n.Name]; dup {
			p.errorf(at(item), "nodes[%d]: node %q is already defined at line %d", i, n.Name, first)
			continue
		}
		names[n.Name] = at(item)
		p.l.Nodes = append(p.l.Nodes, n)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "map"
	case yaml.AliasNode:
		return "alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// shown describes a value in a message: "ten", a list, a map, nothing.
func shown(n *yaml.Node) string {
	switch k := kindName(n); k {
	case "list", "map", "alias":
		return "a " + k
	default:
		return k
	}
}
