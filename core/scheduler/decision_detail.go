package scheduler

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
)

// resourceDetail is the numbers behind NodeResourcesFit's reasons for one
// node, for the decision record: upstream says "Insufficient cpu" and
// stops; a learner wants to see by how much:
//
//	Insufficient cpu: requests 3, 0.5 of 4 free; Insufficient memory: requests 1Gi, 512Mi of 8Gi free
//
// Each part starts with upstream's reason, so the text reads on from it.
// The amounts are the pod's requests and the node's allocatable minus what
// its pods request, as the filter compared them (nominated pods of higher
// priority, which the filter also counts, are not in "free" here).
func resourceDetail(pod *v1.Pod, n *framework.NodeInfo) string {
	var parts []string
	for _, r := range noderesources.Fits(pod, n) {
		parts = append(parts, r.Reason+": requests "+amount(r.ResourceName, r.Requested)+", "+
			amount(r.ResourceName, r.Capacity-r.Used)+" of "+amount(r.ResourceName, r.Capacity)+" free")
	}
	return strings.Join(parts, "; ")
}

// amount prints a quantity as a learner writes it in a manifest: cpu in
// cores (0.5, 3), memory and storage in binary units (512Mi), the rest as
// counts.
func amount(name v1.ResourceName, n int64) string {
	switch name {
	case v1.ResourceCPU:
		return strconv.FormatFloat(float64(n)/1000, 'f', -1, 64)
	case v1.ResourceMemory, v1.ResourceEphemeralStorage:
		return resource.NewQuantity(n, resource.BinarySI).String()
	}
	return strconv.FormatInt(n, 10)
}
