package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fields is a stand-in for kubectl.SplitWords: whitespace only, and an
// unbalanced quote is an error.
func fields(line string) ([]string, error) {
	if strings.Count(line, `"`)%2 == 1 {
		return nil, errors.New("unterminated quote")
	}
	return strings.Fields(line), nil
}

func TestRun(t *testing.T) {
	sh, err := New(Config{Split: fields})
	if err != nil {
		t.Fatal(err)
	}
	sh.Register("kubectl", "control the cluster", func(ctx context.Context, args []string, s Streams) int {
		fmt.Fprintf(s.Out, "args=%q\n", args)
		return len(args)
	})
	sh.Register("trace", "show the hops of requests", func(ctx context.Context, args []string, s Streams) int { return 0 })
	tests := []struct {
		line           string
		wantCode       int
		wantOut, wantE string
	}{
		{line: "kubectl get pods", wantCode: 2, wantOut: "args=[\"get\" \"pods\"]\n"},
		{line: "  kubectl  ", wantCode: 0, wantOut: "args=[]\n"},
		{line: "", wantCode: 0},
		{line: "   ", wantCode: 0},
		{line: "ls -l", wantCode: ExitNotFound, wantE: "ls: command not found\n"},
		{line: "kubect get pods", wantCode: ExitNotFound, wantE: "kubect: command not found\n"},
		{line: `kubectl get "pods`, wantCode: ExitUsage, wantE: "kubetab: unterminated quote\n"},
		{line: "help", wantCode: 0, wantOut: "The commands of this console (help NAME for more):\n  kubectl  control the cluster\n  trace    show the hops of requests\n"},
		{line: "help kubectl", wantCode: 1, wantOut: "args=[\"--help\"]\n"},
		{line: "help ls", wantCode: 1, wantE: "help: no help topics match 'ls'.\n"},
		{line: "help a b", wantCode: ExitUsage, wantE: "help: usage: help [NAME]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := sh.Run(context.Background(), tt.line, Streams{Out: &out, ErrOut: &errOut})
			if code != tt.wantCode || out.String() != tt.wantOut || errOut.String() != tt.wantE {
				t.Errorf("Run(%q) = %d, out %q, err %q; want %d, %q, %q",
					tt.line, code, out.String(), errOut.String(), tt.wantCode, tt.wantOut, tt.wantE)
			}
		})
	}
	if got := sh.Commands(); len(got) != 2 || got[0] != "kubectl" || got[1] != "trace" {
		t.Errorf("Commands() = %q", got)
	}
}

func TestNewNeedsSplit(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New(Config{}) succeeded, want an error")
	}
}
