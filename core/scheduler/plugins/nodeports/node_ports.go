// Package nodeports holds NodePorts: the filter that keeps two pods asking
// for the same host port off one node (upstream:
// pkg/scheduler/framework/plugins/nodeports/node_ports.go).
//
//	containers:
//	- name: web
//	  ports:
//	  - containerPort: 8080
//	    hostPort: 80          # port 80 of the node itself: one pod per node
//
// Only ports with a hostPort count; a plain containerPort takes nothing from
// the node (the pod has its own IP).
package nodeports

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodePorts is the plugin.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = (*NodePorts)(nil)
	_ framework.FilterPlugin      = (*NodePorts)(nil)
	_ framework.EnqueueExtensions = (*NodePorts)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &NodePorts{}, nil
}

// Name implements framework.Plugin.
func (*NodePorts) Name() string { return Name }

type preFilterState []v1.ContainerPort

// Clone implements framework.StateData: the pod's ports do not change.
func (s preFilterState) Clone() framework.StateData { return s }

// PreFilter collects the pod's host ports; a pod with none Skips Filter.
func (*NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	ports := framework.HostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin: the state does
// not depend on other pods (Filter reads NodeInfo.UsedPorts).
func (*NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// EventsToRegister: a port is freed when a pod goes away; a new node has
// all its ports free.
func (*NodePorts) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint | framework.UpdateNodeLabel},
	}
}

// Filter rejects a node where a wanted port is taken. Unschedulable (not
// ...AndUnresolvable): evicting the pod that holds the port frees it.
func (*NodePorts) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err))
	}
	if !fitsPorts(c.(preFilterState), nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, ErrReason)
	}
	return nil
}

// Fits reports whether the pod's host ports are free on the node.
func Fits(pod *v1.Pod, nodeInfo *framework.NodeInfo) bool {
	return fitsPorts(framework.HostPorts(pod), nodeInfo)
}

func fitsPorts(want []v1.ContainerPort, nodeInfo *framework.NodeInfo) bool {
	for _, p := range want {
		if nodeInfo.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}
