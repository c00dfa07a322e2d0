package podutil

import (
	"fmt"
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

// The visitors find every direct reference, in every kind of container,
// and skip empty names.
func TestVisitPodSecretAndConfigmapNames(t *testing.T) {
	ref := func(n string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: n} }
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{ref("pull"), ref("")},
		InitContainers:   []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref("init-cm")}}}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Env: []corev1.EnvVar{{Name: "A",
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref("debug"), Key: "k"}}}}}}},
		Volumes: []corev1.Volume{
			{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi"}}}},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("proj")}}, {ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("proj-cm")}}}}}},
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("vol-cm")}}},
		},
	}}
	collect := func(visit func(*corev1.Pod, func(string) bool) bool) []string {
		var got []string
		visit(pod, func(n string) bool { got = append(got, n); return true })
		return got
	}
	if got, want := fmt.Sprint(collect(VisitPodSecretNames)), "[pull debug csi proj]"; got != want {
		t.Errorf("secrets %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(collect(VisitPodConfigmapNames)), "[init-cm proj-cm vol-cm]"; got != want {
		t.Errorf("configmaps %s, want %s", got, want)
	}
	if VisitPodSecretNames(pod, func(string) bool { return false }) {
		t.Error("a visit that stops reported it visited all")
	}
	if !VisitPodSecretNames(&corev1.Pod{}, func(string) bool { return false }) {
		t.Error("a pod with no secrets stopped the visit")
	}
}
