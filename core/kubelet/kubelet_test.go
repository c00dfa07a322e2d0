package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/wasm/images"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// waitTimeout bounds every wait on a condition. Guests run in wazero's
// interpreter, which is slow under the race detector and under Node.
const waitTimeout = 60 * time.Second

// cache is the process-wide compile cache, shared by every test's node as
// the nodes of one cluster share it.
var cache *cri.CompileCache

func TestMain(m *testing.M) {
	cache = cri.NewCompileCache()
	code := m.Run()
	cache.Close(context.Background())
	os.Exit(code)
}

// testNode is a real API server registry, a real runtime and a running kubelet.
type testNode struct {
	*Kubelet
	c   *client.Client
	clk *testingclock.FakeClock
	// guestClock is the runtime's view of clk: it counts the timers guests
	// (and exec timeouts) create, so a test can step the clock once a guest
	// sleeps.
	guestClock *timerClock
	rt         *cri.Runtime
	// stop stops the kubelet's Run (the test's cleanup does too).
	stop func()
}

func newTestNode(t *testing.T, mods ...func(*Config)) *testNode {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(reg, "kubelet")
	if _, err := c.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	// The runtime tells the kubelet about exits; the kubelet needs the
	// runtime first, hence the pointer set once New returned.
	cfg := Config{Client: c, NodeName: "node-1", Clock: clk, PodCIDR: "10.244.1.0/24", NodeIP: "192.168.49.2"}
	for _, m := range mods {
		m(&cfg)
	}
	// A node given a memory capacity charges its guests to it, as
	// core/cluster wires every node.
	var nodeMem *cri.MemoryPool
	if mem, ok := cfg.Capacity[corev1.ResourceMemory]; ok {
		nodeMem = cri.NewMemoryPool("node "+cfg.NodeName, mem.Value())
	}
	var kp atomic.Pointer[Kubelet]
	gc := newTimerClock(clk)
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: gc, Memory: nodeMem, OnEvent: func(e cri.ContainerEvent) {
		if k := kp.Load(); k != nil {
			k.HandleContainerEvent(e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Runtime = rt
	kl, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kp.Store(kl)
	n := &testNode{Kubelet: kl, c: c, clk: clk, guestClock: gc, rt: rt}
	n.stop = n.start(t)
	t.Cleanup(func() { rt.Close(context.Background()) })
	return n
}

// start runs the kubelet until the test ends (or the returned stop is called).
func (n *testNode) start(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// pod builds a pod bound to node-1 running hello.
func pod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "hello", Image: "hello:1.0"}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func (n *testNode) create(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := n.c.Pods().Create(context.Background(), p)
	if err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return created
}

// waitPod watches pod name until cond holds, and returns it. It fails after
// waitTimeout, showing the last status seen.
func (n *testNode) waitPod(t *testing.T, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	w, err := n.c.Pods().Watch(ctx, "default", client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var last *corev1.Pod
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("pod %s: watch ended before %s", name, what)
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			last = p
			if cond(p) {
				return p
			}
		case <-ctx.Done():
			t.Fatalf("pod %s: not %s within %v; last status:\n%s", name, what, waitTimeout, describe(last))
		}
	}
}

// waitGone waits until pod name is deleted from the API.
func (n *testNode) waitGone(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	w, err := n.c.Pods().Watch(ctx, "default", client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := n.c.Pods().Get(ctx, "default", name); apierrors.IsNotFound(err) {
		return
	}
	var last *corev1.Pod
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Deleted {
				return
			}
			last, _ = ev.Object.(*corev1.Pod)
		case <-ctx.Done():
			t.Fatalf("pod %s still exists after %v:\n%s", name, waitTimeout, describe(last))
		}
	}
}

// waitFor polls cond (for state outside the API, such as the runtime's) until
// it holds or waitTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v", what, waitTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func describe(p *corev1.Pod) string {
	if p == nil {
		return "(none)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s podIP=%s deletion=%v\n", p.Status.Phase, p.Status.PodIP, p.DeletionTimestamp)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "  condition %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "  container %s: %s restarts=%d ready=%v last=%s\n", cs.Name, stateString(cs.State), cs.RestartCount, cs.Ready, stateString(cs.LastTerminationState))
	}
	return b.String()
}

func stateString(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated(%d %s)", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%s: %s)", s.Waiting.Reason, s.Waiting.Message)
	}
	return "none"
}

func containerState(p *corev1.Pod, name string) corev1.ContainerState {
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.Name == name {
			return cs.State
		}
	}
	return corev1.ContainerState{}
}

func waitingOf(p *corev1.Pod, name string) string {
	if w := containerState(p, name).Waiting; w != nil {
		return w.Reason
	}
	return ""
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isRunningReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return p.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue
}

// events returns "Reason: message" of the events about pod name, oldest first.
func (n *testNode) events(t *testing.T, name string) []string {
	t.Helper()
	list, _, err := n.c.Events().List(context.Background(), "default", client.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name),
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// logs returns the current log of a pod's container through PodLogs.
func (n *testNode) logs(t *testing.T, p *corev1.Pod, opts *corev1.PodLogOptions) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	err := n.PodLogs(context.Background(), p, opts, &buf)
	return buf.String(), err
}

// cancelWriter collects what is written and cancels once it saw want.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

func TestNodeRegistersReady(t *testing.T) {
	n := newTestNode(t, func(c *Config) { c.Labels = map[string]string{"node-role.kubernetes.io/worker": ""} })
	var node *corev1.Node
	waitFor(t, "registered", func() bool {
		var err error
		node, err = n.c.Nodes().Get(context.Background(), "", "node-1")
		return err == nil
	})
	if node.Spec.PodCIDR != "10.244.1.0/24" || len(node.Spec.PodCIDRs) != 1 || node.Spec.PodCIDRs[0] != "10.244.1.0/24" {
		t.Errorf("podCIDR = %q %v, want 10.244.1.0/24", node.Spec.PodCIDR, node.Spec.PodCIDRs)
	}
	for k, v := range map[string]string{
		"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "wasip1", "kubernetes.io/arch": "wasm32",
		"node-role.kubernetes.io/worker": "",
	} {
		if got, ok := node.Labels[k]; !ok || got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	for name, want := range map[corev1.ResourceName]string{"cpu": "4", "memory": "8Gi", "pods": "110"} {
		for what, list := range map[string]corev1.ResourceList{"capacity": node.Status.Capacity, "allocatable": node.Status.Allocatable} {
			if q, ok := list[name]; !ok || q.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s %s = %v, want %s", what, name, list[name], want)
			}
		}
	}
	wantConds := map[corev1.NodeConditionType][3]string{
		corev1.NodeReady:          {"True", "KubeletReady", "kubelet is posting ready status"},
		corev1.NodeMemoryPressure: {"False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		corev1.NodeDiskPressure:   {"False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		corev1.NodePIDPressure:    {"False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	}
	for _, c := range node.Status.Conditions {
		want, ok := wantConds[c.Type]
		if !ok {
			continue
		}
		if got := [3]string{string(c.Status), c.Reason, c.Message}; got != want {
			t.Errorf("condition %s = %v, want %v", c.Type, got, want)
		}
		delete(wantConds, c.Type)
	}
	if len(wantConds) > 0 {
		t.Errorf("missing conditions: %v", wantConds)
	}
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.49.2"}, {Type: corev1.NodeHostName, Address: "node-1"}}
	if fmt.Sprint(node.Status.Addresses) != fmt.Sprint(wantAddrs) {
		t.Errorf("addresses = %v, want %v", node.Status.Addresses, wantAddrs)
	}
	info := node.Status.NodeInfo
	if info.KubeletVersion != Version || info.Architecture != "wasm32" || info.OperatingSystem != "wasip1" ||
		!strings.HasPrefix(info.ContainerRuntimeVersion, "wazero://") || info.MachineID == "" || info.BootID == "" {
		t.Errorf("nodeInfo = %+v", info)
	}
	if node.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("kubelet port = %d", node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}

	// Heartbeat: after nodeStatusUpdateFrequency the Ready condition's
	// lastHeartbeatTime moves, its lastTransitionTime does not.
	beats := n.heartbeats.Load()
	n.clk.Step(DefaultNodeStatusUpdateFrequency)
	waitFor(t, "heartbeat posted", func() bool { return n.heartbeats.Load() > beats })
	node, err := n.c.Nodes().Get(context.Background(), "", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if want := t0.Add(DefaultNodeStatusUpdateFrequency); !c.LastHeartbeatTime.Time.Equal(want) {
			t.Errorf("Ready lastHeartbeatTime = %v, want %v", c.LastHeartbeatTime.Time, want)
		}
		if !c.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("Ready lastTransitionTime = %v, want %v", c.LastTransitionTime.Time, t0)
		}
	}
	if ev := n.nodeEvents(t); !hasEvent(ev, "Starting: Starting kubelet.") || !hasEvent(ev, "NodeReady: Node node-1 status is now: NodeReady") {
		t.Errorf("node events = %q", ev)
	}
}

func (n *testNode) nodeEvents(t *testing.T) []string {
	t.Helper()
	list, _, err := n.c.Events().List(context.Background(), "default", client.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.kind", "Node"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func TestPodRunsAndLogs(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("web-1"))

	// The kubelet's first word: Pending, waiting in ContainerCreating.
	n.waitPod(t, "web-1", "ContainerCreating", func(p *corev1.Pod) bool {
		return waitingOf(p, "hello") == ReasonContainerCreating || isRunningReady(p)
	})
	p := n.waitPod(t, "web-1", "Running and Ready", isRunningReady)

	// Its IP comes from the node's podCIDR, first free address after the gateway.
	ip, err := netip.ParseAddr(p.Status.PodIP)
	if err != nil || !netip.MustParsePrefix("10.244.1.0/24").Contains(ip) {
		t.Errorf("podIP = %q, want an address in 10.244.1.0/24", p.Status.PodIP)
	}
	if p.Status.PodIP != "10.244.1.2" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.244.1.2" {
		t.Errorf("podIP(s) = %q %v, want 10.244.1.2", p.Status.PodIP, p.Status.PodIPs)
	}
	if p.Status.HostIP != "192.168.49.2" || len(p.Status.HostIPs) != 1 {
		t.Errorf("hostIP(s) = %q %v", p.Status.HostIP, p.Status.HostIPs)
	}
	if p.Status.StartTime == nil || !p.Status.StartTime.Time.Equal(t0) {
		t.Errorf("startTime = %v, want %v", p.Status.StartTime, t0)
	}
	for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		if c := podCondition(p, ct); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True", ct, c)
		}
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses = %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.Name != "hello" || cs.Image != "hello:1.0" || !strings.HasPrefix(cs.ImageID, "hello@sha256:") ||
		!strings.HasPrefix(cs.ContainerID, "wasm://") || !cs.Ready || cs.Started == nil || !*cs.Started ||
		cs.RestartCount != 0 || cs.State.Running == nil || !cs.State.Running.StartedAt.Time.Equal(t0) {
		t.Errorf("container status = %+v", cs)
	}

	// Its log, through the API server's LogProvider, greets with its own name.
	waitFor(t, "greeting in the log", func() bool {
		out, _ := n.logs(t, created, &corev1.PodLogOptions{Container: "hello"})
		return strings.Contains(out, "Hello from web-1! (hello:1.0)")
	})
	out, err := n.logs(t, created, &corev1.PodLogOptions{Timestamps: true})
	if err != nil || !strings.HasPrefix(out, "2026-11-29T09:00:00Z Hello from web-1!") {
		t.Errorf("logs with timestamps = %q, %v", out, err)
	}
	// Follow streams until the client goes away; tail and limit cut.
	ctx, cancel := context.WithCancel(context.Background())
	fw := &cancelWriter{want: "Hello from web-1!", cancel: cancel}
	if err := n.PodLogs(ctx, created, &corev1.PodLogOptions{Follow: true}, fw); err != nil || !strings.Contains(fw.String(), "Hello from web-1!") {
		t.Errorf("logs -f = %q, %v", fw.String(), err)
	}
	one, four := int64(1), int64(4)
	if out, err := n.logs(t, created, &corev1.PodLogOptions{TailLines: &one, LimitBytes: &four}); err != nil || out != "Hell" {
		t.Errorf("logs --tail=1 --limit-bytes=4 = %q, %v", out, err)
	}
	if _, err := n.logs(t, created, &corev1.PodLogOptions{Previous: true}); !apierrors.IsBadRequest(err) ||
		!strings.Contains(err.Error(), `previous terminated container "hello" in pod "web-1" not found`) {
		t.Errorf("logs --previous = %v", err)
	}

	// The events `kubectl describe pod` ends with, in upstream's wording.
	ev := n.events(t, "web-1")
	for _, want := range []string{
		`Pulling: Pulling image "hello:1.0"`,
		`Pulled: Successfully pulled image "hello:1.0" in 0s (0s including waiting). Image size: `,
		`Created: Container created`,
		`Started: Container started`,
	} {
		if !hasEvent(ev, want) {
			t.Errorf("no event %q in %q", want, ev)
		}
	}

	// A second pod on the node: IfNotPresent finds the image, the next address.
	n.create(t, pod("web-2"))
	p2 := n.waitPod(t, "web-2", "Running and Ready", isRunningReady)
	if p2.Status.PodIP != "10.244.1.3" {
		t.Errorf("second pod's IP = %s, want 10.244.1.3", p2.Status.PodIP)
	}
	if ev := n.events(t, "web-2"); !hasEvent(ev, `Pulled: Container image "hello:1.0" already present on machine and can be accessed by the pod`) || hasEvent(ev, "Pulling") {
		t.Errorf("web-2 events = %q", ev)
	}

	// The node lists the image it pulled at its next status update.
	beats := n.heartbeats.Load()
	n.clk.Step(DefaultNodeStatusUpdateFrequency)
	waitFor(t, "heartbeat posted", func() bool { return n.heartbeats.Load() > beats })
	node, err := n.c.Nodes().Get(context.Background(), "", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(node.Status.Images) != 1 || !strings.Contains(fmt.Sprint(node.Status.Images[0].Names), "hello:1.0") || node.Status.Images[0].SizeBytes <= 0 {
		t.Errorf("node images = %+v", node.Status.Images)
	}
}

func TestImagePullBackOff(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("bad", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "hello:9.9" }))

	p := n.waitPod(t, "bad", "ErrImagePull", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonErrImagePull })
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", p.Status.Phase)
	}
	w := containerState(p, "hello").Waiting
	if !strings.Contains(w.Message, `failed to pull and unpack image "hello:9.9"`) {
		t.Errorf("ErrImagePull message = %q", w.Message)
	}
	if _, err := n.logs(t, created, nil); err == nil || !strings.Contains(err.Error(), `container "hello" in pod "bad" is waiting to start: image can't be pulled`) {
		t.Errorf("logs of a pod that cannot pull = %v", err)
	}

	// The pod is synced again a second later, and the pull is backing off.
	n.clk.Step(pullRetryDelay)
	p = n.waitPod(t, "bad", "ImagePullBackOff", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonImagePullBackOff })
	w = containerState(p, "hello").Waiting
	if !strings.HasPrefix(w.Message, `Back-off pulling image "hello:9.9": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image`) {
		t.Errorf("ImagePullBackOff message = %q", w.Message)
	}
	ev := n.events(t, "bad")
	for _, want := range []string{
		`Pulling: Pulling image "hello:9.9"`,
		`Failed: Failed to pull image "hello:9.9": rpc error: code = NotFound desc = failed to pull and unpack image "hello:9.9"`,
		`Failed: Error: ErrImagePull`,
		`BackOff: Back-off pulling image "hello:9.9"`,
		`Failed: Error: ImagePullBackOff`,
	} {
		if !hasEvent(ev, want) {
			t.Errorf("no event %q in %q", want, ev)
		}
	}

	// When the back-off (10 s) is over, the kubelet pulls again.
	n.clk.Step(backOffPeriod)
	n.waitPod(t, "bad", "ErrImagePull again", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonErrImagePull })

	// Fixing the image (the one spec change a pod allows) makes it run.
	n.updateImage(t, "bad", "hello:2.0")
	p = n.waitPod(t, "bad", "Running and Ready", isRunningReady)
	if cs := p.Status.ContainerStatuses[0]; cs.Image != "hello:2.0" || cs.RestartCount != 0 {
		t.Errorf("container status = %+v", cs)
	}
	if p.Generation != 2 || p.Status.ObservedGeneration != 2 {
		t.Errorf("generation %d, observedGeneration %d; want 2 and 2", p.Generation, p.Status.ObservedGeneration)
	}
}

// updateImage sets a pod's image, retrying on conflicts with the kubelet's
// status writes.
func (n *testNode) updateImage(t *testing.T, name, image string) {
	t.Helper()
	waitFor(t, "image updated", func() bool {
		p, err := n.c.Pods().Get(context.Background(), "default", name)
		if err != nil {
			return false
		}
		p.Spec.Containers[0].Image = image
		_, err = n.c.Pods().Update(context.Background(), p)
		return err == nil
	})
}

func TestImageChangeRestartsContainer(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("web-1"))
	n.waitPod(t, "web-1", "Running and Ready", isRunningReady)
	n.updateImage(t, "web-1", "hello:2.0")
	p := n.waitPod(t, "web-1", "running hello:2.0", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].Image == "hello:2.0" && cs[0].State.Running != nil
	})
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("after the image change: %s", describe(p))
	}
	if !hasEvent(n.events(t, "web-1"), "Killing: Container hello definition changed, will be restarted") {
		t.Errorf("events = %q", n.events(t, "web-1"))
	}
	waitFor(t, "the new greeting", func() bool {
		out, _ := n.logs(t, created, nil)
		return strings.Contains(out, "Hi again from web-1! (hello:2.0)")
	})
}

func TestImagePullPolicyNever(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("never", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever }))
	p := n.waitPod(t, "never", "ErrImageNeverPull", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonErrImageNeverPull })
	if w := containerState(p, "hello").Waiting; w.Message != `Container image "hello:1.0" is not present with pull policy of Never` {
		t.Errorf("message = %q", w.Message)
	}
}

func TestGracefulDelete(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("web-1"))
	p := n.waitPod(t, "web-1", "Running and Ready", isRunningReady)
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "wasm://")

	if err := n.c.Pods().Delete(context.Background(), "default", "web-1", nil); err != nil {
		t.Fatal(err)
	}
	n.waitGone(t, "web-1")

	if !hasEvent(n.events(t, "web-1"), "Killing: Stopping container hello") {
		t.Errorf("no Killing event in %q", n.events(t, "web-1"))
	}
	// The container was stopped, then removed with its pod; the IP is free.
	waitFor(t, "container removed", func() bool {
		_, err := n.rt.ContainerStatus(id)
		return err != nil
	})
	if _, ok := n.network.Get(string(created.UID)); ok || n.network.Len() != 0 {
		t.Errorf("the pod's IP is still allocated (%d in use)", n.network.Len())
	}
	// ... so the next pod gets the same address.
	n.create(t, pod("web-2"))
	if p := n.waitPod(t, "web-2", "Running and Ready", isRunningReady); p.Status.PodIP != "10.244.1.2" {
		t.Errorf("next pod's IP = %s, want the freed 10.244.1.2", p.Status.PodIP)
	}
}

func TestForceDeleteCleansUp(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("web-1"))
	p := n.waitPod(t, "web-1", "Running and Ready", isRunningReady)
	zero := int64(0)
	if err := n.c.Pods().Delete(context.Background(), "default", "web-1", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "containers removed and IP released", func() bool {
		return len(n.rt.ListContainers(cri.ContainerFilter{PodUID: string(p.UID)})) == 0 && n.network.Len() == 0
	})
}

func TestRestartPolicyNever(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		phase    corev1.PodPhase
		exitCode int32
		reason   string
	}{
		{"succeeded", []string{"--ticks=0"}, corev1.PodSucceeded, 0, "Completed"},
		{"failed", []string{"--ticks=0", "--exit=3"}, corev1.PodFailed, 3, "Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNode(t)
			created := n.create(t, pod("job", func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.Containers[0].Args = tt.args
			}))
			p := n.waitPod(t, "job", string(tt.phase), func(p *corev1.Pod) bool { return p.Status.Phase == tt.phase })
			term := containerState(p, "hello").Terminated
			if term == nil || term.ExitCode != tt.exitCode || term.Reason != tt.reason || !strings.HasPrefix(term.ContainerID, "wasm://") {
				t.Fatalf("container state = %s", describe(p))
			}
			if c := podCondition(p, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse {
				t.Errorf("Ready = %+v, want False", c)
			}
			if p.Status.PodIP != "10.244.1.2" {
				t.Errorf("a finished pod keeps showing its IP; podIP = %q", p.Status.PodIP)
			}
			// Nothing will run in it again: its address is free, its log stays.
			waitFor(t, "IP released", func() bool { return n.network.Len() == 0 })
			out, err := n.logs(t, created, nil)
			if err != nil || !strings.Contains(out, "hello: done after 0 ticks, exit code "+fmt.Sprint(tt.exitCode)) {
				t.Errorf("logs = %q, %v", out, err)
			}
			if c := podCondition(n.waitPod(t, "job", "sandbox gone", func(p *corev1.Pod) bool {
				c := podCondition(p, corev1.PodReadyToStartContainers)
				return c != nil && c.Status == corev1.ConditionFalse
			}), corev1.PodReadyToStartContainers); c == nil {
				t.Error("no PodReadyToStartContainers condition")
			}
		})
	}
}

func TestCrashLoopBackOff(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("crash", func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"--ticks=0", "--exit=1"} }))

	// Exit, restart at once (restartCount 1), exit again: back off 10 s.
	p := n.waitPod(t, "crash", "CrashLoopBackOff", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonCrashLoopBackOff })
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.Ready || p.Status.Phase != corev1.PodRunning {
		t.Errorf("status = %s", describe(p))
	}
	if want := fmt.Sprintf("back-off 10s restarting failed container=hello pod=crash_default(%s)", created.UID); cs.State.Waiting.Message != want {
		t.Errorf("waiting message = %q, want %q", cs.State.Waiting.Message, want)
	}
	if last := cs.LastTerminationState.Terminated; last == nil || last.ExitCode != 1 || last.Reason != "Error" {
		t.Errorf("lastState = %+v", cs.LastTerminationState)
	}
	if c := podCondition(p, corev1.ContainersReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonContainersNotReady ||
		c.Message != "containers with unready status: [hello]" {
		t.Errorf("ContainersReady = %+v", c)
	}
	if !hasEvent(n.events(t, "crash"), fmt.Sprintf("BackOff: Back-off restarting failed container hello in pod crash_default(%s)", created.UID)) {
		t.Errorf("events = %q", n.events(t, "crash"))
	}
	// The previous container's log is there.
	out, err := n.logs(t, created, &corev1.PodLogOptions{Previous: true})
	if err != nil || !strings.Contains(out, "Hello from crash!") {
		t.Errorf("logs --previous = %q, %v", out, err)
	}

	// After 10 s: restart #2, then a 20 s back-off.
	n.clk.Step(backOffPeriod)
	p = n.waitPod(t, "crash", "restarted twice", func(p *corev1.Pod) bool {
		return p.Status.ContainerStatuses[0].RestartCount == 2 && waitingOf(p, "hello") == ReasonCrashLoopBackOff
	})
	if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; !strings.HasPrefix(msg, "back-off 20s ") {
		t.Errorf("waiting message = %q", msg)
	}
	// Only the current and the previous container are kept.
	waitFor(t, "old containers pruned", func() bool {
		return len(n.rt.ListContainers(cri.ContainerFilter{PodUID: string(created.UID)})) == 2
	})
}

func TestInitContainers(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("init", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "hello:2.0", Args: []string{"--ticks=0"}}}
	}))
	p := n.waitPod(t, "init", "Running and Ready", isRunningReady)
	if len(p.Status.InitContainerStatuses) != 1 {
		t.Fatalf("init statuses = %+v", p.Status.InitContainerStatuses)
	}
	if term := p.Status.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
		t.Errorf("init container state = %s", describe(p))
	}
	if c := podCondition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Initialized = %+v", c)
	}
}

func TestEnvAndDownwardAPI(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("env", func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.Env = []corev1.EnvVar{
			{Name: "GREETING_ARG", Value: "--greet"},
			{Name: "MY_NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "MY_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		}
		c.Args = []string{"$(GREETING_ARG)", "node=$(MY_NODE)", "ip=$(MY_IP)", "$(UNDEFINED)", "$$(ESCAPED)"}
	}))
	n.waitPod(t, "env", "Running and Ready", isRunningReady)
	waitFor(t, "greeting with expanded args", func() bool {
		out, _ := n.logs(t, created, nil)
		return strings.Contains(out, "args: --greet node=node-1 ip=10.244.1.2 $(UNDEFINED) $(ESCAPED)")
	})
}

// TestKubeletRestart stops the kubelet, deletes a pod behind its back, and
// starts it again: containers outlive a stopped kubelet, the pod that stayed
// keeps its container, the deleted one's containers go.
func TestKubeletRestart(t *testing.T) {
	n := newTestNode(t)
	waitFor(t, "running", n.running.Load)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Run(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second Run while running = %v", err)
	}
	n.create(t, pod("stays"))
	gone := n.create(t, pod("goes"))
	stays := n.waitPod(t, "stays", "Running and Ready", isRunningReady)
	n.waitPod(t, "goes", "Running and Ready", isRunningReady)

	n.stop()
	running := cri.ContainerRunning
	if got := len(n.rt.ListContainers(cri.ContainerFilter{State: &running})); got != 2 {
		t.Fatalf("%d containers running after the kubelet stopped, want 2", got)
	}
	zero := int64(0)
	if err := n.c.Pods().Delete(context.Background(), "default", "goes", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}

	n.stop = n.start(t)
	waitFor(t, "the deleted pod's containers removed", func() bool {
		return len(n.rt.ListContainers(cri.ContainerFilter{PodUID: string(gone.UID)})) == 0
	})
	p, err := n.c.Pods().Get(context.Background(), "default", "stays")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Status.ContainerStatuses[0].ContainerID, stays.Status.ContainerStatuses[0].ContainerID; got != want || !isRunningReady(p) {
		t.Errorf("after the restart: container %s (was %s)\n%s", got, want, describe(p))
	}
	// And it still does its job.
	if err := n.c.Pods().Delete(context.Background(), "default", "stays", nil); err != nil {
		t.Fatal(err)
	}
	n.waitGone(t, "stays")
}

func TestPodCIDRExhausted(t *testing.T) {
	n := newTestNode(t, func(c *Config) { c.PodCIDR = "10.244.9.0/30" }) // room for one pod: .2
	n.create(t, pod("first"))
	n.waitPod(t, "first", "Running and Ready", isRunningReady)
	n.create(t, pod("second"))
	waitFor(t, "FailedCreatePodSandBox", func() bool {
		return hasEvent(n.events(t, "second"), `FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox`)
	})
	ev := n.events(t, "second")
	if !strings.Contains(strings.Join(ev, "\n"), `plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.244.9.1-10.244.9.2`) {
		t.Errorf("events = %q", ev)
	}
	p := n.waitPod(t, "second", "ContainerCreating", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonContainerCreating })
	if p.Status.PodIP != "" || p.Status.Phase != corev1.PodPending {
		t.Errorf("second pod: %s", describe(p))
	}
	// Deleting the first frees its address; the second gets it at its next try.
	if err := n.c.Pods().Delete(context.Background(), "default", "first", nil); err != nil {
		t.Fatal(err)
	}
	n.waitGone(t, "first")
	n.clk.Step(sandboxRetryDelay)
	if p := n.waitPod(t, "second", "Running and Ready", isRunningReady); p.Status.PodIP != "10.244.9.2" {
		t.Errorf("second pod's IP = %s", p.Status.PodIP)
	}
}
