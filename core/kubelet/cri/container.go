package cri

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
	"k8s.io/utils/clock"
)

// Errors about containers.
var (
	// ErrContainerNotFound is an ID this node's runtime does not know
	// (never created, or removed).
	ErrContainerNotFound = errors.New("cri: container not found")
	// ErrNotCreated is a StartContainer of a container that was already
	// started: a container runs once; the kubelet creates a new one to restart.
	ErrNotCreated = errors.New("cri: container is not in created state")
	// ErrInvalidConfig is a ContainerConfig the runtime cannot run.
	ErrInvalidConfig = errors.New("cri: invalid container config")
)

func errNotFound(id string) error { return fmt.Errorf("%w: %s", ErrContainerNotFound, id) }

// ContainerState is where a container is in its life, upstream's
// ContainerState enum:
//
//	Created ──StartContainer──▶ Running ──guest exits / StopContainer──▶ Exited
//
// (A Created container that is stopped stays Created.) Unknown is for a
// runtime that lost track of a container; this one never reports it.
type ContainerState int

// Container states, in upstream's order (CONTAINER_CREATED = 0).
const (
	ContainerCreated ContainerState = iota
	ContainerRunning
	ContainerExited
	ContainerUnknown
)

func (s ContainerState) String() string {
	switch s {
	case ContainerCreated:
		return "Created"
	case ContainerRunning:
		return "Running"
	case ContainerExited:
		return "Exited"
	}
	return "Unknown"
}

// Reasons for an exited container, as containerd reports them and the kubelet
// shows them in the pod's status (state.terminated.reason).
const (
	ReasonCompleted  = "Completed"  // exit code 0
	ReasonError      = "Error"      // any other exit code, including a kill
	ReasonOOMKilled  = "OOMKilled"  // memory would exceed the memory limit (at start, or a memory.grow)
	ReasonStartError = "StartError" // the module could not be instantiated
)

// Exit codes the runtime makes up when the guest did not choose one, shaped
// like a shell's 128+signal so they read as they do on Linux.
const (
	ExitCodeKilled     = 137 // 128 + SIGKILL(9): stopped, or OOMKilled
	ExitCodeAbort      = 134 // 128 + SIGABRT(6): trap "unreachable", what C's abort() compiles to
	ExitCodeCrashed    = 139 // 128 + SIGSEGV(11): any other trap
	ExitCodeStartError = 128 // could not be started, as containerd reports a failed exec
)

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string
	Value string
}

// ContainerConfig is what the kubelet asks to run: upstream's ContainerConfig
// with the parts of PodSandboxConfig a container needs (its pod's identity).
type ContainerConfig struct {
	PodUID       string
	PodName      string // also the container's HOSTNAME unless Env sets one
	PodNamespace string
	// Name is the container's name in the pod spec. Required.
	Name string
	// Attempt is the restart count: 0 for the first container of this name in
	// the pod, +1 for each restart.
	Attempt uint32
	// Image is the image reference, as in the pod spec ("hello:1.0"). It must
	// have been pulled on this node. Required.
	Image string
	// Command replaces the image's Entrypoint (and drops its Cmd); Args
	// replace its Cmd. The process's argv is the result; argv[0] is looked
	// up on the PATH of the container's environment, in its root file
	// system, as runc does (see the package doc).
	Command []string
	Args    []string
	// Env is the container's environment, over the image's Env.
	Env []EnvVar
	// Files are files the kubelet places in the container's root file
	// system (upstream: files it manages on the node and bind-mounts):
	// /etc/hosts, /etc/hostname, /etc/resolv.conf, the termination log.
	Files []File
	// MemoryLimitBytes, when > 0, caps the guest's memory (rounded down to
	// whole 64 KiB pages). See the package doc for what exceeding it does.
	MemoryLimitBytes int64
	// CPULimitMillicores, when > 0, is resources.limits.cpu: the guest gets
	// at most that share of a core (200 = a fifth), enforced in time slices
	// of about a millisecond (see the package doc).
	CPULimitMillicores int64
	// Mounts are the container's volumes, by mount path.
	Mounts []Mount
	// WorkingDir is the container's workingDir, over the image's. WASI
	// preview1 has no current directory a runtime could set: wasi-libc
	// starts every program in "/". The runtime makes the directory and
	// exports it as PWD, where the userland's programs start.
	WorkingDir string
	// Deadline, when not zero, is when the runtime kills the container (on
	// the Config's clock): the pod's activeDeadlineSeconds, counted by the
	// kubelet from the pod's start. It ends with 137, Error, and the message
	// DeadlineExceededMessage.
	Deadline time.Time
	// Labels are copied to the status, for ListContainers' LabelSelector.
	Labels map[string]string
	// Stdin gives the container's own process a stdin that Attach feeds
	// (the pod spec's stdin); StdinOnce closes it at the first attach's
	// end; TTY puts the process on a terminal (see attach.go, tty.go).
	Stdin, StdinOnce, TTY bool
}

// ContainerStatus is one container as the runtime sees it: upstream's
// ContainerStatus (and Container, for lists).
type ContainerStatus struct {
	ID           string
	PodUID       string
	PodName      string
	PodNamespace string
	Name         string
	Attempt      uint32
	// Image is the normalized reference the container was created from
	// ("hello:latest"); ImageRef pins its content ("hello@sha256:..."), what
	// the kubelet reports as the pod's status.containerStatuses[].imageID.
	Image    string
	ImageRef string
	State    ContainerState
	// CreatedAt, StartedAt, FinishedAt are zero until they happen.
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	// ExitCode, Reason and Message are set once the container has exited.
	ExitCode           int32
	Reason             string
	Message            string
	MemoryLimitBytes   int64
	CPULimitMillicores int64
	Labels             map[string]string
}

// DeadlineExceededMessage is the Message of a container killed at its
// Deadline.
const DeadlineExceededMessage = "the container was killed at its deadline (activeDeadlineSeconds)"

// Mount is one volume in a container, at ContainerPath: upstream's Mount
// (a directory of the node bind-mounted into the container). There are no
// host directories here, natively as in a tab: a guest never reaches a host
// file (see rootfs.go).
//
// Exactly one of Mem and FS is set. A Mem mount is writable unless ReadOnly
// (emptyDir); an FS mount is always read-only and must set ReadOnly
// (configMap, secret, downward API: the kubelet can hand over an fs.FS that
// reads its current content, so updates show through).
type Mount struct {
	// ContainerPath is where the guest sees it: an absolute path, not "/".
	ContainerPath string
	// Mem is a writable directory in memory; mount one MemDir in several
	// containers to share it.
	Mem *MemDir
	// FS is a file system served read-only, for example an fstest.MapFS.
	FS       fs.FS
	ReadOnly bool
}

// container is one container of a node.
type container struct {
	id       string
	cfg      ContainerConfig
	image    string // normalized reference
	imageRef string // name@digest
	argv     []string
	env      []EnvVar
	workDir  string
	clock    clock.Clock
	cache    *CompileCache
	network  PodNetwork // nil: no network (wget fails)
	root     *MemDir    // the container's root file system (rootfs.go)

	// What to run: the program argv[0] names, or why it cannot start.
	prog       *program
	startErr   string // the program could not be found or compiled: StartError
	limitPages uint32 // memory limit in pages; 0 for none

	// mu guards everything below, and the log.
	mu         sync.Mutex
	state      ContainerState
	createdAt  time.Time
	startedAt  time.Time
	finishedAt time.Time
	exitCode   int32
	reason     string
	message    string
	killed     bool               // StopContainer or RemoveContainer asked it to end
	deadline   bool               // killed because its Deadline passed
	guest      *guest             // the running instance's host state; set by run
	execs      sync.WaitGroup     // running execs and HTTP instances; run waits for them
	execCPU    atomic.Int64       // CPU time of the execs that ended, ns
	lastStats  statsSample        // the previous ContainerStats, for UsageNanoCores
	removed    bool               // RemoveContainer took it; it must not start
	memPages   atomic.Int64       // pages of its running instances together (memory.go)
	pools      []*MemoryPool      // the node's and the host's memory; nil entries for none
	runCtx     context.Context    // the guest's context; set by StartContainer, read-only after
	cancel     context.CancelFunc // ends the guest; set by StartContainer
	done       chan struct{}      // closed when the guest's goroutine has ended; nil before start
	log        containerLog
	attach     *attachPoint       // the main process's streams; set by runGuest
	procs      map[int32]*process // running instances by PID: the main one is 1
	nextPID    int32
}

// program is a compiled module ready to instantiate under the container's
// memory limit, or oom: why it can never start under it.
type program struct {
	path     string
	compiled wazero.CompiledModule
	wr       *wasmRuntime
	minPages uint32
	oom      string
}

func (c *container) status() ContainerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statusLocked()
}

func (c *container) statusLocked() ContainerStatus {
	return ContainerStatus{
		ID:                 c.id,
		PodUID:             c.cfg.PodUID,
		PodName:            c.cfg.PodName,
		PodNamespace:       c.cfg.PodNamespace,
		Name:               c.cfg.Name,
		Attempt:            c.cfg.Attempt,
		Image:              c.image,
		ImageRef:           c.imageRef,
		State:              c.state,
		CreatedAt:          c.createdAt,
		StartedAt:          c.startedAt,
		FinishedAt:         c.finishedAt,
		ExitCode:           c.exitCode,
		Reason:             c.reason,
		Message:            c.message,
		MemoryLimitBytes:   c.cfg.MemoryLimitBytes,
		CPULimitMillicores: c.cfg.CPULimitMillicores,
		Labels:             maps.Clone(c.cfg.Labels),
	}
}

// kill asks a running guest to end. It does not wait.
func (c *container) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == ContainerRunning && !c.killed {
		c.killed = true
		c.cancel()
	}
}

// wait waits until the guest's goroutine has ended (at once if it never
// started) or ctx is done.
func (c *container) wait(ctx context.Context) error {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cri: waiting for container %s to stop: %w", c.id, ctx.Err())
	}
}

// CreateContainer creates a container from an image already pulled on this
// node and returns its ID; the container is in state Created and nothing runs
// yet. With a memory limit this may decode the module once more for that
// limit (see CompileCache).
func (r *Runtime) CreateContainer(ctx context.Context, cfg ContainerConfig) (string, error) {
	if err := validateConfig(cfg); err != nil {
		return "", err
	}
	r.mu.Lock()
	ni := r.lookupImageLocked(cfg.Image)
	r.mu.Unlock()
	if ni == nil {
		return "", fmt.Errorf("create container %q: %w: %q", cfg.Name, ErrImageNotPresent, cfg.Image)
	}
	// The image's name, for argv[0] and the status. cfg.Image may also be an
	// image ID ("sha256:..."); then the name comes from the image's digests.
	image, name := cfg.Image, ""
	if refDigestRE.MatchString(cfg.Image) {
		if len(ni.status.RepoDigests) > 0 {
			name, _, _ = strings.Cut(ni.status.RepoDigests[0], "@")
		}
	} else if ref, err := ParseRef(cfg.Image); err == nil {
		image, name = ref.String(), ref.Name
	}

	c := &container{
		cfg:      cfg,
		image:    image,
		imageRef: name + "@" + ni.status.ID,
		clock:    r.clock,
		cache:    r.cache,
		network:  r.network,
		log:      newContainerLog(r.maxLogBytes),
		procs:    map[int32]*process{},
		nextPID:  2, // 1 is the container's own process
		attach:   newAttachPoint(cfg.Stdin),
		pools:    r.pools,
	}
	c.cfg.Command = append([]string(nil), cfg.Command...)
	c.cfg.Args = append([]string(nil), cfg.Args...)
	c.cfg.Env = append([]EnvVar(nil), cfg.Env...)
	c.cfg.Labels = maps.Clone(cfg.Labels)
	c.cfg.Mounts = append([]Mount(nil), cfg.Mounts...)
	c.cfg.Files = append([]File(nil), cfg.Files...)

	// argv: the pod's command replaces the image's Entrypoint and drops its
	// Cmd; the pod's args replace Cmd (upstream: the kubelet sends command
	// and args, the runtime merges them with the image config).
	icfg := ni.status.Config
	switch {
	case len(cfg.Command) > 0:
		c.argv = append(append([]string(nil), cfg.Command...), cfg.Args...)
	case len(cfg.Args) > 0:
		c.argv = append(append([]string(nil), icfg.Entrypoint...), cfg.Args...)
	default:
		c.argv = append(append([]string(nil), icfg.Entrypoint...), icfg.Cmd...)
	}
	// The environment: the image's Env, then HOSTNAME (containerd sets it
	// from the sandbox's hostname, which the kubelet sets to the pod's
	// name), PATH if nobody set one, PWD, then the container's own.
	for _, kv := range icfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			c.env = append(c.env, EnvVar{Name: k, Value: v})
		}
	}
	if _, ok := envValue(cfg.Env, "HOSTNAME"); !ok && cfg.PodName != "" {
		c.env = append(c.env, EnvVar{Name: "HOSTNAME", Value: cfg.PodName})
	}
	if _, ok := envValue(append(append([]EnvVar(nil), c.env...), cfg.Env...), "PATH"); !ok {
		c.env = append([]EnvVar{{Name: "PATH", Value: DefaultPath}}, c.env...)
	}
	c.workDir = cfg.WorkingDir
	if c.workDir == "" {
		c.workDir = icfg.WorkingDir
	}
	if c.workDir == "" {
		c.workDir = "/"
	}
	if c.workDir != "/" {
		c.env = append(c.env, EnvVar{Name: "PWD", Value: c.workDir})
	}
	c.env = append(c.env, cfg.Env...)

	c.root = ni.rootFS(cfg.Files, cfg.Mounts)
	if c.workDir != "/" {
		c.root.mkdirAll(c.workDir, 0o755)
	}

	pages := uint32(noLimit)
	if cfg.MemoryLimitBytes > 0 && cfg.MemoryLimitBytes < int64(noLimit)*wasmPageSize {
		pages = uint32(cfg.MemoryLimitBytes / wasmPageSize)
		c.limitPages = pages
	}
	if len(c.argv) == 0 {
		// An image with neither Entrypoint nor Cmd and a pod with no
		// command: containerd's "no command specified".
		c.startErr = "failed to create containerd task: no command specified"
	} else {
		prog, err := c.program(ctx, c.argv[0])
		var ee *execError
		switch {
		case errors.As(err, &ee):
			c.startErr = fmt.Sprintf("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: %v: unknown", ee)
		case err != nil:
			return "", fmt.Errorf("create container %q: %w", cfg.Name, err)
		default:
			c.prog = prog
		}
	}

	id, err := newID()
	if err != nil {
		return "", err
	}
	c.id = id
	c.createdAt = r.clock.Now()
	r.mu.Lock()
	r.addLocked(c)
	r.mu.Unlock()
	r.emit(ContainerCreatedEvent, c.status())
	return id, nil
}

func validateConfig(cfg ContainerConfig) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case cfg.Name == "":
		return bad("name is required")
	case cfg.Image == "":
		return bad("container %q: image is required", cfg.Name)
	case cfg.MemoryLimitBytes < 0:
		return bad("container %q: memory limit %d must not be negative", cfg.Name, cfg.MemoryLimitBytes)
	case cfg.CPULimitMillicores < 0:
		return bad("container %q: cpu limit %dm must not be negative", cfg.Name, cfg.CPULimitMillicores)
	case cfg.WorkingDir != "" && !path.IsAbs(cfg.WorkingDir):
		return bad("container %q: workingDir %q must be an absolute path", cfg.Name, cfg.WorkingDir)
	}
	seen := map[string]bool{}
	for _, m := range cfg.Mounts {
		p := m.ContainerPath
		switch {
		case !path.IsAbs(p) || path.Clean(p) != p || p == "/":
			return bad("container %q: mount path %q must be a clean absolute path other than /", cfg.Name, p)
		case seen[p]:
			return bad("container %q: mount path %q is used twice", cfg.Name, p)
		case btoi(m.FS != nil)+btoi(m.Mem != nil) != 1:
			return bad("container %q: mount %q needs exactly one of Mem and FS", cfg.Name, p)
		case m.FS != nil && !m.ReadOnly:
			return bad("container %q: mount %q: an FS mount is read-only and must say so", cfg.Name, p)
		}
		seen[p] = true
	}
	for _, e := range cfg.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.ContainsRune(e.Value, 0) {
			return bad("container %q: env %q: a name must be non-empty without '=' or NUL, a value without NUL", cfg.Name, e.Name)
		}
	}
	for _, a := range append(append([]string(nil), cfg.Command...), cfg.Args...) {
		if strings.ContainsRune(a, 0) {
			return bad("container %q: command and args must not contain NUL", cfg.Name)
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newID returns a container ID as containerd makes them: 32 random bytes in hex.
func newID() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cri: container ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// StartContainer starts a Created container: the guest runs in its own
// goroutine, which ends when the guest exits or is stopped. StartContainer
// returns once the container is Running; it does not wait for the guest.
// A guest that cannot be instantiated still starts and then exits at once
// with ExitCodeStartError (or OOMKilled), as a container whose process failed.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	c, err := r.get(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.removed {
		c.mu.Unlock()
		return errNotFound(id)
	}
	if c.state != ContainerCreated {
		state := c.state
		c.mu.Unlock()
		return fmt.Errorf("start container %s: %w (it is %s)", id, ErrNotCreated, state)
	}
	if err := r.cache.track(c); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("start container %s: %w", id, err)
	}
	// The guest's context keeps ctx's values (for wazero's experimental
	// hooks) but not its cancellation: the guest outlives the kubelet's call.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.runCtx, c.cancel = runCtx, cancel
	c.done = make(chan struct{})
	c.state = ContainerRunning
	c.startedAt = r.clock.Now()
	st := c.statusLocked()
	c.mu.Unlock()

	// The deadline's timer is set before StartContainer returns, so that a
	// clock moved right after sees it.
	stopDeadline := c.watchDeadline(runCtx)
	r.emit(ContainerStartedEvent, st)
	go r.run(runCtx, c, stopDeadline)
	return nil
}

// run is the container's goroutine: it runs the guest and records how it
// ended.
func (r *Runtime) run(ctx context.Context, c *container, stopDeadline func()) {
	code, reason, message := c.runGuest(ctx)
	stopDeadline()

	c.mu.Lock()
	now := r.clock.Now()
	c.log.flushLocked(now)
	c.state = ContainerExited
	c.finishedAt = now
	if c.deadline && code == ExitCodeKilled && reason == ReasonError {
		message = DeadlineExceededMessage
	}
	c.exitCode, c.reason, c.message = code, reason, message
	c.cancel()
	c.log.wakeLocked() // followers return once they have read everything
	st := c.statusLocked()
	c.mu.Unlock()

	c.execs.Wait() // they were cancelled with the container
	r.cache.untrack(c)
	r.emit(ContainerStoppedEvent, st)
	close(c.done)
}

// watchDeadline kills the container when the clock passes its Deadline. It
// returns a function that ends the watch.
func (c *container) watchDeadline(ctx context.Context) (stop func()) {
	if c.cfg.Deadline.IsZero() {
		return func() {}
	}
	kill := func() {
		c.mu.Lock()
		if c.state == ContainerRunning && !c.killed {
			c.deadline = true
		}
		c.mu.Unlock()
		c.kill()
	}
	d := c.cfg.Deadline.Sub(c.clock.Now())
	if d <= 0 {
		kill()
		return func() {}
	}
	t := c.clock.NewTimer(d)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			kill()
		case <-done:
		case <-ctx.Done():
		}
	}()
	return func() { close(done) }
}

// runGuest runs the container's own instance: its argv, its log as stdout
// and stderr.
func (c *container) runGuest(ctx context.Context) (code int32, reason, message string) {
	if c.startErr != "" {
		return ExitCodeStartError, ReasonStartError, c.startErr
	}
	if c.prog.oom != "" {
		return ExitCodeKilled, ReasonOOMKilled, c.prog.oom
	}
	g := newGuest(ctx, c.cfg.CPULimitMillicores)
	g.pages.Store(c.prog.minPages)
	c.mu.Lock()
	c.guest = g
	iio := c.mainIO(ctx)
	c.mu.Unlock()
	return c.instance(ctx, g, c.prog, iio, c.wasKilled)
}

// instanceIO is what differs between a container's own instance and an
// exec: argv, extra environment and the standard streams.
type instanceIO struct {
	argv           []string
	env            []EnvVar // after the container's, so they win
	ownEnv         bool     // env is the whole environment (a spawned process's)
	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool           // the process is on a terminal (kubectl exec -t)
	pid            int32          // 1 for the container's own process; 0: the next free PID
	started        func(*process) // called with the process once it has a PID
}

// instance instantiates prog as one guest of the container, a process
// with its own PID, and calls its _start; killed says whether a stop asked
// the guest to end.
func (c *container) instance(ctx context.Context, g *guest, prog *program, iio instanceIO, killed func() bool) (code int32, reason, message string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.ctx = ctx
	p := c.startProcess(iio.argv, iio.pid, cancel)
	defer c.endProcess(p)
	g.proc = p
	if iio.started != nil {
		iio.started(p)
	}
	g.host = &hostState{c: c, iio: iio, proc: p}
	defer func() {
		for _, b := range g.host.bodies {
			b.Close()
		}
	}()

	clk := c.clock
	base := clk.Now()
	cfg := wazero.NewModuleConfig().
		WithName("").         // anonymous: many instances of one module can coexist
		WithStartFunctions(). // _start is called below, so we hold the module while it runs
		WithArgs(iio.argv...).
		WithStdout(iio.stdout).
		WithStderr(iio.stderr).
		WithRandSource(rand.Reader).
		WithWalltime(func() (int64, int32) {
			t := clk.Now()
			return t.Unix(), int32(t.Nanosecond())
		}, sys.ClockResolution(time.Microsecond)).
		WithNanotime(func() int64 { return int64(clk.Since(base)) }, sys.ClockResolution(1)).
		WithNanosleep(func(ns int64) {
			// Sleep on the injected clock; a stop ends the guest at once. A
			// sleeping guest uses no CPU.
			g.exitIfStopped()
			g.pause()
			defer g.resume()
			if ns <= 0 {
				goruntime.Gosched()
				return
			}
			t := clk.NewTimer(time.Duration(ns))
			defer t.Stop()
			select {
			case <-t.C():
			case <-ctx.Done():
				g.exitIfStopped()
			}
		}).
		WithOsyield(func() {
			g.pause()
			goruntime.Gosched()
			g.resume()
			g.exitIfStopped()
		})
	if iio.stdin != nil {
		cfg = cfg.WithStdin(iio.stdin)
	}
	// The root first, then every mount: wasi-libc resolves a path against
	// the longest preopened directory that prefixes it.
	mount := func(fsc wazero.FSConfig, fsys experimentalsys.FS, at string) wazero.FSConfig {
		return fsc.(sysfs.FSConfig).WithSysFSMount(fsys, at)
	}
	fsc := mount(wazero.NewFSConfig(), c.root, "/")
	fsc = fsc.WithFSMount(procFS{c}, "/proc")
	for _, m := range c.cfg.Mounts {
		switch {
		case m.Mem != nil && m.ReadOnly:
			fsc = mount(fsc, &sysfs.ReadFS{FS: m.Mem}, m.ContainerPath)
		case m.Mem != nil:
			fsc = mount(fsc, m.Mem, m.ContainerPath)
		default:
			fsc = fsc.WithFSMount(m.FS, m.ContainerPath)
		}
	}
	cfg = cfg.WithFSConfig(fsc)
	if !iio.ownEnv {
		for _, e := range c.env {
			cfg = cfg.WithEnv(e.Name, e.Value)
		}
	}
	for _, e := range iio.env {
		cfg = cfg.WithEnv(e.Name, e.Value)
	}

	ctx = context.WithValue(ctx, guestKey{}, g)
	mod, err := prog.wr.rt.InstantiateModule(ctx, prog.compiled, cfg)
	if err != nil {
		if killed() || p.signaled() != 0 {
			return p.exitCode(ExitCodeKilled), ReasonError, ""
		}
		return ExitCodeStartError, ReasonStartError, firstLine(err)
	}
	// Its initial memory is charged before it runs, and every page is
	// given back when it ends.
	g.mem = memCharge{container: &c.memPages, limitPages: c.limitPages, pools: c.pools}
	initial := int64(mod.Memory().Size() / wasmPageSize)
	if ok, msg := g.mem.charge(initial, 0); !ok {
		_ = mod.Close(context.WithoutCancel(ctx))
		return ExitCodeKilled, ReasonOOMKilled, msg
	}
	g.pages.Store(uint32(initial))
	defer func() { g.mem.release(int64(g.pages.Load())) }()
	g.resume()
	_, err = mod.ExportedFunction("_start").Call(ctx)
	g.pause()
	_ = mod.Close(context.WithoutCancel(ctx))
	if msg := g.oom.Load(); msg != nil {
		return ExitCodeKilled, ReasonOOMKilled, *msg
	}
	code, reason, message = exitStatus(err, killed() || p.signaled() != 0)
	if code == ExitCodeKilled && p.signaled() != 0 {
		code = p.exitCode(code)
	}
	return code, reason, message
}

// exitIfStopped ends a stopped guest from inside a host call (a sleep, a
// write), the way WASI's proc_exit does: it panics with a sys.ExitError, which
// wazero turns into the error of the guest's call. wazero's own stop check
// (WithCloseOnContextDone) needs another goroutine to run, which a guest that
// never blocks does not let happen on js/wasm.
func exitIfStopped(ctx context.Context) {
	if ctx.Err() != nil {
		panic(sys.NewExitError(sys.ExitCodeContextCanceled))
	}
}

func (c *container) wasKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// exitStatus turns how _start returned into an exit code, reason and message.
func exitStatus(err error, killed bool) (int32, string, string) {
	var exit *sys.ExitError
	switch {
	case err == nil: // _start returned: main returned 0
		return 0, ReasonCompleted, ""
	case errors.As(err, &exit):
		code := exit.ExitCode()
		if code == sys.ExitCodeContextCanceled || code == sys.ExitCodeDeadlineExceeded {
			return ExitCodeKilled, ReasonError, "" // the stop closed the module
		}
		// WASI's proc_exit takes any 32-bit code; a Linux process's exit
		// status keeps its low 8 bits (exit(300) is 44, exit(256) is 0).
		if code &= 0xff; code == 0 {
			return 0, ReasonCompleted, ""
		}
		return int32(code), ReasonError, ""
	case killed:
		return ExitCodeKilled, ReasonError, ""
	case strings.HasPrefix(err.Error(), "wasm error: unreachable"):
		return ExitCodeAbort, ReasonError, firstLine(err)
	default:
		return ExitCodeCrashed, ReasonError, firstLine(err)
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// StopContainer stops a running container and waits until it has ended (or
// ctx is done). It is idempotent: stopping an exited or never started
// container is not an error.
//
// Upstream, the runtime sends SIGTERM, waits up to timeout (the pod's
// terminationGracePeriodSeconds) and then sends SIGKILL. WASI preview1 has no
// signals, so a guest could not act on a SIGTERM: the runtime kills it at once
// and timeout is only recorded in the contract for a future graceful protocol.
// The container exits with 137 and reason Error, as after SIGKILL.
func (r *Runtime) StopContainer(ctx context.Context, id string, timeout time.Duration) error {
	c, err := r.get(id)
	if err != nil {
		return err
	}
	c.kill()
	return c.wait(ctx)
}

// ContainerStatus returns a container's status, or ErrContainerNotFound.
func (r *Runtime) ContainerStatus(id string) (ContainerStatus, error) {
	c, err := r.get(id)
	if err != nil {
		return ContainerStatus{}, err
	}
	return c.status(), nil
}

// RemoveContainer removes a container and its log. A running container is
// killed first and waited for (bounded by ctx). Removing an unknown container
// is not an error: the CRI asks for RemoveContainer to be idempotent.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	r.mu.Lock()
	c := r.containers[id]
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.removed = true
	c.mu.Unlock()
	c.kill()
	if err := c.wait(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	_, present := r.containers[id]
	r.removeLocked(id)
	r.mu.Unlock()
	if present { // a concurrent RemoveContainer already reported it
		r.emit(ContainerDeletedEvent, c.status())
	}
	return nil
}
