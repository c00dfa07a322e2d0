package scheduler

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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
