package kubectl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// scriptedEditor is a learner at kubectl edit's editor: each round (the
// file opened once more) is one function from what is shown to what is
// saved. It records every file it was shown.
type scriptedEditor struct {
	rounds []func(shown string) string
	shown  []string
	names  []string
}

func (s *scriptedEditor) edit(_ context.Context, name string, content []byte) ([]byte, error) {
	s.shown = append(s.shown, string(content))
	s.names = append(s.names, name)
	if len(s.shown) > len(s.rounds) {
		return nil, fmt.Errorf("editor opened %d times, the script has %d rounds", len(s.shown), len(s.rounds))
	}
	return []byte(s.rounds[len(s.shown)-1](string(content))), nil
}

// replace is a round that changes old to new once (and fails the test
// when old is not in the file).
func replace(t *testing.T, old, new string) func(string) string {
	return func(shown string) string {
		if !strings.Contains(shown, old) {
			t.Errorf("the editor shows no %q:\n%s", old, shown)
		}
		return strings.Replace(shown, old, new, 1)
	}
}

func same(shown string) string { return shown }

// TestEdit: kubectl edit's loop, as upstream's editoptions.go runs it: a
// change is a two-way patch of just that change; no change or an empty file
// cancel; a 422 reopens the file with its causes in the header; a syntax
// error reopens it too; a change someone else made meanwhile is kept; a
// stale resourceVersion typed in is a 409; no editor is a clear error.
func TestEdit(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		rounds   func(t *testing.T, e *env) []func(string) string
		code     int
		stdout   string
		stderr   string   // a substring of what kubectl printed to stderr
		headers  []string // a substring of the header of each round after the first
		replicas int32    // web's replicas afterwards
		label    string   // web's label "by" afterwards
		patches  int      // PATCH requests sent
	}{{
		name: "replicas", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "replicas: 2", "replicas: 5")}
		},
		stdout:   "deployment.apps/web edited\n",
		replicas: 5, patches: 1,
	}, {
		name: "type and name as two words", line: "edit deployment web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "replicas: 2", "replicas: 3")}
		},
		stdout:   "deployment.apps/web edited\n",
		replicas: 3, patches: 1,
	}, {
		name: "no change", line: "edit deployment/web",
		rounds:   func(t *testing.T, e *env) []func(string) string { return []func(string) string{same} },
		stderr:   "Edit cancelled, no changes made.\n",
		replicas: 2,
	}, {
		name: "only comments changed", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{func(s string) string { return "# mine\n" + s }}
		},
		stderr:   "Edit cancelled, no changes made.\n",
		replicas: 2,
	}, {
		name: "empty file", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{func(string) string { return "# nothing\n\n" }}
		},
		stderr:   "Edit cancelled, saved file was empty.\n",
		replicas: 2,
	}, {
		name: "invalid then fixed", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "replicas: 2", "replicas: -1"), replace(t, "replicas: -1", "replicas: 4")}
		},
		stdout:   "deployment.apps/web edited\n",
		stderr:   "error: deployments.apps \"web\" is invalid\n",
		headers:  []string{"# deployments.apps \"web\" was not valid:\n# * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n#\n"},
		replicas: 4, patches: 2,
	}, {
		name: "invalid then saved unchanged", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "replicas: 2", "replicas: -1"), same}
		},
		code:     1,
		stderr:   "error: Edit cancelled, no valid changes were saved.\n",
		replicas: 2, patches: 1,
	}, {
		name: "syntax error then fixed", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "replicas: 2", "replicas: [2"), replace(t, "replicas: [2", "replicas: 6")}
		},
		stdout:   "deployment.apps/web edited\n",
		headers:  []string{"# The edited file had a syntax error: "},
		replicas: 6, patches: 1,
	}, {
		// Someone else labels web while the editor is open: the patch
		// holds only replicas, so the label stays (no 409; upstream's
		// edit patches, it does not replace).
		name: "concurrent change is kept", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{func(s string) string {
				d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
				d.Labels["by"] = "someone-else"
				if _, err := e.store(d).Update(context.Background(), d, registryUpdate()); err != nil {
					t.Fatal(err)
				}
				return replace(t, "replicas: 2", "replicas: 7")(s)
			}}
		},
		stdout:   "deployment.apps/web edited\n",
		replicas: 7, label: "someone-else", patches: 1,
	}, {
		// The learner also types a resourceVersion: it goes into the
		// patch as a precondition, and the object has moved on.
		name: "stale resourceVersion typed in", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{func(s string) string {
				d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
				rv := d.ResourceVersion
				d.Labels["by"] = "someone-else"
				if _, err := e.store(d).Update(context.Background(), d, registryUpdate()); err != nil {
					t.Fatal(err)
				}
				s = replace(t, "replicas: 2", "replicas: 7")(s)
				return strings.Replace(s, fmt.Sprintf("resourceVersion: %q", rv), `resourceVersion: "1"`, 1)
			}}
		},
		code:     1,
		stderr:   "error: deployments.apps \"web\" could not be patched: Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again\n",
		replicas: 2, label: "someone-else", patches: 1,
	}, {
		name: "kind changed", line: "edit deployment/web",
		rounds: func(t *testing.T, e *env) []func(string) string {
			return []func(string) string{replace(t, "kind: Deployment", "kind: StatefulSet")}
		},
		code:     1,
		stderr:   "error: At least one of apiVersion, kind and name was changed\n",
		replicas: 2,
	}, {
		name: "no editor", line: "edit deployment/web",
		code:     1,
		stderr:   "error: no editor is available: set KUBE_EDITOR or EDITOR",
		replicas: 2,
	}, {
		name: "not found", line: "edit deployment/nope",
		rounds:   func(t *testing.T, e *env) []func(string) string { return nil },
		code:     1,
		stderr:   "Error from server (NotFound): deployments.apps \"nope\" not found\n",
		replicas: 2,
	}, {
		name: "no arguments", line: "edit",
		rounds:   func(t *testing.T, e *env) []func(string) string { return nil },
		code:     1,
		stderr:   "error: You must provide one or more resources by argument or filename.",
		replicas: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.mustRun("create deployment web --image=hello:1.0 --replicas=2")
			var ed *scriptedEditor
			if tc.rounds != nil {
				ed = &scriptedEditor{rounds: tc.rounds(t, e)}
				e.editor = ed.edit
			}
			e.takeWrites()
			out, errs, code := e.run(tc.line)
			if code != tc.code || out != tc.stdout || !strings.Contains(errs, tc.stderr) {
				t.Errorf("kubectl %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q", tc.line, code, out, errs, tc.code, tc.stdout, tc.stderr)
			}
			if ed != nil && len(ed.shown) > 0 {
				if !strings.HasPrefix(ed.shown[0], editHeader) || !strings.Contains(ed.shown[0], "\nkind: Deployment\n") || strings.Contains(ed.shown[0], "managedFields") {
					t.Errorf("first file shown:\n%s", ed.shown[0])
				}
				if !strings.HasPrefix(ed.names[0], "kubectl-edit-") || !strings.HasSuffix(ed.names[0], ".yaml") {
					t.Errorf("file name %q", ed.names[0])
				}
				if len(ed.shown) != len(ed.rounds) {
					t.Errorf("editor opened %d times, want %d", len(ed.shown), len(ed.rounds))
				}
				for i, h := range tc.headers {
					if i+1 >= len(ed.shown) || !strings.Contains(ed.shown[i+1], h) {
						t.Errorf("round %d should show %q in its header; shown:\n%v", i+2, h, ed.shown)
					} else if strings.Count(ed.shown[i+1], "# Please edit the object below.") != 1 {
						t.Errorf("round %d has the header twice:\n%s", i+2, ed.shown[i+1])
					}
				}
			}
			d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
			if *d.Spec.Replicas != tc.replicas || d.Labels["by"] != tc.label {
				t.Errorf("web afterwards: replicas %d, label by=%q; want %d, %q", *d.Spec.Replicas, d.Labels["by"], tc.replicas, tc.label)
			}
			patches := 0
			for _, w := range e.takeWrites() {
				if strings.HasPrefix(w, "PATCH ") {
					patches++
				} else {
					t.Errorf("unexpected write %s", w)
				}
			}
			if patches != tc.patches {
				t.Errorf("%d PATCH requests, want %d", patches, tc.patches)
			}
		})
	}
}

// TestEditPatchIsTheChangeOnly: --output-patch shows the two-way strategic
// merge patch: only the changed field, no resourceVersion.
func TestEditPatchIsTheChangeOnly(t *testing.T) {
	e := newEnv(t)
	e.mustRun("create deployment web --image=hello:1.0 --replicas=2")
	ed := &scriptedEditor{rounds: []func(string) string{replace(t, "image: hello:1.0", "image: hello:2.0")}}
	e.editor = ed.edit
	out := e.mustRun("edit deployment/web --output-patch")
	want := `Patch: {"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"hello"}],"containers":[{"image":"hello:2.0","name":"hello"}]}}}}` + "\ndeployment.apps/web edited\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestEditEditorFails: an editor that cannot start ends edit with its error
// and changes nothing.
func TestEditEditorFails(t *testing.T) {
	e := newEnv(t)
	e.mustRun("create deployment web --image=hello:1.0 --replicas=2")
	e.editor = func(context.Context, string, []byte) ([]byte, error) {
		return nil, errors.New(`unable to launch the editor "nano"`)
	}
	_, errs, code := e.run("edit deployment/web")
	if code != 1 || errs != "error: unable to launch the editor \"nano\"\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
