package cri

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kubetab/kubetab/core/internal/capped"
)

// Errors about exec.
var (
	// ErrContainerNotRunning is an exec into a container that is not running
	// (upstream: "container not running").
	ErrContainerNotRunning = errors.New("cri: container is not running")
	// ErrExecTimeout is an exec that did not finish within its timeout; the
	// kubelet's exec prober reports it as a failed probe.
	ErrExecTimeout = errors.New("cri: command timed out")
)

// MaxExecOutput bounds what ExecSync keeps of each stream, and the size of
// an HTTP response from HTTPHandler; the rest is dropped. (The kubelet keeps
// even less of a probe's output: 10 KiB.)
const MaxExecOutput = 1 << 20

// ExecSync runs a command in a running container and waits for it:
// upstream's ExecSync, what `kubectl exec` and exec probes use.
//
// WASI has no processes, so "in the container" means a second instance of
// the container's image, with cmd as its argv (cmd[0] is the program's name;
// every image is one program, so cmd[0] only matters to the guest), the
// container's environment, mounts, memory limit and CPU limit (its own
// budget of the same size, not a share of the container's; its CPU time is
// added to the container's ContainerStats, as it would be in the container's
// cgroup). It sees the
// container's volumes, not its memory. It is killed when the container stops.
//
// stdout and stderr are captured up to MaxExecOutput each; a guest that
// traps gets the trap's message as a last stderr line. exitCode follows the
// container's table (see the package doc). timeout, on the Config's clock, 0
// for none, ends the command with ErrExecTimeout (and exit code 137). err is
// also set when the container is not running (ErrContainerNotRunning), the
// command is empty, ctx ends, or the instance could not start.
func (r *Runtime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error) {
	out, errOut := &capped.Buffer{Max: MaxExecOutput}, &capped.Buffer{Max: MaxExecOutput}
	code, err := r.execute(ctx, id, cmd, instanceIO{argv: cmd, stdout: out, stderr: errOut}, timeout)
	return out.Bytes(), errOut.Bytes(), code, err
}

// Exec runs cmd as ExecSync does, streaming: the command reads stdin (nil
// for none: it reads end of file) and its output goes to stdout and stderr
// as it writes it, uncapped. It is CRI's streaming Exec, which kubectl exec
// reaches through the API server; ExecSync is what probes use.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int32, err error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return r.execute(ctx, id, cmd, instanceIO{argv: cmd, stdin: stdin, stdout: stdout, stderr: stderr}, 0)
}

// execute checks cmd and runs it in container id with iio.
func (r *Runtime) execute(ctx context.Context, id string, cmd []string, iio instanceIO, timeout time.Duration) (int32, error) {
	if len(cmd) == 0 {
		return 0, fmt.Errorf("%w: exec: the command is empty", ErrInvalidConfig)
	}
	for _, a := range cmd {
		if strings.ContainsRune(a, 0) {
			return 0, fmt.Errorf("%w: exec: the command must not contain NUL", ErrInvalidConfig)
		}
	}
	c, err := r.get(id)
	if err != nil {
		return 0, err
	}
	if st := c.status(); st.State != ContainerRunning {
		return 0, fmt.Errorf("exec in container %s: %w", c.id, ErrContainerNotRunning)
	}
	prog, err := c.program(ctx, cmd[0])
	var ee *execError
	if errors.As(err, &ee) {
		// runc could not start the process: its message on the exec's
		// stderr and the shell's exit code for it (127: not found, 126:
		// not runnable), as `docker exec` reports it.
		fmt.Fprintf(iio.stderr, "OCI runtime exec failed: exec failed: unable to start container process: %v: unknown\n", ee)
		return ee.code, nil
	}
	if err != nil {
		return 0, fmt.Errorf("exec %q in container %s: %w", cmd, id, err)
	}
	code, reason, msg, err := c.exec(ctx, prog, iio, timeout)
	if msg != "" && reason != ReasonStartError {
		iio.stderr.Write([]byte(msg + "\n"))
	}
	if err == nil && reason == ReasonStartError {
		err = fmt.Errorf("exec %q in container %s: %s", cmd, id, msg)
	}
	return code, err
}

// exec runs prog as one more process of c and waits for it.
func (c *container) exec(ctx context.Context, prog *program, iio instanceIO, timeout time.Duration) (code int32, reason, message string, err error) {
	c.mu.Lock()
	if c.state != ContainerRunning || c.killed {
		c.mu.Unlock()
		return 0, "", "", fmt.Errorf("exec in container %s: %w", c.id, ErrContainerNotRunning)
	}
	c.execs.Add(1)
	runCtx := c.runCtx
	c.mu.Unlock()
	defer c.execs.Done()

	// The instance ends with the container, with ctx, or at the timeout.
	ectx, cancel := context.WithCancel(runCtx)
	defer cancel()
	stopAfter := context.AfterFunc(ctx, cancel)
	defer stopAfter()
	var timedOut atomic.Bool
	if timeout > 0 {
		t := c.clock.NewTimer(timeout)
		go func() {
			defer t.Stop()
			select {
			case <-t.C():
				timedOut.Store(true)
				cancel()
			case <-ectx.Done():
			}
		}()
	}
	if prog.oom != "" {
		return ExitCodeKilled, ReasonOOMKilled, prog.oom, nil
	}
	g := newGuest(ectx, c.cfg.CPULimitMillicores)
	g.pages.Store(prog.minPages)
	code, reason, message = c.instance(ectx, g, prog, iio, func() bool { return ectx.Err() != nil })
	// Upstream an exec'd process runs in the container's cgroup: its CPU
	// time is the container's.
	c.execCPU.Add(g.cpu.Load())
	switch {
	case timedOut.Load():
		err = fmt.Errorf("%w: %q did not finish within %s", ErrExecTimeout, iio.argv, timeout)
	case ctx.Err() != nil:
		err = ctx.Err()
	}
	return code, reason, message, err
}

// HTTPHandler returns a handler that serves each request with a new instance
// of the container's image, CGI-style (CGI/1.1, RFC 3875): the request's
// method, path, query and headers in the environment, its body on stdin, and
// the response on stdout as CGI headers ("Status: 404 Not Found",
// "Content-Type: text/plain"), a blank line and the body.
//
// Why CGI: WASI preview1 has no sockets, so a guest cannot listen. An
// instance per request needs nothing but stdin and stdout, is what inetd and
// CGI did for decades and serverless platforms do now, and it is cheap here
// (starting an instance of a compiled C module takes about 2 ms in a tab).
// Its cost is that the guest keeps no state between requests in memory: what
// it must remember goes to a volume (see the web image).
//
// The instance runs like an exec (ExecSync): argv is the container's own,
// with its environment, mounts and limits; it is killed when the container
// stops or the request's context ends. What it writes to stderr goes to the
// container's log, as a web server's error log would. A container that is
// not running answers 503; a guest that writes no valid CGI response, 502.
func (r *Runtime) HTTPHandler(id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c, err := r.get(id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out := &capped.Buffer{Max: MaxExecOutput}
		var body io.Reader = http.NoBody
		if req.Body != nil {
			body = io.LimitReader(req.Body, MaxExecOutput)
		}
		if c.prog == nil {
			http.Error(w, fmt.Sprintf("exec in container %s: %v", c.id, ErrContainerNotRunning), http.StatusServiceUnavailable)
			return
		}
		code, reason, msg, err := c.exec(req.Context(), c.prog, instanceIO{
			argv:   c.argv,
			env:    cgiEnv(req),
			stdin:  body,
			stdout: out,
			stderr: logWriter{c: c, stream: Stderr},
		}, 0)
		switch {
		case errors.Is(err, ErrContainerNotRunning):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if err := writeCGIResponse(w, out.Bytes()); err != nil {
			detail := fmt.Sprintf("exit code %d", code)
			if msg != "" {
				detail += ": " + msg
			}
			if reason == ReasonOOMKilled {
				detail += " (OOMKilled)"
			}
			http.Error(w, fmt.Sprintf("bad gateway: %v (%s)", err, detail), http.StatusBadGateway)
		}
	})
}

// cgiEnv is the request's CGI meta-variables (RFC 3875 section 4.1), as Go's
// net/http/cgi sets them.
func cgiEnv(req *http.Request) []EnvVar {
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil {
		host, port = req.Host, "80"
	}
	remote, remotePort, _ := net.SplitHostPort(req.RemoteAddr)
	env := []EnvVar{
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "kubetab"},
		{"SERVER_PROTOCOL", req.Proto},
		{"SERVER_NAME", host},
		{"SERVER_PORT", port},
		{"REQUEST_METHOD", req.Method},
		{"REQUEST_URI", req.URL.RequestURI()},
		{"SCRIPT_NAME", ""},
		{"PATH_INFO", req.URL.Path},
		{"QUERY_STRING", req.URL.RawQuery},
		{"REMOTE_ADDR", remote},
		{"REMOTE_PORT", remotePort},
	}
	if env[2].Value == "" {
		env[2].Value = "HTTP/1.1"
	}
	if req.ContentLength > 0 {
		env = append(env, EnvVar{"CONTENT_LENGTH", strconv.FormatInt(req.ContentLength, 10)})
	}
	if ct := req.Header.Get("Content-Type"); ct != "" {
		env = append(env, EnvVar{"CONTENT_TYPE", ct})
	}
	for k, v := range req.Header {
		k = strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		if k == "PROXY" || k == "CONTENT_TYPE" || k == "CONTENT_LENGTH" || strings.ContainsRune(k, '=') {
			continue // httpoxy; the two set above; not a valid name
		}
		val := strings.Join(v, ", ")
		if strings.ContainsRune(val, 0) {
			continue
		}
		env = append(env, EnvVar{"HTTP_" + k, val})
	}
	return env
}

// writeCGIResponse turns a CGI response into an HTTP one.
func writeCGIResponse(w http.ResponseWriter, out []byte) error {
	br := bufio.NewReader(bytes.NewReader(out))
	hdr, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		return fmt.Errorf("malformed CGI response headers: %v", err)
	}
	if len(hdr) == 0 {
		return errors.New("the CGI response has no headers")
	}
	code := http.StatusOK
	if s := hdr.Get("Status"); s != "" {
		n, err := strconv.Atoi(strings.SplitN(s, " ", 2)[0])
		if err != nil || n < 100 || n > 999 {
			return fmt.Errorf("bad CGI status %q", s)
		}
		code = n
		hdr.Del("Status")
	} else if hdr.Get("Location") != "" {
		code = http.StatusFound
	}
	for k, v := range hdr {
		w.Header()[k] = v
	}
	w.WriteHeader(code)
	_, err = io.Copy(w, br)
	return err
}
