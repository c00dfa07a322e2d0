package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestDecisionLogKeepsTheLastAttemptsOfTheLastPods(t *testing.T) {
	l := newDecisionLog(2, 2)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	for i := 1; i <= 3; i++ {
		l.add(&Decision{Pod: key("a"), Attempt: i})
	}
	if got := l.get(key("a")); len(got) != 2 || got[0].Attempt != 2 || got[1].Attempt != 3 {
		t.Errorf("a: %+v, want attempts 2 and 3", got)
	}
	l.add(&Decision{Pod: key("b"), Attempt: 1})
	l.add(&Decision{Pod: key("c"), Attempt: 1})
	if len(l.get(key("a"))) != 0 || len(l.get(key("b"))) != 1 || len(l.get(key("c"))) != 1 {
		t.Errorf("the oldest pod should have been evicted: %v", l.byPod)
	}
	l.forget(st.MakePod().Name("b").Obj())
	if len(l.get(key("b"))) != 0 || len(l.order) != 1 {
		t.Errorf("forget: %v %v", l.byPod, l.order)
	}
	if newDecisionLog(-1, 10) != nil {
		t.Error("a negative DecisionsPerPod should turn recording off")
	}
	var off *decisionLog
	off.add(&Decision{})
	if off.get(key("a")) != nil {
		t.Error("a nil log returned decisions")
	}
}

// TestFindNodesRotatesAndStopsEarly: on 300 nodes the adaptive
// percentageOfNodesToScore is 48% (144 nodes); each attempt starts where
// the previous one stopped.
func TestFindNodesRotatesAndStopsEarly(t *testing.T) {
	e := newEnv(t, Config{})
	s, err := New(Config{Client: e.c, Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		s.cache.AddNode(st.MakeNode().Name(fmt.Sprintf("n%03d", i)).Capacity(nodeCapacity).Obj())
	}
	s.cache.UpdateSnapshot(s.snapshot)
	pod := st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj()
	for attempt, wantFirst := range []string{"n000", "n144", "n288"} {
		rec := &Decision{}
		feasible, _, err := s.findNodesThatFitPod(context.Background(), framework.NewCycleState(), pod, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(feasible) != 144 || rec.EvaluatedNodes != 144 || rec.FeasibleNodes != 144 || feasible[0].Node().Name != wantFirst {
			t.Errorf("attempt %d: %d feasible, %d evaluated, first %s; want 144, 144, %s", attempt, len(feasible), rec.EvaluatedNodes, feasible[0].Node().Name, wantFirst)
		}
		if len(rec.Feasible) != 10 || rec.Feasible[0].Name != wantFirst {
			t.Errorf("attempt %d: the record keeps %d feasible nodes starting at %v, want the first 10", attempt, len(rec.Feasible), rec.Feasible)
		}
	}
}

// TestDecisionRecordIsBounded: on a big cluster with many distinct
// rejections, the record keeps at most MaxRejectedGroups groups of at most
// MaxNodesPerGroup names and the MaxFeasibleNodes best nodes, and counts the
// rest, so its JSON stays a few kilobytes however many nodes there are.
func TestDecisionRecordIsBounded(t *testing.T) {
	e := newEnv(t, Config{})
	s, err := New(Config{Client: e.c, Clock: e.clk, PercentageOfNodesToScore: 100})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		node := st.MakeNode().Name(fmt.Sprintf("n%04d", i)).Capacity(nodeCapacity)
		switch i % 3 {
		case 0: // a taint of its own: a distinct reason per node
			node.Taint("team", fmt.Sprint(i), v1.TaintEffectNoSchedule)
		case 1: // full
			p := st.MakePod().Name(fmt.Sprintf("fill-%d", i)).Node(fmt.Sprintf("n%04d", i)).Req(res{v1.ResourceCPU: "4"}).Obj()
			_ = s.cache.AddPod(p)
		}
		s.cache.AddNode(node.Obj())
	}
	s.cache.UpdateSnapshot(s.snapshot)
	p := &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj()), Attempts: 1}
	rec := s.decisions.start(p, t0, s.snapshot.NumNodes(), s.fwk)
	result, err := s.schedulePod(context.Background(), framework.NewCycleState(), p.Pod, rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.SelectedNode, rec.Result = result.SuggestedHost, "Scheduled"

	if rec.EvaluatedNodes != n || rec.FeasibleNodes != n/3 {
		t.Fatalf("evaluated %d, feasible %d", rec.EvaluatedNodes, rec.FeasibleNodes)
	}
	counted := rec.RejectedOmitted
	for _, g := range rec.Rejected {
		counted += g.Count
		if len(g.Nodes) > v1alpha1.MaxNodesPerGroup || len(g.Nodes) > g.Count {
			t.Errorf("group %v lists %d names for %d nodes", g.Status, len(g.Nodes), g.Count)
		}
	}
	if len(rec.Rejected) != v1alpha1.MaxRejectedGroups || counted != n-n/3 {
		t.Errorf("%d groups counting %d nodes, want %d groups counting %d", len(rec.Rejected), counted, v1alpha1.MaxRejectedGroups, n-n/3)
	}
	if len(rec.Feasible) != v1alpha1.MaxFeasibleNodes || rec.Feasible[0].Name != result.SuggestedHost && rec.Feasible[0].TotalScore != rec.Feasible[1].TotalScore {
		t.Errorf("feasible %d, first %s, selected %s", len(rec.Feasible), rec.Feasible[0].Name, result.SuggestedHost)
	}
	a := rec.toAPI()
	if a.FeasibleOmitted != n/3-v1alpha1.MaxFeasibleNodes {
		t.Errorf("feasibleOmitted %d", a.FeasibleOmitted)
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	// 16 groups × 20 names, 10 nodes × 7 scores: well under 32 KiB.
	if len(data) > 32<<10 {
		t.Errorf("one attempt is %d bytes of JSON", len(data))
	}
	t.Logf("one attempt on %d nodes: %d bytes of JSON", n, len(data))
}
