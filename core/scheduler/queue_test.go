package scheduler

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeunschedulable"
	"github.com/kubetab/kubetab/core/scheduler/plugins/queuesort"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func newTestQueue() (*SchedulingQueue, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(t0)
	fit, _ := noderesources.NewFit(noderesources.DefaultFitArgs())
	q := NewSchedulingQueue(QueueConfig{
		Clock: clk,
		Less:  (&queuesort.PrioritySort{}).Less,
		EventsToRegister: map[string][]framework.ClusterEvent{
			noderesources.Name:     fit.EventsToRegister(),
			nodeunschedulable.Name: (&nodeunschedulable.NodeUnschedulable{}).EventsToRegister(),
		},
	})
	return q, clk
}

// pop takes the next pod, failing the test if none comes within a second.
func pop(t *testing.T, q *SchedulingQueue) *framework.QueuedPodInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p, ok := q.Pop(ctx)
	if !ok {
		_, summary := q.PendingPods()
		t.Fatalf("no pod to pop; %s", summary)
	}
	return p
}

func wantSummary(t *testing.T, q *SchedulingQueue, want string) {
	t.Helper()
	if _, got := q.PendingPods(); got != want {
		t.Errorf("queue: %s, want %s", got, want)
	}
}

func TestQueuePopOrder(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("low-1").Priority(0).Obj())
	clk.Step(time.Second)
	q.Add(st.MakePod().Name("high").Priority(100).Obj())
	clk.Step(time.Second)
	q.Add(st.MakePod().Name("low-2").Priority(0).Obj())
	for _, want := range []string{"high", "low-1", "low-2"} {
		if got := pop(t, q).Pod.Name; got != want {
			t.Errorf("popped %s, want %s", got, want)
		}
	}
	if q.SchedulingCycle() != 3 {
		t.Errorf("scheduling cycle %d, want 3", q.SchedulingCycle())
	}
}

func TestQueueBackoffDuration(t *testing.T) {
	q, _ := newTestQueue()
	want := []time.Duration{1, 2, 4, 8, 10, 10, 10}
	for i, w := range want {
		p := &framework.QueuedPodInfo{Attempts: i + 1}
		if got := q.backoffDuration(p); got != w*time.Second {
			t.Errorf("attempt %d: back-off %v, want %v", i+1, got, w*time.Second)
		}
	}
}

// unschedulable pops the pod and puts it back as rejected by plugins.
func unschedulable(t *testing.T, q *SchedulingQueue, plugins ...string) *framework.QueuedPodInfo {
	t.Helper()
	p := pop(t, q)
	p.UnschedulablePlugins = sets.New(plugins...)
	if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestQueueUnschedulableWaitsForAnEventItsPluginsRegistered(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	unschedulable(t, q, noderesources.Name)
	wantSummary(t, q, "activeQ:0; backoffQ:0; unschedulablePods:1")

	// NodeResourcesFit did not register taint changes.
	q.MoveAllToActiveOrBackoffQueue(framework.NodeTaintChange)
	wantSummary(t, q, "activeQ:0; backoffQ:0; unschedulablePods:1")

	// A new node may have room; the pod is still backing off (1 s).
	q.MoveAllToActiveOrBackoffQueue(framework.NodeAdd)
	wantSummary(t, q, "activeQ:0; backoffQ:1; unschedulablePods:0")

	// The back-off timer moves it to activeQ.
	clk.Step(time.Second)
	if got := pop(t, q); got.Pod.Name != "p" || got.Attempts != 2 {
		t.Errorf("popped %s (attempt %d)", got.Pod.Name, got.Attempts)
	}
}

func TestQueueMoveAfterBackoffGoesStraightToActive(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	unschedulable(t, q, nodeunschedulable.Name)
	clk.Step(2 * time.Second)
	q.MoveAllToActiveOrBackoffQueue(framework.NodeSpecUnschedulableChange)
	wantSummary(t, q, "activeQ:1; backoffQ:0; unschedulablePods:0")
}

func TestQueueEventDuringAttemptSendsPodToBackoff(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	p := pop(t, q)
	cycle := q.SchedulingCycle()
	// A node arrives while the pod is being scheduled: the attempt may have
	// missed it, so the pod must not wait in unschedulablePods for another.
	q.MoveAllToActiveOrBackoffQueue(framework.NodeAdd)
	p.UnschedulablePlugins = sets.New(noderesources.Name)
	if err := q.AddUnschedulableIfNotPresent(p, cycle); err != nil {
		t.Fatal(err)
	}
	wantSummary(t, q, "activeQ:0; backoffQ:1; unschedulablePods:0")
}

func TestQueueErrorSendsPodToBackoff(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	unschedulable(t, q) // no plugin rejected it: an error
	wantSummary(t, q, "activeQ:0; backoffQ:1; unschedulablePods:0")
	clk.Step(time.Second)
	unschedulable(t, q)   // pops the second attempt and fails it again
	clk.Step(time.Second) // second back-off: 2 s
	wantSummary(t, q, "activeQ:0; backoffQ:1; unschedulablePods:0")
	clk.Step(time.Second)
	pop(t, q)
}

func TestQueueAddUnschedulableTwice(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	p := unschedulable(t, q, noderesources.Name)
	if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err == nil {
		t.Error("adding a queued pod again succeeded")
	}
}

func TestQueueUpdate(t *testing.T) {
	q, clk := newTestQueue()
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	unschedulable(t, q, noderesources.Name)
	clk.Step(time.Minute)

	// A status-only update (the scheduler's own PodScheduled condition)
	// does not retry the pod.
	withStatus := pod.DeepCopy()
	withStatus.ResourceVersion = "2"
	withStatus.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
	q.Update(pod, withStatus)
	wantSummary(t, q, "activeQ:0; backoffQ:0; unschedulablePods:1")

	// A spec or label change does.
	relabeled := withStatus.DeepCopy()
	relabeled.Labels = map[string]string{"tier": "web"}
	q.Update(withStatus, relabeled)
	wantSummary(t, q, "activeQ:1; backoffQ:0; unschedulablePods:0")
	if got := pop(t, q); got.Pod.Labels["tier"] != "web" {
		t.Errorf("popped the old version: %v", got.Pod.Labels)
	}

	// An update of a pod found nowhere (being scheduled) queues it.
	q.Update(relabeled, relabeled)
	wantSummary(t, q, "activeQ:1; backoffQ:0; unschedulablePods:0")
}

func TestQueueDelete(t *testing.T) {
	q, _ := newTestQueue()
	a, b, c := st.MakePod().Name("a").Obj(), st.MakePod().Name("b").Obj(), st.MakePod().Name("c").Obj()
	q.Add(a)
	unschedulable(t, q, noderesources.Name)
	q.Add(b)
	unschedulable(t, q) // to backoffQ
	q.Add(c)
	wantSummary(t, q, "activeQ:1; backoffQ:1; unschedulablePods:1")
	for _, p := range []*v1.Pod{a, b, c} {
		q.Delete(p)
	}
	wantSummary(t, q, "activeQ:0; backoffQ:0; unschedulablePods:0")
}

func TestQueueFlushesLeftoverUnschedulablePods(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod().Name("p").Obj())
	unschedulable(t, q, noderesources.Name)
	clk.Step(4 * time.Minute)
	q.flushUnschedulablePodsLeftover()
	wantSummary(t, q, "activeQ:0; backoffQ:0; unschedulablePods:1")
	clk.Step(2 * time.Minute)
	q.flushUnschedulablePodsLeftover()
	wantSummary(t, q, "activeQ:1; backoffQ:0; unschedulablePods:0")
}

func TestQueueRunFlushesEvery30s(t *testing.T) {
	q, clk := newTestQueue()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()
	q.Add(st.MakePod().Name("p").Obj())
	unschedulable(t, q, noderesources.Name)
	// Step in 30 s ticks, waiting for each tick's timer to exist.
	for i := 0; i < 11; i++ {
		waitFor(t, func() bool { return clk.HasWaiters() })
		clk.Step(30 * time.Second)
	}
	pop(t, q)
	cancel()
	<-done
	if _, ok := q.Pop(context.Background()); ok {
		t.Error("Pop after Run ended returned a pod")
	}
}

func TestQueuePopWaitsForAdd(t *testing.T) {
	q, _ := newTestQueue()
	got := make(chan string)
	go func() {
		p, _ := q.Pop(context.Background())
		got <- p.Pod.Name
	}()
	q.Add(st.MakePod().Name("late").Obj())
	select {
	case name := <-got:
		if name != "late" {
			t.Errorf("popped %s", name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not wake up")
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
