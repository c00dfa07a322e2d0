package cluster_test

// Acceptance tests of the controllers against a whole cluster (API server,
// controllers, scheduler, kubelets running wasm guests) on a fake clock:
// the test moves time one second at a time, so 5 minutes of tolerations or
// a 20 s Job back-off take a fraction of a second, and nothing sleeps.

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// acceptanceTimeout bounds every wait in real time; the cluster's own time
// is the fake clock.
const acceptanceTimeout = 3 * time.Minute

// fakeCluster is a started cluster on a fake clock, and the test's log of
// how the clock moved.
type fakeCluster struct {
	*cluster.Cluster
	t   *testing.T
	ctx context.Context
	clk *testingclock.FakeClock
	cl  *client.Client

	// beforeStep, when set, runs before every step (the rollout test waits
	// for its watch to catch up there).
	beforeStep func()
	// mu guards steps: after step i the store was at revision steps[i].rev
	// and the clock at steps[i].at.
	mu    sync.Mutex
	steps []step
	start time.Time
}

type step struct {
	rev int64
	at  time.Time
}

func startFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Clock: clk})
	f := &fakeCluster{Cluster: c, t: t, ctx: ctx, clk: clk, cl: c.Client("test"), start: start}
	f.until("3 Ready nodes with Leases", func() (bool, string) {
		nodes, _, _ := f.cl.Nodes().List(ctx, "", client.ListOptions{})
		ready := 0
		for _, n := range nodes {
			if nodeReady(n) == corev1.ConditionTrue && f.lease(n.Name) != nil {
				ready++
			}
		}
		return ready == 3, fmt.Sprint(ready)
	})
	return f
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func (f *fakeCluster) lease(node string) *coordinationv1.Lease {
	l, err := client.For[*coordinationv1.Lease](f.cl, coordinationv1.GroupName, "leases").Get(f.ctx, corev1.NamespaceNodeLease, node)
	if err != nil {
		return nil
	}
	return l
}

// step moves the clock one second. Before that it lets every running
// kubelet catch up with its Lease (so a slow machine never makes a healthy
// node look dead) and runs beforeStep.
func (f *fakeCluster) step() {
	f.t.Helper()
	deadline := time.Now().Add(acceptanceTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		for f.NodeRunning(n) {
			l := f.lease(n)
			if l != nil && l.Spec.RenewTime != nil && f.clk.Since(l.Spec.RenewTime.Time) <= 20*time.Second {
				break
			}
			if time.Now().After(deadline) {
				f.t.Fatalf("the kubelet of %s stopped renewing its Lease", n)
			}
			<-tick.C
		}
	}
	// Let the cluster settle first: a second of cluster time per millisecond
	// of real time outruns the informers on a loaded machine (a pod created
	// 300 ms ago and not yet seen would outlive the 5-minute expectations,
	// and a controller would create it twice). Wait until the store has not
	// changed for a few milliseconds, at most 200 ms.
	for settle := time.Now().Add(200 * time.Millisecond); time.Now().Before(settle); {
		rev := f.Store.Revision()
		time.Sleep(3 * time.Millisecond)
		if f.Store.Revision() == rev {
			break
		}
	}
	if f.beforeStep != nil {
		f.beforeStep()
	}
	f.clk.Step(time.Second)
	f.mu.Lock()
	f.steps = append(f.steps, step{rev: f.Store.Revision(), at: f.clk.Now()})
	f.mu.Unlock()
}

// timeOf is the clock's time when the write of revision rev happened, or
// earlier: a write racing with a step gets the time before the step.
func (f *fakeCluster) timeOf(rev int64) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.start
	for _, s := range f.steps {
		if s.rev >= rev {
			break
		}
		at = s.at
	}
	return at
}

// until steps the clock until cond holds.
func (f *fakeCluster) until(what string, cond func() (bool, string)) {
	f.t.Helper()
	deadline := time.Now().Add(acceptanceTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s at cluster time +%v: %s", what, f.clk.Since(f.start), msg)
		}
		<-tick.C
		f.step()
	}
}

func (f *fakeCluster) pods(namespace string, sel labels.Selector) []*corev1.Pod {
	pods, _, err := f.cl.Pods().List(f.ctx, namespace, client.ListOptions{LabelSelector: sel})
	if err != nil {
		f.t.Fatal(err)
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// waitEvent waits for an event: the recorder writes events asynchronously,
// after the write that caused them.
func (f *fakeCluster) waitEvent(namespace, reason, message string) {
	f.t.Helper()
	f.until(fmt.Sprintf("a %s event %q", reason, message), func() (bool, string) { return f.hasEvent(namespace, reason, message) })
}

func (f *fakeCluster) hasEvent(namespace, reason, message string) (bool, string) {
	evs, _, err := f.cl.Events().List(f.ctx, namespace, client.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	var seen []string
	for _, e := range evs {
		if e.Reason == reason && e.Message == message {
			return true, ""
		}
		if e.Reason == reason {
			seen = append(seen, e.Message)
		}
	}
	return false, fmt.Sprintf("no %s event %q among %q", reason, message, seen)
}

func (f *fakeCluster) logs(p *corev1.Pod) string {
	k, ok := f.Kubelet(p.Spec.NodeName)
	if !ok {
		return ""
	}
	var buf bytes.Buffer
	_ = k.PodLogs(f.ctx, p, &corev1.PodLogOptions{}, &buf)
	return buf.String()
}

func podReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// --- Deployment rollout ---

// podHistory follows the pods of a selector through a watch and checks,
// after every event, how many exist and how many are available.
type podHistory struct {
	f        *fakeCluster
	sel      labels.Selector
	minReady time.Duration

	// mu guards the fields below.
	mu        sync.Mutex
	pods      map[string]*corev1.Pod
	lastRV    int64
	events    int
	maxPods   int // active pods: not terminating, not finished
	maxAll    int // every pod object, terminating ones too
	minAvail  int
	violation []string
}

func (h *podHistory) available(now time.Time) int {
	n := 0
	for _, p := range h.pods {
		if p.DeletionTimestamp != nil || !h.sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		// Available as upstream's podutil.IsPodAvailable: Ready for at
		// least minReadySeconds.
		c := podReadyCondition(p)
		if c != nil && c.Status == corev1.ConditionTrue && (h.minReady == 0 || c.LastTransitionTime.Add(h.minReady).Before(now)) {
			n++
		}
	}
	return n
}

func (h *podHistory) active() int {
	n := 0
	for _, p := range h.pods {
		if h.sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// watchPods starts a history from the current pods.
func (f *fakeCluster) watchPods(sel labels.Selector, minReady time.Duration, maxPods, minAvail int) *podHistory {
	// Every pod of the namespace is watched (so catchUp can compare with
	// the store); the counts are of the selector's.
	pods, rv, err := f.cl.Pods().List(f.ctx, "default", client.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	h := &podHistory{f: f, sel: sel, minReady: minReady, pods: map[string]*corev1.Pod{}, minAvail: 1 << 30}
	for _, p := range pods {
		h.pods[p.Name] = p
	}
	fmt.Sscan(rv, &h.lastRV)
	w, err := f.cl.Pods().Watch(f.ctx, "default", client.ListOptions{ResourceVersion: rv})
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			var rev int64
			fmt.Sscan(p.ResourceVersion, &rev)
			now := f.timeOf(rev)
			h.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(h.pods, p.Name)
			} else {
				h.pods[p.Name] = p
			}
			h.lastRV, h.events = rev, h.events+1
			a, n := h.available(now), h.active()
			h.maxPods, h.maxAll, h.minAvail = max(h.maxPods, n), max(h.maxAll, len(h.pods)), min(h.minAvail, a)
			if n > maxPods || a < minAvail {
				h.violation = append(h.violation, fmt.Sprintf("after %s %s (rv %d, +%v): %d pods, %d available",
					ev.Type, p.Name, rev, now.Sub(f.start), n, a))
			}
			h.mu.Unlock()
		}
	}()
	f.t.Cleanup(func() { w.Stop(); <-done })
	// The clock moves only once the watch has seen every write so far, so
	// each event is judged at the time it happened.
	f.beforeStep = func() { h.catchUp() }
	return h
}

// catchUp waits until the watch has delivered every write so far: the
// history holds exactly the pods the store has, at their revisions. (A
// watch delivers in order, so the intermediate states came before.) It
// reads the store's keys, not the objects: nothing is decoded.
func (h *podHistory) catchUp() {
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for {
		kvs, _ := h.f.Store.List("/registry/pods/default/")
		h.mu.Lock()
		same := len(kvs) == len(h.pods)
		for _, kv := range kvs {
			p, ok := h.pods[kv.Key[strings.LastIndexByte(kv.Key, '/')+1:]]
			same = same && ok && p.ResourceVersion == strconv.FormatInt(kv.ModRevision, 10)
		}
		h.mu.Unlock()
		if same || time.Now().After(deadline) {
			return
		}
		<-tick.C
	}
}

func (h *podHistory) check(t *testing.T, what string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	t.Logf("%s: %d pod events; at most %d pods (%d with terminating ones), at least %d available",
		what, h.events, h.maxPods, h.maxAll, h.minAvail)
	for _, v := range h.violation {
		t.Errorf("%s: %s", what, v)
	}
	if h.events == 0 {
		t.Errorf("%s: no pod events seen", what)
	}
}

func (f *fakeCluster) deployment(name string) *appsv1.Deployment {
	d, err := f.cl.Deployments().Get(f.ctx, "default", name)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// rolledOut: the Deployment's current generation is observed and all
// replicas are updated and available, with none of older ReplicaSets left.
func (f *fakeCluster) rolledOut(name string, replicas int32) func() (bool, string) {
	return func() (bool, string) {
		d := f.deployment(name)
		s := d.Status
		msg := fmt.Sprintf("generation %d/%d replicas %d updated %d available %d", s.ObservedGeneration, d.Generation, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas)
		return s.ObservedGeneration >= d.Generation && s.Replicas == replicas && s.UpdatedReplicas == replicas && s.AvailableReplicas == replicas, msg
	}
}

// updateDeployment re-reads and writes a Deployment, retrying conflicts.
func (f *fakeCluster) updateDeployment(name string, mutate func(*appsv1.Deployment)) {
	for i := 0; ; i++ {
		d := f.deployment(name).DeepCopy()
		mutate(d)
		_, err := f.cl.Deployments().Update(f.ctx, d)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 20 {
			f.t.Fatal(err)
		}
	}
}

// rollbackToPrevious does what `kubectl rollout undo deployment/<name>`
// does, through the API: find the ReplicaSet of the previous revision, copy
// its pod template (without the pod-template-hash label) into the
// Deployment, and take its annotations (k8s.io/kubectl/pkg/polymorphichelpers
// rollback.go, DeploymentRollbacker). The rest is the controller's.
func (f *fakeCluster) rollbackToPrevious(name string) *appsv1.ReplicaSet {
	d := f.deployment(name)
	rss, _, err := f.cl.ReplicaSets().List(f.ctx, "default", client.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var owned []*appsv1.ReplicaSet
	for _, rs := range rss {
		if metav1.IsControlledBy(rs, d) {
			owned = append(owned, rs)
		}
	}
	revision := func(rs *appsv1.ReplicaSet) int64 {
		var n int64
		fmt.Sscan(rs.Annotations["deployment.kubernetes.io/revision"], &n)
		return n
	}
	sort.Slice(owned, func(i, j int) bool { return revision(owned[i]) > revision(owned[j]) })
	if len(owned) < 2 {
		f.t.Fatalf("no previous revision among %d ReplicaSets", len(owned))
	}
	prev := owned[1]
	skip := map[string]bool{
		corev1.LastAppliedConfigAnnotation: true, "deployment.kubernetes.io/revision": true,
		"deployment.kubernetes.io/revision-history": true, "deployment.kubernetes.io/desired-replicas": true,
		"deployment.kubernetes.io/max-replicas": true, appsv1.DeprecatedRollbackTo: true,
	}
	f.updateDeployment(name, func(d *appsv1.Deployment) {
		tmpl := prev.Spec.Template.DeepCopy()
		delete(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		d.Spec.Template = *tmpl
		ann := map[string]string{}
		for k := range skip {
			if v, ok := d.Annotations[k]; ok {
				ann[k] = v
			}
		}
		for k, v := range prev.Annotations {
			if !skip[k] {
				ann[k] = v
			}
		}
		d.Annotations = ann
	})
	return prev
}

// Rolling update of 10 replicas with maxSurge=2 and maxUnavailable=1:
// checked over the watch history of the pods, there are never more than 12
// pods nor fewer than 9 available (Ready for minReadySeconds). Then
// `rollout undo`: the first ReplicaSet is reused, with revision 3, and the
// pods greet as hello:1.0 again.
func TestRollingUpdateBoundsAndUndo(t *testing.T) {
	f := startFakeCluster(t)
	const minReady = 2
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	surge, unavailable := intstr.FromInt32(2), intstr.FromInt32(1)
	_, err := f.cl.Deployments().Create(f.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas:        int32p(10),
			MinReadySeconds: minReady,
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello:1.0"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.until("10 available", f.rolledOut("web", 10))
	firstRS := f.deployment("web").Annotations["deployment.kubernetes.io/revision"]
	rss, _, _ := f.cl.ReplicaSets().List(f.ctx, "default", client.ListOptions{})
	if len(rss) != 1 || firstRS != "1" {
		t.Fatalf("%d ReplicaSets, revision %q", len(rss), firstRS)
	}
	first := rss[0]

	// kubectl set image deployment/web hello=hello:2.0
	h := f.watchPods(sel, minReady*time.Second, 12, 9)
	f.updateDeployment("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "hello:2.0" })
	f.until("rolled out to hello:2.0", f.rolledOut("web", 10))
	f.until("old pods gone", func() (bool, string) {
		n := 0
		for _, p := range f.pods("default", sel) {
			if p.Spec.Containers[0].Image != "hello:2.0" {
				n++
			}
		}
		return n == 0, fmt.Sprint(n, " old pods")
	})
	h.check(t, "set image")
	d := f.deployment("web")
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("revision %q after the update, want 2", d.Annotations["deployment.kubernetes.io/revision"])
	}

	// kubectl rollout undo deployment/web
	h = f.watchPods(sel, minReady*time.Second, 12, 9)
	prev := f.rollbackToPrevious("web")
	if prev.UID != first.UID {
		t.Fatalf("the previous revision is %s, want the first ReplicaSet %s", prev.Name, first.Name)
	}
	f.until("rolled back", f.rolledOut("web", 10))
	f.until("hello:2.0 pods gone", func() (bool, string) {
		n := 0
		for _, p := range f.pods("default", sel) {
			if p.Spec.Containers[0].Image != "hello:1.0" {
				n++
			}
		}
		return n == 0, fmt.Sprint(n, " hello:2.0 pods")
	})
	h.check(t, "rollout undo")

	d = f.deployment("web")
	rss, _, _ = f.cl.ReplicaSets().List(f.ctx, "default", client.ListOptions{})
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets after the undo, want 2: the first one is reused", len(rss))
	}
	for _, rs := range rss {
		switch rs.UID {
		case first.UID:
			if rs.Name != first.Name || *rs.Spec.Replicas != 10 || rs.Annotations["deployment.kubernetes.io/revision"] != "3" ||
				rs.Annotations["deployment.kubernetes.io/revision-history"] != "1" {
				t.Errorf("reused ReplicaSet %s: replicas %d annotations %v; want 10, revision 3, history 1", rs.Name, *rs.Spec.Replicas, rs.Annotations)
			}
		default:
			if *rs.Spec.Replicas != 0 || rs.Annotations["deployment.kubernetes.io/revision"] != "2" {
				t.Errorf("ReplicaSet %s: replicas %d revision %q; want 0 and 2", rs.Name, *rs.Spec.Replicas, rs.Annotations["deployment.kubernetes.io/revision"])
			}
		}
	}
	if rev := d.Annotations["deployment.kubernetes.io/revision"]; rev != "3" {
		t.Errorf("deployment revision %q, want 3", rev)
	}
	pods := f.pods("default", sel)
	f.until("hello:1.0 greeting", func() (bool, string) {
		out := f.logs(pods[0])
		return strings.Contains(out, "Hello from "+pods[0].Name+"! (hello:1.0)"), out
	})
	if pods[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey] != first.Labels[appsv1.DefaultDeploymentUniqueLabelKey] {
		t.Errorf("pod %s has hash %s, want the first ReplicaSet's %s", pods[0].Name,
			pods[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey], first.Labels[appsv1.DefaultDeploymentUniqueLabelKey])
	}
}

// --- node failure ---

func taintKeys(n *corev1.Node) string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// A node whose kubelet stops: Unknown after the grace period, tainted
// unreachable, its pods NotReady (and out of the Service's ready
// endpoints), evicted 300 s after the taint and replaced on the other
// nodes; back again, untainted, and the evicted pods are gone.
func TestNodeFailureEvictsAndReschedules(t *testing.T) {
	f := startFakeCluster(t)
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	_, err := f.cl.Deployments().Create(f.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	svcs := client.For[*corev1.Service](f.cl, "", "services")
	if _, err := svcs.Create(f.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}); err != nil {
		t.Fatal(err)
	}
	endpoints := client.For[*corev1.Endpoints](f.cl, "", "endpoints")
	readyAddresses := func() (ready, notReady int) {
		ep, err := endpoints.Get(f.ctx, "default", "web")
		if err != nil {
			return 0, 0
		}
		for _, s := range ep.Subsets {
			ready += len(s.Addresses)
			notReady += len(s.NotReadyAddresses)
		}
		return ready, notReady
	}
	f.until("3 available, 3 ready endpoints", func() (bool, string) {
		r, _ := readyAddresses()
		ok, msg := f.rolledOut("web", 3)()
		return ok && r == 3, fmt.Sprintf("%s; %d ready endpoints", msg, r)
	})
	// The node of the first pod fails.
	victimPods := map[string]bool{}
	var victim string
	for _, p := range f.pods("default", sel) {
		if victim == "" {
			victim = p.Spec.NodeName
		}
		if p.Spec.NodeName == victim {
			victimPods[p.Name] = true
		}
	}
	if err := f.StopNode(victim); err != nil {
		t.Fatal(err)
	}
	if f.NodeRunning(victim) {
		t.Fatal("NodeRunning after StopNode")
	}
	stopped := f.clk.Now()
	node := func() *corev1.Node {
		n, err := f.cl.Nodes().Get(f.ctx, "", victim)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.until(victim+" Unknown", func() (bool, string) { s := nodeReady(node()); return s == corev1.ConditionUnknown, string(s) })
	// Times are read from what the controllers wrote (they may run behind
	// the test's clock when the machine is busy).
	var unknownAfter time.Duration
	for _, c := range node().Status.Conditions {
		if c.Type == corev1.NodeReady {
			unknownAfter = c.LastTransitionTime.Sub(stopped)
		}
	}
	f.until("unreachable taints", func() (bool, string) {
		got := taintKeys(node())
		return got == "node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule", got
	})
	var taintedAfter time.Duration
	for _, tt := range node().Spec.Taints {
		if tt.Effect == corev1.TaintEffectNoExecute && tt.TimeAdded != nil {
			taintedAfter = tt.TimeAdded.Sub(stopped)
		}
	}
	f.until("its pods NotReady, out of the ready endpoints", func() (bool, string) {
		notReady := 0
		for _, p := range f.pods("default", sel) {
			if victimPods[p.Name] {
				if c := podReadyCondition(p); c != nil && c.Status == corev1.ConditionFalse {
					notReady++
				}
			}
		}
		r, nr := readyAddresses()
		return notReady == len(victimPods) && r == 3-len(victimPods) && nr == len(victimPods),
			fmt.Sprintf("%d/%d NotReady; endpoints %d ready, %d not ready", notReady, len(victimPods), r, nr)
	})
	f.waitEvent("default", "NodeNotReady", "Node "+victim+" status is now: NodeNotReady")
	f.until("evicted", func() (bool, string) {
		evicted := 0
		for _, p := range f.pods("default", sel) {
			if victimPods[p.Name] && p.DeletionTimestamp != nil {
				evicted++
			}
		}
		return evicted == len(victimPods), fmt.Sprint(evicted)
	})
	var evictedAfter time.Duration
	for _, p := range f.pods("default", sel) {
		if victimPods[p.Name] {
			at := p.DeletionTimestamp.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
			evictedAfter = max(evictedAfter, at.Sub(stopped))
		}
	}
	for name := range victimPods {
		f.waitEvent("default", "TaintManagerEviction", "Marking for deletion Pod default/"+name)
	}
	f.until("replaced on the other nodes", func() (bool, string) {
		var running []string
		for _, p := range f.pods("default", sel) {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != victim {
				running = append(running, p.Name+"@"+p.Spec.NodeName)
			}
		}
		r, _ := readyAddresses()
		ok, msg := f.rolledOut("web", 3)()
		return ok && len(running) == 3 && r == 3, fmt.Sprintf("%v; %s; %d ready endpoints", running, msg, r)
	})
	replacedAfter := f.clk.Since(stopped)
	// The evicted pods wait for their kubelet: nothing else can stop them.
	for _, p := range f.pods("default", sel) {
		if victimPods[p.Name] && p.DeletionTimestamp == nil {
			t.Errorf("%s is not terminating", p.Name)
		}
	}

	if err := f.StartNode(victim); err != nil {
		t.Fatal(err)
	}
	f.until(victim+" Ready and untainted, evicted pods gone", func() (bool, string) {
		n := node()
		left := 0
		for _, p := range f.pods("default", sel) {
			if victimPods[p.Name] {
				left++
			}
		}
		return nodeReady(n) == corev1.ConditionTrue && taintKeys(n) == "" && left == 0,
			fmt.Sprintf("%s taints %q, %d evicted pods left", nodeReady(n), taintKeys(n), left)
	})
	backAfter := f.clk.Since(stopped)
	t.Logf("timeline of %s (%d pods) from the kubelet's stop: Unknown +%v, NoExecute taint +%v, evicted +%v, replaced +%v, back and cleaned +%v",
		victim, len(victimPods), unknownAfter, taintedAfter, evictedAfter, replacedAfter, backAfter)
	// The grace period runs from the last Lease renewal the controller saw
	// (up to 10 s before the stop, seen up to 5 s later).
	if unknownAfter < 40*time.Second || unknownAfter > 2*time.Minute {
		t.Errorf("Unknown after %v, want just over the 50 s grace period", unknownAfter)
	}
	if d := evictedAfter - taintedAfter; d < 300*time.Second || d > 360*time.Second {
		t.Errorf("evicted %v after the taint, want the default tolerationSeconds of 300 s", d)
	}
}

// --- Jobs ---

func (f *fakeCluster) jobs() client.Resource[*batchv1.Job] {
	return client.For[*batchv1.Job](f.cl, batchv1.GroupName, "jobs")
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func helloJob(name string, completions, parallelism, backoffLimit *int32, restart corev1.RestartPolicy, args ...string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: completions, Parallelism: parallelism, BackoffLimit: backoffLimit,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: restart,
				Containers:    []corev1.Container{{Name: "hello", Image: "hello", Args: args}},
			}},
		},
	}
}

// A Job of completions 3 and parallelism 2 whose guest exits 0 completes;
// one whose guest exits 1 fails at its backoffLimit, with restartPolicy
// Never (a new pod per failure, 10 s then 20 s apart) and OnFailure (the
// kubelet restarts the container in place; the restarts count).
func TestJobsCompleteAndFail(t *testing.T) {
	f := startFakeCluster(t)
	jobs := f.jobs()
	if _, err := jobs.Create(f.ctx, helloJob("pi", int32p(3), int32p(2), nil, corev1.RestartPolicyNever, "--ticks=1", "--exit=0")); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Create(f.ctx, helloJob("fail", nil, nil, int32p(2), corev1.RestartPolicyNever, "--ticks=0", "--exit=1")); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Create(f.ctx, helloJob("crash", nil, nil, int32p(2), corev1.RestartPolicyOnFailure, "--ticks=0", "--exit=1")); err != nil {
		t.Fatal(err)
	}
	get := func(name string) *batchv1.Job {
		j, err := jobs.Get(f.ctx, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	mostRunning := 0
	f.until("pi Complete, fail and crash Failed", func() (bool, string) {
		running := 0
		for _, p := range f.pods("default", labels.SelectorFromSet(labels.Set{"job-name": "pi"})) {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		mostRunning = max(mostRunning, running)
		var state []string
		done := 0
		for _, name := range []string{"pi", "fail", "crash"} {
			j := get(name)
			s := j.Status
			state = append(state, fmt.Sprintf("%s: active %d succeeded %d failed %d %v", name, s.Active, s.Succeeded, s.Failed, j.Status.Conditions))
			if jobCondition(j, batchv1.JobComplete) != nil || jobCondition(j, batchv1.JobFailed) != nil {
				done++
			}
		}
		return done == 3, strings.Join(state, "; ")
	})

	pi := get("pi")
	if c := jobCondition(pi, batchv1.JobComplete); c == nil || pi.Status.Succeeded != 3 || pi.Status.Failed != 0 || pi.Status.CompletionTime == nil {
		t.Errorf("pi: %+v", pi.Status)
	}
	if mostRunning > 2 {
		t.Errorf("pi ran %d pods at once, want at most parallelism 2", mostRunning)
	}
	piPods := f.pods("default", labels.SelectorFromSet(labels.Set{"job-name": "pi"}))
	if len(piPods) != 3 {
		t.Errorf("pi has %d pods, want 3", len(piPods))
	}
	for _, p := range piPods {
		if p.Status.Phase != corev1.PodSucceeded || len(p.Finalizers) != 0 {
			t.Errorf("pod %s: %s, finalizers %v", p.Name, p.Status.Phase, p.Finalizers)
		}
		if out := f.logs(p); !strings.Contains(out, "hello: done after 1 ticks, exit code 0") {
			t.Errorf("logs of %s: %q", p.Name, out)
		}
		f.waitEvent("default", "SuccessfulCreate", "Created pod: "+p.Name)
	}
	f.waitEvent("default", "Completed", "Job completed")

	for _, tc := range []struct {
		name   string
		failed int32
		pods   int
	}{{"fail", 3, 3}, {"crash", 1, 0}} {
		j := get(tc.name)
		c := jobCondition(j, batchv1.JobFailed)
		if c == nil || c.Reason != "BackoffLimitExceeded" || c.Message != "Job has reached the specified backoff limit" {
			t.Errorf("%s: Failed condition %+v", tc.name, c)
		}
		if j.Status.Failed != tc.failed || j.Status.Active != 0 || j.Status.Succeeded != 0 {
			t.Errorf("%s: failed %d active %d succeeded %d, want %d failed", tc.name, j.Status.Failed, j.Status.Active, j.Status.Succeeded, tc.failed)
		}
		pods := f.pods("default", labels.SelectorFromSet(labels.Set{"job-name": tc.name}))
		if len(pods) != tc.pods {
			t.Errorf("%s: %d pods, want %d", tc.name, len(pods), tc.pods)
		}
		if tc.name == "fail" {
			// Each replacement waited out the back-off: 10 s, then 20 s.
			sort.Slice(pods, func(a, b int) bool { return pods[a].CreationTimestamp.Before(&pods[b].CreationTimestamp) })
			for i := 1; i < len(pods); i++ {
				gap := pods[i].CreationTimestamp.Sub(pods[i-1].CreationTimestamp.Time)
				if want := 10 * time.Second << (i - 1); gap < want {
					t.Errorf("fail: pod %d created %v after pod %d, want at least %v", i+1, gap, i, want)
				}
			}
		}
	}
	f.waitEvent("default", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
}

// --- namespaces ---

// Deleting a namespace deletes what is in it (the kubelets stop its pods),
// then the namespace itself.
func TestNamespaceDeletionEmptiesIt(t *testing.T) {
	f := startFakeCluster(t)
	if _, err := f.cl.Namespaces().Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.cl.Deployments().Create(f.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.Service](f.cl, "", "services").Create(f.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}); err != nil {
		t.Fatal(err)
	}
	// A Job's pods carry its tracking finalizer: the namespace waits for
	// the Job controller to let them go.
	j := helloJob("worker", nil, nil, nil, corev1.RestartPolicyNever)
	j.Namespace = "demo"
	if _, err := f.jobs().Create(f.ctx, j); err != nil {
		t.Fatal(err)
	}
	f.until("3 running pods", func() (bool, string) {
		running := 0
		for _, p := range f.pods("demo", labels.Everything()) {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 3, fmt.Sprint(running)
	})
	if err := f.cl.Namespaces().Delete(f.ctx, "", "demo", nil); err != nil {
		t.Fatal(err)
	}
	f.until("namespace gone", func() (bool, string) {
		ns, err := f.cl.Namespaces().Get(f.ctx, "", "demo")
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		var conds []string
		for _, c := range ns.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message))
		}
		return false, fmt.Sprintf("%s, finalizers %v, %d pods; %s", ns.Status.Phase, ns.Spec.Finalizers, len(f.pods("demo", labels.Everything())), strings.Join(conds, "; "))
	})
	for _, gr := range []struct{ group, resource string }{{"", "pods"}, {"", "services"}, {"", "endpoints"}, {"apps", "replicasets"}, {"batch", "jobs"}, {"discovery.k8s.io", "endpointslices"}} {
		objs, _, err := client.For[runtime.Object](f.cl, gr.group, gr.resource).List(f.ctx, "demo", client.ListOptions{})
		if err != nil || len(objs) != 0 {
			t.Errorf("%s left in the deleted namespace: %d (%v)", gr.resource, len(objs), err)
		}
	}
}

// After `kubectl delete cm --all` and `kubectl delete sa default` the
// namespace heals: both come back within seconds and a new pod runs (it
// used to stay ContainerCreating, or be refused).
func TestNamespaceObjectsHeal(t *testing.T) {
	f := startFakeCluster(t)
	cms := client.For[*corev1.ConfigMap](f.cl, "", "configmaps")
	sas := client.For[*corev1.ServiceAccount](f.cl, "", "serviceaccounts")
	all, _, err := cms.List(f.ctx, "default", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range all {
		if err := cms.Delete(f.ctx, "default", cm.Name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := sas.Delete(f.ctx, "default", "default", nil); err != nil {
		t.Fatal(err)
	}
	f.until("kube-root-ca.crt and the default ServiceAccount back", func() (bool, string) {
		_, errCM := cms.Get(f.ctx, "default", registry.RootCAConfigMapName)
		_, errSA := sas.Get(f.ctx, "default", "default")
		return errCM == nil && errSA == nil, fmt.Sprint(errCM, errSA)
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}
	if _, err := f.cl.Pods().Create(f.ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.until("the new pod running", func() (bool, string) {
		p, err := f.cl.Pods().Get(f.ctx, "default", "after")
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
}
