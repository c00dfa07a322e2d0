package cri

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/kubetab/kubetab/core/internal/tty"
)

// Terminals. `kubectl exec -it POD -- sh` asks the runtime for a TTY: upstream
// runc opens a pseudo-terminal, whose kernel side (the line discipline, in
// its default "cooked" mode) echoes what the learner types, lets them
// correct the line with backspace, hands the program a whole line at Enter,
// turns Ctrl-C into SIGINT and Ctrl-D into end of file, and turns the
// program's "\n" into "\r\n" on the way out. kubectl puts the learner's own
// terminal in raw mode and relies on all of that happening remotely. WASI
// has no terminals, so the runtime is that line discipline here, between
// the exec stream and the process:
//
//	keys ─▶ [echo, erase, line buffer, ^C ^D] ─ a line at Enter ─▶ stdin
//	screen ◀─ "\n" → "\r\n" ◀─ stdout and stderr (one stream, as on a pty)
//
// The process sees a terminal: kubetab_host.isatty(0..2) is 1, so sh prints
// its prompt. Ctrl-C sends the process SIGINT: it ends with 130, unless it
// catches the signal (kubetab_host.sigint), as the interactive sh does: its
// command then stops and it prompts again.
// Terminal sizes (kubectl's resize channel) are accepted and kept for the
// process, which has no ioctl to ask for them.

// TerminalSize is a terminal's size in characters (kubectl's resize
// messages, remotecommand.TerminalSize).
type TerminalSize = tty.Size

// lineDiscipline is a terminal's kernel side in cooked mode.
type lineDiscipline struct {
	in    io.Reader // keys from the client
	out   io.Writer // the client's screen (shared with the process's output)
	line  []byte
	toApp *io.PipeWriter
	intr  func() // Ctrl-C: signal the foreground process
}

// newTTY wires a process to a terminal: it returns the process's stdin and
// its stdout (also its stderr). intr is called at Ctrl-C.
func newTTY(ctx context.Context, keys io.Reader, screen io.Writer, intr func()) (stdin io.Reader, stdout io.Writer) {
	pr, pw := io.Pipe()
	sw := &syncWriter{w: screen}
	ld := &lineDiscipline{in: keys, out: sw, toApp: pw, intr: intr}
	go ld.run()
	context.AfterFunc(ctx, func() { pw.CloseWithError(io.EOF) })
	return pr, onlcr{sw}
}

func (ld *lineDiscipline) run() {
	defer ld.toApp.Close()
	if ld.in == nil {
		return
	}
	buf := make([]byte, 4096)
	for {
		n, err := ld.in.Read(buf)
		for _, c := range buf[:n] {
			if !ld.key(c) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// key handles one byte typed; false at end of input (Ctrl-D on an empty
// line).
func (ld *lineDiscipline) key(c byte) bool {
	switch c {
	case '\r', '\n': // ICRNL: Enter is a newline
		ld.out.Write([]byte("\r\n"))
		line := append(ld.line, '\n')
		ld.line = nil
		if _, err := ld.toApp.Write(line); err != nil {
			return false
		}
	case 0x7f, 0x08: // VERASE
		if len(ld.line) > 0 {
			// Erase a whole UTF-8 character.
			i := len(ld.line) - 1
			for i > 0 && ld.line[i]&0xc0 == 0x80 {
				i--
			}
			ld.line = ld.line[:i]
			ld.out.Write([]byte("\b \b"))
		}
	case 0x15: // VKILL, Ctrl-U
		ld.out.Write(bytes.Repeat([]byte("\b \b"), len(ld.line)))
		ld.line = nil
	case 0x03: // VINTR, Ctrl-C
		ld.out.Write([]byte("^C\r\n"))
		ld.line = nil
		if ld.intr != nil {
			ld.intr()
		}
	case 0x04: // VEOF, Ctrl-D
		if len(ld.line) == 0 {
			return false
		}
		line := ld.line
		ld.line = nil
		if _, err := ld.toApp.Write(line); err != nil {
			return false
		}
	default:
		if c < 0x20 && c != '\t' {
			ld.out.Write([]byte{'^', c + '@'}) // ECHOCTL
		} else {
			ld.out.Write([]byte{c})
		}
		ld.line = append(ld.line, c)
	}
	return true
}

// syncWriter serializes writes to the screen: echo and program output.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// onlcr is the output side: "\n" becomes "\r\n" (ONLCR).
type onlcr struct{ w io.Writer }

func (o onlcr) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("\n")) {
		return o.w.Write(p)
	}
	out := bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))
	if _, err := o.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ExecTTY runs cmd in container id on a terminal (kubectl exec -it): keys
// are what the learner types, screen is the terminal (the command's stdout
// and stderr, merged as on a pty), resize brings size changes (may be nil).
// Otherwise as Exec.
func (r *Runtime) ExecTTY(ctx context.Context, id string, cmd []string, keys io.Reader, screen io.Writer, resize <-chan TerminalSize) (int32, error) {
	if screen == nil {
		screen = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, _ := r.get(id) // execute says so when there is none
	var proc struct {
		mu sync.Mutex
		p  *process
	}
	intr := func() {
		proc.mu.Lock()
		p := proc.p
		proc.mu.Unlock()
		if p != nil && c != nil {
			c.interrupt(p) // SIGINT
		}
	}
	if resize != nil {
		go func() {
			for {
				select {
				case <-resize:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	stdin, stdout := newTTY(ctx, keys, screen, intr)
	// containerd sets TERM for a process on a terminal.
	iio := instanceIO{argv: cmd, stdin: stdin, stdout: stdout, stderr: stdout, tty: true,
		env:     []EnvVar{{Name: "TERM", Value: "xterm"}},
		started: func(p *process) { proc.mu.Lock(); proc.p = p; proc.mu.Unlock() }}
	return r.execute(ctx, id, cmd, iio, 0)
}
