package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
)

// interactiveConsole is `kubetab console` on a real terminal: a "$ "
// prompt, and each line's stdin is the terminal (console.Terminal), so
// `kubectl exec -it POD -- sh` and `kubectl run -it` put it in raw mode
// (golang.org/x/term, as upstream kubectl does) for the container's
// terminal, with its size and resizes (SIGWINCH). Ctrl-C at the prompt or
// in cooked mode stops the running line, not the console; Ctrl-D at the
// prompt ends it.
func interactiveConsole(ctx context.Context, sess *session.Session, out, errOut io.Writer) int {
	fd := int(os.Stdin.Fd())
	keys := make(chan []byte, 16) // nil: end of input (Ctrl-D)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				keys <- append([]byte(nil), buf[:n]...)
			}
			if err == io.EOF {
				keys <- nil // a terminal reads on after Ctrl-D
				continue
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	intr := make(chan os.Signal, 1)
	winch := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(intr)
	defer signal.Stop(winch)

	code := 0
	pending := ""
	for {
		if pending == "" {
			fmt.Fprint(out, "$ ")
		} else {
			fmt.Fprint(out, "> ")
		}
		var line []byte
		for len(line) == 0 || line[len(line)-1] != '\n' {
			select {
			case b, ok := <-keys:
				if !ok || b == nil && len(line) == 0 && pending == "" {
					fmt.Fprintln(out)
					return code
				}
				line = append(line, b...)
			case <-intr:
				fmt.Fprintln(out)
				line, pending = nil, ""
				fmt.Fprint(out, "$ ")
			case <-ctx.Done():
				return code
			}
		}
		pending += string(line)
		if !console.Complete(pending) {
			continue
		}
		script := pending
		pending = ""
		code = runOnTerminal(ctx, sess, script, fd, keys, intr, winch, out, errOut)
	}
}

// runOnTerminal runs one line with the terminal as its stdin.
func runOnTerminal(ctx context.Context, sess *session.Session, script string, fd int, keys <-chan []byte, intr, winch <-chan os.Signal, out, errOut io.Writer) int {
	w, h, _ := term.GetSize(fd)
	var saved *term.State
	t := console.NewTerminal(uint16(w), uint16(h), func(mode string) {
		switch {
		case mode == console.ModeRaw && saved == nil:
			saved, _ = term.MakeRaw(fd)
		case mode != console.ModeRaw && saved != nil:
			_ = term.Restore(fd, saved)
			saved = nil
		}
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- sess.Run(ctx, script, console.Streams{In: t, Out: out, ErrOut: errOut}) }()
	for {
		select {
		case code := <-done:
			t.Close()
			return code
		case b, ok := <-keys:
			if !ok {
				t.Close()
				continue
			}
			if b == nil {
				t.EOF()
			} else {
				t.Type(b)
			}
		case <-intr: // cooked mode's Ctrl-C (raw mode sends it as a key)
			cancel()
		case <-winch:
			if w, h, err := term.GetSize(fd); err == nil {
				t.Resize(uint16(w), uint16(h))
			}
		}
	}
}

// isTerminal says whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
