package noderesources

import "github.com/kubetab/kubetab/core/scheduler/framework"

// mostResourceScorer favours the fullest nodes (bin packing):
//
//	score = Σ weight·requested·100/allocatable  /  Σ weight
func mostResourceScorer(requested, allocatable []int64, res []ResourceSpec) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		nodeScore += mostRequestedScore(requested[i], allocatable[i]) * res[i].Weight
		weightSum += res[i].Weight
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

// mostRequestedScore is the used share of capacity on a 0..100 scale; a node
// over-committed by non-zero defaults counts as full.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return requested * framework.MaxNodeScore / capacity
}
