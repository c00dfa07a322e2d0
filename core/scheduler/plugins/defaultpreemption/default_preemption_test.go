package defaultpreemption

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/tainttoleration"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

type res = map[v1.ResourceName]string

var capacity = res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}

func node(name string) *v1.Node { return st.MakeNode().Name(name).Capacity(capacity).Obj() }

func pod(name, node string, prio int32, cpu string) *v1.Pod {
	return st.MakePod().Name(name).Node(node).Priority(prio).Req(res{v1.ResourceCPU: cpu}).Obj()
}

// setup builds a framework with Fit and TaintToleration as filters and the
// plugin, runs PreFilter and the filters on every node, and returns what
// PostFilter gets.
func setup(t *testing.T, pods []*v1.Pod, nodes []*v1.Node, preemptor *v1.Pod, pdbs []*policyv1.PodDisruptionBudget) (*DefaultPreemption, *framework.CycleState, *framework.NodeToStatus) {
	t.Helper()
	snap := plugintest.NewSnapshot(pods, nodes)
	var pl *DefaultPreemption
	fwk := plugintest.NewFramework(t, plugintest.Config{
		Snapshot: snap,
		Listers:  framework.Listers{PodDisruptionBudgets: plugintest.MapLister[*policyv1.PodDisruptionBudget](pdbs)},
		Registry: runtime.Registry{
			noderesources.Name:   noderesources.New,
			tainttoleration.Name: tainttoleration.New,
			Name: func(ctx context.Context, h framework.Handle) (framework.Plugin, error) {
				p, err := New(ctx, h)
				pl, _ = p.(*DefaultPreemption)
				return p, err
			},
		},
		Plugins: []runtime.PluginConfig{{Name: tainttoleration.Name}, {Name: noderesources.Name}, {Name: Name}},
	})
	pl.offset = func(int) int { return 0 }
	state := framework.NewCycleState()
	if _, s, _ := fwk.RunPreFilterPlugins(context.Background(), state, preemptor); !s.IsSuccess() {
		t.Fatal(s)
	}
	m := framework.NewDefaultNodeToStatus()
	all, _ := snap.List()
	for _, ni := range all {
		if s := fwk.RunFilterPluginsWithNominatedPods(context.Background(), state, preemptor, ni); !s.IsSuccess() {
			m.Set(ni.Node().Name, s)
		}
	}
	return pl, state, m
}

func TestSelectVictimsOnNode(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name        string
		pods        []*v1.Pod
		preemptor   *v1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		wantVictims []string
		wantPDB     int
		wantStatus  *framework.Status
	}{
		{
			// 3 of 4 cpus used; the pod needs 2. All lower pods out: 4 free.
			// Put back the most important first: p3 (3 free), p2 (2 free),
			// p1 would leave 1: p1 is the victim.
			name:        "the least important pods go, the rest are reprieved",
			pods:        []*v1.Pod{pod("p1", "n1", 1, "1"), pod("p2", "n1", 2, "1"), pod("p3", "n1", 3, "1")},
			preemptor:   st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "2"}).Obj(),
			wantVictims: []string{"p1"},
		},
		{
			// The pod needs 3 of 4 cpus. Reprieving goes by importance, not
			// by size: p3 (2 cpus) does not fit back, p2 does, p1 then does
			// not. Victims p3 and p1, most important first, as upstream.
			name:        "reprieve by importance, not by size",
			pods:        []*v1.Pod{pod("p1", "n1", 1, "1"), pod("p2", "n1", 2, "1"), pod("p3", "n1", 3, "2")},
			preemptor:   st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "3"}).Obj(),
			wantVictims: []string{"p3", "p1"},
		},
		{
			name:       "pods of equal or higher priority are never victims",
			pods:       []*v1.Pod{pod("same", "n1", 10, "2"), pod("higher", "n1", 20, "2")},
			preemptor:  st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "1"}).Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNoVictims),
		},
		{
			name:       "removing every lower pod is not enough",
			pods:       []*v1.Pod{pod("low", "n1", 1, "1"), pod("higher", "n1", 20, "3")},
			preemptor:  st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "2"}).Obj(),
			wantStatus: framework.NewStatus(framework.Unschedulable, noderesources.ReasonInsufficientCPU).WithPlugin(noderesources.Name),
		},
		{
			// Same priority: the one that started later is less important.
			name: "among equals, the pod that started last goes",
			pods: []*v1.Pod{
				st.MakePod().Name("old").Node("n1").Priority(1).Req(res{v1.ResourceCPU: "2"}).StartTime(t0).Obj(),
				st.MakePod().Name("new").Node("n1").Priority(1).Req(res{v1.ResourceCPU: "2"}).StartTime(metav1.NewTime(t0.Add(time.Hour))).Obj(),
			},
			preemptor:   st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "2"}).Obj(),
			wantVictims: []string{"new"},
		},
		{
			// A budget allowing no disruption protects "guarded": it is
			// reprieved first, so the unguarded pod goes even though it
			// matters more.
			name: "pods whose PodDisruptionBudget would be violated are reprieved first",
			pods: []*v1.Pod{
				st.MakePod().Name("guarded").Node("n1").Priority(1).Label("app", "db").Req(res{v1.ResourceCPU: "2"}).Obj(),
				st.MakePod().Name("free").Node("n1").Priority(2).Req(res{v1.ResourceCPU: "2"}).Obj(),
			},
			preemptor: st.MakePod().Name("high").Priority(10).Req(res{v1.ResourceCPU: "2"}).Obj(),
			pdbs: []*policyv1.PodDisruptionBudget{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
				Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, MinAvailable: &intstr.IntOrString{IntVal: 1}},
				Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
			}},
			wantVictims: []string{"free"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, _ := setup(t, tt.pods, []*v1.Node{node("n1")}, tt.preemptor, tt.pdbs)
			ni, _ := pl.fh.SnapshotSharedLister().NodeInfos().Get("n1")
			victims, pdb, s := pl.selectVictimsOnNode(context.Background(), state.Clone(), tt.preemptor, ni.Snapshot(), tt.pdbs)
			if !s.Equal(tt.wantStatus) {
				t.Fatalf("status %v (%s), want %v", s, s.Plugin(), tt.wantStatus)
			}
			var names []string
			for _, v := range victims {
				names = append(names, v.Name)
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.wantVictims) || pdb != tt.wantPDB {
				t.Errorf("victims %v (%d PDB violations), want %v (%d)", names, pdb, tt.wantVictims, tt.wantPDB)
			}
		})
	}
}

func TestPostFilterMessages(t *testing.T) {
	tainted := st.MakeNode().Name("node-1").Capacity(capacity).Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj()
	full := func(name string) *v1.Node { return node(name) }
	never := v1.PreemptNever
	tests := []struct {
		name      string
		pods      []*v1.Pod
		nodes     []*v1.Node
		preemptor *v1.Pod
		want      string
		wantNil   bool
	}{
		{
			// The acceptance example: one tainted node, two full of pods as
			// important as the new one. Upstream's message.
			name:      "a tainted node and two full ones",
			pods:      []*v1.Pod{pod("a", "node-2", 0, "4"), pod("b", "node-3", 0, "4")},
			nodes:     []*v1.Node{tainted, full("node-2"), full("node-3")},
			preemptor: st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj(),
			want:      "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
		},
		{
			name:      "every node full of equally important pods",
			pods:      []*v1.Pod{pod("a", "node-1", 0, "4"), pod("b", "node-2", 0, "4"), pod("c", "node-3", 0, "4")},
			nodes:     []*v1.Node{full("node-1"), full("node-2"), full("node-3")},
			preemptor: st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj(),
			want:      "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		},
		{
			name:      "preemptionPolicy Never",
			pods:      []*v1.Pod{pod("a", "node-1", 0, "4")},
			nodes:     []*v1.Node{full("node-1")},
			preemptor: st.MakePod().Name("p").Priority(100).PreemptionPolicy(never).Req(res{v1.ResourceCPU: "1"}).Obj(),
			want:      "preemption: not eligible due to preemptionPolicy=Never.",
			wantNil:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, m := setup(t, tt.pods, tt.nodes, tt.preemptor, nil)
			r, s := pl.PostFilter(context.Background(), state, tt.preemptor, m)
			if s.Code() != framework.Unschedulable || s.Message() != tt.want {
				t.Errorf("PostFilter = %v, want Unschedulable %q", s, tt.want)
			}
			if tt.wantNil != (r == nil) || (r != nil && r.NominatedNodeName != "") {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestPickOneNodeForPreemption(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := func(name string, prio int32, started time.Duration) *v1.Pod {
		return st.MakePod().Name(name).Priority(prio).StartTime(metav1.NewTime(t0.Add(started))).Obj()
	}
	tests := []struct {
		name       string
		candidates []candidate
		want       string
	}{
		{
			name: "fewest PDB violations first",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", 1, 0)}, numPDBViolations: 1},
				{node: "b", victims: []*v1.Pod{p("y", 5, 0), p("z", 5, 0)}},
			},
			want: "b",
		},
		{
			name: "then the lowest highest priority",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", 5, 0)}},
				{node: "b", victims: []*v1.Pod{p("y", 3, 0), p("z", 3, 0)}},
			},
			want: "b",
		},
		{
			name: "then the lowest sum of priorities",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", 3, 0), p("w", 2, 0)}},
				{node: "b", victims: []*v1.Pod{p("y", 3, 0), p("z", 1, 0)}},
			},
			want: "b",
		},
		{
			name: "then the fewest victims",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", -5, 0), p("w", -5, 0)}},
				{node: "b", victims: []*v1.Pod{p("y", -5, 0)}},
			},
			want: "b",
		},
		{
			name: "then the victims that started last",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", 1, 0)}},
				{node: "b", victims: []*v1.Pod{p("y", 1, time.Hour)}},
			},
			want: "b",
		},
		{
			name: "then the first",
			candidates: []candidate{
				{node: "a", victims: []*v1.Pod{p("x", 1, 0)}},
				{node: "b", victims: []*v1.Pod{p("y", 1, 0)}},
			},
			want: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickOneNodeForPreemption(tt.candidates); got.node != tt.want {
				t.Errorf("picked %s, want %s", got.node, tt.want)
			}
		})
	}
}

func TestNumCandidates(t *testing.T) {
	pl, _ := NewWithArgs(context.Background(), nil, DefaultArgs())
	for nodes, want := range map[int]int{3: 3, 100: 100, 500: 100, 5000: 500} {
		if got := pl.numCandidates(nodes); got != want {
			t.Errorf("numCandidates(%d) = %d, want %d", nodes, got, want)
		}
	}
	if _, err := NewWithArgs(context.Background(), nil, Args{}); err == nil {
		t.Error("both minimums zero accepted")
	}
}
