package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kubetab/kubetab/core/kubectl"
)

// envEditor is the program `kubectl edit` runs in `kubetab console`, found
// as upstream's editor.NewDefaultEditor finds it: $KUBE_EDITOR, else
// $EDITOR, else vi. A value with spaces is split into words; one with
// quotes or backslashes is handed to $SHELL -c (/bin/bash without SHELL).
// explicit reports whether an environment variable named it.
func envEditor(getenv func(string) string) (args []string, shell, explicit bool) {
	editor := ""
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if editor = getenv(env); editor != "" {
			explicit = true
			break
		}
	}
	if editor == "" {
		editor = "vi"
	}
	if !strings.Contains(editor, " ") {
		return []string{editor}, false, explicit
	}
	if !strings.ContainsAny(editor, "\"'\\") {
		return strings.Fields(editor), false, explicit
	}
	sh := getenv("SHELL")
	if sh == "" {
		sh = "/bin/bash"
	}
	return []string{sh, "-c", editor}, true, explicit
}

// nativeEditor is kubectl.EditFunc over a real editor program: the file
// goes to a temporary file (kubectl-edit-*.yaml, as upstream names it), the
// editor runs on the terminal, and the file is read back when it exits.
func nativeEditor(getenv func(string) string) kubectl.EditFunc {
	return func(ctx context.Context, name string, content []byte) ([]byte, error) {
		args, shell, explicit := envEditor(getenv)
		dir, err := os.MkdirTemp("", "kubetab-edit-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return nil, err
		}
		if shell {
			args[len(args)-1] = fmt.Sprintf("%s %q", args[len(args)-1], path)
		} else {
			args = append(args, path)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			what := strings.Join(args[:len(args)-1], " ")
			if shell {
				what = args[len(args)-1]
			}
			if errors.Is(err, exec.ErrNotFound) {
				if !explicit {
					return nil, fmt.Errorf("unable to launch the editor %q: %w", what, kubectl.ErrNoEditor)
				}
				return nil, fmt.Errorf("unable to launch the editor %q", what)
			}
			return nil, fmt.Errorf("there was a problem with the editor %q", what)
		}
		return os.ReadFile(path)
	}
}
