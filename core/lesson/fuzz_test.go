package lesson

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds the parser arbitrary files: it must never panic, and it
// either returns a lesson whose every step has a check, or a *ParseError
// whose every problem names the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/lessons/*/*.md")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add(lessonFile("", okStep))
	f.Add(lessonFile("title: T\nsummary: S\nminutes: 5\nnodes:\n  - name: n\n    taints: [a=b:NoSchedule]\n", "## S\n\n> Hint: h\n\n```yaml file=a.yaml\nx\n```\n```check\na == b\n```\n"))
	f.Add("---\n---\n# x\n```chek\n```\n")
	const path = "lessons/01-fuzz/en.md"
	f.Fuzz(func(t *testing.T, data string) {
		l, err := Parse(path, []byte(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 || l != nil {
				t.Fatalf("Parse = %v, %#v", l, err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, path) {
					t.Fatalf("problem %q does not name the file", line)
				}
			}
			return
		}
		if len(l.Steps) == 0 {
			t.Fatal("a lesson with no step parsed")
		}
		for _, st := range l.Steps {
			if len(st.Checks) == 0 || st.Line < 1 {
				t.Fatalf("step %+v: no check, or no line", st)
			}
			for _, c := range st.Checks {
				if c.Command == "" {
					t.Fatalf("check with no command: %+v", c)
				}
			}
		}
		if _, err := json.Marshal(l); err != nil {
			t.Fatal(err)
		}
	})
}
