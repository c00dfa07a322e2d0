// Package podutil holds the helpers on Pods that the API server, the
// scheduler and the controllers share, so each rule lives in one place.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/api/v1/pod (podutil), whose
// UpdatePodCondition the eviction handler, the scheduler and the disruption
// and pod GC controllers all call.
package podutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetPodCondition returns the condition of type t, or nil.
func GetPodCondition(status *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// UpdatePodCondition adds c to status, or replaces the condition of its
// type, and reports whether anything changed. The transition time is now
// when the condition's status changes and kept when it does not. Upstream
// reads the wall clock; here now comes from the component's clock, cut to
// the second a stored time keeps, so a condition read back compares equal.
func UpdatePodCondition(status *corev1.PodStatus, c corev1.PodCondition, now time.Time) bool {
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	old := GetPodCondition(status, c.Type)
	if old == nil {
		status.Conditions = append(status.Conditions, c)
		return true
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	same := old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
		old.LastProbeTime.Equal(&c.LastProbeTime) && old.LastTransitionTime.Equal(&c.LastTransitionTime)
	*old = c
	return !same
}
