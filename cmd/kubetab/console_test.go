package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestConsole runs `kubetab console` lines on a fresh cluster: from -c and
// from standard input; the exit code is the last line's.
func TestConsole(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantOut  string
		wantCode int
	}{
		{name: "-c", args: []string{"-c", "kubectl get nodes -o name"}, wantOut: "node/node-1\nnode/node-2\nnode/node-3\n"},
		{name: "stdin", stdin: "kubectl create namespace shop\nkubectl get ns shop -o name\n", wantOut: "namespace/shop created\nnamespace/shop\n"},
		{name: "failing last line", args: []string{"-c", "kubectl get nodes -o name", "-c", "nope"}, wantOut: "node/node-1\nnode/node-2\nnode/node-3\n", wantCode: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newConsoleCommand()
			var out, errOut bytes.Buffer
			cmd.SetArgs(append([]string{}, tt.args...))
			cmd.SetIn(strings.NewReader(tt.stdin))
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := cmd.Execute()
			var code exitCode
			if err != nil && !errors.As(err, &code) {
				t.Fatalf("Execute: %v", err)
			}
			if int(code) != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}
