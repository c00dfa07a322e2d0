package podutil

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestUpdatePodCondition(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 500, time.UTC)
	t1 := t0.Add(time.Minute)
	var st corev1.PodStatus
	if !UpdatePodCondition(&st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}, t0) {
		t.Fatal("adding a condition changed nothing")
	}
	if got := st.Conditions[0].LastTransitionTime.Time; !got.Equal(t0.Truncate(time.Second)) {
		t.Fatalf("transition time %v, want %v (cut to the second)", got, t0.Truncate(time.Second))
	}
	if UpdatePodCondition(&st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}, t1) {
		t.Fatal("the same condition again reported a change")
	}
	if !st.Conditions[0].LastTransitionTime.Time.Equal(t0.Truncate(time.Second)) {
		t.Fatal("the same status moved the transition time")
	}
	if !UpdatePodCondition(&st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}, t1) ||
		!st.Conditions[0].LastTransitionTime.Time.Equal(t0.Truncate(time.Second)) {
		t.Fatal("a new message: want a change that keeps the transition time")
	}
	if !UpdatePodCondition(&st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, t1) ||
		!st.Conditions[0].LastTransitionTime.Time.Equal(t1.Truncate(time.Second)) || len(st.Conditions) != 1 {
		t.Fatalf("a new status: %+v", st.Conditions)
	}
	if GetPodCondition(&st, corev1.PodReady) != nil || GetPodCondition(&st, corev1.PodScheduled) == nil {
		t.Fatal("GetPodCondition")
	}
}
