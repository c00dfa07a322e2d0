package kubectl

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
)

// kubectl's JSONPath templates, as in
//
//	kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}'
//	kubectl get nodes -o jsonpath='{.items[?(@.spec.unschedulable==true)].metadata.name}'
//
// Written by hand, on purpose. Upstream's engine is
// k8s.io/client-go/util/jsonpath, and client-go must not reach the browser
// build; the JSONPath libraries that exist (RFC 9535, e.g.
// github.com/theory/jsonpath) speak another language: no template text
// around {actions}, no {range}/{end}, and other printing rules. This
// follows upstream's grammar and output, over the decoded JSON that kubectl
// prints (map[string]any, []any, string, int64, float64, bool, nil):
//
//	template  := (text | "{" action "}")*
//	action    := "range" path | "end" | path | "'text'" | "\"text\""
//	path      := ("$" | "@")? step*
//	step      := "." name | ".*" | ".." name | "[" index "]" | "[?(" filter ")]"
//	index     := "*" | N | N:M[:S] | 'key' | index "," index   (N, M may be negative)
//	filter    := path | path ("==" | "!=" | "<" | "<=" | ">" | ">=") (path | literal)
//
// An action prints its results separated by spaces; maps and lists print as
// compact JSON, strings as they are, null as "null". Inside {range}, paths
// start at the current item. Where upstream's output depends on Go's random
// map order (.* and .. over a map), this walks keys in sorted order.

// jsonPath is a parsed template.
type jsonPath struct {
	raw   string
	nodes []tmplNode
	// allowMissing prints nothing for a missing field instead of failing
	// (--allow-missing-template-keys, true by default in kubectl get).
	allowMissing bool
	// asJSON prints each action's results as one indented JSON array
	// (-o jsonpath-as-json).
	asJSON bool
}

type tmplNode interface{}

// textNode is template text outside braces.
type textNode string

// pathNode is one {action}: steps applied in order to the current value.
type pathNode []jpStep

// rangeNode is {range path}body{end}: body runs once per result of path.
type rangeNode struct {
	path pathNode
	body []tmplNode
}

// jpStep maps the current values to the next ones.
type jpStep interface {
	eval(jp *jsonPath, in []any) ([]any, error)
}

type (
	fieldStep     string // .name, ['name']
	wildcardStep  struct{}
	recursiveStep struct{} // ..
	literalStep   struct{ v any }
	unionStep     []pathNode // [a,b]
	sliceStep     [3]sliceParam
	filterStep    struct {
		left, right pathNode
		op          string // "exists" for [?(@.x)]
	}
)

type sliceParam struct {
	value          int
	known, derived bool
}

// parseJSONPath parses a template; errors read like upstream's ("unclosed
// action", "invalid array index x").
func parseJSONPath(text string) (*jsonPath, error) {
	p := &jpParser{in: text}
	nodes, err := p.parseTemplate(false)
	if err != nil {
		return nil, err
	}
	return &jsonPath{raw: text, nodes: nodes, allowMissing: true}, nil
}

type jpParser struct {
	in  string
	pos int
}

// parseTemplate reads text and actions until the end, or until {end} when
// inRange.
func (p *jpParser) parseTemplate(inRange bool) ([]tmplNode, error) {
	var nodes []tmplNode
	for p.pos < len(p.in) {
		i := strings.IndexByte(p.in[p.pos:], '{')
		if i < 0 {
			nodes = append(nodes, textNode(p.in[p.pos:]))
			p.pos = len(p.in)
			break
		}
		if i > 0 {
			nodes = append(nodes, textNode(p.in[p.pos:p.pos+i]))
		}
		p.pos += i + 1
		kw := p.keyword()
		switch kw {
		case "range":
			path, err := p.parseAction()
			if err != nil {
				return nil, err
			}
			body, err := p.parseTemplate(true)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, &rangeNode{path: path, body: body})
		case "end":
			if _, err := p.parseAction(); err != nil {
				return nil, err
			}
			if !inRange {
				return nil, fmt.Errorf("not in range, nothing to end")
			}
			return nodes, nil
		default:
			path, err := p.parseAction()
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, path)
		}
	}
	return nodes, nil // an unclosed {range} runs to the end, as upstream
}

// keyword consumes "range" or "end" at the start of an action.
func (p *jpParser) keyword() string {
	rest := strings.TrimLeft(p.in[p.pos:], " \t")
	for _, kw := range []string{"range", "end"} {
		if strings.HasPrefix(rest, kw) && (len(rest) == len(kw) || isJPTerminator(rune(rest[len(kw)]))) {
			p.pos = len(p.in) - len(rest) + len(kw)
			return kw
		}
	}
	return ""
}

// parseAction reads steps up to and including the closing "}".
func (p *jpParser) parseAction() (pathNode, error) {
	var steps pathNode
	for {
		if p.pos >= len(p.in) {
			return nil, fmt.Errorf("unclosed action")
		}
		rest := p.in[p.pos:]
		switch {
		case rest[0] == '}':
			p.pos++
			return steps, nil
		case strings.HasPrefix(rest, "[?("):
			st, err := p.parseFilter()
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
			continue
		case strings.HasPrefix(rest, ".."):
			if n := len(steps); n > 0 {
				if _, ok := steps[n-1].(recursiveStep); ok {
					return nil, fmt.Errorf("invalid multiple recursive descent")
				}
			}
			p.pos += 2
			steps = append(steps, recursiveStep{})
			if r, _ := utf8.DecodeRuneInString(p.in[p.pos:]); isJPAlphaNumeric(r) {
				steps = append(steps, p.parseField())
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(rest)
		switch {
		case r == '\r' || r == '\n':
			return nil, fmt.Errorf("unclosed action")
		case r == ' ' || r == '\t' || r == '@' || r == '$':
			p.pos += w
		case r == '[':
			st, err := p.parseBracket()
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
		case r == '"' || r == '\'':
			s, err := p.parseQuote(byte(r))
			if err != nil {
				return nil, err
			}
			steps = append(steps, literalStep{s})
		case r == '.':
			p.pos++
			steps = append(steps, p.parseField())
		case r == '+' || r == '-' || unicode.IsDigit(r):
			st, err := p.parseNumber()
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
		case isJPAlphaNumeric(r):
			start := p.pos
			for p.pos < len(p.in) {
				r, w := utf8.DecodeRuneInString(p.in[p.pos:])
				if isJPTerminator(r) {
					break
				}
				p.pos += w
			}
			switch id := p.in[start:p.pos]; id {
			case "true", "false":
				steps = append(steps, literalStep{id == "true"})
			default:
				return nil, fmt.Errorf("unrecognized identifier %v", id)
			}
		default:
			return nil, fmt.Errorf("unrecognized character in action: %#U", r)
		}
	}
}

// parseField reads a name after "." up to a terminator; a backslash escapes
// the next character (`.metadata.annotations.kubernetes\.io/change-cause`).
func (p *jpParser) parseField() jpStep {
	var b strings.Builder
	for p.pos < len(p.in) {
		r, w := utf8.DecodeRuneInString(p.in[p.pos:])
		if r == '\\' && p.pos+w < len(p.in) {
			p.pos += w
			r, w = utf8.DecodeRuneInString(p.in[p.pos:])
			b.WriteRune(r)
			p.pos += w
			continue
		}
		if isJPTerminator(r) {
			break
		}
		b.WriteRune(r)
		p.pos += w
	}
	if b.String() == "*" {
		return wildcardStep{}
	}
	return fieldStep(b.String())
}

func (p *jpParser) parseNumber() (jpStep, error) {
	start := p.pos
	if c := p.in[p.pos]; c == '+' || c == '-' {
		p.pos++
	}
	for p.pos < len(p.in) && (p.in[p.pos] == '.' || (p.in[p.pos] >= '0' && p.in[p.pos] <= '9')) {
		p.pos++
	}
	text := p.in[start:p.pos]
	if i, err := strconv.Atoi(text); err == nil {
		return literalStep{int64(i)}, nil
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil {
		return literalStep{f}, nil
	}
	return nil, fmt.Errorf("cannot parse number %s", text)
}

// parseQuote reads a quoted string with Go escapes; single quotes work too.
func (p *jpParser) parseQuote(q byte) (string, error) {
	start := p.pos
	p.pos++
	for {
		if p.pos >= len(p.in) || p.in[p.pos] == '\n' {
			return "", fmt.Errorf("unterminated quoted string")
		}
		if p.in[p.pos] == q && p.in[p.pos-1] != '\\' {
			p.pos++
			break
		}
		p.pos++
	}
	raw := p.in[start:p.pos]
	s, err := unquoteJP(raw)
	if err != nil {
		return "", fmt.Errorf("unquote string %s error %v", raw, err)
	}
	return s, nil
}

// unquoteJP is strconv.Unquote that also takes single-quoted strings of
// any length.
func unquoteJP(s string) (string, error) {
	q := s[0]
	body := s[1 : len(s)-1]
	if !strings.ContainsRune(body, '\\') && !strings.ContainsRune(body, rune(q)) {
		return body, nil
	}
	var b strings.Builder
	for len(body) > 0 {
		r, _, rest, err := strconv.UnquoteChar(body, q)
		if err != nil {
			return "", err
		}
		b.WriteRune(r)
		body = rest
	}
	return b.String(), nil
}

var (
	jpDictKey  = regexp.MustCompile(`^'([^']*)'$`)
	jpSliceRex = regexp.MustCompile(`^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`)
	jpFilter   = regexp.MustCompile(`^([^!<>=]+)([!<>=]+)(.+?)$`)
)

// parseBracket reads [index]: a slice, a 'key', * or a union.
func (p *jpParser) parseBracket() (jpStep, error) {
	end := strings.IndexAny(p.in[p.pos:], "]\n")
	if end < 0 || p.in[p.pos+end] == '\n' {
		return nil, fmt.Errorf("unterminated array")
	}
	text := p.in[p.pos+1 : p.pos+end]
	p.pos += end + 1
	return parseIndex(text)
}

func parseIndex(text string) (jpStep, error) {
	if text == "*" {
		text = ":"
	}
	if parts := strings.Split(text, ","); len(parts) > 1 {
		var u unionStep
		for _, part := range parts {
			st, err := parseIndex(strings.Trim(part, " "))
			if err != nil {
				return nil, err
			}
			u = append(u, pathNode{st})
		}
		return u, nil
	}
	if m := jpDictKey.FindStringSubmatch(text); m != nil {
		return fieldStep(m[1]), nil
	}
	m := jpSliceRex.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("invalid array index %s", text)
	}
	var s sliceStep
	for i := 0; i < 3; i++ {
		v := m[i+1]
		if i > 0 && v != "" {
			v = v[1:] // the ":"
			if v == "" {
				continue // "[1:]": unknown end
			}
		}
		if v == "" {
			if i == 1 { // "[3]" is "[3:4]"
				s[1] = sliceParam{value: s[0].value + 1, known: true, derived: true}
			}
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("array index %s is not a number", v)
		}
		s[i] = sliceParam{value: n, known: true}
	}
	return s, nil
}

// parseFilter reads [?(left op right)] or [?(path)].
func (p *jpParser) parseFilter() (jpStep, error) {
	p.pos += len("[?(")
	start := p.pos
	var quote byte
	for {
		if p.pos >= len(p.in) || p.in[p.pos] == '\n' {
			return nil, fmt.Errorf("unterminated filter")
		}
		c := p.in[p.pos]
		switch {
		case quote != 0:
			if c == quote && p.in[p.pos-1] != '\\' {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ')':
			goto closed
		}
		p.pos++
	}
closed:
	text := p.in[start:p.pos]
	p.pos++
	if p.pos >= len(p.in) || p.in[p.pos] != ']' {
		return nil, fmt.Errorf("unclosed array expect ]")
	}
	p.pos++
	m := jpFilter.FindStringSubmatch(text)
	if m == nil {
		left, err := parseSubAction(text)
		if err != nil {
			return nil, err
		}
		return filterStep{left: left, op: "exists"}, nil
	}
	left, err := parseSubAction(m[1])
	if err != nil {
		return nil, err
	}
	right, err := parseSubAction(m[3])
	if err != nil {
		return nil, err
	}
	switch m[2] {
	case "==", "!=", "<", "<=", ">", ">=":
	default:
		return nil, fmt.Errorf("unrecognized filter operator %s", m[2])
	}
	return filterStep{left: left, right: right, op: m[2]}, nil
}

// parseSubAction parses the inside of one action (a filter's operand).
func parseSubAction(text string) (pathNode, error) {
	p := &jpParser{in: text + "}"}
	return p.parseAction()
}

func isJPTerminator(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\n', '.', ',', '[', ']', '$', '@', '{', '}':
		return true
	}
	return false
}

func isJPAlphaNumeric(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// --- evaluation ---

// execute runs the template over data and writes the output.
func (jp *jsonPath) execute(w io.Writer, data any) error {
	return jp.run(w, jp.nodes, data)
}

func (jp *jsonPath) run(w io.Writer, nodes []tmplNode, cur any) error {
	for _, n := range nodes {
		switch n := n.(type) {
		case textNode:
			if jp.asJSON {
				if err := jp.print(w, []any{string(n)}); err != nil {
					return err
				}
				continue
			}
			if _, err := io.WriteString(w, string(n)); err != nil {
				return err
			}
		case pathNode:
			results, err := n.evalPath(jp, []any{cur})
			if err != nil {
				return err
			}
			if err := jp.print(w, results); err != nil {
				return err
			}
		case *rangeNode:
			results, err := n.path.evalPath(jp, []any{cur})
			if err != nil {
				return err
			}
			for _, r := range results {
				if err := jp.run(w, n.body, r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// find returns the results of a single-action template such as
// "{.metadata.name}" (custom columns and --sort-by use it).
func (jp *jsonPath) find(data any) ([]any, error) {
	var out []any
	for _, n := range jp.nodes {
		switch n := n.(type) {
		case pathNode:
			r, err := n.evalPath(jp, []any{data})
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		case textNode:
			out = append(out, string(n))
		}
	}
	return out, nil
}

// print writes one action's results: space separated, containers as JSON.
func (jp *jsonPath) print(w io.Writer, results []any) error {
	if jp.asJSON {
		if results == nil {
			results = []any{}
		}
		data, err := json.MarshalIndent(results, "", "    ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	for i, r := range results {
		text, err := jpText(r)
		if err != nil {
			return err
		}
		if i < len(results)-1 {
			text += " "
		}
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
	}
	return nil
}

// jpText prints one value the way upstream does.
func jpText(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "null", nil
	case string:
		return v, nil
	case map[string]any, []any:
		data, err := json.Marshal(v)
		return string(data), err
	default:
		return fmt.Sprint(v), nil
	}
}

func (path pathNode) evalPath(jp *jsonPath, in []any) ([]any, error) {
	cur := in
	for _, st := range path {
		var err error
		if cur, err = st.eval(jp, cur); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func (f fieldStep) eval(jp *jsonPath, in []any) ([]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if f == "" {
		return in, nil // "{.}": the value itself
	}
	var out []any
	for _, v := range in {
		if m, ok := v.(map[string]any); ok {
			if x, ok := m[string(f)]; ok {
				out = append(out, x)
			}
		}
	}
	if len(out) == 0 && !jp.allowMissing {
		return nil, fmt.Errorf("%s is not found", string(f))
	}
	return out, nil
}

// children returns a map's values (by sorted key) or a list's items.
func children(v any) []any {
	switch v := v.(type) {
	case map[string]any:
		out := make([]any, 0, len(v))
		for _, k := range sortedKeys(v) {
			out = append(out, v[k])
		}
		return out
	case []any:
		return v
	}
	return nil
}

func (wildcardStep) eval(_ *jsonPath, in []any) ([]any, error) {
	var out []any
	for _, v := range in {
		out = append(out, children(v)...)
	}
	return out, nil
}

// eval of ".." returns every non-empty map and list under (and including)
// each value, parents before children.
func (recursiveStep) eval(_ *jsonPath, in []any) ([]any, error) {
	var out []any
	var walk func(v any)
	walk = func(v any) {
		kids := children(v)
		if len(kids) == 0 {
			return
		}
		out = append(out, v)
		for _, k := range kids {
			walk(k)
		}
	}
	for _, v := range in {
		walk(v)
	}
	return out, nil
}

func (l literalStep) eval(_ *jsonPath, in []any) ([]any, error) {
	out := make([]any, len(in))
	for i := range in {
		out[i] = l.v
	}
	return out, nil
}

func (u unionStep) eval(jp *jsonPath, in []any) ([]any, error) {
	var out []any
	for _, alt := range u {
		r, err := alt.evalPath(jp, in)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

func (s sliceStep) eval(_ *jsonPath, in []any) ([]any, error) {
	var out []any
	for _, v := range in {
		if v == nil {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%T is not array or slice", v)
		}
		n := len(list)
		start, end := 0, n
		if s[0].known {
			start = s[0].value
		}
		if start < 0 {
			start += n
		}
		if s[1].known {
			end = s[1].value
			if end < 0 || (end == 0 && s[1].derived) {
				end += n
			}
		}
		if start == end {
			continue // zero elements asked for
		}
		if start < 0 || start >= n {
			return nil, fmt.Errorf("array index out of bounds: index %d, length %d", start, n)
		}
		if end < 0 || end > n {
			return nil, fmt.Errorf("array index out of bounds: index %d, length %d", end-1, n)
		}
		if start > end {
			return nil, fmt.Errorf("starting index %d is greater than ending index %d", start, end)
		}
		step := 1
		if s[2].known {
			if s[2].value <= 0 {
				return nil, fmt.Errorf("step must be > 0")
			}
			step = s[2].value
		}
		for i := start; i < end; i += step {
			out = append(out, list[i])
		}
	}
	return out, nil
}

func (f filterStep) eval(jp *jsonPath, in []any) ([]any, error) {
	var out []any
	for _, v := range in {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v is not array or slice and cannot be filtered", v)
		}
		for _, item := range list {
			lefts, err := f.left.evalPath(jp, []any{item})
			if f.op == "exists" {
				if err == nil && len(lefts) > 0 {
					out = append(out, item)
				}
				continue
			}
			if err != nil {
				return nil, err
			}
			if len(lefts) == 0 {
				continue
			}
			if len(lefts) > 1 {
				return nil, fmt.Errorf("can only compare one element at a time")
			}
			rights, err := f.right.evalPath(jp, []any{item})
			if err != nil {
				return nil, err
			}
			if len(rights) == 0 {
				continue
			}
			if len(rights) > 1 {
				return nil, fmt.Errorf("can only compare one element at a time")
			}
			pass, err := compareJP(lefts[0], rights[0], f.op)
			if err != nil {
				return nil, err
			}
			if pass {
				out = append(out, item)
			}
		}
	}
	return out, nil
}

// compareJP compares two values like text/template's eq/lt: numbers of one
// kind, strings, and (for == and !=) booleans; anything else is an error.
func compareJP(a, b any, op string) (bool, error) {
	ka, kb := jpKind(a), jpKind(b)
	if ka == "" || kb == "" {
		return false, fmt.Errorf("invalid type for comparison")
	}
	if ka != kb {
		return false, fmt.Errorf("incompatible types for comparison")
	}
	var c int
	switch ka {
	case "bool":
		if op != "==" && op != "!=" {
			return false, fmt.Errorf("invalid type for comparison")
		}
		if a.(bool) != b.(bool) {
			c = 1
		}
	case "int":
		x, y := a.(int64), b.(int64)
		c = cmpOrdered(x, y)
	case "float":
		c = cmpOrdered(a.(float64), b.(float64))
	case "string":
		c = strings.Compare(a.(string), b.(string))
	}
	switch op {
	case "==":
		return c == 0, nil
	case "!=":
		return c != 0, nil
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, fmt.Errorf("unrecognized filter operator %s", op)
}

func jpKind(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	}
	return ""
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// relaxedJSONPath is kubectl's RelaxedJSONPathExpression for
// custom-columns and --sort-by: "metadata.name", ".metadata.name",
// "{metadata.name}" and "{.metadata.name}" all mean "{.metadata.name}".
func relaxedJSONPath(expr string) (string, error) {
	if expr == "" {
		return "", nil
	}
	m := relaxedJSONPathRex.FindStringSubmatch(expr)
	if m == nil {
		return "", fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
	}
	spec := m[1]
	if spec == "" {
		spec = m[2]
	}
	return "{." + spec + "}", nil
}

var relaxedJSONPathRex = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// sortByPath sorts objects by the value at a relaxed JSONPath, as
// `kubectl get --sort-by` does: numbers numerically, strings that are both
// quantities ("100m", "1Gi") as quantities, other strings as text; objects
// without the field first. It fails when no object has the field.
func sortByPath(objs []map[string]any, field string) error {
	idx, err := sortOrder(objs, field)
	if err != nil {
		return err
	}
	sorted := make([]map[string]any, len(objs))
	for k, i := range idx {
		sorted[k] = objs[i]
	}
	copy(objs, sorted)
	return nil
}

// sortOrder returns the order of objs under --sort-by=field: idx[k] is the
// index of the object that goes k-th.
func sortOrder(objs []map[string]any, field string) ([]int, error) {
	expr, err := relaxedJSONPath(field)
	if err != nil {
		return nil, err
	}
	jp, err := parseJSONPath(expr)
	if err != nil {
		return nil, err
	}
	keys := make([]any, len(objs))
	has := make([]bool, len(objs))
	found := false
	for i, o := range objs {
		r, err := jp.find(o)
		if err != nil {
			return nil, err
		}
		if len(r) > 0 {
			keys[i], has[i], found = r[0], true, true
		}
	}
	if !found && len(objs) > 0 {
		return nil, fmt.Errorf("couldn't find any field with path %q in the list of objects", expr)
	}
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	var sortErr error
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if !has[i] {
			return has[j]
		}
		if !has[j] {
			return false
		}
		less, err := lessJP(keys[i], keys[j])
		if err != nil && sortErr == nil {
			sortErr = fmt.Errorf("field %s is an unsortable type: %v", expr, err)
		}
		return less
	})
	if sortErr != nil {
		return nil, sortErr
	}
	return idx, nil
}

// lessJP orders two sort keys like upstream's isLess for decoded JSON:
// null first, then numbers, quantities or strings of one kind.
func lessJP(a, b any) (bool, error) {
	switch {
	case a == nil && b == nil:
		return false, nil
	case a == nil:
		return true, nil
	case b == nil:
		return false, nil
	}
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return x < y, nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return x < y, nil
		}
	case string:
		if y, ok := b.(string); ok {
			qx, errx := resource.ParseQuantity(x)
			qy, erry := resource.ParseQuantity(y)
			if errx == nil && erry == nil {
				return qx.Cmp(qy) < 0, nil
			}
			return x < y, nil
		}
	default:
		return false, fmt.Errorf("unsortable type: %T", a)
	}
	return false, fmt.Errorf("unsortable interface: %T and %T", a, b)
}
