// Package plugins lists the in-tree scheduler plugins and the default
// profile (upstream: pkg/scheduler/framework/plugins/registry.go and
// pkg/scheduler/apis/config/v1/default_plugins.go). Each plugin lives in a
// folder of its own, named like upstream's.
package plugins

import (
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/plugins/defaultbinder"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodename"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeunschedulable"
	"github.com/kubetab/kubetab/core/scheduler/plugins/queuesort"
)

// NewInTreeRegistry returns the factories of every plugin kubetab has.
func NewInTreeRegistry() runtime.Registry {
	return runtime.Registry{
		queuesort.Name:         queuesort.New,
		nodeunschedulable.Name: nodeunschedulable.New,
		nodename.Name:          nodename.New,
		noderesources.Name:     noderesources.New,
		defaultbinder.Name:     defaultbinder.New,
	}
}

// DefaultPlugins is the default profile: upstream's list and weights, in
// upstream's order, for the plugins kubetab has. Filters run in this order.
// Upstream's list, for reference: SchedulingGates, PrioritySort,
// NodeUnschedulable, NodeName, TaintToleration (3), NodeAffinity (2),
// NodePorts, NodeResourcesFit (1), VolumeRestrictions, NodeVolumeLimits,
// VolumeBinding, VolumeZone, PodTopologySpread (2), InterPodAffinity (2),
// DefaultPreemption, NodeResourcesBalancedAllocation (1), ImageLocality (1),
// DefaultBinder.
func DefaultPlugins() []runtime.PluginConfig {
	return []runtime.PluginConfig{
		{Name: queuesort.Name},
		{Name: nodeunschedulable.Name},
		{Name: nodename.Name},
		{Name: noderesources.Name, Weight: 1},
		{Name: defaultbinder.Name},
	}
}
