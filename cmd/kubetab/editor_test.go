package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEnvEditor: the editor program is found as upstream's
// editor.NewDefaultEditor finds it.
func TestEnvEditor(t *testing.T) {
	tests := []struct {
		env      map[string]string
		args     []string
		shell    bool
		explicit bool
	}{
		{env: map[string]string{}, args: []string{"vi"}},
		{env: map[string]string{"EDITOR": "nano"}, args: []string{"nano"}, explicit: true},
		{env: map[string]string{"EDITOR": "nano", "KUBE_EDITOR": "vim"}, args: []string{"vim"}, explicit: true},
		{env: map[string]string{"KUBE_EDITOR": "code --wait"}, args: []string{"code", "--wait"}, explicit: true},
		{env: map[string]string{"KUBE_EDITOR": `emacs -nw "x"`, "SHELL": "/bin/zsh"}, args: []string{"/bin/zsh", "-c", `emacs -nw "x"`}, shell: true, explicit: true},
		{env: map[string]string{"KUBE_EDITOR": `emacs -nw "x"`}, args: []string{"/bin/bash", "-c", `emacs -nw "x"`}, shell: true, explicit: true},
	}
	for _, tt := range tests {
		args, shell, explicit := envEditor(func(k string) string { return tt.env[k] })
		if !reflect.DeepEqual(args, tt.args) || shell != tt.shell || explicit != tt.explicit {
			t.Errorf("%v: got %q shell=%v explicit=%v, want %q shell=%v explicit=%v", tt.env, args, shell, explicit, tt.args, tt.shell, tt.explicit)
		}
	}
}

// TestConsoleEdit: `kubectl edit` in `kubetab console` runs $KUBE_EDITOR on
// the file (here sed, a real program that edits the file in place) and
// patches what it saved; without an editor program it says so.
func TestConsoleEdit(t *testing.T) {
	run := func(t *testing.T, lines ...string) (string, string, int) {
		cmd := newConsoleCommand()
		var out, errOut bytes.Buffer
		args := []string{}
		for _, l := range lines {
			args = append(args, "-c", l)
		}
		cmd.SetArgs(args)
		cmd.SetIn(strings.NewReader(""))
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.Execute()
		var code exitCode
		if err != nil && !errors.As(err, &code) {
			t.Fatalf("Execute: %v", err)
		}
		return out.String(), errOut.String(), int(code)
	}
	t.Run("KUBE_EDITOR", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "edit.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/^  replicas: 1$/  replicas: 3/' \"$1\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBE_EDITOR", script)
		out, errs, code := run(t, "kubectl create deployment web --image=hello", "kubectl edit deployment/web", "kubectl get deployment web -o jsonpath={.spec.replicas}")
		want := "deployment.apps/web created\ndeployment.apps/web edited\n3"
		if out != want || code != 0 {
			t.Errorf("stdout %q exit %d (stderr %q), want %q", out, code, errs, want)
		}
	})
	t.Run("no editor program", func(t *testing.T) {
		t.Setenv("KUBE_EDITOR", "")
		t.Setenv("EDITOR", "")
		t.Setenv("PATH", t.TempDir())
		out, errs, code := run(t, "kubectl create deployment web --image=hello", "kubectl edit deployment/web")
		if code != 1 || !strings.Contains(errs, `error: unable to launch the editor "vi": no editor is available: set KUBE_EDITOR or EDITOR`) {
			t.Errorf("stdout %q stderr %q exit %d", out, errs, code)
		}
	})
	t.Run("editor fails", func(t *testing.T) {
		t.Setenv("KUBE_EDITOR", "false")
		_, errs, code := run(t, "kubectl create deployment web --image=hello", "kubectl edit deployment/web")
		if code != 1 || !strings.Contains(errs, `error: there was a problem with the editor "false"`) {
			t.Errorf("stderr %q exit %d", errs, code)
		}
	})
}
