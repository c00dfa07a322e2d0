// Package console is the tiny shell behind the terminal on kubetab's page.
//
// A learner types a line; the shell splits it into words the way a POSIX
// shell would (quotes, backslashes) and runs the command named by the first
// word with the rest as its arguments:
//
//	$ kubectl get pods -o wide
//	  └─────┘ └──────────────┘
//	  command  args → kubectl.Run(ctx, ["get", "pods", "-o", "wide"], ...)
//
// Only commands registered with Register exist; anything else answers
// "<word>: command not found" with exit code 127, like bash. kubectl is the
// first command; later ones (a lesson's "check", "etcdctl get /registry/...")
// are one Register call each, with a line of summary that the shell's one
// builtin, help, lists:
//
//	$ help
//	curl      send an HTTP request through the cluster's network
//	kubectl   ...
//
// Cancelling the context passed to Run is the terminal's Ctrl-C: it ends a
// `kubectl get pods -w` or `kubectl logs -f`.
//
// This package has no syscall/js; core/session registers the commands and
// wasm/ connects the shell to the page.
package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes, as bash uses them.
const (
	ExitOK       = 0
	ExitUsage    = 2   // the line could not be parsed
	ExitNotFound = 127 // no such command
)

// Streams are a command's standard input, output and error.
type Streams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// Command runs one command line's arguments (without the command's own name)
// and returns its exit code. It must return soon after ctx is done.
type Command func(ctx context.Context, args []string, streams Streams) int

// Config configures a Shell.
type Config struct {
	// Split splits a line into words (kubectl.SplitWords in kubetab).
	Split func(line string) ([]string, error)
	// Files is the working directory of the shell's builtins (ls, cat,
	// redirections) and of the commands that read files; nil is a new,
	// empty one.
	Files *Files
}

// Shell looks up and runs commands. Register every command before the first
// Run; Run itself is safe to call from several goroutines.
type Shell struct {
	split     func(string) ([]string, error)
	files     *Files
	commands  map[string]Command
	summaries map[string]string
}

// New returns a shell with no commands.
func New(conf Config) (*Shell, error) {
	if conf.Split == nil {
		return nil, errors.New("console: Config.Split is required")
	}
	if conf.Files == nil {
		conf.Files = NewFiles()
	}
	return &Shell{split: conf.Split, files: conf.Files, commands: map[string]Command{}, summaries: map[string]string{}}, nil
}

// Files is the shell's working directory.
func (s *Shell) Files() *Files { return s.files }

// Register adds a command under name, replacing any command of that name;
// summary is its line in help.
func (s *Shell) Register(name, summary string, cmd Command) {
	s.commands[name] = cmd
	s.summaries[name] = summary
}

// Commands lists the registered command names in order.
func (s *Shell) Commands() []string {
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs one line and returns its exit code. An empty line does nothing
// and succeeds. A nil In reads as empty.
func (s *Shell) Run(ctx context.Context, line string, streams Streams) int {
	if streams.In == nil {
		streams.In = strings.NewReader("")
	}
	words, err := s.split(line)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "kubetab: %v\n", err)
		return ExitUsage
	}
	if len(words) == 0 {
		return ExitOK
	}
	if words[0] == "help" {
		return s.help(ctx, words[1:], streams)
	}
	cmd, ok := s.commands[words[0]]
	if !ok {
		fmt.Fprintf(streams.ErrOut, "%s: command not found\n", words[0])
		return ExitNotFound
	}
	return cmd(ctx, words[1:], streams)
}

// help lists the commands with their summaries; `help NAME` is
// `NAME --help`.
func (s *Shell) help(ctx context.Context, args []string, streams Streams) int {
	switch len(args) {
	case 0:
		names := s.Commands()
		width := 0
		for _, n := range names {
			width = max(width, len(n))
		}
		fmt.Fprintln(streams.Out, "The commands of this console (help NAME for more):")
		for _, n := range names {
			fmt.Fprintf(streams.Out, "  %-*s  %s\n", width, n, s.summaries[n])
		}
		return ExitOK
	case 1:
		cmd, ok := s.commands[args[0]]
		if !ok {
			fmt.Fprintf(streams.ErrOut, "help: no help topics match '%s'.\n", args[0])
			return 1
		}
		return cmd(ctx, []string{"--help"}, streams)
	}
	fmt.Fprintln(streams.ErrOut, "help: usage: help [NAME]")
	return ExitUsage
}
