package kubectl

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is when every test cluster starts.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	time.Local = time.UTC // describe prints local times; make them stable
	os.Exit(m.Run())
}

// env is a real apiserver handler over a real registry and store, reached
// through InProcessTransport: the same path the console's kubectl takes.
type env struct {
	t     *testing.T
	reg   *registry.Registry
	st    *store.Store // the store under reg: its revision moves on every write
	srv   http.Handler // the API server, for raw HTTP requests
	clock *clocktesting.FakeClock
	cli   *CLI
	files map[string]string // what ReadFile serves
	// editor is kubectl edit's editor (edit_cmd_test.go); nil has none.
	editor EditFunc

	mu      sync.Mutex
	logs    map[string]string        // container logs by "pod/container"
	ended   map[string]chan struct{} // closed when a container's log ends (endLogs)
	events  int                      // events created, for unique names
	writes  []string                 // "POST /api/v1/..." for every non-GET request kubectl sent
	watches int                      // watches kubectl has open or had open
}

// recorder notes every request that could change the cluster.
type recorder struct {
	rt http.RoundTripper
	e  *env
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		r.e.mu.Lock()
		r.e.writes = append(r.e.writes, req.Method+" "+req.URL.Path)
		r.e.mu.Unlock()
	}
	resp, err := r.rt.RoundTrip(req)
	if err == nil && req.URL.Query().Get("watch") == "true" {
		r.e.mu.Lock()
		r.e.watches++ // the server answered: the watch is open
		r.e.mu.Unlock()
	}
	return resp, err
}

// watchCount is how many watches kubectl has opened so far.
func (e *env) watchCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.watches
}

// takeWrites returns and forgets the recorded writes.
func (e *env) takeWrites() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.writes
	e.writes = nil
	return w
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, clock: clocktesting.NewFakeClock(t0), files: map[string]string{}, logs: map[string]string{}}
	e.st = store.New(store.Config{})
	reg, err := registry.Default(registry.Config{Store: e.st, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.reg = reg
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	srv, err := apiserver.New(apiserver.Config{Registry: reg, Clock: e.clock, Logs: apiserver.LogProviderFunc(e.podLogs)})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.cli, err = New(Config{
		Transport: &recorder{rt: InProcessTransport(srv), e: e},
		Clock:     e.clock,
		// The console's working directory, holding e.files as they are
		// when kubectl reads them.
		ReadFile: func(name string) ([]byte, error) { return e.workdir().ReadFile(name) },
		ReadDir:  func(name string) ([]fs.DirEntry, error) { return e.workdir().ReadDir(name) },
		// kubectl edit's editor is e.editor, when a test sets one.
		Editor: func(ctx context.Context, name string, content []byte) ([]byte, error) {
			if e.editor == nil {
				return nil, ErrNoEditor
			}
			return e.editor(ctx, name, content)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// workdir is a console working directory holding e.files.
func (e *env) workdir() *console.Files {
	f := console.NewFiles()
	for name, data := range e.files {
		if err := f.WriteFile(name, []byte(data)); err != nil {
			e.t.Fatal(err)
		}
	}
	return f
}

// podLogs is the kubelet's side of pods/log in tests: the text stored for
// the container; with follow, it then waits for the request to end or for
// the test to end the log (endLogs).
func (e *env) podLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error {
	e.mu.Lock()
	text := e.logs[pod.Name+"/"+opts.Container]
	e.mu.Unlock()
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if opts.TailLines != nil && int(*opts.TailLines) < len(lines) {
		lines = lines[len(lines)-int(*opts.TailLines):]
	}
	for _, l := range lines {
		if opts.Timestamps {
			l = "2026-11-29T12:00:00.000000000Z " + l
		}
		if _, err := io.WriteString(w, l); err != nil {
			return err
		}
	}
	if opts.Follow {
		select {
		case <-ctx.Done():
		case <-e.logEnd(pod.Name + "/" + opts.Container):
		}
	}
	return nil
}

// logEnd is closed once the test ends the log of "pod/container".
func (e *env) logEnd(key string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended == nil {
		e.ended = map[string]chan struct{}{}
	}
	ch, ok := e.ended[key]
	if !ok {
		ch = make(chan struct{})
		e.ended[key] = ch
	}
	return ch
}

// endLogs ends a followed log, as a kubelet does when the container exits.
func (e *env) endLogs(key string) { close(e.logEnd(key)) }

// run runs one kubectl command line.
func (e *env) run(line string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.runCtx(context.Background(), line, "")
}

func (e *env) runCtx(ctx context.Context, line, stdin string) (stdout, stderr string, code int) {
	e.t.Helper()
	args, err := SplitWords(line)
	if err != nil {
		e.t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code = e.cli.Run(ctx, args, IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb})
	return out.String(), errb.String(), code
}

// mustRun runs a command that must succeed.
func (e *env) mustRun(line string) string {
	e.t.Helper()
	out, errs, code := e.run(line)
	if code != 0 {
		e.t.Fatalf("kubectl %s: exit %d\n%s%s", line, code, out, errs)
	}
	return out
}

// transcript runs command lines and records them as a terminal would show
// them, for golden files.
func (e *env) transcript(lines ...string) string {
	e.t.Helper()
	var b strings.Builder
	for _, l := range lines {
		out, errs, code := e.run(l)
		fmt.Fprintf(&b, "$ kubectl %s\n%s", l, out)
		if errs != "" {
			fmt.Fprintf(&b, "[stderr]\n%s", errs)
		}
		if code != 0 {
			fmt.Fprintf(&b, "[exit %d]\n", code)
		}
		b.WriteString("\n")
	}
	out := uidPattern.ReplaceAllString(b.String(), "<uid>")
	return tokenVolumePattern.ReplaceAllString(out, "kube-api-access-<id>")
}

// tokenVolumePattern matches the service account token volume that
// ServiceAccount admission adds to pods, whose name ends in random letters.
var tokenVolumePattern = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// uidPattern matches the random UIDs the registry gives objects.
var uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// golden compares got with testdata/name.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// --- fixtures, written through the registry as a controller would ---

func (e *env) store(obj runtime.Object) *registry.Store {
	st, ok := e.reg.ForKindOf(obj)
	if !ok {
		e.t.Fatalf("no store for %T", obj)
	}
	return st
}

func (e *env) create(obj runtime.Object) runtime.Object {
	e.t.Helper()
	ns := ""
	if acc, ok := obj.(metav1.Object); ok {
		ns = acc.GetNamespace()
	}
	out, err := e.store(obj).Create(context.Background(), ns, obj, registry.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create %T: %v", obj, err)
	}
	return out
}

// setStatus writes obj's status through the status subresource.
func (e *env) setStatus(obj runtime.Object) runtime.Object {
	e.t.Helper()
	out, err := e.store(obj).Update(context.Background(), obj, registry.UpdateOptions{Subresource: "status"})
	if err != nil {
		e.t.Fatalf("status %T: %v", obj, err)
	}
	return out
}

func (e *env) get(obj runtime.Object, ns, name string) runtime.Object {
	e.t.Helper()
	out, err := e.store(obj).Get(context.Background(), ns, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// pod creates a pod with one container per image.
func (e *env) pod(name string, labels map[string]string, images ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels}}
	for _, im := range images {
		cname, _, _ := strings.Cut(im, ":")
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: cname, Image: im})
	}
	return e.create(p).(*corev1.Pod)
}

// runPod binds a pod to a node and reports it running and ready, as the
// scheduler and kubelet would.
func (e *env) runPod(p *corev1.Pod, node, ip string) *corev1.Pod {
	e.t.Helper()
	p = e.get(&corev1.Pod{}, p.Namespace, p.Name).(*corev1.Pod)
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if _, err := e.store(p).Bind(context.Background(), b); err != nil {
		e.t.Fatal(err)
	}
	p = e.get(&corev1.Pod{}, p.Namespace, p.Name).(*corev1.Pod)
	now := metav1.NewTime(e.clock.Now())
	p.Status.Phase = corev1.PodRunning
	p.Status.HostIP, p.Status.PodIP, p.Status.PodIPs = "192.168.0.10", ip, []corev1.PodIP{{IP: ip}}
	p.Status.StartTime = &now
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "sha256:" + strings.Repeat("ab", 8), Ready: true, Started: ptr(true),
			ContainerID: "wazero://" + p.Name + "-" + c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return e.setStatus(p).(*corev1.Pod)
}

func (e *env) node(name string, ready bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	n = e.create(n).(*corev1.Node)
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	now := metav1.NewTime(e.clock.Now())
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.10"}, {Type: corev1.NodeHostName, Address: name}}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2-kubetab", OSImage: "kubetab", KernelVersion: "wasm", ContainerRuntimeVersion: "wazero://1.12.0", OperatingSystem: "wasip1", Architecture: "wasm"}
	return e.setStatus(n).(*corev1.Node)
}

func (e *env) event(involved runtime.Object, typ, reason, msg, component string) {
	acc := involved.(metav1.Object)
	kind := ""
	switch involved.(type) {
	case *corev1.Pod:
		kind = "Pod"
	case *appsv1.Deployment:
		kind = "Deployment"
	case *corev1.Node:
		kind = "Node"
	}
	ns := acc.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	now := metav1.NewTime(e.clock.Now())
	e.events++
	e.create(&corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", acc.GetName(), 0x187c0000+e.events), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID()},
		Type:           typ, Reason: reason, Message: msg, Source: corev1.EventSource{Component: component},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	})
}
