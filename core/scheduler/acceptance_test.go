package scheduler

// Acceptance tests of issue 4's scheduler part, against the real registry
// (defaulting, admission, the pods/binding subresource) with a fake clock.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/tainttoleration"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

const zoneKey = v1.LabelTopologyZone

func (e *env) priorityClass(name string, value int32) {
	e.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := e.reg.MustLookup("scheduling.k8s.io", "priorityclasses").Create(e.ctx, "", pc, registry.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// fillNode creates a pod already bound to node (as a kubelet's static pod
// would be) requesting cpu and memory.
func (e *env) fillNode(name, node, cpu, mem string) {
	e.t.Helper()
	e.createPod(st.MakePod().Name(name).Node(node).Req(res{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}).Obj())
}

func (e *env) updateNode(name string, change func(*v1.Node)) {
	e.t.Helper()
	for range 5 {
		n, err := e.c.Nodes().Get(e.ctx, "", name)
		if err != nil {
			e.t.Fatal(err)
		}
		n = n.DeepCopy()
		change(n)
		if _, err = e.c.Nodes().Update(e.ctx, n); err == nil {
			return
		}
	}
	e.t.Fatalf("updating node %s: too many conflicts", name)
}

// waitNodes waits until the scheduler's cache has n nodes, so a pod created
// next is not tried against part of the cluster (with a fake clock, its
// back-off would then never end).
func (e *env) waitNodes(n int) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%d nodes in the cache", n), func() (bool, string) {
		return e.s.Cache().NodeCount() == n, fmt.Sprint(e.s.Cache().NodeCount())
	})
}

// waitQueue waits until the queue's summary is want.
func (e *env) waitQueue(what, want string) {
	e.t.Helper()
	e.eventually(what, func() (bool, string) {
		_, q := e.s.Queue().PendingPods()
		return q == want, q
	})
}

const gpuTaint = "dedicated"

// taintedTrio is the acceptance cluster: node-1 has the taint
// dedicated=gpu:NoSchedule, node-2 has 1Gi of its 8Gi memory left, node-3 is
// free unless full3 (then it has 1Gi left too).
func (e *env) taintedTrio(full3 bool) {
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Taint(gpuTaint, "gpu", v1.TaintEffectNoSchedule).Ready().Obj())
	e.createNode(st.MakeNode().Name("node-2").Capacity(nodeCapacity).Ready().Obj())
	e.createNode(st.MakeNode().Name("node-3").Capacity(nodeCapacity).Ready().Obj())
	e.fillNode("fill-2", "node-2", "500m", "7Gi")
	if full3 {
		e.fillNode("fill-3", "node-3", "500m", "7Gi")
	}
	e.eventually("the cache has the nodes and pods", func() (bool, string) {
		want := 1
		if full3 {
			want = 2
		}
		return e.s.Cache().NodeCount() == 3 && e.s.Cache().PodCount() == want, ""
	})
}

func TestAcceptanceFailedSchedulingMessage(t *testing.T) {
	e := newEnv(t, Config{})
	e.taintedTrio(true)
	e.createPod(st.MakePod().Name("web").Req(res{v1.ResourceCPU: "100m", v1.ResourceMemory: "2Gi"}).Obj())
	// Upstream's wording, to the character: the counts sorted as strings,
	// and the preemption part (the tainted node is not worth trying: its
	// rejection is UnschedulableAndUnresolvable; the full ones hold no pod
	// of lower priority). Upstream's separator adds a second period.
	e.waitFailed("web", "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient memory. "+
		"preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..")
}

func TestAcceptanceDecisionRecordNamesEachNodesReason(t *testing.T) {
	e := newEnv(t, Config{})
	e.taintedTrio(false)
	e.createPod(st.MakePod().Name("web").Req(res{v1.ResourceCPU: "100m", v1.ResourceMemory: "2Gi"}).Obj())
	if node := e.waitBound("web"); node != "node-3" {
		t.Fatalf("web bound to %s, want node-3", node)
	}
	ev := e.waitEvent("web", "Scheduled")
	if ev.Message != "Successfully assigned default/web to node-3" {
		t.Errorf("Scheduled event %q", ev.Message)
	}

	ds := e.s.Decisions("default", "web")
	if len(ds) != 1 {
		t.Fatalf("%d decisions", len(ds))
	}
	d := ds[0]
	type result struct {
		plugin string
		code   framework.Code
		reason string
	}
	want := map[string]result{
		"node-1": {tainttoleration.Name, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"},
		"node-2": {noderesources.Name, framework.Unschedulable, "Insufficient memory"},
		"node-3": {}, // passed every filter
	}
	for node, w := range want {
		rejectedBy, feasible, found := d.NodeResult(node)
		if !found {
			t.Errorf("%s is not in the record", node)
			continue
		}
		got := result{}
		if rejectedBy != nil {
			got = result{rejectedBy.Plugin(), rejectedBy.Code(), rejectedBy.Message()}
		}
		if got != w {
			t.Errorf("%s: %+v, want %+v", node, got, w)
		}
		if (w.plugin == "") != (feasible != nil) {
			t.Errorf("%s: feasible %+v", node, feasible)
		}
	}
	if len(d.Rejected) != 2 || d.EvaluatedNodes != 3 || d.FeasibleNodes != 1 || d.SelectedNode != "node-3" || d.Result != v1alpha1.ResultScheduled {
		t.Errorf("decision %+v", d)
	}

	// The same record through the API server, as kubectl and the UI read it.
	srv := httptest.NewServer(mustAPIServer(t, e))
	defer srv.Close()
	body, code := get(t, srv.URL+"/apis/scheduling.kubetab.dev/v1alpha1/namespaces/default/schedulingdecisions/web")
	if code != http.StatusOK {
		t.Fatalf("GET: %d %s", code, body)
	}
	var sd v1alpha1.SchedulingDecision
	if err := json.Unmarshal(body, &sd); err != nil {
		t.Fatal(err)
	}
	if sd.Kind != "SchedulingDecision" || sd.APIVersion != "scheduling.kubetab.dev/v1alpha1" || sd.Name != "web" || sd.UID != e.pod("web").UID || len(sd.Attempts) != 1 {
		t.Fatalf("decision object %+v", sd)
	}
	a := sd.Attempts[0]
	wantRejected := []v1alpha1.RejectedNodes{
		{PluginStatus: v1alpha1.PluginStatus{Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint {dedicated: gpu}"}}, Count: 1, Nodes: []string{"node-1"}},
		// Upstream's reason, and the numbers behind it: node-2 has 8Gi, 7Gi
		// of it requested by fill-2.
		{PluginStatus: v1alpha1.PluginStatus{Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient memory"}}, Count: 1, Nodes: []string{"node-2"},
			Details: []string{"Insufficient memory: requests 2Gi, 1Gi of 8Gi free"}},
	}
	// The order of the groups is the order the nodes were evaluated in.
	if len(a.Rejected) != 2 || fmt.Sprint(a.Rejected) != fmt.Sprint(wantRejected) && fmt.Sprint([]v1alpha1.RejectedNodes{a.Rejected[1], a.Rejected[0]}) != fmt.Sprint(wantRejected) {
		t.Errorf("rejected %+v, want %+v", a.Rejected, wantRejected)
	}
	if len(a.Feasible) != 1 || a.Feasible[0].Name != "node-3" || a.SelectedNode != "node-3" || a.Result != "Scheduled" ||
		a.Nodes != (v1alpha1.NodeCounts{All: 3, Evaluated: 3, Feasible: 1}) {
		t.Errorf("attempt %+v", a)
	}

	body, code = get(t, srv.URL+"/apis/scheduling.kubetab.dev/v1alpha1/namespaces/default/schedulingdecisions/nobody")
	var status metav1.Status
	if err := json.Unmarshal(body, &status); code != http.StatusNotFound || err != nil ||
		status.Message != `schedulingdecisions.scheduling.kubetab.dev "nobody" not found` {
		t.Errorf("unknown pod: %d %s", code, body)
	}
}

func mustAPIServer(t *testing.T, e *env) http.Handler {
	t.Helper()
	s, err := apiserver.New(apiserver.Config{Registry: e.reg, Decisions: e.s})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, url string) ([]byte, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b, resp.StatusCode
}

func TestAcceptanceTaints(t *testing.T) {
	e := newEnv(t, Config{})
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Taint(gpuTaint, "gpu", v1.TaintEffectNoSchedule).Obj())
	e.createNode(st.MakeNode().Name("node-2").Capacity(nodeCapacity).Taint(gpuTaint, "gpu", v1.TaintEffectPreferNoSchedule).Obj())
	e.createNode(st.MakeNode().Name("node-3").Capacity(nodeCapacity).Obj())
	e.waitNodes(3)
	// Empty nodes score the same on resources: the PreferNoSchedule taint
	// costs node-2 TaintToleration's 100 × 3.
	e.createPod(st.MakePod().Name("first").Req(res{v1.ResourceCPU: "100m"}).Obj())
	if node := e.waitBound("first"); node != "node-3" {
		t.Errorf("first bound to %s, want node-3 (node-2 prefers no pods)", node)
	}
	for i := range 6 {
		name := fmt.Sprintf("web-%d", i)
		e.createPod(st.MakePod().Name(name).Req(res{v1.ResourceCPU: "500m"}).Obj())
		if node := e.waitBound(name); node == "node-1" {
			t.Errorf("%s bound to the tainted node-1", name)
		}
	}
	// A pod that tolerates the taint and asks for node-1 goes there.
	e.createPod(st.MakePod().Name("gpu").Toleration(gpuTaint).NodeSelector(map[string]string{v1.LabelHostname: "node-1"}).Obj())
	if node := e.waitBound("gpu"); node != "node-1" {
		t.Errorf("gpu bound to %s", node)
	}
	// Taking the taint off node-1 wakes a pod that only node-1 could take.
	e.createPod(st.MakePod().Name("pinned").NodeSelector(map[string]string{v1.LabelHostname: "node-1"}).Obj())
	e.waitFailed("pinned", "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector. "+
		"preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..")
	e.waitQueue("pinned waits", "activeQ:0; backoffQ:0; unschedulablePods:1")
	e.updateNode("node-1", func(n *v1.Node) { n.Spec.Taints = nil })
	e.waitQueue("the taint change wakes pinned", "activeQ:0; backoffQ:1; unschedulablePods:0")
	e.clk.Step(time.Second)
	if node := e.waitBound("pinned"); node != "node-1" {
		t.Errorf("pinned bound to %s", node)
	}
}

func TestAcceptanceNodeAffinity(t *testing.T) {
	e := newEnv(t, Config{})
	for _, z := range []string{"a", "b", "c"} {
		e.createNode(st.MakeNode().Name("node-"+z).Label(zoneKey, z).Capacity(nodeCapacity).Obj())
	}
	e.waitNodes(3)
	cases := []struct {
		pod  *v1.Pod
		want string
	}{
		{st.MakePod().Name("selector").NodeSelector(map[string]string{zoneKey: "b"}).Obj(), "node-b"},
		{st.MakePod().Name("required").NodeAffinityIn(zoneKey, "c").Obj(), "node-c"},
		{st.MakePod().Name("preferred").PreferredNodeAffinityIn(100, zoneKey, "a").Req(res{v1.ResourceCPU: "100m"}).Obj(), "node-a"},
	}
	for _, c := range cases {
		e.createPod(c.pod)
		if node := e.waitBound(c.pod.Name); node != c.want {
			t.Errorf("%s bound to %s, want %s", c.pod.Name, node, c.want)
		}
	}
	e.createPod(st.MakePod().Name("nowhere").NodeAffinityIn(zoneKey, "d").Obj())
	e.waitFailed("nowhere", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "+
		"preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..")
	e.waitQueue("nowhere waits", "activeQ:0; backoffQ:0; unschedulablePods:1")
	// Relabelling a node into zone d is a NodeLabelChange: NodeAffinity
	// registered it, so the pod is retried (after its 1 s back-off).
	e.updateNode("node-c", func(n *v1.Node) { n.Labels[zoneKey] = "d" })
	e.waitQueue("the label change wakes the pod", "activeQ:0; backoffQ:1; unschedulablePods:0")
	e.clk.Step(time.Second)
	if node := e.waitBound("nowhere"); node != "node-c" {
		t.Errorf("nowhere bound to %s", node)
	}
}

func TestAcceptanceTopologySpread(t *testing.T) {
	e := newEnv(t, Config{})
	for _, z := range []string{"a", "b", "c"} {
		e.createNode(st.MakeNode().Name("node-"+z).Label(zoneKey, z).Capacity(nodeCapacity).Obj())
	}
	e.waitNodes(3)
	perZone := map[string]int{}
	for i := range 6 {
		name := fmt.Sprintf("web-%d", i)
		e.createPod(st.MakePod().Name(name).Label("app", "web").SpreadConstraint(1, zoneKey, v1.DoNotSchedule, "app", "web").Obj())
		perZone[e.waitBound(name)]++
	}
	if perZone["node-a"] != 2 || perZone["node-b"] != 2 || perZone["node-c"] != 2 {
		t.Errorf("web pods per node %v, want 2 in each zone", perZone)
	}
}

func TestAcceptanceTopologySpreadRejects(t *testing.T) {
	e := newEnv(t, Config{})
	e.createNode(st.MakeNode().Name("node-a").Label(zoneKey, "a").Capacity(nodeCapacity).Obj())
	e.createNode(st.MakeNode().Name("node-b").Label(zoneKey, "b").Capacity(res{v1.ResourceCPU: "1", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj())
	e.waitNodes(2)
	spread := func(name string) *v1.Pod {
		return st.MakePod().Name(name).Label("app", "web").Req(res{v1.ResourceCPU: "1"}).SpreadConstraint(1, zoneKey, v1.DoNotSchedule, "app", "web").Obj()
	}
	// a (room for 4) takes the first; the second must go to b (skew);
	// the third to a again; the fourth fits nowhere: a would make the skew
	// 2, and b is full.
	for i, want := range []string{"node-a", "node-b", "node-a"} {
		name := fmt.Sprintf("web-%d", i)
		e.createPod(spread(name))
		if node := e.waitBound(name); node != want {
			t.Errorf("%s bound to %s, want %s", name, node, want)
		}
	}
	e.createPod(spread("web-3"))
	e.waitFailed("web-3", "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints. "+
		"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..")
}

func TestAcceptancePreemption(t *testing.T) {
	e := newEnv(t, Config{})
	e.priorityClass("low", 10)
	e.priorityClass("high", 1000)
	e.createNode(st.MakeNode().Name("node-1").Capacity(nodeCapacity).Obj())
	e.waitNodes(1)
	e.createPod(st.MakePod().Name("low-1").PriorityClassName("low").Req(res{v1.ResourceCPU: "1500m"}).Obj())
	e.createPod(st.MakePod().Name("low-2").PriorityClassName("low").Req(res{v1.ResourceCPU: "1500m"}).Obj())
	e.waitBound("low-1")
	e.waitBound("low-2")
	if p := e.pod("low-1"); p.Spec.Priority == nil || *p.Spec.Priority != 10 {
		t.Fatalf("the Priority admission did not set low-1's priority: %v", p.Spec.Priority)
	}

	// 3 of 4 cpus are used; high needs 2: one low pod must go.
	high := e.createPod(st.MakePod().Name("high").PriorityClassName("high").Req(res{v1.ResourceCPU: "2"}).Obj())
	// Preemption succeeded: the message has no "preemption:" part.
	e.waitFailed("high", "0/1 nodes are available: 1 Insufficient cpu.")
	e.eventually("high nominated to node-1", func() (bool, string) {
		p := e.pod("high")
		return p.Status.NominatedNodeName == "node-1", p.Status.NominatedNodeName
	})
	var victim *v1.Pod
	e.eventually("one victim terminating", func() (bool, string) {
		victim = nil
		n := 0
		for _, name := range []string{"low-1", "low-2"} {
			if p := e.pod(name); p.DeletionTimestamp != nil {
				victim, n = p, n+1
			}
		}
		return n == 1, fmt.Sprint(n)
	})
	cond := false
	for _, c := range victim.Status.Conditions {
		cond = cond || (c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler &&
			c.Message == "default-scheduler: preempting to accommodate a higher priority pod")
	}
	if !cond {
		t.Errorf("victim conditions %+v", victim.Status.Conditions)
	}
	ev := e.waitEvent(victim.Name, "Preempted")
	if want := fmt.Sprintf("Preempted by pod %s on node node-1", high.UID); ev.Message != want || ev.Type != v1.EventTypeNormal {
		t.Errorf("Preempted event: %s %q, want Normal %q", ev.Type, ev.Message, want)
	}
	ds := e.s.Decisions("default", "high")
	if p := ds[len(ds)-1].Preemption; p == nil || p.NominatedNode != "node-1" || fmt.Sprint(p.Victims) != "[default/"+victim.Name+"]" {
		t.Errorf("decision's preemption %+v", p)
	}

	// While the victim terminates, high waits: its victims are not gone,
	// and it may not preempt more.
	e.waitQueue("high waits for the victim", "activeQ:0; backoffQ:0; unschedulablePods:1")
	// The kubelet finishes the deletion (there are no kubelets here).
	zero := int64(0)
	if err := e.c.Pods().Delete(e.ctx, "default", victim.Name, &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.waitQueue("the deletion wakes high", "activeQ:0; backoffQ:1; unschedulablePods:0")
	e.clk.Step(time.Second)
	if node := e.waitBound("high"); node != "node-1" {
		t.Errorf("high bound to %s", node)
	}
	if ev := e.waitEvent("high", "Scheduled"); ev.Message != "Successfully assigned default/high to node-1" {
		t.Errorf("Scheduled event %q", ev.Message)
	}
	other := "low-1"
	if victim.Name == "low-1" {
		other = "low-2"
	}
	if p := e.pod(other); p.DeletionTimestamp != nil || p.Spec.NodeName != "node-1" {
		t.Errorf("%s should have been spared", other)
	}
}

func TestAcceptanceOtherSchedulerName(t *testing.T) {
	e := newEnv(t, Config{})
	e.threeNodes()
	e.waitNodes(3)
	e.createPod(st.MakePod().Name("theirs").SchedulerName("my-scheduler").Obj())
	e.createPod(st.MakePod().Name("ours").Obj())
	e.waitBound("ours")
	if p := e.pod("theirs"); p.Spec.NodeName != "" || len(e.events("theirs")) != 0 || len(e.s.Decisions("default", "theirs")) != 0 {
		t.Errorf("theirs was touched: node %q, events %v", p.Spec.NodeName, e.events("theirs"))
	}
}

// Three identical empty nodes score the same: the record says so, and the
// winner is one of them (selectHost picks at random among ties).
func TestAcceptanceDecisionRecordsATie(t *testing.T) {
	e := newEnv(t, Config{})
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		e.createNode(st.MakeNode().Name(n).Capacity(nodeCapacity).Ready().Obj())
	}
	e.eventually("the cache has the nodes", func() (bool, string) { return e.s.Cache().NodeCount() == 3, "" })
	e.createPod(st.MakePod().Name("web").Req(res{v1.ResourceCPU: "100m"}).Obj())
	node := e.waitBound("web")
	sd, ok := e.s.SchedulingDecision("default", "web")
	if !ok || len(sd.Attempts) != 1 {
		t.Fatalf("decision %+v", sd)
	}
	tie := sd.Attempts[0].Tie
	if tie == nil || tie.Count != 3 || len(tie.Nodes) != 3 || !slices.Contains(tie.Nodes, node) || tie.Total != sd.Attempts[0].Feasible[0].Total {
		t.Fatalf("tie %+v, bound to %s", tie, node)
	}
}
