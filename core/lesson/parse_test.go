package lesson

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestParseGolden parses the test lessons and compares their JSON (what the
// page reads) with testdata/*.json.
func TestParseGolden(t *testing.T) {
	for _, file := range []string{"testdata/lessons/01-small/en.md", "testdata/lessons/01-small/ja.md"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Parse(file, data)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(l); err != nil {
				t.Fatal(err)
			}
			got := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			golden := filepath.Join("testdata", "golden", strings.ReplaceAll(strings.TrimPrefix(file, "testdata/lessons/"), "/", "-")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", file, golden, got)
			}
		})
	}
}

// lesson builds a lesson file from a front matter and a body.
func lessonFile(front, body string) string {
	if front == "" {
		front = "title: T\nsummary: S\nminutes: 5\n"
	}
	return "---\n" + front + "---\n" + body
}

const okStep = "## Step\n\n```run\nkubectl create namespace a\n```\n\n```check\nkubectl get ns a\n```\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		path string // default lessons/01-x/en.md
		file string
		want []string // each a "line: message" fragment that must appear, in order
	}{
		{"no front matter", "", "## Step\n", []string{":1: a lesson starts with front matter"}},
		{"not utf-8", "", lessonFile("", "## Step\n\nLa\xe9 \x80\n"+strings.TrimPrefix(okStep, "## Step\n")), []string{":8: the file is not UTF-8 text (byte 50): save it as UTF-8"}},
		{"front matter not closed", "", "---\ntitle: T\n", []string{":1: front matter is not closed"}},
		{"yaml syntax", "", lessonFile("title: T\nsummary: [a\nminutes: 5\n", okStep), []string{":3: front matter: "}},
		{"unknown field", "", lessonFile("title: T\nsummary: S\nminutes: 5\ntitel: x\n", okStep), []string{`:5: front matter: unknown field "titel"`}},
		{"missing title", "", lessonFile("summary: S\nminutes: 5\n", okStep), []string{":1: front matter: title is missing"}},
		{"missing summary and minutes", "", lessonFile("title: T\n", okStep), []string{":1: front matter: summary is missing", ":1: front matter: minutes is missing"}},
		{"minutes out of range", "", lessonFile("title: T\nsummary: S\nminutes: 500\n", okStep), []string{":4: minutes must be a whole number from 1 to 120, not \"500\""}},
		{"minutes not a number", "", lessonFile("title: T\nsummary: S\nminutes: ten\n", okStep), []string{":4: minutes must be a whole number"}},
		{"duplicate field", "", lessonFile("title: T\ntitle: U\nsummary: S\nminutes: 5\n", okStep), []string{`:3: front matter: key "title" already set in map`}},
		{"setup not a list", "", lessonFile("title: T\nsummary: S\nminutes: 5\nsetup: kubectl get pods\n", okStep), []string{":5: setup must be a list"}},
		{"node unknown field", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n    cpus: 2\n", okStep), []string{`:7: nodes[0]: unknown field "cpus"`}},
		{"node bad cpu", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n    cpu: two\n", okStep), []string{`:6: nodes[0]: cpu: Invalid value: "two": quantities must match the regular expression`}},
		{"node bad taint effect", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n    taints: [a=b:NoScheduler]\n", okStep), []string{":6: nodes[0]: taints: invalid taint effect: NoScheduler, unsupported taint effect"}},
		{"node taint without effect", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n    taints: [a=b]\n", okStep), []string{":6: nodes[0]: taints: invalid taint spec: a=b"}},
		{"node bad label", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n    labels: {\"a b\": c}\n", okStep), []string{`:6: nodes[0]: labels: Invalid value: "a b": name part must consist of alphanumeric characters`}},
		{"node twice", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n1\n  - name: n1\n", okStep), []string{`:7: nodes[1]: node "n1" is already defined at line 6`}},
		{"node without name", "", lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - cpu: \"2\"\n", okStep), []string{":6: nodes[0]: name is required"}},
		{"typo chek", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```chek\nkubectl get pods\n```\n"),
			[]string{":12: unknown block type ```chek: did you mean ```check?", ":6: step 1 \"Step\" has no check"}},
		{"typo runn", "", lessonFile("", "## Step\n\n```runn\nkubectl get pods\n```\n\n```check\nkubectl get ns\n```\n"), []string{":8: unknown block type ```runn: did you mean ```run?"}},
		{"capital Check", "", lessonFile("", "## Step\n\n```Check\nkubectl get pods\n```\n"), []string{":8: unknown block type ```Check: did you mean ```check?"}},
		{"hint fence", "", lessonFile("", "## Step\n\n```hint\nuse rs\n```\n"+strings.TrimPrefix(okStep, "## Step\n")), []string{":8: ```hint is not a block: a hint is a blockquote"}},
		{"attributes on run", "", lessonFile("", "## Step\n\n```run now\nkubectl get pods\n```\n"), []string{":8: ```run takes nothing after it, not \"now\""}},
		{"check with no command", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```check\n== 3\n```\n"), []string{`:13: check: "== 3" has no command before ==`}},
		{"bad regexp", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```check\nkubectl get pods =~ ^(Running\n```\n"), []string{`:13: check: bad regular expression "^(Running": error parsing regexp: missing closing )`}},
		{"empty regexp", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```check\nkubectl get pods =~\n```\n"), []string{`:13: check: =~ needs a regular expression`}},
		{"unterminated quote in check", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```check\nkubectl get pods -o 'x == 3\n```\n"), []string{`:13: check: unterminated ' quote`}},
		{"empty check block", "", lessonFile("", "## Step\n\n```run\nkubectl get pods\n```\n\n```check\n# nothing\n```\n"), []string{`:12: the ` + "```check block is empty"}},
		{"block before the first heading", "", lessonFile("", "Intro.\n\n```run\nkubectl get pods\n```\n\n"+okStep), []string{":8: a ```run block before the first ## heading: every step starts with a ## heading"}},
		{"check before the first heading", "", lessonFile("", "```check\nkubectl get pods\n```\n"+okStep), []string{":6: a ```check block before the first ## heading"}},
		{"hint before the first heading", "", lessonFile("", "> Hint: no\n\n"+okStep), []string{":6: a hint before the first ## heading"}},
		{"h1", "", lessonFile("", "# Title\n\n"+okStep), []string{":6: a # heading is not allowed"}},
		{"empty step", "", lessonFile("", "## Empty\n\n"+okStep), []string{`:6: step 1 "Empty" is empty`}},
		{"step without check", "", lessonFile("", "## Talk\n\nJust words.\n\n"+okStep), []string{`:6: step 1 "Talk" has no check`}},
		{"no steps", "", lessonFile("", "Only an introduction.\n"), []string{":6: a lesson needs at least one step"}},
		{"file block without a name", "", lessonFile("", "## Step\n\n```yaml file=\na: b\n```\n"+strings.TrimPrefix(okStep, "## Step\n")), []string{":8: a file block needs a name: ```yaml file=NAME"}},
		{"file block bare", "", lessonFile("", "## Step\n\n```file\na: b\n```\n"+strings.TrimPrefix(okStep, "## Step\n")), []string{":8: a file block names its language and file"}},
		{"file name with a folder", "", lessonFile("", "## Step\n\n```yaml file=../x.yaml\na: b\n```\n"+strings.TrimPrefix(okStep, "## Step\n")), []string{`:8: file name "../x.yaml"`}},
		{"bad source line", "", lessonFile("", okStep+"\n```source\nupstream: pkg/scheduler\ngithub: x\n```\n"), []string{`:18: a source line is upstream: PATH (in kubernetes/kubernetes) or kubetab: PATH (here), not "github: x"`}},
		{"raw html", "", lessonFile("", okStep+"\n<script>alert(1)</script>\n"), []string{":16: raw HTML is not allowed"}},
		{"inline raw html", "", lessonFile("", okStep+"\nsee <b>this</b>\n"), []string{`:16: raw HTML "<b>" is not allowed`}},
		{"heredoc not closed", "", lessonFile("", "## Step\n\n```run\ncat <<EOF > a.yaml\nkind: x\n```\n\n```check\nkubectl get ns\n```\n"), []string{":9: the heredoc <<EOF is not closed"}},
		{"bad file name", "lessons/01-x/de.md", lessonFile("", okStep), []string{"lessons/01-x/de.md: a lesson file is named en.md or ja.md, not de.md"}},
		{"bad folder name", "lessons/first/en.md", lessonFile("", okStep), []string{`lessons/first/en.md: lesson folder "first" must be named NN-slug`}},
		{"several problems at once", "", lessonFile("title: T\nsummary: S\nminutes: 0\n", "# H\n\n## Empty\n\n## S\n\n```chek\nx\n```\n"),
			[]string{":4: minutes must be", ":6: a # heading", `:8: step 1 "Empty" is empty`, ":12: unknown block type ```chek", `:10: step 2 "S" is empty`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "lessons/01-x/en.md"
			}
			l, err := Parse(path, []byte(tt.file))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %v, %v; want a *ParseError", l, err)
			}
			if l != nil {
				t.Errorf("Parse returned a lesson beside its error")
			}
			msg := err.Error()
			rest := msg
			for _, w := range tt.want {
				if !strings.HasPrefix(w, path) {
					w = path + w
				}
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error lacks %q (in order); got:\n%s", w, msg)
				}
				rest = rest[i+len(w):]
			}
			for _, line := range strings.Split(msg, "\n") {
				if !strings.HasPrefix(line, path+":") {
					t.Errorf("line %q does not start with %s:", line, path)
				}
			}
		})
	}
}

func TestParseBlocks(t *testing.T) {
	file := lessonFile("title: T\nsummary: S\nminutes: 5\nsetup:\n  - kubectl create ns a\n  - |\n    cat <<EOF > x.yaml\n    a: b\n    EOF\n", `Intro with **bold** and a [link](javascript:alert(1)).

## Files and `+"`code`"+`

`+"```yaml file=web.yaml"+`
apiVersion: v1
kind: ConfigMap
`+"```"+`

`+"```run"+`
kubectl apply -f web.yaml

kubectl get cm \
  -o name
cat <<'EOF' > b.yaml
kind: x
EOF
# a comment
`+"```"+`

> Hint: first **hint**

> ヒント：二つ目

> A quote, not a hint.

`+"```sh"+`
echo example
`+"```"+`

`+"```check"+`
# comment
kubectl get cm -o jsonpath='{.items[?(@.metadata.name == "x")].metadata.name}' == x
kubectl get pods =~ a == b
kubectl get pods !=
kubectl get cm x
`+"```"+`
`)
	l, err := Parse("lessons/07-files/ja.md", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if l.Slug != "07-files" || l.Lang != "ja" {
		t.Errorf("slug, lang = %q, %q", l.Slug, l.Lang)
	}
	if want := []string{"kubectl create ns a", "cat <<EOF > x.yaml\na: b\nEOF"}; !equalStrings(l.Setup, want) {
		t.Errorf("setup = %q, want %q", l.Setup, want)
	}
	if strings.Contains(l.Intro, "javascript") || !strings.Contains(l.Intro, "<strong>bold</strong>") {
		t.Errorf("intro = %q: want bold and no javascript: link", l.Intro)
	}
	st := l.Steps[0]
	if st.Title != "Files and code" || st.Line != 14 {
		t.Errorf("step title, line = %q, %d", st.Title, st.Line)
	}
	var kinds []string
	for _, b := range st.Blocks {
		kinds = append(kinds, b.Kind)
	}
	if want := []string{KindFile, KindRun, KindHint, KindHint, KindText, KindCode}; !equalStrings(kinds, want) {
		t.Fatalf("blocks = %v, want %v", kinds, want)
	}
	if f := st.Blocks[0]; f.File != "web.yaml" || f.Lang != "yaml" || f.Content != "apiVersion: v1\nkind: ConfigMap\n" || f.Line != 16 {
		t.Errorf("file block = %+v", f)
	}
	if want := []string{"kubectl apply -f web.yaml", "kubectl get cm \\\n  -o name", "cat <<'EOF' > b.yaml\nkind: x\nEOF", "# a comment"}; !equalStrings(st.Blocks[1].Lines, want) {
		t.Errorf("run lines = %q, want %q", st.Blocks[1].Lines, want)
	}
	if want := []int{22, 24, 26, 29}; !equalInts(st.Blocks[1].lineNos, want) {
		t.Errorf("run line numbers = %v, want %v", st.Blocks[1].lineNos, want)
	}
	if h := st.Blocks[2].HTML; h != "<p>first <strong>hint</strong></p>" {
		t.Errorf("hint 1 = %q", h)
	}
	if h := st.Blocks[3].HTML; h != "<p>二つ目</p>" {
		t.Errorf("hint 2 = %q", h)
	}
	if b := st.Blocks[5]; b.Lang != "sh" || b.Content != "echo example\n" {
		t.Errorf("code block = %+v", b)
	}
	want := []Check{
		{Line: 44, Command: `kubectl get cm -o jsonpath='{.items[?(@.metadata.name == "x")].metadata.name}'`, Op: OpEqual, Want: "x"},
		{Line: 45, Command: "kubectl get pods", Op: OpMatch, Want: "a == b"},
		{Line: 46, Command: "kubectl get pods", Op: OpNotEqual, Want: ""},
		{Line: 47, Command: "kubectl get cm x", Op: OpSucceeds},
	}
	if len(st.Checks) != len(want) {
		t.Fatalf("checks = %+v", st.Checks)
	}
	for i, c := range st.Checks {
		if !sameCheck(c, want[i]) || c.Line != want[i].Line {
			t.Errorf("check %d = %+v, want %+v", i, c, want[i])
		}
	}
}

func TestLookalike(t *testing.T) {
	for word, want := range map[string]string{
		"chek": "check", "checks": "check", "Check": "check", "RUN": "run", "runn": "run", "rn": "run",
		"soluton": "solution", "solutions": "solution", "sorce": "source", "files": "file", "hints": "hint",
		"rust": "", "ruby": "", "rs": "", "r": "", "ini": "", "sh": "", "yaml": "", "json": "", "go": "",
		"text": "", "console": "", "shell": "", "diff": "", "html": "", "c": "", "python": "",
	} {
		got, _ := lookalike(word)
		if got != want {
			t.Errorf("lookalike(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestLoadAndCompare(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata/lessons/01-small", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	en, ja := read("en.md"), read("ja.md")
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string // fragments of the error, in order; none: no error
		n     int      // lessons returned
	}{
		{"good", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(ja)}, "l/README.md": {Data: []byte("x")}}, nil, 2},
		{"missing ja.md", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}}, []string{"l/01-small/ja.md: missing: lesson 01-small has no ja.md"}, 0},
		{"extra language", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(ja)}, "l/01-small/fr.md": {Data: []byte(ja)}}, []string{"l/01-small/fr.md: a lesson file is named en.md or ja.md, not fr.md"}, 2},
		{"missing translated step", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(ja[:strings.Index(ja, "## スケールする")])}},
			[]string{`l/01-small/ja.md: step 2 "Scale it" (l/01-small/en.md:34) has no translation here: 1 steps here, 2 in l/01-small/en.md`}, 0},
		{"different check", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(strings.Replace(ja, "=~ ^3$", "=~ ^4$", 1))}},
			[]string{"l/01-small/ja.md:47: step 2: this check differs from l/01-small/en.md:45"}, 0},
		{"different run line", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(strings.Replace(ja, "--replicas=2 -n shop", "--replicas=2 -n default", 1))}},
			[]string{"l/01-small/ja.md:20: step 1: this run block differs from l/01-small/en.md:20"}, 0},
		{"different setup", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(strings.Replace(ja, "namespace shop", "namespace store", 1))}},
			[]string{"l/01-small/ja.md:1: setup differs from l/01-small/en.md's"}, 0},
		{"different nodes", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(strings.Replace(ja, "memory: 4Gi", "memory: 8Gi", 1))}},
			[]string{"l/01-small/ja.md:1: nodes differ from l/01-small/en.md's"}, 0},
		{"solution instead of run", fstest.MapFS{"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(strings.Replace(ja, "```run", "```solution", 1))}},
			[]string{"l/01-small/ja.md:20: step 1: a solution block here, a run block at l/01-small/en.md:20"}, 0},
		{"malformed file beside a good lesson", fstest.MapFS{
			"l/01-small/en.md": {Data: []byte(en)}, "l/01-small/ja.md": {Data: []byte(ja)},
			"l/02-bad/en.md": {Data: []byte(lessonFile("", "## S\n\n```chek\nx\n```\n"))}, "l/02-bad/ja.md": {Data: []byte(lessonFile("", okStep))},
		}, []string{"l/02-bad/en.md:8: unknown block type ```chek"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lessons, err := Load(tt.files, "l")
			if len(lessons) != tt.n {
				t.Errorf("Load returned %d lessons, want %d", len(lessons), tt.n)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if lessons[0].Lang != "en" || lessons[1].Lang != "ja" {
					t.Errorf("order: %s, %s", lessons[0].Path, lessons[1].Path)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded; want %q", tt.want)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q; got:\n%s", w, msg)
				}
			}
		})
	}
	// One lesson's folder loads too.
	lessons, err := Load(os.DirFS("testdata/lessons"), "01-small")
	if err != nil || len(lessons) != 2 {
		t.Errorf("Load(01-small) = %d lessons, %v", len(lessons), err)
	}
}

func TestNodeSpecs(t *testing.T) {
	specs, err := NodeSpecs([]Node{
		{Name: "node-1", CPU: "2", Memory: "4Gi", Labels: map[string]string{"disktype": "ssd"}, Taints: []string{"dedicated=infra:NoSchedule", "gpu:NoExecute"}},
		{Name: "node-2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := specs[0]; got.CPU.String() != "2" || got.Memory.String() != "4Gi" || got.Labels["disktype"] != "ssd" ||
		len(got.Taints) != 2 || got.Taints[0].ToString() != "dedicated=infra:NoSchedule" || got.Taints[1].ToString() != "gpu:NoExecute" {
		t.Errorf("node-1 = %+v", got)
	}
	if got := specs[1]; got.CPU.String() != DefaultNodeCPU || got.Memory.String() != DefaultNodeMemory {
		t.Errorf("node-2 = %+v", got)
	}
	if specs, err := NodeSpecs(nil); specs != nil || err != nil {
		t.Errorf("NodeSpecs(nil) = %v, %v", specs, err)
	}
	for _, tt := range []struct {
		node Node
		want string
	}{
		{Node{Name: "Node_1"}, `nodes[0]: name: Invalid value: "Node_1": a lowercase RFC 1123 subdomain`},
		{Node{Name: "n", Memory: "-1Gi"}, `nodes[0]: memory: Invalid value: "-1Gi": must be greater than 0`},
		{Node{Name: "n", Taints: []string{"a=b=c:NoSchedule"}}, "nodes[0]: taints: invalid taint spec: a=b=c:NoSchedule"},
		{Node{Name: "n", Taints: []string{"a:b:c"}}, "nodes[0]: taints: invalid taint spec: a:b:c"},
		{Node{Name: "n", Taints: []string{"a=b:NoSchedule", "a=c:NoSchedule"}}, "nodes[0]: taints: duplicated taints with the same key and effect: a=c:NoSchedule"},
		{Node{Name: "n", Taints: []string{"-a:NoSchedule"}}, "nodes[0]: taints: invalid taint spec: -a:NoSchedule, name part must consist of alphanumeric characters"},
		{Node{Name: "n", Taints: []string{"a=b c:NoSchedule"}}, "nodes[0]: taints: invalid taint spec: a=b c:NoSchedule, a valid label must be"},
	} {
		_, err := NodeSpecs([]Node{tt.node})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("NodeSpecs(%+v) = %v, want %q", tt.node, err, tt.want)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkParse parses the longest lesson of the course (the worker parses
// a lesson an author opens, so it should take well under a frame).
func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob("../../lessons/*/en.md")
	var path string
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err == nil && len(d) > len(data) {
			path, data = f, d
		}
	}
	if data == nil {
		b.Skip("no lessons")
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(path, data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestJapaneseLineBreaks: a line break in Japanese prose joins the lines
// without a space (the source wraps lines; Japanese has no spaces between
// words), while English keeps its space, after punctuation too.
func TestJapaneseLineBreaks(t *testing.T) {
	file := lessonFile("title: T\nsummary: S\nminutes: 5\n", "## 一歩目\n\nPod が作られます。\nその中の `nodeName` を\n探してください。\nIt is a\nPod.\nAsk as jane.\nThen a review:\nthe answer, yes\nor no.\n\n```check\nkubectl get pods\n```\n")
	l, err := Parse("lessons/01-a/ja.md", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	html := l.Steps[0].Blocks[0].HTML
	for _, want := range []string{"作られます。その中の", "を探してください。", "It is a\nPod.", "jane.\nThen", "review:\nthe", "answer, yes"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML %q lacks %q", html, want)
		}
	}
}
