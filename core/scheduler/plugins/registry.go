// Package plugins lists the in-tree scheduler plugins and the default
// profile (upstream: pkg/scheduler/framework/plugins/registry.go and
// pkg/scheduler/apis/config/v1/default_plugins.go). Each plugin lives in a
// folder of its own, named like upstream's.
package plugins

import (
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/plugins/defaultbinder"
	"github.com/kubetab/kubetab/core/scheduler/plugins/defaultpreemption"
	"github.com/kubetab/kubetab/core/scheduler/plugins/imagelocality"
	"github.com/kubetab/kubetab/core/scheduler/plugins/interpodaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeaffinity"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodename"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeports"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/scheduler/plugins/nodeunschedulable"
	"github.com/kubetab/kubetab/core/scheduler/plugins/podtopologyspread"
	"github.com/kubetab/kubetab/core/scheduler/plugins/queuesort"
	"github.com/kubetab/kubetab/core/scheduler/plugins/tainttoleration"
)

// NewInTreeRegistry returns the factories of every plugin kubetab has.
func NewInTreeRegistry() runtime.Registry {
	return runtime.Registry{
		queuesort.Name:                       queuesort.New,
		nodeunschedulable.Name:               nodeunschedulable.New,
		nodename.Name:                        nodename.New,
		tainttoleration.Name:                 tainttoleration.New,
		nodeaffinity.Name:                    nodeaffinity.New,
		nodeports.Name:                       nodeports.New,
		noderesources.Name:                   noderesources.New,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		defaultpreemption.Name:               defaultpreemption.New,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		imagelocality.Name:                   imagelocality.New,
		defaultbinder.Name:                   defaultbinder.New,
	}
}

// DefaultPlugins is the default profile: upstream's list and weights
// (multiPoint, v1), in upstream's order; filters run in this order. The
// volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
// VolumeZone) and SchedulingGates are upstream's too but not here: kubetab
// has no persistent volumes, and its pods have no scheduling gates.
//
//	plugin                             extension points                weight
//	PrioritySort                       QueueSort
//	NodeUnschedulable                  Filter
//	NodeName                           Filter
//	TaintToleration                    Filter, Score                     3
//	NodeAffinity                       PreFilter, Filter, Score          2
//	NodePorts                          PreFilter, Filter
//	NodeResourcesFit                   PreFilter, Filter, Score          1
//	PodTopologySpread                  PreFilter, Filter, Score          2
//	InterPodAffinity                   PreFilter, Filter, Score          2
//	DefaultPreemption                  PostFilter
//	NodeResourcesBalancedAllocation    Score                             1
//	ImageLocality                      Score                             1
//	DefaultBinder                      Bind
func DefaultPlugins() []runtime.PluginConfig {
	return []runtime.PluginConfig{
		{Name: queuesort.Name},
		{Name: nodeunschedulable.Name},
		{Name: nodename.Name},
		{Name: tainttoleration.Name, Weight: 3},
		{Name: nodeaffinity.Name, Weight: 2},
		{Name: nodeports.Name},
		{Name: noderesources.Name, Weight: 1},
		{Name: podtopologyspread.Name, Weight: 2},
		{Name: interpodaffinity.Name, Weight: 2},
		{Name: defaultpreemption.Name},
		{Name: noderesources.BalancedAllocationName, Weight: 1},
		{Name: imagelocality.Name, Weight: 1},
		{Name: defaultbinder.Name},
	}
}
