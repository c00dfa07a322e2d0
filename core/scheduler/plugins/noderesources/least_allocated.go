package noderesources

import "github.com/kubetab/kubetab/core/scheduler/framework"

// leastResourceScorer favours nodes with the most room left:
//
//	score = Σ weight·(allocatable - requested)·100/allocatable  /  Σ weight
//
// over the resources the node has (allocatable > 0). A node with 4 cpus of
// which 1 would be requested scores 75 on cpu.
func leastResourceScorer(requested, allocatable []int64, res []ResourceSpec) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		nodeScore += leastRequestedScore(requested[i], allocatable[i]) * res[i].Weight
		weightSum += res[i].Weight
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

// leastRequestedScore is the unused share of capacity on a 0..100 scale.
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}
