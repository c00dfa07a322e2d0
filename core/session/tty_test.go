package session_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
)

// screen is a terminal's output, safe to read while it is written.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitScreen waits until the screen shows want after index from.
func waitScreen(t *testing.T, s *screen, from int, want string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := s.String()
		if i := strings.Index(out[from:], want); i >= 0 {
			return from + i + len(want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q after %d:\n%s", want, from, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTerminalSessions: the console's terminal as kubectl's stdin, as the
// page's console gives it: run -it --rm puts it in raw mode for the pod's
// sh (keys go as typed, Ctrl-C reaches sh as SIGINT), exit ends the
// session and --rm deletes the pod; exec -it is a shell in a running pod.
func TestTerminalSessions(t *testing.T) {
	s := newSession(t, session.Config{})
	mustRun(t, s, "kubectl create deployment web --image=web")
	mustRun(t, s, "kubectl expose deployment web --port=80 --target-port=8080")

	var modes []string
	var mu sync.Mutex
	term := console.NewTerminal(100, 30, func(m string) { mu.Lock(); modes = append(modes, m); mu.Unlock() })
	mode := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(modes) == 0 {
			return ""
		}
		return modes[len(modes)-1]
	}
	var out screen
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		done <- s.Run(ctx, "kubectl run -it --rm debug --image=busybox --restart=Never -- sh", console.Streams{In: term, Out: &out, ErrOut: &out})
	}()
	at := waitScreen(t, &out, 0, "If you don't see a command prompt, try pressing enter.\n")
	if mode() != console.ModeRaw {
		t.Fatalf("mode %q, want raw", mode())
	}
	term.Type([]byte("\r"))
	at = waitScreen(t, &out, at, "/ # ")
	// The line is echoed as typed and may come before the prompt that
	// answers the Enter above: a learner's typeahead looks the same.
	term.Type([]byte("hostname\r"))
	at = waitScreen(t, &out, at, "hostname\r\n")
	at = waitScreen(t, &out, at, "debug\r\n/ # ")
	eventuallyScreen := func(line, want string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			term.Type([]byte(line + "\r"))
			at = waitScreen(t, &out, at, "\r\n/ # ")
			if strings.Contains(out.String(), want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never printed %q:\n%s", line, want, out.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	eventuallyScreen("wget -qO- http://web", "web: hello from web-")
	term.Type([]byte("sleep 100\r"))
	at = waitScreen(t, &out, at, "sleep 100\r\n")
	term.Type([]byte{0x03})
	at = waitScreen(t, &out, at, "^C\r\n")
	at = waitScreen(t, &out, at, "/ # ")
	// The shell is still there, and $? says how sleep ended.
	term.Type([]byte("echo $?\r"))
	at = waitScreen(t, &out, at, "echo $?\r\n130\r\n/ # ")
	term.Resize(120, 40)
	term.Type([]byte("exit 0\r"))
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d:\n%s", code, out.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the session did not end:\n%s", out.String())
	}
	tail := out.String()[at:]
	if !strings.HasSuffix(tail, "pod \"debug\" deleted\n") || strings.Contains(tail, "Session ended") {
		t.Errorf("after exit: %q", tail)
	}
	if mode() != console.ModeIdle {
		t.Errorf("mode %q after the session, want idle", mode())
	}
	term.Close()

	// exec -it into a web pod.
	pod := strings.TrimSpace(mustRun(t, s, "kubectl get pods -l app=web -o jsonpath={.items[0].metadata.name}"))
	term = console.NewTerminal(80, 24, nil)
	var out2 screen
	go func() {
		done <- s.Run(ctx, "kubectl exec -it "+pod+" -- sh", console.Streams{In: term, Out: &out2, ErrOut: &out2})
	}()
	at = waitScreen(t, &out2, 0, "/ # ")
	term.Type([]byte("ls /etc\r"))
	at = waitScreen(t, &out2, at, "resolv.conf")
	term.Type([]byte("exit 3\r"))
	if code := <-done; code != 3 || !strings.HasSuffix(out2.String(), "command terminated with exit code 3\n") {
		t.Errorf("exec -it: exit %d:\n%q", code, out2.String())
	}
	term.Close()

	// Not a terminal: -t says so, and piped input still reaches -i.
	o, e, code := runIn(t, s, "echo 'echo piped-$HOSTNAME' | kubectl exec -it "+pod+" -- sh")
	if code != 0 || o != "piped-"+pod+"\n" || e != "Unable to use a TTY - input is not a terminal or the right kind of file\n" {
		t.Errorf("piped exec -it: exit %d, printed %q %q", code, o, e)
	}
}

// runIn runs console input with the shell's own (empty) stdin.
func runIn(t *testing.T, s *session.Session, input string) (string, string, int) {
	t.Helper()
	return run(t, s, input)
}
