// Package nodename holds the NodeName filter (upstream:
// pkg/scheduler/framework/plugins/nodename/node_name.go).
package nodename

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "NodeName"

// ErrReason is upstream's reason, counted in FailedScheduling messages.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName rejects every node but the one named in spec.nodeName. A pod
// created with spec.nodeName is normally never scheduled at all (it is
// already "bound"); the filter matters for tools that run the filters on such
// a pod, such as preemption and simulators.
type NodeName struct{}

var (
	_ framework.FilterPlugin      = (*NodeName)(nil)
	_ framework.EnqueueExtensions = (*NodeName)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &NodeName{}, nil
}

// Name implements framework.Plugin.
func (*NodeName) Name() string { return Name }

// EventsToRegister: only a new node (with that name) can help.
func (*NodeName) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add}}
}

// Filter implements framework.FilterPlugin.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !Fits(pod, nodeInfo) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// Fits reports whether the pod names no node, or this one.
func Fits(pod *v1.Pod, nodeInfo *framework.NodeInfo) bool {
	return pod.Spec.NodeName == "" || (nodeInfo.Node() != nil && pod.Spec.NodeName == nodeInfo.Node().Name)
}
