// Package queuesort holds PrioritySort, the plugin that decides which pending
// pod the scheduler tries next (upstream:
// pkg/scheduler/framework/plugins/queuesort/priority_sort.go).
package queuesort

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "PrioritySort"

// PrioritySort orders the activeQ: higher spec.priority first (a
// PriorityClass sets it at admission); among equal priorities, the pod that
// entered the queue first. A pod put back after a failed attempt re-enters
// with a new timestamp, so it does not block the pods behind it.
type PrioritySort struct{}

var _ framework.QueueSortPlugin = (*PrioritySort)(nil)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &PrioritySort{}, nil
}

// Name implements framework.Plugin.
func (*PrioritySort) Name() string { return Name }

// Less reports whether a goes before b.
func (*PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	p1, p2 := PodPriority(a.Pod), PodPriority(b.Pod)
	return p1 > p2 || (p1 == p2 && a.Timestamp.Before(b.Timestamp))
}

// PodPriority is spec.priority, or 0 when unset (upstream:
// k8s.io/component-helpers/scheduling/corev1 PodPriority).
func PodPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}
