package cri_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// t0 is the fake clock's start; log lines and states are stamped from it.
var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// node is one Runtime under test with the events it emitted.
type node struct {
	*cri.Runtime
	clk    *testingclock.FakeClock
	events chan cri.ContainerEvent
}

// newNode returns a runtime on a fake clock, pulling from the real catalog
// unless src is given, sharing cache (a new one if nil).
func newNode(t testing.TB, cache *cri.CompileCache, src cri.ImageSource) *node {
	t.Helper()
	if cache == nil {
		cache = cri.NewCompileCache()
		t.Cleanup(func() { cache.Close(context.Background()) })
	}
	if src == nil {
		src = images.New()
	}
	n := &node{clk: testingclock.NewFakeClock(t0), events: make(chan cri.ContainerEvent, 1000)}
	rt, err := cri.New(cri.Config{Images: src, Cache: cache, Clock: n.clk, OnEvent: func(e cri.ContainerEvent) { n.events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	n.Runtime = rt
	return n
}

// run pulls cfg.Image, creates and starts a container.
func (n *node) run(t testing.TB, cfg cri.ContainerConfig) string {
	t.Helper()
	ctx := context.Background()
	if _, err := n.PullImage(ctx, cfg.Image); err != nil {
		t.Fatalf("PullImage(%q): %v", cfg.Image, err)
	}
	id, err := n.CreateContainer(ctx, cfg)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := n.StartContainer(ctx, id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	return id
}

// waitForLog follows the container's log until it contains want, and returns
// the log so far. It fails if the container exits first or after 10 s.
func (n *node) waitForLog(t testing.TB, id, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &matchWriter{want: want, found: cancel}
	err := n.ReadLogs(ctx, id, cri.LogOptions{Follow: true, TailLines: -1}, w)
	if !w.matched() {
		t.Fatalf("log never contained %q (ReadLogs: %v); log:\n%s", want, err, w.String())
	}
	return w.String()
}

// sleepStep waits until a guest sleeps on the fake clock, then moves the clock
// by d to wake it up. (The fake clock has no "someone is waiting" channel; its
// HasWaiters is polled with a deadline.)
func (n *node) sleepStep(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !n.clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no guest went to sleep on the clock within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	n.clk.Step(d)
}

// waitEvent returns the next event of container id, skipping others.
func (n *node) waitEvent(t testing.TB, id string) cri.ContainerEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-n.events:
			if e.ContainerID == id {
				return e
			}
		case <-timeout:
			t.Fatalf("no event for container %s within 10s", id)
		}
	}
}

// waitExited waits for the container's Stopped event and returns its status.
func (n *node) waitExited(t testing.TB, id string) cri.ContainerStatus {
	t.Helper()
	for {
		e := n.waitEvent(t, id)
		if e.Type == cri.ContainerStoppedEvent {
			return e.Status
		}
	}
}

type matchWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	found context.CancelFunc
	ok    bool
}

func (w *matchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.ok && strings.Contains(w.buf.String(), w.want) {
		w.ok = true
		w.found()
	}
	return len(p), nil
}

func (w *matchWriter) matched() bool  { w.mu.Lock(); defer w.mu.Unlock(); return w.ok }
func (w *matchWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

func TestHelloLifecycle(t *testing.T) {
	n := newNode(t, nil, nil)
	ctx := context.Background()
	id := n.run(t, cri.ContainerConfig{
		PodUID: "uid-a", PodName: "pod-a", PodNamespace: "default", Name: "web",
		Image: "hello", Args: []string{"--port=8080", "x y"},
		Env: []cri.EnvVar{{Name: "HOSTNAME", Value: "pod-a"}},
	})

	n.waitForLog(t, id, "Hello from pod-a! (hello:1.0) args: --port=8080 x y\n")
	n.sleepStep(t, time.Second)
	n.waitForLog(t, id, "hello: tick 1\n")
	n.sleepStep(t, time.Second)
	n.waitForLog(t, id, "hello: tick 2\n")

	st, err := n.ContainerStatus(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cri.ContainerRunning || !st.StartedAt.Equal(t0) || st.Image != "hello:latest" ||
		!strings.HasPrefix(st.ImageRef, "hello@sha256:") || st.PodName != "pod-a" || st.Name != "web" {
		t.Fatalf("running status = %+v", st)
	}

	if err := n.StopContainer(ctx, id, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	st, err = n.ContainerStatus(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cri.ContainerExited || st.ExitCode != 137 || st.Reason != "Error" || !st.FinishedAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("stopped status = %+v, want Exited 137 Error at t0+2s", st)
	}
	if err := n.StopContainer(ctx, id, 0); err != nil {
		t.Fatalf("second StopContainer: %v (must be idempotent)", err)
	}

	var types []cri.ContainerEventType
	for len(types) < 3 {
		types = append(types, n.waitEvent(t, id).Type)
	}
	want := []cri.ContainerEventType{cri.ContainerCreatedEvent, cri.ContainerStartedEvent, cri.ContainerStoppedEvent}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", types, want)
	}

	// Logs outlive the container (kubectl logs of a completed pod).
	var out bytes.Buffer
	if err := n.ReadLogs(ctx, id, cri.LogOptions{TailLines: -1, Timestamps: true}, &out); err != nil {
		t.Fatal(err)
	}
	wantLog := "2026-11-29T09:00:00Z Hello from pod-a! (hello:1.0) args: --port=8080 x y\n" +
		"2026-11-29T09:00:01Z hello: tick 1\n" +
		"2026-11-29T09:00:02Z hello: tick 2\n"
	if out.String() != wantLog {
		t.Fatalf("logs after exit =\n%s\nwant\n%s", out.String(), wantLog)
	}

	// The same log in the kubelet's CRI log file format.
	lines, err := n.LogLines(id)
	if err != nil {
		t.Fatal(err)
	}
	var file strings.Builder
	for _, l := range lines {
		file.WriteString(l.String() + "\n")
	}
	wantFile := "2026-11-29T09:00:00Z stdout F Hello from pod-a! (hello:1.0) args: --port=8080 x y\n" +
		"2026-11-29T09:00:01Z stdout F hello: tick 1\n" +
		"2026-11-29T09:00:02Z stdout F hello: tick 2\n"
	if file.String() != wantFile {
		t.Fatalf("LogLines =\n%s\nwant\n%s", file.String(), wantFile)
	}

	if err := n.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if e := n.waitEvent(t, id); e.Type != cri.ContainerDeletedEvent {
		t.Fatalf("event after remove = %v", e.Type)
	}
	if _, err := n.ContainerStatus(id); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Fatalf("status after remove: %v, want ErrContainerNotFound", err)
	}
	if err := n.ReadLogs(ctx, id, cri.LogOptions{}, &out); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Fatalf("logs after remove: %v, want ErrContainerNotFound", err)
	}
	if err := n.RemoveContainer(ctx, id); err != nil {
		t.Fatalf("second RemoveContainer: %v (must be idempotent)", err)
	}
}

// TestRealClock runs hello on the real clock: its one-second sleep is a real
// one, and a stop in the middle of it ends the guest at once.
func TestRealClock(t *testing.T) {
	cache := cri.NewCompileCache()
	defer cache.Close(context.Background())
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{Runtime: rt}
	id := n.run(t, cri.ContainerConfig{PodName: "pod-r", Name: "c", Image: "hello:2.0"})
	n.waitForLog(t, id, "Hi again from pod-r! (hello:2.0) args: (none)\nhello: tick 1\n")

	// Stop while it sleeps towards tick 2: a stop does not wait for the sleep.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := rt.StopContainer(ctx, id, time.Minute); err != nil {
		t.Fatalf("StopContainer of a sleeping guest: %v", err)
	}
	st, _ := rt.ContainerStatus(id)
	if st.ExitCode != 137 {
		t.Fatalf("exit code = %d, want 137", st.ExitCode)
	}
	if d := st.FinishedAt.Sub(st.StartedAt); d < time.Second {
		t.Fatalf("ran %v; the tick came after less than a real second", d)
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		memLimit   int64
		ticks      int // clock steps of 1s
		stop       bool
		wantCode   int32
		wantReason string
		wantLog    string
		wantMsg    string
	}{
		{name: "completed", args: []string{"--ticks=0"}, wantCode: 0, wantReason: "Completed", wantLog: "hello: done after 0 ticks, exit code 0\n"},
		{name: "completed after ticks", args: []string{"--ticks=2"}, ticks: 2, wantCode: 0, wantReason: "Completed", wantLog: "hello: tick 2\nhello: done after 2 ticks, exit code 0\n"},
		{name: "error exit", args: []string{"--ticks=1", "--exit=3"}, ticks: 1, wantCode: 3, wantReason: "Error", wantLog: "hello: done after 1 ticks, exit code 3\n"},
		{name: "stopped", stop: true, wantCode: 137, wantReason: "Error"},
		// hello starts with 2 pages (128 KiB) of memory.
		{name: "memory limit below initial memory", memLimit: 100 << 10, wantCode: 137, wantReason: "OOMKilled",
			wantMsg: "memory limit 102400 bytes (1 pages of 64 KiB) is below the 2 pages the module needs to start"},
		{name: "memory limit above initial memory", args: []string{"--ticks=0"}, memLimit: 128 << 10, wantCode: 0, wantReason: "Completed", wantLog: "done"},
	}
	n := newNode(t, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c", Image: "hello:1.0", Args: tt.args, MemoryLimitBytes: tt.memLimit})
			if tt.wantReason != "OOMKilled" {
				n.waitForLog(t, id, "Hello from p!")
			}
			for i := 0; i < tt.ticks; i++ {
				n.sleepStep(t, time.Second)
			}
			if tt.stop {
				if err := n.StopContainer(context.Background(), id, 0); err != nil {
					t.Fatal(err)
				}
			}
			st := n.waitExited(t, id)
			if st.State != cri.ContainerExited || st.ExitCode != tt.wantCode || st.Reason != tt.wantReason || st.Message != tt.wantMsg {
				t.Fatalf("status = %v %d %q %q, want Exited %d %q %q", st.State, st.ExitCode, st.Reason, st.Message, tt.wantCode, tt.wantReason, tt.wantMsg)
			}
			var out bytes.Buffer
			if err := n.ReadLogs(context.Background(), id, cri.LogOptions{TailLines: -1}, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantLog) {
				t.Fatalf("log = %q, want it to contain %q", out.String(), tt.wantLog)
			}
		})
	}
}

func TestCommandAndEnv(t *testing.T) {
	tests := []struct {
		name string
		cfg  cri.ContainerConfig
		want string // the greeting line
	}{
		{"hostname from pod name", cri.ContainerConfig{PodName: "web-7d4b9-x2x8q", Args: []string{"--ticks=0"}},
			"Hello from web-7d4b9-x2x8q! (hello:1.0) args: --ticks=0"},
		{"env overrides hostname", cri.ContainerConfig{PodName: "p", Args: []string{"--ticks=0"}, Env: []cri.EnvVar{{Name: "HOSTNAME", Value: "custom"}}},
			"Hello from custom! (hello:1.0) args: --ticks=0"},
		{"no hostname", cri.ContainerConfig{Args: []string{"--ticks=0"}},
			"Hello from (no HOSTNAME)! (hello:1.0) args: --ticks=0"},
		{"command replaces entrypoint", cri.ContainerConfig{PodName: "p", Command: []string{"hello", "-v"}, Args: []string{"--ticks=0"}},
			"Hello from p! (hello:1.0) args: -v --ticks=0"},
	}
	n := newNode(t, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Name, cfg.Image = "c", "hello:1.0"
			id := n.run(t, cfg)
			n.waitExited(t, id)
			var out bytes.Buffer
			if err := n.ReadLogs(context.Background(), id, cri.LogOptions{TailLines: -1}, &out); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(out.String(), "\n"); first != tt.want {
				t.Fatalf("greeting = %q, want %q", first, tt.want)
			}
		})
	}
}

func TestPullImage(t *testing.T) {
	n := newNode(t, nil, nil)
	ctx := context.Background()
	catalog := images.New()
	digest := map[string]string{}
	for _, e := range catalog.List() {
		digest[e.Ref] = e.Digest
	}

	if _, ok := n.ImageStatus("hello"); ok {
		t.Fatal("hello present before any pull")
	}
	tests := []struct {
		ref      string
		wantErr  error
		wantMsg  string
		wantID   string
		wantTags []string
	}{
		{ref: "hello", wantID: digest["hello:1.0"], wantTags: []string{"hello:latest"}},
		{ref: "hello:1.0", wantID: digest["hello:1.0"], wantTags: []string{"hello:1.0", "hello:latest"}},
		{ref: "hello:2.0", wantID: digest["hello:2.0"], wantTags: []string{"hello:2.0"}},
		{ref: "hello@" + digest["hello:2.0"], wantID: digest["hello:2.0"], wantTags: []string{"hello:2.0"}},
		{ref: "hello:9.9", wantErr: cri.ErrImageNotFound,
			wantMsg: `failed to pull and unpack image "hello:9.9": failed to resolve reference "hello:9.9": hello:9.9: not found`},
		{ref: "nginx", wantErr: cri.ErrImageNotFound},
		{ref: "hello@sha256:" + strings.Repeat("0", 64), wantErr: cri.ErrImageNotFound},
		{ref: "Hello!", wantErr: cri.ErrInvalidReference},
		{ref: "", wantErr: cri.ErrInvalidReference},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			st, err := n.PullImage(ctx, tt.ref)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || (tt.wantMsg != "" && err.Error() != tt.wantMsg) {
					t.Fatalf("PullImage(%q) error = %v, want %v %q", tt.ref, err, tt.wantErr, tt.wantMsg)
				}
				if _, ok := n.ImageStatus(tt.ref); ok {
					t.Fatalf("%q present after a failed pull", tt.ref)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.ID != tt.wantID || fmt.Sprint(st.RepoTags) != fmt.Sprint(tt.wantTags) || st.Size == 0 {
				t.Fatalf("PullImage(%q) = %+v, want ID %s tags %v", tt.ref, st, tt.wantID, tt.wantTags)
			}
			got, ok := n.ImageStatus(tt.ref)
			if !ok || got.ID != tt.wantID {
				t.Fatalf("ImageStatus(%q) = %+v, %v", tt.ref, got, ok)
			}
			if got, ok := n.ImageStatus(tt.wantID); !ok || got.ID != tt.wantID {
				t.Fatalf("ImageStatus by ID %s = %+v, %v", tt.wantID, got, ok)
			}
		})
	}
	if list := n.ListImages(); len(list) != 2 {
		t.Fatalf("ListImages = %+v, want 2 images (1.0=latest, 2.0)", list)
	}

	// Creating from an image this node has not pulled fails, as it does upstream.
	other := newNode(t, nil, nil)
	if _, err := other.CreateContainer(ctx, cri.ContainerConfig{Name: "c", Image: "hello"}); !errors.Is(err, cri.ErrImageNotPresent) {
		t.Fatalf("CreateContainer before pull: %v, want ErrImageNotPresent", err)
	}

	// An image ID works as the image of a container too.
	id, err := n.CreateContainer(ctx, cri.ContainerConfig{Name: "by-id", Image: digest["hello:2.0"], Args: []string{"--ticks=0"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := n.ContainerStatus(id); st.ImageRef != "hello@"+digest["hello:2.0"] {
		t.Fatalf("container from image ID: ImageRef %q", st.ImageRef)
	}

	n.RemoveImage("hello:2.0")
	if _, ok := n.ImageStatus("hello:2.0"); ok {
		t.Fatal("hello:2.0 present after RemoveImage")
	}
	if _, ok := n.ImageStatus("hello:1.0"); !ok {
		t.Fatal("RemoveImage(hello:2.0) removed hello:1.0")
	}
}

// TestCompileCacheShared pulls on two nodes sharing one cache: only the first
// pull of each digest compiles, and each node still has its own image list.
func TestCompileCacheShared(t *testing.T) {
	cache := cri.NewCompileCache()
	defer cache.Close(context.Background())
	a := newNode(t, cache, nil)
	b := newNode(t, cache, nil)
	ctx := context.Background()

	steps := []struct {
		node         *node
		ref          string
		wantCompiles int64
		wantHits     int64
	}{
		{a, "hello:1.0", 1, 0},
		{b, "hello:1.0", 1, 1}, // other node, same digest: no compile
		{b, "hello", 1, 1},     // latest has hello:1.0's digest, which b holds: not unpacked again
		{a, "hello:2.0", 2, 1}, // new digest
		{b, "hello:2.0", 2, 2},
		{b, "hello:2.0", 2, 2}, // pulled again (imagePullPolicy Always): b has it
	}
	for i, s := range steps {
		if _, err := s.node.PullImage(ctx, s.ref); err != nil {
			t.Fatal(err)
		}
		if st := cache.Stats(); st.Compiles != s.wantCompiles || st.Hits != s.wantHits {
			t.Fatalf("step %d (%s): stats %+v, want %d compiles %d hits", i, s.ref, st, s.wantCompiles, s.wantHits)
		}
	}
	if _, ok := a.ImageStatus("hello:latest"); ok {
		t.Fatal("node a lists hello:latest, which only node b pulled")
	}

	// Both nodes run containers from the one compiled module at once.
	ida := a.run(t, cri.ContainerConfig{PodName: "pa", Name: "c", Image: "hello:1.0"})
	idb := b.run(t, cri.ContainerConfig{PodName: "pb", Name: "c", Image: "hello:1.0", MemoryLimitBytes: 1 << 20})
	a.waitForLog(t, ida, "Hello from pa!")
	b.waitForLog(t, idb, "Hello from pb!")
	if st := cache.Stats(); st.Compiles != 2 || st.Modules != 2 {
		t.Fatalf("after running: %+v, want still 2 compiles of 2 modules", st)
	}
}

func TestReadLogsFollowEndsAtExit(t *testing.T) {
	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c", Image: "hello", Args: []string{"--ticks=1"}})

	// Follow from the start; the follower must return nil by itself once the
	// guest has exited, having written every line.
	var out syncbuf.Buffer
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { done <- n.ReadLogs(ctx, id, cri.LogOptions{Follow: true, TailLines: -1}, &out) }()

	n.sleepStep(t, time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("follow returned %v, want nil at exit", err)
		}
	case <-ctx.Done():
		t.Fatal("follow did not return after the container exited")
	}
	want := "Hello from p! (hello:1.0) args: --ticks=1\nhello: tick 1\nhello: done after 1 ticks, exit code 0\n"
	if out.String() != want {
		t.Fatalf("followed log = %q, want %q", out.String(), want)
	}

	// Following a running container ends with ctx.
	id2 := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c2", Image: "hello"})
	n.waitForLog(t, id2, "Hello")
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := n.ReadLogs(ctx2, id2, cri.LogOptions{Follow: true, TailLines: -1}, &out); !errors.Is(err, context.Canceled) {
		t.Fatalf("follow with a canceled ctx = %v, want context.Canceled", err)
	}
}

func TestReadLogsOptions(t *testing.T) {
	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c", Image: "hello", Args: []string{"--ticks=3"}})
	for i := 0; i < 3; i++ {
		n.sleepStep(t, time.Second)
	}
	n.waitExited(t, id)
	// The log: greeting at t0, tick 1..3 at t0+1s..3s, "done" at t0+3s.
	tests := []struct {
		name string
		opts cri.LogOptions
		want string
	}{
		{"all", cri.LogOptions{TailLines: -1},
			"Hello from p! (hello:1.0) args: --ticks=3\nhello: tick 1\nhello: tick 2\nhello: tick 3\nhello: done after 3 ticks, exit code 0\n"},
		{"tail 2", cri.LogOptions{TailLines: 2}, "hello: tick 3\nhello: done after 3 ticks, exit code 0\n"},
		{"tail 0", cri.LogOptions{TailLines: 0}, ""},
		{"tail beyond", cri.LogOptions{TailLines: 99},
			"Hello from p! (hello:1.0) args: --ticks=3\nhello: tick 1\nhello: tick 2\nhello: tick 3\nhello: done after 3 ticks, exit code 0\n"},
		{"timestamps", cri.LogOptions{TailLines: 1, Timestamps: true}, "2026-11-29T09:00:03Z hello: done after 3 ticks, exit code 0\n"},
		{"since", cri.LogOptions{TailLines: -1, SinceTime: t0.Add(2 * time.Second)},
			"hello: tick 2\nhello: tick 3\nhello: done after 3 ticks, exit code 0\n"},
		{"tail then since", cri.LogOptions{TailLines: 4, SinceTime: t0.Add(3 * time.Second)},
			"hello: tick 3\nhello: done after 3 ticks, exit code 0\n"},
		{"limit bytes", cri.LogOptions{TailLines: 2, LimitBytes: 10}, "hello: tic"},
		{"follow of exited returns", cri.LogOptions{TailLines: 1, Follow: true}, "hello: done after 3 ticks, exit code 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := n.ReadLogs(ctx, id, tt.opts, &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Fatalf("ReadLogs(%+v) =\n%q\nwant\n%q", tt.opts, out.String(), tt.want)
			}
		})
	}
}

// TestLogBound checks that a chatty container keeps only its newest lines.
func TestLogBound(t *testing.T) {
	cache := cri.NewCompileCache()
	defer cache.Close(context.Background())
	clk := testingclock.NewFakeClock(t0)
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clk, MaxLogBytes: 140})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{Runtime: rt, clk: clk}
	id := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c", Image: "hello", Args: []string{"--ticks=3"}})
	for i := 0; i < 3; i++ {
		n.sleepStep(t, time.Second)
	}
	n.waitForLog(t, id, "done")
	var out bytes.Buffer
	if err := rt.ReadLogs(context.Background(), id, cri.LogOptions{TailLines: -1}, &out); err != nil {
		t.Fatal(err)
	}
	// A line costs its text plus 40 bytes: "done" (38+40) and "tick 3" (13+40)
	// fit in 140 bytes, "tick 2" would not.
	if want := "hello: tick 3\nhello: done after 3 ticks, exit code 0\n"; out.String() != want {
		t.Fatalf("bounded log = %q, want %q", out.String(), want)
	}
}

func TestContainerErrors(t *testing.T) {
	n := newNode(t, nil, nil)
	ctx := context.Background()
	if _, err := n.PullImage(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []cri.ContainerConfig{
		{Image: "hello"},
		{Name: "c"},
		{Name: "c", Image: "hello", MemoryLimitBytes: -1},
		{Name: "c", Image: "hello", Env: []cri.EnvVar{{Name: "A=B"}}},
		{Name: "c", Image: "hello", Args: []string{"a\x00b"}},
	} {
		if _, err := n.CreateContainer(ctx, cfg); !errors.Is(err, cri.ErrInvalidConfig) {
			t.Errorf("CreateContainer(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	if err := n.StartContainer(ctx, "nope"); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Errorf("StartContainer(nope) = %v", err)
	}
	if err := n.StopContainer(ctx, "nope", 0); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Errorf("StopContainer(nope) = %v", err)
	}

	id := n.run(t, cri.ContainerConfig{PodName: "p", Name: "c", Image: "hello", Args: []string{"--ticks=0"}})
	n.waitExited(t, id)
	if err := n.StartContainer(ctx, id); !errors.Is(err, cri.ErrNotCreated) {
		t.Errorf("second StartContainer = %v, want ErrNotCreated", err)
	}

	// A created container that is removed never starts.
	id2, err := n.CreateContainer(ctx, cri.ContainerConfig{Name: "c2", Image: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := n.ContainerStatus(id2); st.State != cri.ContainerCreated || !st.StartedAt.IsZero() {
		t.Fatalf("created status = %+v", st)
	}
	if err := n.RemoveContainer(ctx, id2); err != nil {
		t.Fatal(err)
	}
	if err := n.StartContainer(ctx, id2); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Errorf("start after remove = %v", err)
	}
}

func TestListContainers(t *testing.T) {
	n := newNode(t, nil, nil)
	a := n.run(t, cri.ContainerConfig{PodUID: "u1", PodName: "p1", Name: "a", Image: "hello", Labels: map[string]string{"app": "web"}})
	b := n.run(t, cri.ContainerConfig{PodUID: "u2", PodName: "p2", Name: "b", Image: "hello", Args: []string{"--ticks=0"}})
	n.waitExited(t, b)
	running, exited := cri.ContainerRunning, cri.ContainerExited
	tests := []struct {
		name   string
		filter cri.ContainerFilter
		want   []string
	}{
		{"all", cri.ContainerFilter{}, []string{a, b}},
		{"by pod", cri.ContainerFilter{PodUID: "u2"}, []string{b}},
		{"by id", cri.ContainerFilter{ID: a}, []string{a}},
		{"running", cri.ContainerFilter{State: &running}, []string{a}},
		{"exited", cri.ContainerFilter{State: &exited}, []string{b}},
		{"label", cri.ContainerFilter{LabelSelector: map[string]string{"app": "web"}}, []string{a}},
		{"label mismatch", cri.ContainerFilter{LabelSelector: map[string]string{"app": "db"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, st := range n.ListContainers(tt.filter) {
				got = append(got, st.ID)
			}
			// a and b have the same CreatedAt (fake clock), so order is by ID.
			if fmt.Sprint(sortedIDs(got)) != fmt.Sprint(sortedIDs(tt.want)) || len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func sortedIDs(ids []string) []string {
	out := append([]string(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
