package noderesources

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// BalancedAllocationName is the NodeResourcesBalancedAllocation plugin's
// name in profiles (upstream: noderesources/balanced_allocation.go).
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

const balancedAllocationPreScoreStateKey framework.StateKey = "PreScore" + BalancedAllocationName

// BalancedAllocation prefers nodes whose cpu and memory would be used in
// the same proportion with the pod. A node at 90% cpu and 10% memory wastes
// memory nobody can use (no pod fits in the cpu that is left); the score
// pushes pods towards nodes where that gap closes:
//
//	fraction_r = requested_r / allocatable_r      (capped at 1)
//	score      = (1 - std(fractions)) × 100       two resources: std = |f_cpu - f_mem| / 2
//
// A node at 50% cpu and 50% memory scores 100; 90% and 10% scores 60. Unlike
// NodeResourcesFit's score it counts requests as they are (a pod without
// requests adds nothing), and it does not score pods that request nothing
// at all: they would all pile onto the same "balanced" node
// (kubernetes#129138).
type BalancedAllocation struct {
	resourceAllocationScorer
}

var (
	_ framework.PreScorePlugin = (*BalancedAllocation)(nil)
	_ framework.ScorePlugin    = (*BalancedAllocation)(nil)
)

// NewBalancedAllocation is the plugin's factory, with upstream's default
// resources: cpu and memory, weight 1 (the weights do not change this
// score).
func NewBalancedAllocation(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &BalancedAllocation{resourceAllocationScorer: resourceAllocationScorer{
		scorer:       balancedResourceScorer,
		kind:         scorerBalanced,
		resources:    []ResourceSpec{{Name: v1.ResourceCPU, Weight: 1}, {Name: v1.ResourceMemory, Weight: 1}},
		useRequested: true,
	}}, nil
}

// Name implements framework.Plugin.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

type balancedAllocationPreScoreState struct {
	podRequests []int64
}

// Clone implements framework.StateData.
func (s *balancedAllocationPreScoreState) Clone() framework.StateData { return s }

func isBestEffort(requests []int64) bool {
	for _, r := range requests {
		if r != 0 {
			return false
		}
	}
	return true
}

// PreScore computes the pod's requests once; a pod that requests nothing
// Skips Score.
func (ba *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	reqs := ba.podRequests(pod)
	if isBestEffort(reqs) {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedAllocationPreScoreStateKey, &balancedAllocationPreScoreState{podRequests: reqs})
	return nil
}

// Score implements framework.ScorePlugin.
func (ba *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	if c, err := state.Read(balancedAllocationPreScoreStateKey); err == nil {
		s, ok := c.(*balancedAllocationPreScoreState)
		if !ok {
			return 0, framework.AsStatus(fmt.Errorf("invalid PreScore state, got type %T", c))
		}
		reqs = s.podRequests
	} else {
		reqs = ba.podRequests(pod)
		if isBestEffort(reqs) {
			return 0, nil
		}
	}
	return ba.score(nodeInfo, reqs)
}

// ScoreExtensions implements framework.ScorePlugin: scores are in 0..100.
func (*BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }

func balancedResourceScorer(requested, allocatable []int64, _ []ResourceSpec) int64 {
	var fractions [8]float64
	fs := fractions[:0]
	var total float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fs = append(fs, f)
	}
	std := 0.0
	switch {
	case len(fs) == 2:
		std = math.Abs((fs[0] - fs[1]) / 2)
	case len(fs) > 2:
		mean := total / float64(len(fs))
		var sum float64
		for _, f := range fs {
			sum += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sum / float64(len(fs)))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
