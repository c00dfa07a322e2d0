package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

type res = map[v1.ResourceName]string

var node4cpu = res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}

func requestedCPU(t *testing.T, s *Snapshot, node string) int64 {
	t.Helper()
	ni, err := s.Get(node)
	if err != nil {
		t.Fatal(err)
	}
	return ni.Requested.MilliCPU
}

func TestCacheAssumeConfirmForget(t *testing.T) {
	c := NewCache()
	c.AddNode(st.MakeNode().Name("n1").Capacity(node4cpu).Obj())
	snap := NewEmptySnapshot()

	pod := st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj()
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = "n1"
	if err := c.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(assumed); err == nil {
		t.Error("assuming twice succeeded")
	}
	c.UpdateSnapshot(snap)
	if got := requestedCPU(t, snap, "n1"); got != 1000 || !c.IsAssumedPod(pod) {
		t.Fatalf("after assume: %dm, assumed %v", got, c.IsAssumedPod(pod))
	}

	// The informer sees the pod bound: it is counted once, no longer assumed.
	bound := assumed.DeepCopy()
	bound.ResourceVersion = "5"
	if err := c.AddPod(bound); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	if got := requestedCPU(t, snap, "n1"); got != 1000 || c.IsAssumedPod(pod) {
		t.Fatalf("after confirm: %dm, assumed %v", got, c.IsAssumedPod(pod))
	}
	if err := c.ForgetPod(bound); err == nil {
		t.Error("forgetting a confirmed pod succeeded")
	}
	if err := c.RemovePod(bound); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	if got := requestedCPU(t, snap, "n1"); got != 0 || c.PodCount() != 0 {
		t.Fatalf("after remove: %dm, %d pods", got, c.PodCount())
	}

	// A failed bind forgets the assumed pod.
	if err := c.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	if err := c.ForgetPod(assumed); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	if got := requestedCPU(t, snap, "n1"); got != 0 {
		t.Fatalf("after forget: %dm", got)
	}
}

func TestCachePodBeforeNode(t *testing.T) {
	c := NewCache()
	snap := NewEmptySnapshot()
	if err := c.AddPod(st.MakePod().Name("p").Node("late").Req(res{v1.ResourceCPU: "1"}).Obj()); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	if snap.NumNodes() != 0 {
		t.Fatalf("a node with no Node object is in the snapshot")
	}
	c.AddNode(st.MakeNode().Name("late").Capacity(node4cpu).Obj())
	c.UpdateSnapshot(snap)
	if got := requestedCPU(t, snap, "late"); got != 1000 {
		t.Errorf("pod bound before its node was seen: %dm", got)
	}
	c.RemoveNode(st.MakeNode().Name("late").Obj())
	c.UpdateSnapshot(snap)
	if snap.NumNodes() != 0 {
		t.Errorf("removed node still in the snapshot")
	}
}

func TestCacheSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := NewCache()
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(st.MakeNode().Name(n).Capacity(node4cpu).Obj())
	}
	snap := NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	before, _ := snap.List()
	before = append(before[:0:0], before...)
	_ = c.AddPod(st.MakePod().Name("p").Node("b").Req(res{v1.ResourceCPU: "1"}).Obj())
	c.UpdateSnapshot(snap)
	after, _ := snap.List()
	if len(after) != 3 || after[0] != before[0] || after[2] != before[2] || after[1] == before[1] {
		t.Errorf("only b should have been copied: before %p %p %p, after %p %p %p", before[0], before[1], before[2], after[0], after[1], after[2])
	}
	if before[1].Requested.MilliCPU != 0 {
		t.Errorf("the old snapshot of b changed")
	}
	names := []string{}
	for _, ni := range after {
		names = append(names, ni.Node().Name)
	}
	if names[0] != "a" || names[1] != "b" || names[2] != "c" {
		t.Errorf("node order %v", names)
	}
}

func TestCacheBoundPodCount(t *testing.T) {
	c := NewCache()
	c.AddNode(st.MakeNode().Name("n").Capacity(node4cpu).Obj())
	a := st.MakePod().Name("a").Node("n").Obj()
	b := st.MakePod().Name("b").Node("n").Obj()
	_ = c.AddPod(a)
	if err := c.AssumePod(b); err != nil {
		t.Fatal(err)
	}
	if c.BoundPodCount() != 1 || c.PodCount() != 2 {
		t.Fatalf("bound %d of %d, want 1 of 2", c.BoundPodCount(), c.PodCount())
	}
	_ = c.AddPod(b) // the informer sees the binding
	if c.BoundPodCount() != 2 {
		t.Errorf("bound %d, want 2", c.BoundPodCount())
	}
	d := st.MakePod().Name("d").Node("n").Obj()
	_ = c.AssumePod(d)
	_ = c.ForgetPod(d)
	_ = c.RemovePod(a)
	if c.BoundPodCount() != 1 || c.PodCount() != 1 {
		t.Errorf("bound %d of %d, want 1 of 1", c.BoundPodCount(), c.PodCount())
	}
}
