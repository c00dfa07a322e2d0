package scheduler

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/plugins"
	"github.com/kubetab/kubetab/core/scheduler/plugins/interpodaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeports"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/podtopologyspread"
	"github.com/kubetab/kubetab/core/scheduler/plugins/tainttoleration"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

// TestQueueDefaultProfileEvents checks, with the events the default
// profile's plugins register, which cluster events move a pod that one
// plugin rejected out of unschedulablePods.
func TestQueueDefaultProfileEvents(t *testing.T) {
	fwk, err := runtime.New(context.Background(), runtime.Config{
		ProfileName: v1.DefaultSchedulerName,
		Registry:    plugins.NewInTreeRegistry(),
		Plugins:     plugins.DefaultPlugins(),
		Snapshot:    NewEmptySnapshot(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rejectedBy string
		wakes      []framework.ClusterEvent
		sleeps     []framework.ClusterEvent
	}{
		{
			rejectedBy: tainttoleration.Name,
			wakes:      []framework.ClusterEvent{framework.NodeTaintChange, framework.NodeAdd},
			sleeps:     []framework.ClusterEvent{framework.AssignedPodDelete, framework.NodeAllocatableChange, framework.AssignedPodAdd},
		},
		{
			rejectedBy: nodeaffinity.Name,
			wakes:      []framework.ClusterEvent{framework.NodeLabelChange, framework.NodeAdd},
			sleeps:     []framework.ClusterEvent{framework.AssignedPodDelete, framework.NodeAllocatableChange},
		},
		{
			rejectedBy: noderesources.Name,
			wakes:      []framework.ClusterEvent{framework.AssignedPodDelete, framework.NodeAllocatableChange, framework.NodeAdd, framework.AssignedPodScaleDown},
			sleeps:     []framework.ClusterEvent{framework.NodeTaintChange, framework.AssignedPodAdd},
		},
		{
			rejectedBy: nodeports.Name,
			wakes:      []framework.ClusterEvent{framework.AssignedPodDelete, framework.NodeAdd},
			sleeps:     []framework.ClusterEvent{framework.AssignedPodAdd, framework.NodeAllocatableChange},
		},
		{
			rejectedBy: podtopologyspread.Name,
			wakes:      []framework.ClusterEvent{framework.AssignedPodAdd, framework.AssignedPodDelete, framework.AssignedPodLabelChange, framework.NodeLabelChange, framework.NodeDelete},
			sleeps:     []framework.ClusterEvent{framework.NodeAllocatableChange},
		},
		{
			rejectedBy: interpodaffinity.Name,
			wakes:      []framework.ClusterEvent{framework.AssignedPodAdd, framework.AssignedPodDelete, framework.AssignedPodLabelChange, framework.NodeLabelChange},
			sleeps:     []framework.ClusterEvent{framework.NodeAllocatableChange, framework.AssignedPodScaleDown},
		},
	}
	for _, tt := range tests {
		t.Run(tt.rejectedBy, func(t *testing.T) {
			for _, ev := range append(tt.wakes, tt.sleeps...) {
				clk := testingclock.NewFakeClock(t0)
				q := NewSchedulingQueue(QueueConfig{Clock: clk, Less: fwk.QueueSortFunc(), EventsToRegister: fwk.EventsToRegister()})
				q.Add(st.MakePod().Name("p").Obj())
				p := pop(t, q)
				p.UnschedulablePlugins = sets.New(tt.rejectedBy)
				if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err != nil {
					t.Fatal(err)
				}
				clk.Step(20 * time.Second) // past any back-off
				q.MoveAllToActiveOrBackoffQueue(ev)
				_, got := q.PendingPods()
				woke := got == "activeQ:1; backoffQ:0; unschedulablePods:0"
				want := false
				for _, w := range tt.wakes {
					want = want || w.Label == ev.Label
				}
				if woke != want {
					t.Errorf("%s: %s (woken %v, want %v)", ev.Label, got, woke, want)
				}
			}
		})
	}
}

func TestNominator(t *testing.T) {
	q, _ := newTestQueue()
	high := st.MakePod().Name("high").Priority(100).NominatedNodeName("n1").Obj()
	q.Add(high)
	if got := q.NominatedPodsForNode("n1"); len(got) != 1 || got[0].Pod.Name != "high" {
		t.Fatalf("a pod added with status.nominatedNodeName is nominated: %v", got)
	}
	// The scheduler nominates after preemption, before the status update
	// comes back: an update without the field keeps the nomination.
	other := st.MakePod().Name("other").Obj()
	q.Add(other)
	q.AddNominatedPod(framework.NewPodInfo(other), "n2")
	upd := other.DeepCopy()
	upd.Labels = map[string]string{"x": "y"}
	q.Update(other, upd)
	if got := q.NominatedPodsForNode("n2"); len(got) != 1 || got[0].Pod.Labels["x"] != "y" {
		t.Errorf("the nomination is kept and follows the update: %v", got)
	}
	// Clearing by the scheduler ("" means no node).
	q.AddNominatedPod(framework.NewPodInfo(upd), "")
	if got := q.NominatedPodsForNode("n2"); len(got) != 0 {
		t.Errorf("cleared nomination still there: %v", got)
	}
	q.DeleteNominatedPodIfExists(high)
	if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
		t.Errorf("deleted nomination still there: %v", got)
	}
	q.AddNominatedPod(framework.NewPodInfo(high), "n1")
	q.Delete(high)
	if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
		t.Errorf("a pod deleted from the queue keeps its nomination: %v", got)
	}
}
