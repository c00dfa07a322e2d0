// Package noderesources holds NodeResourcesFit: the filter that checks a pod's
// resource requests against what is left on a node, and the score that
// prefers the least (or most) allocated nodes (upstream:
// pkg/scheduler/framework/plugins/noderesources/fit.go, least_allocated.go,
// most_allocated.go, resource_allocation.go).
//
// The filter compares requests, never real usage: a node "has room" when
//
//	allocatable - Σ requests of the pods bound or assumed there >= the pod's requests
//
// for cpu, memory, ephemeral-storage and extended resources, and when it
// holds fewer pods than its allocatable "pods" (110 on a default kubelet).
package noderesources

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "NodeResourcesFit"

// Upstream's reasons, counted in FailedScheduling messages. Extended
// resources get "Insufficient <name>".
const (
	ReasonTooManyPods                  = "Too many pods"
	ReasonInsufficientCPU              = "Insufficient cpu"
	ReasonInsufficientMemory           = "Insufficient memory"
	ReasonInsufficientEphemeralStorage = "Insufficient ephemeral-storage"
)

const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// ScoringStrategyType picks how Score ranks nodes.
type ScoringStrategyType string

// Scoring strategies.
const (
	// LeastAllocated favours the emptiest nodes: pods spread out. The default.
	LeastAllocated ScoringStrategyType = "LeastAllocated"
	// MostAllocated favours the fullest nodes: pods pack together (bin
	// packing), so empty nodes can be removed.
	MostAllocated ScoringStrategyType = "MostAllocated"
)

// ResourceSpec is a resource that counts in the score, and its weight.
type ResourceSpec struct {
	Name   v1.ResourceName
	Weight int64
}

// ScoringStrategy configures Score.
type ScoringStrategy struct {
	Type      ScoringStrategyType
	Resources []ResourceSpec
}

// FitArgs configures the plugin (upstream: NodeResourcesFitArgs).
type FitArgs struct {
	// IgnoredResources are extended resources the filter does not check.
	IgnoredResources []string
	ScoringStrategy  ScoringStrategy
}

// DefaultFitArgs is upstream's default: LeastAllocated over cpu and memory,
// weight 1 each.
func DefaultFitArgs() FitArgs {
	return FitArgs{ScoringStrategy: ScoringStrategy{
		Type:      LeastAllocated,
		Resources: []ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}},
	}}
}

// Fit is the NodeResourcesFit plugin.
type Fit struct {
	ignoredResources sets.Set[string]
	resourceAllocationScorer
}

var (
	_ framework.PreFilterPlugin   = (*Fit)(nil)
	_ framework.FilterPlugin      = (*Fit)(nil)
	_ framework.EnqueueExtensions = (*Fit)(nil)
	_ framework.PreScorePlugin    = (*Fit)(nil)
	_ framework.ScorePlugin       = (*Fit)(nil)
)

// New is the plugin's factory, with DefaultFitArgs.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return NewFit(DefaultFitArgs())
}

// NewFit builds the plugin from args.
func NewFit(args FitArgs) (*Fit, error) {
	var scorer func(requested, allocatable []int64, res []ResourceSpec) int64
	var kind scorerKind
	switch args.ScoringStrategy.Type {
	case LeastAllocated, "":
		scorer, kind = leastResourceScorer, scorerLeast
	case MostAllocated:
		scorer, kind = mostResourceScorer, scorerMost
	default:
		return nil, fmt.Errorf("scoringStrategy.type: Unsupported value: %q: supported values: %q, %q", args.ScoringStrategy.Type, LeastAllocated, MostAllocated)
	}
	for _, r := range args.ScoringStrategy.Resources {
		if r.Weight <= 0 || r.Weight > 100 {
			return nil, fmt.Errorf("scoringStrategy.resources[%s].weight: Invalid value: %d: resource weight of %s should be in range [1, 100]", r.Name, r.Weight, r.Name)
		}
	}
	return &Fit{
		ignoredResources: sets.New(args.IgnoredResources...),
		resourceAllocationScorer: resourceAllocationScorer{
			scorer:    scorer,
			kind:      kind,
			resources: args.ScoringStrategy.Resources,
		},
	}, nil
}

// Name implements framework.Plugin.
func (*Fit) Name() string { return Name }

// preFilterState is the pod's requests, computed once per attempt.
type preFilterState struct {
	framework.Resource
}

// Clone implements framework.StateData; the state is never modified.
func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter computes the pod's requests (see framework.PodRequests: the sum of
// the containers, or the largest init container if that is more).
func (f *Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	state.Write(preFilterStateKey, &preFilterState{Resource: framework.PodRequests(pod, false)})
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin: the state does
// not depend on other pods.
func (*Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to NodeResourcesFit.preFilterState error", c)
	}
	return s, nil
}

// EventsToRegister: room appears when an assigned pod goes away or shrinks,
// when a node is added, or when a node's allocatable grows.
func (*Fit) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Delete | framework.UpdatePodScaleDown},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
	}
}

// Filter rejects the node with every reason that applies ("Too many pods",
// "Insufficient cpu", ...). The code is UnschedulableAndUnresolvable when the
// pod asks for more than the whole node has, since evicting pods would not
// help; otherwise Unschedulable.
func (f *Fit) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	insufficient := fitsRequest(&s.Resource, nodeInfo, f.ignoredResources)
	if len(insufficient) == 0 {
		return nil
	}
	reasons := make([]string, len(insufficient))
	code := framework.Unschedulable
	for i, r := range insufficient {
		reasons[i] = r.Reason
		if r.Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
	}
	return framework.NewStatus(code, reasons...)
}

// InsufficientResource is one resource the node lacks for the pod.
type InsufficientResource struct {
	ResourceName v1.ResourceName
	// Reason is upstream's wording, kept as a constant so formatting is free.
	Reason    string
	Requested int64
	Used      int64
	Capacity  int64
	// Unresolvable: the pod asks for more than the node's whole allocatable.
	Unresolvable bool
}

// Fits lists what the node lacks to run pod (empty: it fits).
func Fits(pod *v1.Pod, nodeInfo *framework.NodeInfo) []InsufficientResource {
	r := framework.PodRequests(pod, false)
	return fitsRequest(&r, nodeInfo, nil)
}

func fitsRequest(req *framework.Resource, nodeInfo *framework.NodeInfo, ignored sets.Set[string]) []InsufficientResource {
	var out []InsufficientResource
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested

	if n := len(nodeInfo.Pods); n+1 > alloc.AllowedPodNumber {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourcePods, Reason: ReasonTooManyPods,
			Requested: 1, Used: int64(n), Capacity: int64(alloc.AllowedPodNumber),
		})
	}
	if req.IsZero() {
		return out
	}
	if req.MilliCPU > 0 && req.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceCPU, Reason: ReasonInsufficientCPU,
			Requested: req.MilliCPU, Used: used.MilliCPU, Capacity: alloc.MilliCPU,
			Unresolvable: req.MilliCPU > alloc.MilliCPU,
		})
	}
	if req.Memory > 0 && req.Memory > alloc.Memory-used.Memory {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceMemory, Reason: ReasonInsufficientMemory,
			Requested: req.Memory, Used: used.Memory, Capacity: alloc.Memory,
			Unresolvable: req.Memory > alloc.Memory,
		})
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceEphemeralStorage, Reason: ReasonInsufficientEphemeralStorage,
			Requested: req.EphemeralStorage, Used: used.EphemeralStorage, Capacity: alloc.EphemeralStorage,
			Unresolvable: req.EphemeralStorage > alloc.EphemeralStorage,
		})
	}
	for name, q := range req.ScalarResources {
		if q == 0 || (framework.IsExtendedResourceName(name) && ignored.Has(string(name))) {
			continue
		}
		if q > alloc.ScalarResources[name]-used.ScalarResources[name] {
			out = append(out, InsufficientResource{
				ResourceName: name, Reason: fmt.Sprintf("Insufficient %v", name),
				Requested: q, Used: used.ScalarResources[name], Capacity: alloc.ScalarResources[name],
				Unresolvable: q > alloc.ScalarResources[name],
			})
		}
	}
	return out
}

// preScoreState is the pod's non-zero requests for each scored resource.
type preScoreState struct {
	podRequests []int64
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's requests once for all nodes.
func (f *Fit) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(preScoreStateKey, &preScoreState{podRequests: f.podRequests(pod)})
	return nil
}

// Score implements framework.ScorePlugin.
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	if c, err := state.Read(preScoreStateKey); err == nil {
		reqs = c.(*preScoreState).podRequests
	} else {
		reqs = f.podRequests(pod)
	}
	return f.score(nodeInfo, reqs)
}

// ScoreExtensions implements framework.ScorePlugin: the scores are already
// in 0..100.
func (*Fit) ScoreExtensions() framework.ScoreExtensions { return nil }
