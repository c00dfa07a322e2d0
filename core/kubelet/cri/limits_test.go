package cri_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// imagesAndTestdata serves the catalog's images and the testdata guests.
type imagesAndTestdata struct {
	catalog *images.Catalog
	test    registry
}

func (s imagesAndTestdata) Fetch(ctx context.Context, ref string) (cri.Image, error) {
	if img, err := s.catalog.Fetch(ctx, ref); err == nil {
		return img, nil
	}
	return s.test.Fetch(ctx, ref)
}

func plainCache(t testing.TB) *cri.CompileCache {
	cache := cri.NewCompileCache(cri.WithoutInstrumentation())
	t.Cleanup(func() { cache.Close(context.Background()) })
	return cache
}

// autoStep moves the fake clock a second ahead whenever a guest sleeps on
// it, until the test ends, so that sleeping guests run at full speed. (Not
// for tests with deadlines or timeouts on the clock: it would fire them.)
func (n *node) autoStep(t testing.TB) {
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n.clk.HasWaiters() {
				n.clk.Step(time.Second)
			} else {
				time.Sleep(200 * time.Microsecond)
			}
		}
	}()
}

// waitExitedWithin is waitExited with a bound on the whole wait.
func (n *node) waitExitedWithin(t testing.TB, id string, d time.Duration) cri.ContainerStatus {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case e := <-n.events:
			if e.ContainerID == id && e.Type == cri.ContainerStoppedEvent {
				return e.Status
			}
		case <-timeout:
			t.Fatalf("container %s did not exit within %v; log:\n%s", id, d, n.logText(t, id))
		}
	}
}

// logText is a container's log without timestamps.
func (n *node) logText(t testing.TB, id string) string {
	t.Helper()
	lines, err := n.LogLines(id)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", l.Stream, l.Text)
	}
	return b.String()
}

// TestImagesBothWays runs every catalog image (in a mode that ends) and the
// testdata guests that end, instrumented and plain, and compares what they
// printed and how they exited: the instrumentation must not change what a
// guest does.
func TestImagesBothWays(t *testing.T) {
	configFS := fstest.MapFS{"color": {Data: []byte("blue\n")}, "size": {Data: []byte("XL")}}
	tests := []cri.ContainerConfig{
		{Image: "hello:1.0", Args: []string{"--ticks=2"}},
		{Image: "hello:2.0", Args: []string{"--ticks=1", "--exit=4"}},
		{Image: "web", Args: []string{"--unhealthy"}}, // no /data: exits 1
		{Image: "crash", Args: []string{"--after=2", "--code=3"}},
		{Image: "oom", Args: []string{"--max-mib=3", "--step-ms=0"}},
		{Image: "cpu", Args: []string{"--work=200"}},
		{Image: "sleep", Args: []string{"2"}},
		{Image: "config", Args: []string{"--rounds=2", "--interval=1"}, Env: []cri.EnvVar{{Name: "COLOR", Value: "from env"}},
			Mounts: []cri.Mount{{ContainerPath: "/etc/config", FS: configFS, ReadOnly: true}}},
		{Image: "job", Args: []string{"3"}},
		{Image: "job", Args: []string{"--from=1", "--fail"}},
		{Image: "unreachable"},
		{Image: "oob"},
		{Image: "grow"},
		{Image: "dataoob"},
	}
	src := imagesAndTestdata{images.New(), testRegistry(t)}
	inst := newNode(t, nil, src)
	plain := newNode(t, plainCache(t), src)
	inst.autoStep(t)
	plain.autoStep(t)
	for _, cfg := range tests {
		cfg.Name, cfg.PodName = "c", "pod-1"
		t.Run(cfg.Image+" "+strings.Join(cfg.Args, " "), func(t *testing.T) {
			var out [2]string
			var st [2]cri.ContainerStatus
			for i, n := range []*node{inst, plain} {
				id := n.run(t, cfg)
				st[i] = n.waitExitedWithin(t, id, time.Minute)
				out[i] = n.logText(t, id)
			}
			if out[0] != out[1] || st[0].ExitCode != st[1].ExitCode || st[0].Reason != st[1].Reason || st[0].Message != st[1].Message {
				t.Fatalf("instrumented: %d %s %q\n%s\nplain: %d %s %q\n%s",
					st[0].ExitCode, st[0].Reason, st[0].Message, out[0], st[1].ExitCode, st[1].Reason, st[1].Message, out[1])
			}
			if out[0] == "" && st[0].Message == "" && cfg.Image != "grow" {
				t.Fatal("the guest said nothing: the comparison proves nothing")
			}
		})
	}
}

// TestWebBothWays serves the same requests through the web image,
// instrumented and plain, and compares the responses.
func TestWebBothWays(t *testing.T) {
	var got [2]string
	for i, cache := range []*cri.CompileCache{nil, plainCache(t)} {
		n := newNode(t, cache, nil)
		id := n.run(t, cri.ContainerConfig{Name: "web", Image: "web", PodName: "web-1",
			Mounts: []cri.Mount{{ContainerPath: "/data", Mem: cri.NewMemDir()}}})
		for _, p := range []string{"/", "/?q=1", "/healthz", "/fail", "/healthz", "/nope", "/"} {
			rec := httptest.NewRecorder()
			n.HTTPHandler(id).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			got[i] += fmt.Sprintf("%s %d %q\n", p, rec.Code, rec.Body.String())
		}
	}
	if got[0] != got[1] {
		t.Fatalf("instrumented:\n%s\nplain:\n%s", got[0], got[1])
	}
}

// TestOOMKilled is the acceptance test: `oom` under a 16Mi limit ends
// OOMKilled with 137. A plain module sees malloc fail instead.
func TestOOMKilled(t *testing.T) {
	cfg := cri.ContainerConfig{Name: "c", Image: "oom", Args: []string{"--step-ms=0"}, MemoryLimitBytes: 16 << 20}
	n := newNode(t, nil, nil)
	id := n.run(t, cfg)
	st := n.waitExitedWithin(t, id, time.Minute) // 14 MiB of memset: seconds under -race or Node
	log := n.logText(t, id)
	if st.ExitCode != 137 || st.Reason != cri.ReasonOOMKilled || !strings.Contains(st.Message, "memory limit 16777216 bytes reached") {
		t.Fatalf("exit %d %s %q, want 137 OOMKilled", st.ExitCode, st.Reason, st.Message)
	}
	if !strings.Contains(log, "oom: allocated 14 MiB") || strings.Contains(log, "malloc failed") {
		t.Fatalf("log:\n%s", log)
	}

	p := newNode(t, plainCache(t), nil)
	id = p.run(t, cfg)
	st = p.waitExitedWithin(t, id, time.Minute)
	if st.ExitCode != 1 || !strings.Contains(p.logText(t, id), "oom: malloc failed after") {
		t.Fatalf("plain: exit %d, log:\n%s", st.ExitCode, p.logText(t, id))
	}
}

// TestStopLoopingGuests stops guests that never sleep nor call the host, on
// every platform (on js/wasm only the instrumentation can do it).
func TestStopLoopingGuests(t *testing.T) {
	n := newNode(t, nil, imagesAndTestdata{images.New(), testRegistry(t)})
	for _, cfg := range []cri.ContainerConfig{
		{Name: "c", Image: "cpu"},
		{Name: "c", Image: "loop"},
		{Name: "c", Image: "cpu", CPULimitMillicores: 100}, // stopped while throttled, too
	} {
		id := n.run(t, cfg)
		time.Sleep(20 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := n.StopContainer(ctx, id, 0); err != nil {
			t.Fatal(err)
		}
		cancel()
		if st, _ := n.ContainerStatus(id); st.State != cri.ContainerExited || st.ExitCode != 137 || st.Reason != cri.ReasonError {
			t.Fatalf("%s after stop: %v %d %s", cfg.Image, st.State, st.ExitCode, st.Reason)
		}
	}
}

// TestCPULimit runs `cpu` flat out with a 200m limit and without one, and
// reads the runtime's own accounting: the limited guest uses about a fifth
// of a core. (The throttle's arithmetic is tested exactly, against fake
// time, in TestThrottle.)
func TestCPULimit(t *testing.T) {
	n := newNode(t, nil, nil)
	usage := func(milli int64) (cores float64, throttled uint64) {
		id := n.run(t, cri.ContainerConfig{Name: "c", Image: "cpu", CPULimitMillicores: milli})
		defer n.StopContainer(context.Background(), id, 0)
		time.Sleep(150 * time.Millisecond) // past the first burst of one period's quota
		if _, err := n.ContainerStats(id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		s, err := n.ContainerStats(id)
		if err != nil {
			t.Fatal(err)
		}
		if s.WorkingSetBytes == 0 || s.UsageCoreNanoSeconds == 0 {
			t.Fatalf("stats %+v", s)
		}
		return float64(s.UsageNanoCores) / 1e9, s.ThrottledNanoSeconds
	}
	limited, throttled := usage(200)
	free, freeThrottled := usage(0)
	t.Logf("200m: %.3f cores (throttled %v); no limit: %.3f cores", limited, time.Duration(throttled), free)
	// At most a fifth of a core; less when the machine is busy (-race, other
	// processes), never nothing.
	if limited < 0.04 || limited > 0.3 || throttled == 0 || limited > free/2 {
		t.Errorf("with a 200m limit the guest used %.3f cores, throttled %v; want about 0.2", limited, time.Duration(throttled))
	}
	if free < 0.5 || freeThrottled != 0 {
		t.Errorf("without a limit the guest used %.3f cores, throttled %v", free, time.Duration(freeThrottled))
	}
}

// TestDeadline kills a sleeping and a busy guest at their Deadline.
func TestDeadline(t *testing.T) {
	for _, image := range []string{"sleep", "cpu"} {
		t.Run(image, func(t *testing.T) {
			n := newNode(t, nil, nil)
			id := n.run(t, cri.ContainerConfig{Name: "c", Image: image, Deadline: t0.Add(30 * time.Second)})
			n.waitEvent(t, id) // Created
			n.waitEvent(t, id) // Started
			n.clk.Step(29 * time.Second)
			if st, _ := n.ContainerStatus(id); st.State != cri.ContainerRunning {
				t.Fatalf("before its deadline: %v", st.State)
			}
			n.clk.Step(time.Second)
			st := n.waitExited(t, id)
			if st.ExitCode != 137 || st.Reason != cri.ReasonError || st.Message != cri.DeadlineExceededMessage {
				t.Fatalf("exit %d %s %q", st.ExitCode, st.Reason, st.Message)
			}
		})
	}
}

func TestExecSync(t *testing.T) {
	ctx := context.Background()
	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{Name: "c", Image: "hello", PodName: "pod-1", Env: []cri.EnvVar{{Name: "A", Value: "1"}}})
	n.waitForLog(t, id, "Hello from pod-1")

	out, errOut, code, err := n.ExecSync(ctx, id, []string{"hello", "--ticks=0", "--exit=3"}, 0)
	if err != nil || code != 3 || !strings.Contains(string(out), "Hello from pod-1! (hello:1.0) args: --ticks=0 --exit=3") || len(errOut) != 0 {
		t.Fatalf("exec = %q %q %d %v", out, errOut, code, err)
	}
	// The exec's output is not the container's log.
	if strings.Contains(n.logText(t, id), "--exit=3") {
		t.Fatal("exec output went to the container's log")
	}

	// A timeout on the clock.
	type result struct {
		code int32
		err  error
	}
	res := make(chan result, 1)
	go func() {
		_, _, code, err := n.ExecSync(ctx, id, []string{"hello", "--ticks=100"}, 5*time.Second)
		res <- result{code, err}
	}()
	var r result
	for steps := 0; ; steps++ {
		select {
		case r = <-res:
		default:
			if steps > 100 {
				t.Fatal("the exec did not time out")
			}
			n.sleepStep(t, time.Second)
			continue
		}
		break
	}
	if !errors.Is(r.err, cri.ErrExecTimeout) || r.code != 137 {
		t.Fatalf("exec past its timeout = %d %v, want 137 ErrExecTimeout", r.code, r.err)
	}

	// Exec streams: stdin is read, and output arrives while the command
	// still runs (the first line before stdin ends).
	inR, inW := io.Pipe()
	out2 := &syncbuf.Buffer{}
	done := make(chan int32, 1)
	go func() {
		code, err := n.Exec(ctx, id, []string{"hello", "--stdin", "--exit=300"}, inR, out2, out2)
		if err != nil {
			t.Error(err)
		}
		done <- code
	}()
	fmt.Fprintln(inW, "first")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out2.String(), "hello: stdin: first") {
		if time.Now().After(deadline) {
			t.Fatalf("no streamed output while stdin is open: %q", out2.String())
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintln(inW, "second")
	inW.Close()
	// exit(300) is 44: a process's exit status keeps the low 8 bits.
	if code := <-done; code != 44 || !strings.Contains(out2.String(), "hello: stdin: second\nhello: done after 2 lines of stdin, exit code 300") {
		t.Fatalf("streamed exec = %d %q, want exit 44", code, out2.String())
	}

	if _, _, _, err := n.ExecSync(ctx, id, nil, 0); !errors.Is(err, cri.ErrInvalidConfig) {
		t.Fatalf("empty command: %v", err)
	}
	if err := n.StopContainer(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := n.ExecSync(ctx, id, []string{"hello"}, 0); !errors.Is(err, cri.ErrContainerNotRunning) {
		t.Fatalf("exec into a stopped container: %v", err)
	}
	if _, _, _, err := n.ExecSync(ctx, "nope", []string{"hello"}, 0); !errors.Is(err, cri.ErrContainerNotFound) {
		t.Fatalf("exec into an unknown container: %v", err)
	}
}

// TestExecEndsWithContainer stops a container while an exec in it loops.
func TestExecEndsWithContainer(t *testing.T) {
	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{Name: "c", Image: "cpu"})
	res := make(chan int32, 1)
	go func() {
		_, _, code, _ := n.ExecSync(context.Background(), id, []string{"cpu"}, 0)
		res <- code
	}()
	time.Sleep(20 * time.Millisecond)
	if err := n.StopContainer(context.Background(), id, 0); err != nil {
		t.Fatal(err)
	}
	if code := <-res; code != 137 {
		t.Fatalf("exec exit %d, want 137", code)
	}
}

// TestWebImage serves HTTP through the web image, CGI-style, with an
// emptyDir at /data (a MemDir, natively as in a tab).
func TestWebImage(t *testing.T) {
	data := cri.Mount{ContainerPath: "/data", Mem: cri.NewMemDir()}
	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{Name: "web", Image: "web", PodName: "web-1",
		Env:    []cri.EnvVar{{Name: "POD_IP", Value: "10.244.1.5"}},
		Mounts: []cri.Mount{data}})
	n.waitForLog(t, id, "web: web-1 (10.244.1.5) ready")
	h := n.HTTPHandler(id)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://web.default.svc.cluster.local"+path, nil))
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	for i := 1; i <= 3; i++ {
		code, body := get("/")
		want := fmt.Sprintf("web: hello from web-1 (10.244.1.5)\nrequests served by this pod: %d\nGET /\n", i)
		if code != 200 || body != want {
			t.Fatalf("GET / = %d %q, want 200 %q", code, body, want)
		}
	}
	steps := []struct{ path, exec string }{{path: "/healthz"}, {path: "/fail"}, {path: "/healthz"}, {path: "/heal"}, {path: "/healthz"}, {exec: "--unhealthy"}, {path: "/healthz"}, {path: "/nope"}}
	var got []string
	for _, s := range steps {
		if s.exec != "" {
			_, _, code, err := n.ExecSync(context.Background(), id, []string{"web", s.exec}, 0)
			got = append(got, fmt.Sprintf("exec %s: %d %v", s.exec, code, err))
			continue
		}
		code, body := get(s.path)
		got = append(got, fmt.Sprintf("%s: %d %s", s.path, code, strings.TrimSpace(body)))
	}
	want := []string{
		"/healthz: 200 ok", "/fail: 200 web: /healthz will fail", "/healthz: 500 unhealthy",
		"/heal: 200 web: /healthz will pass", "/healthz: 200 ok", "exec --unhealthy: 0 <nil>",
		"/healthz: 500 unhealthy", "/nope: 404 web: no page /nope",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without a volume the guest cannot count, and says so.
	id2 := n.run(t, cri.ContainerConfig{Name: "web", Image: "web", PodName: "web-2"})
	if code, body := func() (int, string) {
		rec := httptest.NewRecorder()
		n.HTTPHandler(id2).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		return rec.Code, rec.Body.String()
	}(); code != 200 || !strings.Contains(body, "not counted (no volume at /data") {
		t.Fatalf("GET / without /data = %d %q", code, body)
	}
	if err := n.StopContainer(context.Background(), id2, 0); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	n.HTTPHandler(id2).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("GET to a stopped container = %d, want 503", rec.Code)
	}
}

// TestEmptyDirShared is the "emptyDir shared by two containers": web
// counts requests into a MemDir that config, in another container of the
// pod, reads (read-only).
func TestEmptyDirShared(t *testing.T) {
	n := newNode(t, nil, nil)
	dir := cri.NewMemDir()
	web := n.run(t, cri.ContainerConfig{Name: "web", Image: "web", Mounts: []cri.Mount{{ContainerPath: "/data", Mem: dir}}})
	for range 2 {
		rec := httptest.NewRecorder()
		n.HTTPHandler(web).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	}
	if b, err := dir.ReadFile("count"); err != nil || string(b) != "2\n" {
		t.Fatalf("count = %q, %v", b, err)
	}
	reader := n.run(t, cri.ContainerConfig{Name: "reader", Image: "config", Args: []string{"/data"},
		Mounts: []cri.Mount{{ContainerPath: "/data", Mem: dir, ReadOnly: true}}})
	n.waitForLog(t, reader, "file /data/count: 2")
	// Read-only means read-only: web cannot create /data/unhealthy there.
	ro := n.run(t, cri.ContainerConfig{Name: "web-ro", Image: "web", Mounts: []cri.Mount{{ContainerPath: "/data", Mem: dir, ReadOnly: true}}})
	rec := httptest.NewRecorder()
	n.HTTPHandler(ro).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fail", nil))
	if rec.Code != http.StatusConflict {
		t.Fatalf("GET /fail with a read-only /data = %d %q, want 409", rec.Code, rec.Body)
	}
	if _, err := dir.ReadFile("unhealthy"); err == nil {
		t.Fatal("a read-only mount was written")
	}
}

// TestConfigFollowsUpdates reads a mounted fs.FS that changes, as a
// configMap volume does when the kubelet updates it.
func TestConfigFollowsUpdates(t *testing.T) {
	n := newNode(t, nil, nil)
	fsys := fstest.MapFS{"color": {Data: []byte("blue")}}
	id := n.run(t, cri.ContainerConfig{Name: "c", Image: "config", WorkingDir: "/srv",
		Mounts: []cri.Mount{{ContainerPath: "/etc/config", FS: fsys, ReadOnly: true}}})
	n.waitForLog(t, id, "file /etc/config/color: blue")
	if !strings.Contains(n.logText(t, id), "env PWD=/srv") {
		t.Fatalf("no PWD in:\n%s", n.logText(t, id))
	}
	// MapFS is read without a lock; change it while the guest sleeps.
	for !n.clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	fsys["color"] = &fstest.MapFile{Data: []byte("green")}
	n.clk.Step(5 * time.Second)
	n.waitForLog(t, id, "config: round 2 (changed)\n")
	n.waitForLog(t, id, "file /etc/config/color: green")
}

func TestMountValidation(t *testing.T) {
	n := newNode(t, nil, nil)
	if _, err := n.PullImage(context.Background(), "config"); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, m := range [][]cri.Mount{
		{{ContainerPath: "etc", FS: fsys, ReadOnly: true}},
		{{ContainerPath: "/", FS: fsys, ReadOnly: true}},
		{{ContainerPath: "/a/../b", FS: fsys, ReadOnly: true}},
		{{ContainerPath: "/a", FS: fsys}},
		{{ContainerPath: "/a"}},
		{{ContainerPath: "/a", FS: fsys, Mem: cri.NewMemDir(), ReadOnly: true}},
		{{ContainerPath: "/a", FS: fsys, ReadOnly: true}, {ContainerPath: "/a", Mem: cri.NewMemDir()}},
	} {
		if _, err := n.CreateContainer(context.Background(), cri.ContainerConfig{Name: "c", Image: "config", Mounts: m}); !errors.Is(err, cri.ErrInvalidConfig) {
			t.Errorf("mounts %+v: %v, want ErrInvalidConfig", m, err)
		}
	}
	for _, cfg := range []cri.ContainerConfig{
		{Name: "c", Image: "config", CPULimitMillicores: -1},
		{Name: "c", Image: "config", WorkingDir: "srv"},
	} {
		if _, err := n.CreateContainer(context.Background(), cfg); !errors.Is(err, cri.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// TestTickerWhileBusy is the acceptance test for the tab: while a
// `cpu` guest runs flat out, a goroutine's ticker keeps ticking (at least 9
// of 10 ticks in every second), and stopping the container ends the guest
// promptly. It matters under GOOS=js (run it with Node), where nothing
// preempts the guest; natively it holds trivially.
func TestTickerWhileBusy(t *testing.T) {
	const seconds = 3
	// ticks counts a 100 ms ticker's ticks in each second. Ticks are due at
	// 100 ms, 200 ms, ... 1 s: window k holds ticks 10k+1 .. 10k+10 when
	// each arrives less than 100 ms late (later, the ticker drops the next
	// one: Go's ticker channel holds one tick).
	ticks := func(seconds int) []int {
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		start := time.Now()
		perSecond := make([]int, seconds)
		for range seconds * 10 {
			<-ticker.C
			if s := int((time.Since(start) - 99*time.Millisecond) / time.Second); s >= 0 && s < seconds {
				perSecond[s]++
			}
		}
		return perSecond
	}
	// The control: a Go loop that is as polite as the runtime makes a guest
	// (a Gosched every millisecond, a 1 ms sleep every 8 ms). On a machine
	// so loaded that even it misses ticks (the kernel parks a busy process
	// for long stretches), the measurement would say nothing about the
	// runtime.
	stop := make(chan struct{})
	go func() {
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for t0 := time.Now(); time.Since(t0) < time.Millisecond; {
			}
			runtime.Gosched()
			if time.Since(last) >= 8*time.Millisecond {
				time.Sleep(time.Millisecond)
				last = time.Now()
			}
		}
	}()
	base := ticks(2)
	close(stop)
	if base[0] < 10 || base[1] < 10 {
		t.Skipf("a polite Go loop got only %v ticks per second: the machine is too loaded to measure", base)
	}

	n := newNode(t, nil, nil)
	id := n.run(t, cri.ContainerConfig{Name: "c", Image: "cpu"})
	time.Sleep(50 * time.Millisecond) // the guest is in its loop
	// Under js/wasm nothing but the guest's yields lets the ticker run: that
	// is the acceptance check. Natively the Go scheduler preempts the guest
	// anyway, and a missed tick measures a loaded machine (-race, other
	// processes), so only a gross failure counts. A guest that does not
	// yield misses nearly every tick in every attempt; a load spike on a
	// shared machine spoils one attempt, so three are allowed.
	want := 9
	if runtime.GOOS != "js" {
		want = 5
	}
	var perSecond []int
	var busy float64
	for attempt := 1; attempt <= 3; attempt++ {
		s0, _ := n.ContainerStats(id)
		start := time.Now()
		perSecond = ticks(seconds)
		// The guest did run meanwhile.
		s, _ := n.ContainerStats(id)
		busy = float64(s.UsageCoreNanoSeconds-s0.UsageCoreNanoSeconds) / float64(time.Since(start))
		if slices.Min(perSecond) >= want {
			break
		}
		t.Logf("attempt %d: ticks per second %v, guest busy %.0f%% of the time", attempt, perSecond, busy*100)
	}
	stopAt := time.Now()
	if err := n.StopContainer(context.Background(), id, 0); err != nil {
		t.Fatal(err)
	}
	killLatency := time.Since(stopAt)
	t.Logf("ticks per second %v (want >= %d each), guest busy %.0f%% of the time, stop took %v", perSecond, want, busy*100, killLatency)
	for i, c := range perSecond {
		if c < want {
			t.Errorf("second %d: %d ticks, want at least %d", i, c, want)
		}
	}
	if busy < 0.5 {
		t.Errorf("the guest ran only %.0f%% of the time: the test proves nothing", busy*100)
	}
	if st, _ := n.ContainerStatus(id); st.ExitCode != 137 {
		t.Fatalf("after stop: %+v", st)
	}
}
