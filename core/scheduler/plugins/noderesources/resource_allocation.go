package noderesources

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// resourceAllocationScorer turns "how full would the node be with this pod"
// into a score, per resource, then combines the resources (upstream:
// resource_allocation.go). NodeResourcesFit and
// NodeResourcesBalancedAllocation share it.
type resourceAllocationScorer struct {
	scorer    func(requested, allocatable []int64, res []ResourceSpec) int64
	kind      scorerKind
	resources []ResourceSpec
	// useRequested counts the requests as they are. Without it (Fit's
	// scoring), a container with no cpu or memory request counts as 100m /
	// 200Mi, so that "best effort" pods still spread out.
	useRequested bool
}

// podRequests returns the pod's request of each scored resource.
func (r *resourceAllocationScorer) podRequests(pod *v1.Pod) []int64 {
	reqs := framework.PodRequests(pod, !r.useRequested)
	out := make([]int64, len(r.resources))
	for i, res := range r.resources {
		switch res.Name {
		case v1.ResourceCPU:
			out[i] = reqs.MilliCPU
		case v1.ResourceMemory:
			out[i] = reqs.Memory
		case v1.ResourceEphemeralStorage:
			out[i] = reqs.EphemeralStorage
		default:
			out[i] = reqs.ScalarResources[res.Name]
		}
	}
	return out
}

func (r *resourceAllocationScorer) score(nodeInfo *framework.NodeInfo, podRequests []int64) (int64, *framework.Status) {
	if nodeInfo.Node() == nil {
		return 0, framework.NewStatus(framework.Error, "node not found")
	}
	// Two resources (cpu and memory) is the common case: no allocation.
	var buf [4]int64
	requested, allocatable := buf[:0:2], buf[2:2:4]
	if len(r.resources) > 2 {
		requested = make([]int64, 0, len(r.resources))
		allocatable = make([]int64, 0, len(r.resources))
	}
	for i, res := range r.resources {
		a, q := r.allocatableAndRequested(nodeInfo, res.Name, podRequests[i])
		allocatable = append(allocatable, a)
		requested = append(requested, q)
	}
	return r.callScorer(requested, allocatable), nil
}

// callScorer calls the scorer without letting the slices escape: a call
// through the func value would move them to the heap, an allocation per
// node and plugin.
func (r *resourceAllocationScorer) callScorer(requested, allocatable []int64) int64 {
	switch r.kind {
	case scorerLeast:
		return leastResourceScorer(requested, allocatable, r.resources)
	case scorerMost:
		return mostResourceScorer(requested, allocatable, r.resources)
	case scorerBalanced:
		return balancedResourceScorer(requested, allocatable, r.resources)
	}
	return r.scorer(append([]int64(nil), requested...), append([]int64(nil), allocatable...), r.resources)
}

// scorerKind names the built-in scorers, so callScorer can call them
// directly.
type scorerKind int

const (
	scorerCustom scorerKind = iota
	scorerLeast
	scorerMost
	scorerBalanced
)

// allocatableAndRequested returns the node's allocatable and what would be
// requested on it with the pod. An extended resource the pod does not ask
// for is left out of the score (0, 0).
func (r *resourceAllocationScorer) allocatableAndRequested(n *framework.NodeInfo, name v1.ResourceName, podRequest int64) (int64, int64) {
	requested := &n.NonZeroRequested
	if r.useRequested {
		requested = &n.Requested
	}
	switch name {
	case v1.ResourceCPU:
		return n.Allocatable.MilliCPU, requested.MilliCPU + podRequest
	case v1.ResourceMemory:
		return n.Allocatable.Memory, requested.Memory + podRequest
	case v1.ResourceEphemeralStorage:
		return n.Allocatable.EphemeralStorage, n.Requested.EphemeralStorage + podRequest
	default:
		if podRequest == 0 {
			return 0, 0
		}
		return n.Allocatable.ScalarResources[name], n.Requested.ScalarResources[name] + podRequest
	}
}
