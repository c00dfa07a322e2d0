package scheduler

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

// where lists a snapshot as "queue:name" in its order.
func where(q *SchedulingQueue) string {
	pods, _ := q.Snapshot()
	var out []string
	for _, p := range pods {
		out = append(out, p.Queue+":"+p.Pod.Name)
	}
	return strings.Join(out, " ")
}

// A pod's way through the queue as Snapshot shows it, and a change count
// (with its channel closed) at every move.
func TestQueueSnapshot(t *testing.T) {
	q, clk := newTestQueue()
	n0, changed := q.Changed()
	q.Add(st.MakePod().Name("a").Obj())
	clk.Step(time.Second)
	q.Add(st.MakePod().Name("b").Obj())
	select {
	case <-changed:
	default:
		t.Fatal("Add did not close the Changed channel")
	}
	steps := []struct {
		what string
		do   func()
		want string
	}{
		{"two added", func() {}, "activeQ:a activeQ:b"},
		{"a popped", func() { pop(t, q) }, "inFlightPods:a activeQ:b"},
		{"a unschedulable", func() {
			p := q.inFlight["default/a"]
			p.UnschedulablePlugins = sets.New(noderesources.Name)
			if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err != nil {
				t.Fatal(err)
			}
		}, "activeQ:b unschedulablePods:a"},
		{"b popped, fails with an error", func() {
			p := pop(t, q)
			if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err != nil {
				t.Fatal(err)
			}
		}, "backoffQ:b unschedulablePods:a"},
		{"b deleted", func() { q.Delete(st.MakePod().Name("b").Obj()) }, "unschedulablePods:a"},
		{"a node added", func() { q.MoveAllToActiveOrBackoffQueue(framework.NodeAdd) }, "backoffQ:a"},
	}
	last := n0
	for _, s := range steps {
		s.do()
		if got := where(q); got != s.want {
			t.Errorf("%s: %s, want %s", s.what, got, s.want)
		}
		n, _ := q.Changed()
		if n <= last && s.what != "two added" {
			t.Errorf("%s: change count %d, not past %d", s.what, n, last)
		}
		last = n
	}
	pods, _ := q.Snapshot()
	if len(pods) != 1 || pods[0].Attempts != 1 || !pods[0].BackoffExpiration.Equal(pods[0].Timestamp.Add(time.Second)) {
		t.Errorf("a after one attempt: %+v, want attempts 1 and a back-off of 1s", pods)
	}
	clk.Step(2 * time.Second)
	q.flushBackoffQCompleted()
	if got := where(q); got != "activeQ:a" {
		t.Errorf("after the back-off: %s, want activeQ:a", got)
	}
}
