// Package nodeunschedulable holds the filter that keeps pods off cordoned
// nodes (upstream: pkg/scheduler/framework/plugins/nodeunschedulable).
package nodeunschedulable

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "NodeUnschedulable"

// Upstream's reasons, counted in FailedScheduling messages.
const (
	// ErrReasonUnknownCondition: the NodeInfo has no node.
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
	// ErrReasonUnschedulable: the node is cordoned (spec.unschedulable).
	ErrReasonUnschedulable = "node(s) were unschedulable"
)

// NodeUnschedulable rejects nodes with spec.unschedulable set — what
// `kubectl cordon` and `kubectl drain` do — unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint (DaemonSet pods do). The
// rejection is UnschedulableAndUnresolvable: preempting pods there would not
// help.
type NodeUnschedulable struct{}

var (
	_ framework.FilterPlugin      = (*NodeUnschedulable)(nil)
	_ framework.EnqueueExtensions = (*NodeUnschedulable)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &NodeUnschedulable{}, nil
}

// Name implements framework.Plugin.
func (*NodeUnschedulable) Name() string { return Name }

// EventsToRegister: a new node, or an uncordon (reported as a taint change,
// as upstream does, because the node lifecycle controller mirrors
// spec.unschedulable into a taint).
func (*NodeUnschedulable) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}}
}

// Filter implements framework.FilterPlugin.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !node.Spec.Unschedulable {
		return nil
	}
	if helper.TolerationsTolerateTaint(pod.Spec.Tolerations, &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}
