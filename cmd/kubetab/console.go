package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
	"github.com/kubetab/kubetab/wasm/images"
)

func init() { addCommand(newConsoleCommand) }

// newConsoleCommand is `kubetab console`: the page's console in a terminal,
// on a fresh cluster in this process. Lesson authors try their commands
// here; it runs exactly what the page and the lesson verifier run
// (core/session).
func newConsoleCommand() *cobra.Command {
	var lines []string
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Run the page's console natively, on a fresh cluster",
		Long: `Start a fresh cluster in this process and run console lines on it: the
same commands as the page's console (kubectl, etcdctl, trace, curl, ssh,
images ...). Lines come from -c (in order) or, without -c, from standard
input, one a command at a time (a here-document or a line ending in | or \
reads on, as in a shell: console.Complete); the exit code is the last
command's. On a terminal it prompts, and a line's stdin is the terminal:
kubectl exec -it and kubectl run -it give a shell in a container.

  kubetab console -c 'kubectl create deployment web --image=hello' -c 'kubectl get pods'
  printf 'kubectl get nodes\ntrace\n' | kubetab console`,
		Args:         cobra.NoArgs,
		SilenceUsage: true, // a failing line's own output says what went wrong
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sess, err := session.New(ctx, session.Config{Images: images.New(), WaitForCaches: true, Editor: nativeEditor(os.Getenv)})
			if err != nil {
				return err
			}
			defer sess.Close()
			streams := console.Streams{Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
			code := 0
			run := func(line string) {
				code = sess.Run(ctx, line, streams)
			}
			if len(lines) > 0 {
				for _, l := range lines {
					run(l)
				}
			} else if f, ok := cmd.InOrStdin().(*os.File); ok && f == os.Stdin && isTerminal(f) {
				stop() // Ctrl-C stops a line, not the console
				code = interactiveConsole(cmd.Context(), sess, streams.Out, streams.ErrOut)
			} else if err := eachCommand(cmd.InOrStdin(), run); err != nil {
				return err
			}
			if code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&lines, "command", "c", nil, "a console line to run (repeat for more)")
	return cmd
}

// eachCommand calls fn with each complete command of r: a line, or the
// lines up to where console.Complete says it ends (a here-document, an
// open quote, a trailing | or \). What is left at the end is run as it is.
func eachCommand(r io.Reader, fn func(string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	pending := ""
	for sc.Scan() {
		pending += sc.Text() + "\n"
		if console.Complete(pending) {
			fn(pending)
			pending = ""
		}
	}
	if pending != "" {
		fn(pending)
	}
	return sc.Err()
}

// exitCode is an error that makes kubetab exit with a console line's code.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
