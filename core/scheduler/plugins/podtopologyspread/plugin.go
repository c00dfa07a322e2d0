// Package podtopologyspread holds PodTopologySpread: the filter and score
// that spread a group of pods evenly across topology domains (nodes, zones
// ...) (upstream: pkg/scheduler/framework/plugins/podtopologyspread).
//
// A constraint names a node label (the topology key), the pods that count
// (a label selector) and how uneven the spread may get (maxSkew):
//
//	topologySpreadConstraints:
//	- maxSkew: 1
//	  topologyKey: topology.kubernetes.io/zone
//	  whenUnsatisfiable: DoNotSchedule      # a filter; ScheduleAnyway: only a score
//	  labelSelector: {matchLabels: {app: web}}
//
// The skew of putting the pod in a domain is
//
//	matching pods in that domain + 1 (if the pod itself matches) - matching pods in the emptiest domain
//
// zone-a: 2 web pods, zone-b: 0, zone-c: 1. Placing a web pod in zone-a
// gives 2+1-0 = 3 > 1: rejected; zone-b gives 0+1-0 = 1: fine.
//
// Pods without constraints get the system default ones, both ScheduleAnyway
// (a score only): spread over nodes with maxSkew 3 and over zones with
// maxSkew 5, counting the pods of the same Service, ReplicaSet,
// StatefulSet or ReplicationController. That is why the replicas of a
// Deployment end up on different nodes even when nobody asked.
package podtopologyspread

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "PodTopologySpread"

// Upstream's reasons.
const (
	// ErrReasonConstraintsNotMatch: placing the pod on the node would
	// exceed a DoNotSchedule constraint's maxSkew.
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ErrReasonNodeLabelNotMatch: the node lacks a constraint's topology
	// key label, so it is in no domain.
	ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// SystemDefaultConstraints are upstream's default constraints
// (defaultingType: System).
var SystemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// Args configures the plugin (upstream: PodTopologySpreadArgs).
type Args struct {
	// DefaultConstraints apply to pods without constraints of their own;
	// nil with SystemDefaulting means SystemDefaultConstraints.
	DefaultConstraints []v1.TopologySpreadConstraint
	// ListDefaulting uses DefaultConstraints as given (possibly none).
	ListDefaulting bool
}

// PodTopologySpread is the plugin.
type PodTopologySpread struct {
	handle             framework.Handle
	defaultConstraints []v1.TopologySpreadConstraint
	systemDefaulted    bool
}

var (
	_ framework.PreFilterPlugin     = (*PodTopologySpread)(nil)
	_ framework.PreFilterExtensions = (*PodTopologySpread)(nil)
	_ framework.FilterPlugin        = (*PodTopologySpread)(nil)
	_ framework.PreScorePlugin      = (*PodTopologySpread)(nil)
	_ framework.ScorePlugin         = (*PodTopologySpread)(nil)
	_ framework.ScoreExtensions     = (*PodTopologySpread)(nil)
	_ framework.EnqueueExtensions   = (*PodTopologySpread)(nil)
)

// New is the plugin's factory, with the system default constraints.
func New(ctx context.Context, h framework.Handle) (framework.Plugin, error) {
	return NewWithArgs(ctx, h, Args{})
}

// NewWithArgs builds the plugin from args.
func NewWithArgs(_ context.Context, h framework.Handle, args Args) (*PodTopologySpread, error) {
	pl := &PodTopologySpread{handle: h, defaultConstraints: args.DefaultConstraints}
	if !args.ListDefaulting {
		pl.defaultConstraints = SystemDefaultConstraints
		pl.systemDefaulted = true
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*PodTopologySpread) Name() string { return Name }

// EventsToRegister: an assigned pod added, relabelled or deleted changes
// the counts; a node added, deleted or relabelled changes the domains.
func (*PodTopologySpread) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
}
