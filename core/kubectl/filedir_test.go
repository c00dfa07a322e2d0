package kubectl

import (
	"strings"
	"testing"
)

// -f DIR reads the directory's .json, .yaml and .yml files in name order;
// -R goes into its subdirectories; a file named on its own is read whatever
// its extension; a directory with nothing to read and a missing path are
// errors that send nothing (upstream: the resource builder's Path and
// ExpandPathsToFileVisitors).
func TestFilenameDirectory(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	tests := []struct {
		name     string
		line     string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{name: "dir", line: "apply -f app",
			wantOut: "configmap/a created\nconfigmap/b created\nconfigmap/j created\n"},
		{name: "dir with a slash", line: "apply -f app/",
			wantOut: "configmap/a created\nconfigmap/b created\nconfigmap/j created\n"},
		{name: "recursive", line: "apply -R -f app",
			wantOut: "configmap/a created\nconfigmap/b created\nconfigmap/j created\nconfigmap/c created\n"},
		{name: "working directory", line: "create -f .",
			wantOut: "configmap/top created\n"},
		{name: "working directory recursive", line: "create -f . --recursive",
			wantOut: "configmap/a created\nconfigmap/b created\nconfigmap/j created\nconfigmap/c created\nconfigmap/top created\n"},
		{name: "file named on its own", line: "apply -f app/notes.txt",
			wantOut: "configmap/txt created\n"},
		{name: "nothing to read", line: "apply -f docs",
			wantErr: "error: error reading [docs]: recognized file extensions are [.json .yaml .yml]\n", wantCode: 1},
		{name: "missing", line: "apply -f nope/",
			wantErr: "error: the path \"nope/\" does not exist\n", wantCode: 1},
		{name: "missing file", line: "apply -f x.yaml",
			wantErr: "error: the path \"x.yaml\" does not exist\n", wantCode: 1},
		{name: "delete a dir", line: "delete -f app --ignore-not-found",
			wantOut: "No resources found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.files["app/a.yaml"] = cm("a")
			e.files["app/b.yml"] = cm("b")
			e.files["app/j.json"] = `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}`
			e.files["app/notes.txt"] = cm("txt")
			e.files["app/sub/c.yaml"] = cm("c")
			e.files["docs/README.md"] = "# not a manifest\n"
			e.files["top.yaml"] = cm("top")
			out, errOut, code := e.run(tt.line)
			if code != tt.wantCode || out != tt.wantOut || errOut != tt.wantErr {
				t.Errorf("kubectl %s = %d\n%s%s\nwant %d\n%s%s", tt.line, code, out, errOut, tt.wantCode, tt.wantOut, tt.wantErr)
			}
			if tt.wantCode != 0 {
				if w := e.takeWrites(); len(w) > 0 {
					t.Errorf("a failed -f sent %v", w)
				}
			}
		})
	}
}

// A directory's files end up in the "error when ..." messages by their
// path under the directory, as upstream names its sources.
func TestFilenameDirectorySources(t *testing.T) {
	e := newEnv(t)
	e.files["app/bad.yaml"] = "apiVersion: v1\nkind: Nonsense\nmetadata:\n  name: x\n"
	_, errOut, code := e.run("apply -f app")
	if code != 1 || !strings.Contains(errOut, `"app/bad.yaml"`) {
		t.Errorf("apply -f app = %d %q, want an error naming app/bad.yaml", code, errOut)
	}
}
