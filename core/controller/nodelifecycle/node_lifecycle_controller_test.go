package nodelifecycle_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle/tainteviction"
)

// harness is an API server with the node lifecycle and taint eviction
// controllers, and nodes whose "kubelets" are the test: alive nodes renew
// their Lease at every step of the clock.
type harness struct {
	*controllertest.Env
	t      *testing.T
	leases client.Resource[*coordinationv1.Lease]
	alive  map[string]bool
}

func newHarness(t *testing.T, nodes ...string) *harness {
	e := controllertest.NewEnv(t)
	e.Step = 0 // the harness moves the clock itself
	h := &harness{Env: e, t: t, alive: map[string]bool{},
		leases: client.For[*coordinationv1.Lease](e.Client, coordinationv1.GroupName, "leases")}
	if _, err := e.Client.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: corev1.NamespaceNodeLease}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		h.addNode(n, nil)
	}
	nc, err := nodelifecycle.New(nodelifecycle.Config{Client: e.ClientFor(nodelifecycle.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tainteviction.New(tainteviction.Config{Client: e.ClientFor(tainteviction.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("nodelifecycle", nc.Run)
	e.Start("tainteviction", tc.Run)
	// Registered: the controller's first pass has seen every node.
	for _, n := range nodes {
		h.Eventually("RegisteredNode "+n, func() (bool, string) {
			return e.HasEvent("default", "RegisteredNode", fmt.Sprintf("Node %s event: Registered Node %s in Controller", n, n))
		})
	}
	return h
}

// addNode registers a Ready node, as a kubelet does, with its Lease.
func (h *harness) addNode(name string, labels map[string]string) {
	now := metav1.NewTime(h.Clock.Now())
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: now, LastTransitionTime: now},
		}},
	}
	if _, err := h.Client.Nodes().Create(h.Ctx, node); err != nil {
		h.t.Fatal(err)
	}
	h.alive[name] = true
	h.renew(name)
}

// renew writes the node's Lease with renewTime now.
func (h *harness) renew(name string) {
	now := metav1.NewMicroTime(h.Clock.Now())
	l, err := h.leases.Get(h.Ctx, corev1.NamespaceNodeLease, name)
	if apierrors.IsNotFound(err) {
		holder, d := name, int32(40)
		_, err = h.leases.Create(h.Ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &now},
		})
	} else if err == nil {
		l.Spec.RenewTime = &now
		_, err = h.leases.Update(h.Ctx, l)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// postStatus writes the node's Ready condition as its kubelet would.
func (h *harness) postStatus(name string, ready corev1.ConditionStatus) {
	controllertest.Update(h.Env, func() (*corev1.Node, error) { return h.Client.Nodes().Get(h.Ctx, "", name) },
		func(n *corev1.Node) (*corev1.Node, error) { return h.Client.Nodes().UpdateStatus(h.Ctx, n) },
		func(n *corev1.Node) {
			now := metav1.NewTime(h.Clock.Now())
			for i := range n.Status.Conditions {
				c := &n.Status.Conditions[i]
				status := corev1.ConditionFalse
				if c.Type == corev1.NodeReady {
					status = ready
				}
				if c.Status != status {
					c.LastTransitionTime = now
				}
				c.Status, c.Reason, c.Message, c.LastHeartbeatTime = status, "Kubelet", "posted", now
			}
		})
}

// advance steps the clock one second at a time, renewing the Leases of the
// alive nodes, until cond holds; it fails after a (real) minute or an hour
// of cluster time.
func (h *harness) advance(what string, cond func() (bool, string)) {
	h.t.Helper()
	deadline := time.Now().Add(controllertest.Timeout)
	start := h.Clock.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || h.Clock.Since(start) > time.Hour {
			h.t.Fatalf("timed out waiting for %s after %v of cluster time: %s", what, h.Clock.Since(start), msg)
		}
		<-tick.C
		h.Clock.Step(time.Second)
		for n, alive := range h.alive {
			if alive {
				h.renew(n)
			}
		}
	}
}

func (h *harness) node(name string) *corev1.Node {
	n, err := h.Client.Nodes().Get(h.Ctx, "", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func condition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func taints(n *corev1.Node) string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func taint(n *corev1.Node, key string, effect corev1.TaintEffect) *corev1.Taint {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].Key == key && n.Spec.Taints[i].Effect == effect {
			return &n.Spec.Taints[i]
		}
	}
	return nil
}

// runningPod creates a Running, Ready pod bound to node.
func (h *harness) runningPod(name, node string, tolerations ...corev1.Toleration) *corev1.Pod {
	p := controllertest.MakePod(name).Obj()
	p.Spec.NodeName = node
	p.Spec.Tolerations = tolerations
	created, err := h.Client.Pods().Create(h.Ctx, p)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.SetPodStatus(created, corev1.PodRunning, true)
}

func (h *harness) pod(name string) *corev1.Pod {
	p, err := h.Client.Pods().Get(h.Ctx, "default", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func podReady(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

// A node whose kubelet stops: Unknown after the grace period, tainted
// unreachable, its pods marked NotReady and evicted as their tolerations
// say; back again, untainted.
func TestUnreachableNodeTimeline(t *testing.T) {
	h := newHarness(t, "node-1", "node-2")
	unreachable := func(secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
	}
	// The DefaultTolerationSeconds admission gives web-default 300 s.
	h.runningPod("web-default", "node-2")
	h.runningPod("web-forever", "node-2", unreachable(nil))
	h.runningPod("web-zero", "node-2", unreachable(ptr[int64](0)))
	h.runningPod("web-ok", "node-1")
	if tol := h.pod("web-default").Spec.Tolerations; len(tol) != 2 || *tol[1].TolerationSeconds != 300 {
		t.Fatalf("web-default tolerations %+v: want the two defaults of 300 s", tol)
	}

	// The kubelet of node-2 stops: no more Lease renewals, no status.
	stopped := h.Clock.Now()
	h.alive["node-2"] = false
	h.advance("node-2 Unknown", func() (bool, string) {
		c := condition(h.node("node-2"), corev1.NodeReady)
		return c.Status == corev1.ConditionUnknown, string(c.Status)
	})
	unknownAt := h.Clock.Now()
	if d := unknownAt.Sub(stopped); d <= nodelifecycle.DefaultNodeMonitorGracePeriod || d > nodelifecycle.DefaultNodeMonitorGracePeriod+nodelifecycle.DefaultNodeMonitorPeriod+2*time.Second {
		t.Errorf("node-2 went Unknown %v after its last heartbeat; want just over the 50 s grace period", d)
	}
	n2 := h.node("node-2")
	for _, ct := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure} {
		c := condition(n2, ct)
		if c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status." {
			t.Errorf("%s = %s %s %q, want Unknown NodeStatusUnknown %q", ct, c.Status, c.Reason, c.Message, "Kubelet stopped posting node status.")
		}
	}
	for _, ct := range []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := condition(n2, ct); c == nil || c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" || c.Message != "Kubelet never posted node status." {
			t.Errorf("%s = %+v, want Unknown NodeStatusNeverUpdated", ct, c)
		}
	}
	if c := condition(h.node("node-1"), corev1.NodeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("node-1, still renewing its Lease, is %s", c.Status)
	}
	h.Eventually("NodeNotReady event", func() (bool, string) {
		return h.HasEvent("default", "NodeNotReady", "Node node-2 status is now: NodeNotReady")
	})
	h.Eventually("pods of node-2 NotReady", func() (bool, string) {
		var states []string
		ok := true
		for _, name := range []string{"web-default", "web-forever"} {
			s := podReady(h.pod(name))
			states = append(states, name+"="+string(s))
			ok = ok && s == corev1.ConditionFalse
		}
		return ok && podReady(h.pod("web-ok")) == corev1.ConditionTrue, strings.Join(states, " ")
	})
	if ok, msg := h.HasEvent("default", "NodeNotReady", "Node is not ready"); !ok {
		t.Error(msg)
	}
	h.advance("unreachable taints", func() (bool, string) {
		got := taints(h.node("node-2"))
		return got == "node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule", got
	})
	if got := taints(h.node("node-1")); got != "" {
		t.Errorf("node-1 taints %q, want none", got)
	}
	tainted := taint(h.node("node-2"), corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute).TimeAdded
	if tainted == nil || tainted.Time.Before(unknownAt) {
		t.Fatalf("NoExecute taint timeAdded %v, want at or after %v", tainted, unknownAt)
	}

	// tolerationSeconds 0: evicted at once.
	h.Eventually("web-zero evicted", func() (bool, string) {
		p := h.pod("web-zero")
		return p.DeletionTimestamp != nil, fmt.Sprint(p.DeletionTimestamp)
	})
	if ok, msg := h.HasEvent("default", "TaintManagerEviction", "Marking for deletion Pod default/web-zero"); !ok {
		t.Error(msg)
	}
	var dt *corev1.PodCondition
	for _, c := range h.pod("web-zero").Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			dt = &c
		}
	}
	if dt == nil || dt.Status != corev1.ConditionTrue || dt.Reason != "DeletionByTaintManager" || dt.Message != "Taint manager: deleting due to NoExecute taint" {
		t.Errorf("DisruptionTarget = %+v", dt)
	}

	// The default 300 s: evicted 5 minutes after the taint, not before.
	h.advance("web-default evicted", func() (bool, string) {
		p := h.pod("web-default")
		return p.DeletionTimestamp != nil, fmt.Sprintf("%v after the taint", h.Clock.Now().Sub(tainted.Time))
	})
	p := h.pod("web-default")
	evictedAt := p.DeletionTimestamp.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
	if d := evictedAt.Sub(tainted.Time); d < 300*time.Second || d > 305*time.Second {
		t.Errorf("web-default deleted %v after the NoExecute taint, want 300 s", d)
	}
	if ok, msg := h.HasEvent("default", "TaintManagerEviction", "Marking for deletion Pod default/web-default"); !ok {
		t.Error(msg)
	}
	// No tolerationSeconds: tolerated forever. node-1's pod is untouched.
	h.Clock.Step(10 * time.Second)
	for _, name := range []string{"web-forever", "web-ok"} {
		if p := h.pod(name); p.DeletionTimestamp != nil {
			t.Errorf("%s was evicted", name)
		}
	}

	// The kubelet comes back: Ready again, taints gone.
	h.alive["node-2"] = true
	h.renew("node-2")
	h.postStatus("node-2", corev1.ConditionTrue)
	h.advance("node-2 untainted", func() (bool, string) {
		n := h.node("node-2")
		return taints(n) == "" && condition(n, corev1.NodeReady).Status == corev1.ConditionTrue, taints(n)
	})
}

// A kubelet that reports Ready=False gets the not-ready taints, swapped for
// unreachable ones when it then goes silent; cordoning adds the
// unschedulable taint; the beta OS and arch labels follow the stable ones.
func TestNotReadyCordonAndLabels(t *testing.T) {
	h := newHarness(t, "node-1", "node-2")
	h.postStatus("node-2", corev1.ConditionFalse)
	h.advance("not-ready taints", func() (bool, string) {
		got := taints(h.node("node-2"))
		return got == "node.kubernetes.io/not-ready:NoExecute,node.kubernetes.io/not-ready:NoSchedule", got
	})
	h.alive["node-2"] = false
	h.advance("unreachable taints", func() (bool, string) {
		got := taints(h.node("node-2"))
		return got == "node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule", got
	})

	controllertest.Update(h.Env, func() (*corev1.Node, error) { return h.Client.Nodes().Get(h.Ctx, "", "node-1") },
		func(n *corev1.Node) (*corev1.Node, error) { return h.Client.Nodes().Update(h.Ctx, n) },
		func(n *corev1.Node) {
			n.Spec.Unschedulable = true
			n.Labels = map[string]string{corev1.LabelOSStable: "wasip1", corev1.LabelArchStable: "wasm32"}
		})
	h.Eventually("cordoned node-1 tainted, labelled", func() (bool, string) {
		n := h.node("node-1")
		return taints(n) == "node.kubernetes.io/unschedulable:NoSchedule" &&
				n.Labels[nodelifecycle.LabelOSBeta] == "wasip1" && n.Labels[nodelifecycle.LabelArchBeta] == "wasm32",
			fmt.Sprintf("taints %q labels %v", taints(n), n.Labels)
	})
	controllertest.Update(h.Env, func() (*corev1.Node, error) { return h.Client.Nodes().Get(h.Ctx, "", "node-1") },
		func(n *corev1.Node) (*corev1.Node, error) { return h.Client.Nodes().Update(h.Ctx, n) },
		func(n *corev1.Node) { n.Spec.Unschedulable = false })
	h.Eventually("uncordoned", func() (bool, string) {
		got := taints(h.node("node-1"))
		return got == "", got
	})
}

// When every node goes silent, the controller assumes it is the one cut
// off: nodes turn Unknown, but no NoExecute taint is set and no pod is
// evicted.
func TestFullDisruptionStopsEvictions(t *testing.T) {
	h := newHarness(t, "node-1", "node-2")
	h.runningPod("web", "node-1", corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](0)})
	h.alive["node-1"], h.alive["node-2"] = false, false
	h.advance("both nodes Unknown", func() (bool, string) {
		a, b := condition(h.node("node-1"), corev1.NodeReady), condition(h.node("node-2"), corev1.NodeReady)
		return a.Status == corev1.ConditionUnknown && b.Status == corev1.ConditionUnknown, string(a.Status) + " " + string(b.Status)
	})
	h.advance("NoSchedule taints", func() (bool, string) {
		got := taints(h.node("node-1")) + " " + taints(h.node("node-2"))
		return got == "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoSchedule", got
	})
	h.Clock.Step(time.Minute)
	for _, n := range []string{"node-1", "node-2"} {
		if tt := taint(h.node(n), corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute); tt != nil {
			t.Errorf("%s tainted NoExecute during a full disruption", n)
		}
	}
	if p := h.pod("web"); p.DeletionTimestamp != nil {
		t.Error("a pod was evicted during a full disruption")
	}
	if ok, msg := h.HasEvent("default", "TaintManagerEviction", "Marking for deletion Pod default/web"); ok {
		t.Error("eviction event during a full disruption")
	} else if !strings.Contains(msg, "no TaintManagerEviction") {
		t.Error(msg)
	}
}

func TestComputeZoneState(t *testing.T) {
	nc, err := nodelifecycle.New(nodelifecycle.Config{Client: controllertest.NewEnv(t).Client})
	if err != nil {
		t.Fatal(err)
	}
	cond := func(s corev1.ConditionStatus) *corev1.NodeCondition {
		return &corev1.NodeCondition{Type: corev1.NodeReady, Status: s}
	}
	T, F, U := cond(corev1.ConditionTrue), cond(corev1.ConditionFalse), cond(corev1.ConditionUnknown)
	for _, tc := range []struct {
		name      string
		conds     []*corev1.NodeCondition
		unhealthy int
		want      nodelifecycle.ZoneState
	}{
		{"all ready", []*corev1.NodeCondition{T, T, T}, 0, nodelifecycle.StateNormal},
		{"one of three down", []*corev1.NodeCondition{T, T, U}, 1, nodelifecycle.StateNormal},
		{"two of three down: fewer than 3", []*corev1.NodeCondition{T, U, F}, 2, nodelifecycle.StateNormal},
		{"three of five down: 60% >= 55%", []*corev1.NodeCondition{T, T, U, U, F}, 3, nodelifecycle.StatePartialDisruption},
		{"three of six down: 50% < 55%", []*corev1.NodeCondition{T, T, T, U, U, F}, 3, nodelifecycle.StateNormal},
		{"none ready", []*corev1.NodeCondition{U, nil}, 2, nodelifecycle.StateFullDisruption},
	} {
		n, s := nc.ComputeZoneState(tc.conds)
		if n != tc.unhealthy || s != tc.want {
			t.Errorf("%s: ComputeZoneState = %d %s, want %d %s", tc.name, n, s, tc.unhealthy, tc.want)
		}
	}
}

func TestGetZoneKey(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, ""},
		{map[string]string{corev1.LabelTopologyRegion: "eu", corev1.LabelTopologyZone: "eu-1a"}, "eu:\x00:eu-1a"},
		{map[string]string{corev1.LabelFailureDomainBetaZone: "z"}, ":\x00:z"},
	} {
		if got := nodelifecycle.GetZoneKey(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}); got != tc.want {
			t.Errorf("GetZoneKey(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	e := controllertest.NewEnv(t)
	for _, cfg := range []nodelifecycle.Config{
		{},
		{Client: e.Client, Workers: -1},
		{Client: e.Client, NodeMonitorPeriod: time.Minute, NodeMonitorGracePeriod: time.Second},
	} {
		if _, err := nodelifecycle.New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}
