package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runKubetab runs the kubetab command with args and returns its output and
// error.
func runKubetab(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestLessonsVerify(t *testing.T) {
	if testing.Short() || runtime.GOOS == "js" {
		t.Skip("starts clusters")
	}
	empty := t.TempDir()
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "01-bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"en", "ja"} {
		body := "---\ntitle: T\nsummary: S\nminutes: 5\n---\n## S\n\n```chek\nkubectl get ns\n```\n"
		if err := os.WriteFile(filepath.Join(bad, "01-bad", lang+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join("..", "..", "core", "lesson", "testdata", "lessons")
	tests := []struct {
		name string
		args []string
		err  string // "" for success
		out  []string
	}{
		{"no lessons", []string{"lessons", "verify", empty}, "no lessons found in " + empty, nil},
		{"missing folder", []string{"lessons", "verify", filepath.Join(empty, "nothere")}, "some lesson files are malformed", []string{"no such file or directory"}},
		{"malformed", []string{"lessons", "verify", bad}, "some lesson files are malformed", []string{
			filepath.Join(bad, "01-bad", "en.md") + ":8: unknown block type ```chek",
			filepath.Join(bad, "01-bad", "ja.md") + ":8: unknown block type ```chek"}},
		{"good, both languages", []string{"lessons", "verify", good}, "", []string{"ok    01-small (en)  2/2 steps", "ok    01-small (ja)  2/2 steps", "2 lesson files verified in"}},
		{"one lesson folder", []string{"lessons", "verify", filepath.Join(good, "01-small")}, "", []string{"ok    01-small (en)", "ok    01-small (ja)"}},
		{"one file", []string{"lessons", "verify", filepath.Join(good, "01-small", "ja.md")}, "", []string{"ok    01-small (ja)", "1 lesson files verified"}},
		{"list", []string{"lessons", "list", good}, "", []string{"01-small                         ja         3     2  小さなレッスン"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runKubetab(t, tt.args...)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error = %v, want %q; output:\n%s", err, tt.err, out)
			}
			for _, w := range tt.out {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
