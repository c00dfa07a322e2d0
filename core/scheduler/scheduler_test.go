package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/plugins/imagelocality"
	"github.com/kubetab/kubetab/core/scheduler/plugins/interpodaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeunschedulable"
	"github.com/kubetab/kubetab/core/scheduler/plugins/podtopologyspread"
	"github.com/kubetab/kubetab/core/scheduler/plugins/tainttoleration"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
	"github.com/kubetab/kubetab/core/store"
)

// timeout bounds every wait; generous because the same tests run under Node
// (GOOS=js), several times slower than native.
const timeout = 60 * time.Second

// env is a real in-memory API server (store + registry) with the "default"
// namespace, a fake clock, and a scheduler that runs until the test ends.
type env struct {
	t   *testing.T
	ctx context.Context
	reg *registry.Registry
	c   *client.Client
	clk *testingclock.FakeClock
	s   *Scheduler
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, ctx: ctx, reg: reg, c: client.New(reg, "test"), clk: clk}
	if _, err := e.c.Namespaces().Create(ctx, &v1.Namespace{}); err == nil {
		t.Fatal("a namespace without a name was accepted")
	}
	ns := &v1.Namespace{}
	ns.Name = "default"
	if _, err := e.c.Namespaces().Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cfg.Client = client.New(reg, "default-scheduler")
	cfg.Clock = clk
	if e.s, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	e.startWith(done)
	return e
}

// startWith runs the scheduler; done closes when Run returns.
func (e *env) startWith(done chan struct{}) {
	go func() {
		defer close(done)
		if err := e.s.Run(e.ctx); err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}()
}

func (e *env) createNode(n *v1.Node) {
	e.t.Helper()
	if _, err := e.c.Nodes().Create(e.ctx, n); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) createPod(p *v1.Pod) *v1.Pod {
	e.t.Helper()
	p.UID = "" // the API server assigns it
	if len(p.Spec.Containers) == 0 {
		p.Spec.Containers = []v1.Container{{Name: "pause", Image: st.PauseImage}}
	}
	got, err := e.c.Pods().Create(e.ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) pod(name string) *v1.Pod {
	e.t.Helper()
	p, err := e.c.Pods().Get(e.ctx, "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// eventually polls cond until it returns true, failing after timeout with
// the last message cond gave.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v: %s", what, timeout, msg)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitBound waits for the pod to get a node and returns it.
func (e *env) waitBound(name string) string {
	e.t.Helper()
	var node string
	e.eventually("pod "+name+" bound", func() (bool, string) {
		node = e.pod(name).Spec.NodeName
		_, q := e.s.Queue().PendingPods()
		return node != "", q
	})
	return node
}

func (e *env) events(podName string) []v1.Event {
	e.t.Helper()
	evs, _, err := e.c.Events().List(e.ctx, "default", client.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", podName),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]v1.Event, len(evs))
	for i, ev := range evs {
		out[i] = *ev
	}
	return out
}

// waitEvent waits for an event with reason about the pod and returns it.
func (e *env) waitEvent(podName, reason string) v1.Event {
	e.t.Helper()
	var found v1.Event
	e.eventually(reason+" event for "+podName, func() (bool, string) {
		evs := e.events(podName)
		for _, ev := range evs {
			if ev.Reason == reason {
				found = ev
				return true, ""
			}
		}
		return false, fmt.Sprintf("events: %v", evs)
	})
	return found
}

// waitPending waits for the scheduler to have given up on the pod for now:
// FailedScheduling recorded and the pod back in the queue.
func (e *env) waitFailed(podName, message string) {
	e.t.Helper()
	ev := e.waitEvent(podName, "FailedScheduling")
	if ev.Type != v1.EventTypeWarning || ev.Message != message || ev.Source.Component != "default-scheduler" {
		e.t.Errorf("FailedScheduling event: %s %q from %q, want Warning %q from default-scheduler", ev.Type, ev.Message, ev.Source.Component, message)
	}
	e.eventually("PodScheduled=False on "+podName, func() (bool, string) {
		p := e.pod(podName)
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled {
				ok := c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable && c.Message == message
				return ok, fmt.Sprintf("%+v", c)
			}
		}
		return false, fmt.Sprintf("conditions %+v", p.Status.Conditions)
	})
	if n := e.pod(podName).Spec.NodeName; n != "" {
		e.t.Errorf("pod %s bound to %s", podName, n)
	}
}

// capacity of every node in these tests: 4 CPU, 8Gi, 110 pods.
var nodeCapacity = res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}

func (e *env) threeNodes() {
	for i := 1; i <= 3; i++ {
		e.createNode(st.MakeNode().Name(fmt.Sprintf("node-%d", i)).Capacity(nodeCapacity).Ready().Obj())
	}
}

func TestSchedulerSpreadsPodsByLeastAllocated(t *testing.T) {
	e := newEnv(t, Config{})
	e.threeNodes()
	perNode := map[string]int{}
	for i := range 6 {
		e.createPod(st.MakePod().Name(fmt.Sprintf("web-%d", i)).Req(res{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"}).Obj())
	}
	for i := range 6 {
		name := fmt.Sprintf("web-%d", i)
		node := e.waitBound(name)
		perNode[node]++
		ev := e.waitEvent(name, "Scheduled")
		if want := fmt.Sprintf("Successfully assigned default/%s to %s", name, node); ev.Message != want || ev.Type != v1.EventTypeNormal {
			t.Errorf("Scheduled event: %s %q, want Normal %q", ev.Type, ev.Message, want)
		}
		p := e.pod(name)
		if len(p.Status.Conditions) == 0 || p.Status.Conditions[0].Type != v1.PodScheduled || p.Status.Conditions[0].Status != v1.ConditionTrue {
			t.Errorf("%s conditions: %+v", name, p.Status.Conditions)
		}
	}
	for i := 1; i <= 3; i++ {
		if n := perNode[fmt.Sprintf("node-%d", i)]; n != 2 {
			t.Errorf("pods per node %v, want 2 on each", perNode)
			break
		}
	}

	// The decision record of the first pod: every node passed every
	// filter and was scored by the plugins that had something to score;
	// the chosen node has the highest total.
	ds := e.s.Decisions("default", "web-0")
	if len(ds) != 1 {
		t.Fatalf("decisions of web-0: %d, want 1", len(ds))
	}
	d := ds[0]
	if d.Attempt != 1 || d.NumAllNodes != 3 || d.EvaluatedNodes != 3 || d.FeasibleNodes != 3 || len(d.Rejected) != 0 ||
		d.SelectedNode != e.pod("web-0").Spec.NodeName || d.Result != "Scheduled" || d.Message != "" || d.Preemption != nil {
		t.Fatalf("decision: %+v", d)
	}
	wantWeights := []runtime.ScorePluginWeight{
		{Name: tainttoleration.Name, Weight: 3}, {Name: nodeaffinity.Name, Weight: 2}, {Name: noderesources.Name, Weight: 1},
		{Name: podtopologyspread.Name, Weight: 2}, {Name: interpodaffinity.Name, Weight: 2},
		{Name: noderesources.BalancedAllocationName, Weight: 1}, {Name: imagelocality.Name, Weight: 1},
	}
	if fmt.Sprint(d.ScorePlugins) != fmt.Sprint(wantWeights) {
		t.Errorf("score plugins %v, want %v", d.ScorePlugins, wantWeights)
	}
	// The pod has no node affinity, spread constraints (nor an owner for
	// the default ones) or pod affinity, and no node has its image: those
	// plugins skip it.
	if want := []string{nodeaffinity.Name, podtopologyspread.Name, interpodaffinity.Name, imagelocality.Name}; fmt.Sprint(d.SkippedScores) != fmt.Sprint(want) {
		t.Errorf("skipped scores %v, want %v", d.SkippedScores, want)
	}
	if want := []string{nodeaffinity.Name, "NodePorts", podtopologyspread.Name, interpodaffinity.Name}; fmt.Sprint(d.SkippedFilters) != fmt.Sprint(want) {
		t.Errorf("skipped filters %v, want %v", d.SkippedFilters, want)
	}
	if len(d.Feasible) != 3 {
		t.Fatalf("feasible %+v", d.Feasible)
	}
	weight := map[string]int64{}
	for _, w := range wantWeights {
		weight[w.Name] = w.Weight
	}
	for i, n := range d.Feasible {
		var names []string
		var total int64
		for _, ps := range n.Scores {
			names = append(names, ps.Name)
			if ps.Score != ps.Normalized*weight[ps.Name] || ps.Normalized < 0 || ps.Normalized > 100 {
				t.Errorf("node %s %s: %+v", n.Name, ps.Name, ps)
			}
			total += ps.Score
		}
		if want := []string{tainttoleration.Name, noderesources.Name, noderesources.BalancedAllocationName}; fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("node %s scored by %v, want %v", n.Name, names, want)
		}
		// No taints: TaintToleration gives every node 100 × 3.
		if n.Scores[0].Raw != 0 || n.Scores[0].Score != 300 {
			t.Errorf("node %s TaintToleration %+v", n.Name, n.Scores[0])
		}
		if total != n.TotalScore {
			t.Errorf("node %s total %d, scores add up to %d", n.Name, n.TotalScore, total)
		}
		if i > 0 && n.TotalScore > d.Feasible[i-1].TotalScore {
			t.Errorf("feasible nodes not best first: %+v", d.Feasible)
		}
		for _, fr := range d.FilterResults(nil) {
			if fr.Status != nil || fr.Ran == fr.Skipped {
				t.Errorf("node %s filter %+v", n.Name, fr)
			}
		}
	}
	if _, f, _ := d.NodeResult(d.SelectedNode); f == nil || f.TotalScore != d.Feasible[0].TotalScore {
		t.Errorf("selected %s (%+v) but the best total is %d", d.SelectedNode, f, d.Feasible[0].TotalScore)
	}
}

func TestSchedulerPodBiggerThanAnyNodeStaysPending(t *testing.T) {
	e := newEnv(t, Config{})
	e.threeNodes()
	e.createPod(st.MakePod().Name("big").Req(res{v1.ResourceCPU: "5"}).Obj())
	// More cpu than a whole node: UnschedulableAndUnresolvable, so
	// preemption does not even try.
	const msg = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."
	e.waitFailed("big", msg)

	d := e.s.Decisions("default", "big")
	if len(d) == 0 {
		t.Fatal("no decision recorded")
	}
	last := d[len(d)-1]
	if last.SelectedNode != "" || last.Result != "Unschedulable" || last.Message != msg || last.EvaluatedNodes != 3 || last.FeasibleNodes != 0 || len(last.Feasible) != 0 {
		t.Fatalf("decision %+v", last)
	}
	if p := last.Preemption; p == nil || p.NominatedNode != "" || len(p.Victims) != 0 || p.Message != "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling." {
		t.Errorf("preemption %+v", last.Preemption)
	}
	if len(last.Rejected) != 1 || last.Rejected[0].Count != 3 || len(last.Rejected[0].Nodes) != 3 {
		t.Fatalf("rejected %+v", last.Rejected)
	}
	g := last.Rejected[0]
	if g.Status.Plugin() != noderesources.Name || g.Status.Message() != "Insufficient cpu" || g.Status.Code() != framework.UnschedulableAndUnresolvable {
		t.Errorf("group: %v from %s", g.Status, g.Status.Plugin())
	}
	res := last.FilterResults(g.Status)
	want := []FilterResult{
		{Plugin: nodeunschedulable.Name, Ran: true},
		{Plugin: "NodeName", Ran: true},
		{Plugin: tainttoleration.Name, Ran: true},
		{Plugin: nodeaffinity.Name, Skipped: true},
		{Plugin: "NodePorts", Skipped: true},
		{Plugin: noderesources.Name, Ran: true, Status: g.Status},
		{Plugin: podtopologyspread.Name, Skipped: true},
		{Plugin: interpodaffinity.Name, Skipped: true},
	}
	if len(res) != len(want) {
		t.Fatalf("filter results %+v", res)
	}
	for i := range want {
		if res[i] != want[i] {
			t.Errorf("filter %d: %+v, want %+v", i, res[i], want[i])
		}
	}

	// The pod waits in unschedulablePods, and leaves the queue when deleted.
	e.eventually("big waits in unschedulablePods", func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q == "activeQ:0; backoffQ:0; unschedulablePods:1", q
	})
	if err := e.c.Pods().Delete(e.ctx, "default", "big", nil); err != nil {
		t.Fatal(err)
	}
	e.eventually("big leaves the queue", func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q == "activeQ:0; backoffQ:0; unschedulablePods:0" && len(e.s.Decisions("default", "big")) == 0, q
	})
}

func TestSchedulerPendingPodScheduledWhenNodeAdded(t *testing.T) {
	e := newEnv(t, Config{})
	e.createNode(st.MakeNode().Name("small").Capacity(res{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj())
	e.createPod(st.MakePod().Name("web").Req(res{v1.ResourceCPU: "3"}).Obj())
	e.waitFailed("web", "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..")

	e.createNode(st.MakeNode().Name("big").Capacity(nodeCapacity).Obj())
	// The NodeAdd event moves the pod out of unschedulablePods; its 1 s
	// back-off runs on the fake clock.
	e.eventually("web leaves unschedulablePods", func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q != "activeQ:0; backoffQ:0; unschedulablePods:1", q
	})
	e.clk.Step(time.Second)
	if node := e.waitBound("web"); node != "big" {
		t.Errorf("web bound to %s, want big", node)
	}
	if ds := e.s.Decisions("default", "web"); len(ds) != 2 || ds[1].Attempt != 2 || ds[1].SelectedNode != "big" {
		t.Errorf("decisions %+v", ds)
	}
}

func TestSchedulerNoNodes(t *testing.T) {
	e := newEnv(t, Config{})
	e.createPod(st.MakePod().Name("web").Container(st.PauseImage).Obj())
	e.waitFailed("web", "no nodes available to schedule pods")
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Obj())
	// An error retries after its back-off (1 s), node or not.
	e.eventually("web in backoffQ", func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q == "activeQ:0; backoffQ:1; unschedulablePods:0", q
	})
	e.eventually("node-1 in the cache", func() (bool, string) { return e.s.Cache().NodeCount() == 1, "" })
	e.clk.Step(time.Second)
	if node := e.waitBound("web"); node != "node-1" {
		t.Errorf("bound to %s", node)
	}
}

func TestSchedulerLeavesOtherSchedulersPodsAlone(t *testing.T) {
	e := newEnv(t, Config{})
	e.threeNodes()
	e.createPod(st.MakePod().Name("theirs").SchedulerName("my-scheduler").Container(st.PauseImage).Obj())
	// A pod being deleted (held by a finalizer) is not scheduled either.
	dying := st.MakePod().Name("dying").Container(st.PauseImage).Obj()
	dying.Finalizers = []string{"example.com/hold"}
	e.createPod(dying)
	if err := e.c.Pods().Delete(e.ctx, "default", "dying", nil); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	// Pods are handled in order, so once "ours" is bound the others have
	// been seen.
	e.createPod(st.MakePod().Name("ours").Container(st.PauseImage).Obj())
	e.waitBound("ours")
	for _, name := range []string{"theirs", "dying"} {
		if p := e.pod(name); p.Spec.NodeName != "" || len(p.Status.Conditions) != 0 {
			t.Errorf("%s: node %q, conditions %+v", name, p.Spec.NodeName, p.Status.Conditions)
		}
		if evs := e.events(name); len(evs) != 0 {
			t.Errorf("%s has events %v", name, evs)
		}
	}
	if pods, _ := e.s.Queue().PendingPods(); len(pods) != 0 {
		t.Errorf("queued: %v", pods)
	}
}

func TestSchedulerSkipsCordonedNodes(t *testing.T) {
	e := newEnv(t, Config{})
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Unschedulable(true).Obj())
	e.createNode(st.MakeNode().Name("node-2").Capacity(nodeCapacity).Unschedulable(true).Obj())
	e.createNode(st.MakeNode().Name("node-3").Capacity(nodeCapacity).Obj())
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		e.createPod(st.MakePod().Name(name).Req(res{v1.ResourceCPU: "1"}).Obj())
		if node := e.waitBound(name); node != "node-3" {
			t.Errorf("%s bound to cordoned %s", name, node)
		}
	}
	e.createPod(st.MakePod().Name("big").Req(res{v1.ResourceCPU: "2"}).Obj())
	// node-3 is full of pods as important as big: nothing to preempt.
	e.waitFailed("big", "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..")

	// Uncordon node-1: the pod goes there.
	n := st.MakeNode().Name("node-1").Capacity(nodeCapacity).Obj()
	cur, err := e.c.Nodes().Get(e.ctx, "", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	n.ResourceVersion = cur.ResourceVersion
	if _, err := e.c.Nodes().Update(e.ctx, n); err != nil {
		t.Fatal(err)
	}
	e.eventually("big leaves unschedulablePods", func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q != "activeQ:0; backoffQ:0; unschedulablePods:1", q
	})
	e.clk.Step(time.Second)
	if node := e.waitBound("big"); node != "node-1" {
		t.Errorf("big bound to %s, want node-1", node)
	}
}

func TestSchedulerAssumesSoBackToBackPodsDoNotOvercommit(t *testing.T) {
	e := newEnv(t, Config{})
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Obj())
	for i := range 5 {
		e.createPod(st.MakePod().Name(fmt.Sprintf("web-%d", i)).Req(res{v1.ResourceCPU: "1"}).Obj())
	}
	bound := 0
	e.eventually("four bound, one failed", func() (bool, string) {
		bound = 0
		failed := 0
		for i := range 5 {
			name := fmt.Sprintf("web-%d", i)
			if e.pod(name).Spec.NodeName != "" {
				bound++
			}
			for _, ev := range e.events(name) {
				if ev.Reason == "FailedScheduling" && ev.Message == "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.." {
					failed++
				}
			}
		}
		return bound == 4 && failed == 1, fmt.Sprintf("%d bound, %d failed", bound, failed)
	})
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a client succeeded")
	}
	e := newEnv(t, Config{})
	for _, cfg := range []Config{
		{Client: e.c, PercentageOfNodesToScore: 101},
		{Client: e.c, PodInitialBackoff: 10 * time.Second, PodMaxBackoff: time.Second},
		{Client: e.c, Plugins: []runtime.PluginConfig{{Name: "NoSuchPlugin"}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	e.eventually("Run started", func() (bool, string) { return e.s.started.Load(), "" })
	if err := e.s.Run(e.ctx); err == nil {
		t.Error("a second Run succeeded")
	}
}
