package cri

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing/fstest"
	"time"
)

// Processes. Every instance of a module in a container (its main one, each
// exec, each HTTP request) is a process with a PID in the container's PID
// namespace, the main one PID 1, as in a container. The container's /proc
// lists them (ps reads it) and kubetab_host.kill signals one. WASI preview1
// has no signals a guest could handle, so every signal ends the process,
// with exit code 128+signal; signalling PID 1 ends the container. The one
// exception is SIGINT for a process that catches it (kubetab_host.sigint:
// an interactive sh): it is recorded for the process to take, as a handler
// would run, and Ctrl-C stops the shell's command instead of the shell.

// process is one running instance.
type process struct {
	pid     int32
	argv    []string
	started time.Time
	cancel  context.CancelFunc
	signal  atomic.Int32 // the signal that ended it, 0 for none

	catchINT, pendingINT atomic.Bool // SIGINT is caught; one came
}

// interrupt delivers SIGINT: recorded when the process catches it, else
// the end of the process (and of the container for PID 1).
func (c *container) interrupt(p *process) {
	if p.catchINT.Load() {
		p.pendingINT.Store(true)
		return
	}
	_ = c.signal(p.pid, 2)
}

func (p *process) signaled() int32 { return p.signal.Load() }

// exitCode is 128+signal for a signalled process, def otherwise.
func (p *process) exitCode(def int32) int32 {
	if s := p.signal.Load(); s != 0 {
		return 128 + s
	}
	return def
}

// startProcess gives an instance a PID.
func (c *container) startProcess(argv []string, pid int32, cancel context.CancelFunc) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pid == 0 {
		pid = c.nextPID
		c.nextPID++
	}
	p := &process{pid: pid, argv: argv, started: c.clock.Now(), cancel: cancel}
	c.procs[p.pid] = p
	return p
}

func (c *container) endProcess(p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.procs, p.pid)
}

// Signal errors, as kill(2) reports them.
var (
	errNoSuchProcess = errors.New("no such process")  // ESRCH
	errBadSignal     = errors.New("invalid argument") // EINVAL
)

// signal sends sig (1-31) to the process pid of the container; 0 only
// checks that it exists. Signalling PID 1 stops the whole container, as the
// kernel ends a PID namespace with its init.
func (c *container) signal(pid, sig int32) error {
	if sig < 0 || sig > 31 {
		return errBadSignal
	}
	c.mu.Lock()
	p := c.procs[pid]
	c.mu.Unlock()
	if p == nil {
		return errNoSuchProcess
	}
	if sig == 0 {
		return nil
	}
	if sig == 2 && p.catchINT.Load() {
		p.pendingINT.Store(true)
		return nil
	}
	p.signal.CompareAndSwap(0, sig)
	if pid == 1 {
		c.kill()
	}
	p.cancel()
	return nil
}

// program resolves name on the container's PATH (or as a path) in its root
// and returns the module there, compiled for the container's memory limit.
// A name that leads nowhere is an *execError with runc's words.
func (c *container) program(ctx context.Context, name string) (*program, error) {
	pathEnv, _ := envValue(c.env, "PATH")
	return c.programIn(ctx, name, pathEnv, c.workDir)
}

// programIn is program with another PATH and working directory (a spawned
// process's).
func (c *container) programIn(ctx context.Context, name, pathEnv, dir string) (*program, error) {
	p, ee := lookPath(c.root, name, pathEnv, dir)
	if ee != nil {
		return nil, ee
	}
	data, digest, errno := c.root.executable(p)
	if errno != 0 {
		return nil, &execError{name: name, err: fmt.Errorf("%v", errno), code: 126}
	}
	m, err := c.cache.compileDigest(ctx, p, data, digest)
	if errors.Is(err, ErrInvalidImage) {
		// Not a WASI command: the kernel's ENOEXEC.
		return nil, &execError{name: name, err: errors.New("exec format error"), code: 126}
	}
	if err != nil {
		return nil, err
	}
	prog := &program{path: p, minPages: m.minPages}
	pages := uint32(noLimit)
	if c.limitPages != 0 {
		pages = c.limitPages
	}
	if pages < m.minPages {
		prog.oom = fmt.Sprintf("memory limit %d bytes (%d pages of 64 KiB) is below the %d pages the module needs to start",
			c.cfg.MemoryLimitBytes, pages, m.minPages)
		return prog, nil
	}
	prog.compiled, prog.wr, err = c.cache.forLimit(ctx, m, pages)
	if err != nil {
		return nil, err
	}
	return prog, nil
}

// procFS is a container's /proc: a directory per process, each with
// cmdline (NUL-separated argv, as Linux writes it), comm, and stat (the
// fields ps reads: pid, (comm), state, and the start time in seconds since
// the container started, where Linux counts clock ticks since boot).
type procFS struct{ c *container }

func (p procFS) Open(name string) (fs.File, error) {
	c := p.c
	c.mu.Lock()
	procs := make([]*process, 0, len(c.procs))
	for _, pr := range c.procs {
		procs = append(procs, pr)
	}
	created := c.createdAt
	c.mu.Unlock()
	sort.Slice(procs, func(i, j int) bool { return procs[i].pid < procs[j].pid })
	m := fstest.MapFS{}
	for _, pr := range procs {
		dir := strconv.Itoa(int(pr.pid))
		comm := path.Base(pr.argv[0])
		m[dir+"/cmdline"] = &fstest.MapFile{Data: []byte(strings.Join(pr.argv, "\x00") + "\x00"), Mode: 0o444}
		m[dir+"/comm"] = &fstest.MapFile{Data: []byte(comm + "\n"), Mode: 0o444}
		m[dir+"/stat"] = &fstest.MapFile{Data: fmt.Appendf(nil, "%d (%s) %s %d\n", pr.pid, comm, "R", int64(pr.started.Sub(created).Seconds())), Mode: 0o444}
	}
	if len(m) == 0 {
		m["."] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
	}
	return m.Open(name)
}

var _ fs.FS = procFS{}

// run runs prog as a child process of a running process of c (kubetab_host
// spawn) and waits for it. It ends with its parent.
func (c *container) run(ctx context.Context, prog *program, iio instanceIO) (code int32, reason, message string) {
	if prog.oom != "" {
		return ExitCodeKilled, ReasonOOMKilled, prog.oom
	}
	g := newGuest(ctx, c.cfg.CPULimitMillicores)
	g.pages.Store(prog.minPages)
	code, reason, message = c.instance(ctx, g, prog, iio, func() bool { return ctx.Err() != nil })
	c.execCPU.Add(g.cpu.Load())
	return code, reason, message
}
