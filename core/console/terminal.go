package console

import (
	"io"
	"sync"
)

// Terminal is the console's terminal as a command's standard input: what
// the learner types, in the mode the command asks for, with the terminal's
// size. The page's console (wasm/worker) gives each line it runs one, fed
// by its xterm; a redirection or a pipe replaces it as stdin, as in a shell.
//
// A terminal has two modes, as a tty's line discipline does:
//
//   - cooked (the default): the console edits a line locally (echo,
//     Backspace) and hands it over at Enter, Ctrl-D ends the input, and
//     Ctrl-C stops the command. The console does this only while a command
//     reads: until then what is typed waits for the next prompt.
//   - raw (MakeRaw, what `kubectl exec -it` and `kubectl attach -it` ask
//     for, as upstream kubectl puts the learner's terminal in raw mode):
//     every key goes to the command as typed, Ctrl-C included, and the
//     remote terminal (the container's, core/kubelet/cri's line
//     discipline) echoes and edits.
//
// kubectl finds the terminal by its methods (kubectl.Terminal): MakeRaw,
// Size and Resized.
type Terminal struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     []byte
	eof     bool // one read returns io.EOF (Ctrl-D)
	closed  bool
	raw     int // MakeRaw calls not yet restored
	asked   bool
	w, h    uint16
	resized chan struct{}
	onMode  func(mode string)
}

// Terminal modes, as NewTerminal's onMode is told them.
const (
	ModeCooked = "cooked" // a command reads: edit a line, send it at Enter
	ModeRaw    = "raw"    // send every key as typed
	ModeIdle   = ""       // nobody reads: keep keys for the next prompt
)

// NewTerminal returns a terminal of width x height characters; onMode
// (may be nil) is told when the console should change how it handles keys.
func NewTerminal(width, height uint16, onMode func(mode string)) *Terminal {
	t := &Terminal{w: width, h: height, resized: make(chan struct{}, 1), onMode: onMode}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// Type hands keys (or a cooked line) to the reader.
func (t *Terminal) Type(p []byte) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	t.mu.Unlock()
	t.cond.Broadcast()
}

// EOF is Ctrl-D on an empty cooked line: the next read returns io.EOF.
func (t *Terminal) EOF() {
	t.mu.Lock()
	t.eof = true
	t.mu.Unlock()
	t.cond.Broadcast()
}

// Resize records a new size and tells whoever watches Resized.
func (t *Terminal) Resize(width, height uint16) {
	t.mu.Lock()
	changed := width != t.w || height != t.h
	t.w, t.h = width, height
	t.mu.Unlock()
	if changed {
		select {
		case t.resized <- struct{}{}:
		default:
		}
	}
}

// Close ends the terminal (its line has ended): reads return io.EOF.
func (t *Terminal) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cond.Broadcast()
}

// Read returns what was typed, waiting for it. In cooked mode it asks the
// console for a line first.
func (t *Terminal) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 && !t.eof && !t.closed && t.raw == 0 && !t.asked {
		t.asked = true
		t.tell(ModeCooked)
	}
	for len(t.buf) == 0 && !t.eof && !t.closed {
		t.cond.Wait()
	}
	if len(t.buf) > 0 {
		n := copy(p, t.buf)
		t.buf = t.buf[n:]
		return n, nil
	}
	if t.eof {
		t.eof = false
		t.asked = false
	}
	return 0, io.EOF
}

// tell calls onMode; t.mu is held (onMode must not call back into t).
func (t *Terminal) tell(mode string) {
	if t.onMode != nil {
		t.onMode(mode)
	}
}

// MakeRaw switches to raw mode until restore is called.
func (t *Terminal) MakeRaw() (restore func(), err error) {
	t.mu.Lock()
	t.raw++
	if t.raw == 1 {
		t.tell(ModeRaw)
	}
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.raw--
			if t.raw == 0 {
				t.asked = false
				t.buf = nil // keys typed for the remote terminal are not the console's
				t.tell(ModeIdle)
			}
			t.mu.Unlock()
		})
	}, nil
}

// Size is the terminal's size in characters.
func (t *Terminal) Size() (width, height uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w, t.h
}

// Resized receives a value after the size changed.
func (t *Terminal) Resized() <-chan struct{} { return t.resized }

var _ io.Reader = (*Terminal)(nil)
