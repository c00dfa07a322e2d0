package cri

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Attach (upstream: CRI Attach, what `kubectl attach` and `kubectl run -it`
// reach): the container's own process, PID 1, with stdin when the pod spec
// asks for it (stdin: true; stdinOnce: the first attach's end of input ends
// it) and a terminal when it says tty: true. Its output goes to the log as
// always, and to every attached client while it is attached.

// attachPoint is a container's standard streams as attach sees them.
type attachPoint struct {
	keys    io.WriteCloser // what attached clients type; nil without stdin
	keysOut io.Reader      // the other end: the process's input

	mu      sync.Mutex
	clients map[*attachClient]struct{}
	stdinBy *attachClient // the attach whose input the process reads (stdinOnce: only the first)
	used    bool          // stdinOnce: some attach has had stdin
}

type attachClient struct{ stdout, stderr io.Writer }

// fanout writes the process's stream to the log and to the attached clients.
type fanout struct {
	log    io.Writer
	ap     *attachPoint
	stderr bool
}

func (f fanout) Write(p []byte) (int, error) {
	n, err := f.log.Write(p)
	f.ap.mu.Lock()
	clients := make([]*attachClient, 0, len(f.ap.clients))
	for cl := range f.ap.clients {
		clients = append(clients, cl)
	}
	f.ap.mu.Unlock()
	for _, cl := range clients {
		w := cl.stdout
		if f.stderr && cl.stderr != nil {
			w = cl.stderr
		}
		if w != nil {
			_, _ = w.Write(p)
		}
	}
	return n, err
}

// mainIO is the container's own process's streams: the log (and attached
// clients), stdin from attach when the spec asks for it, a terminal when it
// asks for one.
func newAttachPoint(stdin bool) *attachPoint {
	ap := &attachPoint{clients: map[*attachClient]struct{}{}}
	if stdin {
		pr, pw := io.Pipe()
		ap.keys, ap.keysOut = pw, pr
	}
	return ap
}

func (c *container) mainIO(ctx context.Context) instanceIO {
	iio := instanceIO{
		pid:    1,
		argv:   c.argv,
		stdout: fanout{log: logWriter{c: c, stream: Stdout}, ap: c.attach},
		stderr: fanout{log: logWriter{c: c, stream: Stderr}, ap: c.attach, stderr: true},
	}
	keys := c.attach.keysOut
	if keys != nil {
		context.AfterFunc(ctx, func() { c.attach.keys.Close() })
	}
	if c.cfg.TTY {
		var p *process
		var mu sync.Mutex
		iio.started = func(pr *process) { mu.Lock(); p = pr; mu.Unlock() }
		stdin, screen := newTTY(ctx, keys, iio.stdout, func() {
			mu.Lock()
			defer mu.Unlock()
			if p != nil {
				c.interrupt(p)
			}
		})
		iio.stdin, iio.stdout, iio.stderr, iio.tty = stdin, screen, screen, true
		iio.env = []EnvVar{{Name: "TERM", Value: "xterm"}}
	} else if keys != nil {
		iio.stdin = keys
	}
	return iio
}

// Attach joins the streams of container id's own process until the
// process ends or ctx does: its output from now on goes to stdout and stderr
// (one stream on a terminal), and stdin, when the container has stdin,
// reaches it. With stdinOnce the first attach's end of input closes the
// process's stdin, and later attaches get no stdin.
func (r *Runtime) Attach(ctx context.Context, id string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := r.get(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	ap, done, running := c.attach, c.done, c.state == ContainerRunning
	c.mu.Unlock()
	if !running || ap == nil {
		return fmt.Errorf("attach to container %s: %w", id, ErrContainerNotRunning)
	}
	cl := &attachClient{stdout: stdout, stderr: stderr}
	if c.cfg.TTY && stdout != nil {
		cl.stderr = stdout
	}
	ap.mu.Lock()
	ap.clients[cl] = struct{}{}
	withStdin := stdin != nil && ap.keys != nil && !(c.cfg.StdinOnce && ap.used)
	if withStdin {
		ap.used = true
		ap.stdinBy = cl
	}
	ap.mu.Unlock()
	defer func() {
		ap.mu.Lock()
		delete(ap.clients, cl)
		ap.mu.Unlock()
	}()
	if withStdin {
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := stdin.Read(buf)
				if n > 0 {
					if _, werr := ap.keys.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					if c.cfg.StdinOnce {
						ap.keys.Close()
					}
					return
				}
			}
		}()
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}
