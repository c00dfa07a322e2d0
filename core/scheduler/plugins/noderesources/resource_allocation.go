package noderesources

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// resourceAllocationScorer turns "how full would the node be with this pod"
// into a score, per resource, then averages the resources by weight.
type resourceAllocationScorer struct {
	scorer    func(requested, allocatable []int64, res []ResourceSpec) int64
	resources []ResourceSpec
}

// podRequests returns the pod's non-zero request of each scored resource: a
// container without a cpu or memory request counts as 100m / 200Mi here, so
// that "best effort" pods still spread out.
func (r *resourceAllocationScorer) podRequests(pod *v1.Pod) []int64 {
	nz := framework.PodRequests(pod, true)
	out := make([]int64, len(r.resources))
	for i, res := range r.resources {
		switch res.Name {
		case v1.ResourceCPU:
			out[i] = nz.MilliCPU
		case v1.ResourceMemory:
			out[i] = nz.Memory
		case v1.ResourceEphemeralStorage:
			out[i] = nz.EphemeralStorage
		default:
			out[i] = nz.ScalarResources[res.Name]
		}
	}
	return out
}

func (r *resourceAllocationScorer) score(nodeInfo *framework.NodeInfo, podRequests []int64) (int64, *framework.Status) {
	if nodeInfo.Node() == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	requested := make([]int64, len(r.resources))
	allocatable := make([]int64, len(r.resources))
	for i, res := range r.resources {
		allocatable[i], requested[i] = allocatableAndRequested(nodeInfo, res.Name, podRequests[i])
	}
	return r.scorer(requested, allocatable, r.resources), nil
}

// allocatableAndRequested returns the node's allocatable and what would be
// requested on it with the pod: for cpu and memory the non-zero sums.
func allocatableAndRequested(n *framework.NodeInfo, name v1.ResourceName, podRequest int64) (int64, int64) {
	switch name {
	case v1.ResourceCPU:
		return n.Allocatable.MilliCPU, n.NonZeroRequested.MilliCPU + podRequest
	case v1.ResourceMemory:
		return n.Allocatable.Memory, n.NonZeroRequested.Memory + podRequest
	case v1.ResourceEphemeralStorage:
		return n.Allocatable.EphemeralStorage, n.Requested.EphemeralStorage + podRequest
	default:
		return n.Allocatable.ScalarResources[name], n.Requested.ScalarResources[name] + podRequest
	}
}
