package framework

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The requests the scheduler assumes for a container that sets none, when it
// scores (not when it filters): upstream pkg/scheduler/util DefaultMilliCPURequest
// and DefaultMemoryRequest. Without them, a node full of pods with no
// requests would look empty to LeastAllocated.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is an amount of compute resources in the units the scheduler
// compares: millicores, bytes, a pod count (upstream: framework.Resource).
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is the node's allocatable "pods" (110 by default on a
	// kubelet).
	AllowedPodNumber int
	// ScalarResources are extended resources ("example.com/gpu") and
	// hugepages, in their integer units.
	ScalarResources map[v1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddResource adds another Resource.
func (r *Resource) AddResource(o *Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for name, v := range o.ScalarResources {
		r.AddScalar(name, v)
	}
}

// SubResource subtracts another Resource.
func (r *Resource) SubResource(o *Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for name, v := range o.ScalarResources {
		r.AddScalar(name, -v)
	}
}

// SetMaxResource raises each dimension to o's where o's is larger.
func (r *Resource) SetMaxResource(o *Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	for name, v := range o.ScalarResources {
		if v > r.ScalarResources[name] {
			r.SetScalar(name, v)
		}
	}
}

// AddScalar adds to one scalar resource.
func (r *Resource) AddScalar(name v1.ResourceName, v int64) {
	r.SetScalar(name, r.ScalarResources[name]+v)
}

// SetScalar sets one scalar resource.
func (r *Resource) SetScalar(name v1.ResourceName, v int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[v1.ResourceName]int64{}
	}
	r.ScalarResources[name] = v
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := *r
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return &c
}

// IsZero reports whether nothing is requested (pods count aside).
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v != 0 {
			return false
		}
	}
	return true
}

// IsScalarResourceName reports whether name is an extended resource
// ("example.com/foo", not in the kubernetes.io domain) or hugepages
// (upstream: pkg/apis/core/v1/helper IsScalarResourceName).
func IsScalarResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource: it has
// a domain that is not kubernetes.io and is not a quota "requests." name.
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/") {
		return false
	}
	return !strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix)
}

var (
	defaultCPU    = *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI)
	defaultMemory = *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI)
)

// containerRequests converts one container's requests; with nonZero, a missing
// cpu or memory request counts as the defaults above.
func containerRequests(rl v1.ResourceList, nonZero bool) Resource {
	var r Resource
	r.Add(rl)
	if nonZero {
		if _, ok := rl[v1.ResourceCPU]; !ok {
			r.MilliCPU = defaultCPU.MilliValue()
		}
		if _, ok := rl[v1.ResourceMemory]; !ok {
			r.Memory = defaultMemory.Value()
		}
	}
	return r
}

// PodRequests computes what a pod asks of a node, the way the kubelet will
// admit it (upstream: k8s.io/component-helpers/resource PodRequests, written
// out here because that module is not a dependency):
//
//   - regular containers run together: their requests add up;
//   - init containers run one after another, before them: the pod needs the
//     largest of them, so the result is max(sum of containers, each init
//     container);
//   - sidecars (init containers with restartPolicy Always) keep running, so
//     they add to the sum and to every init container started after them;
//   - pod-level requests (spec.resources), where set, replace the sum for cpu
//     and memory; the RuntimeClass overhead (spec.overhead) is added on top.
//
// With nonZero, a container that sets no cpu or memory request counts as
// DefaultMilliCPURequest / DefaultMemoryRequest: that is the form scoring uses.
func PodRequests(pod *v1.Pod, nonZero bool) Resource {
	var reqs Resource
	for i := range pod.Spec.Containers {
		c := containerRequests(pod.Spec.Containers[i].Resources.Requests, nonZero)
		reqs.AddResource(&c)
	}
	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		c := containerRequests(ic.Resources.Requests, nonZero)
		if ic.RestartPolicy != nil && *ic.RestartPolicy == v1.ContainerRestartPolicyAlways {
			reqs.AddResource(&c)
			sidecars.AddResource(&c)
			c = *sidecars.Clone()
		} else {
			c.AddResource(&sidecars)
		}
		initMax.SetMaxResource(&c)
	}
	reqs.SetMaxResource(&initMax)
	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := pr.Requests[v1.ResourceCPU]; ok {
			reqs.MilliCPU = q.MilliValue()
		}
		if q, ok := pr.Requests[v1.ResourceMemory]; ok {
			reqs.Memory = q.Value()
		}
	}
	if pod.Spec.Overhead != nil {
		reqs.Add(pod.Spec.Overhead)
	}
	return reqs
}

// PodInfo is a pod with what the scheduler computes from it once.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is PodRequests(pod, false): what Fit filters on.
	Requests Resource
	// NonZeroRequests is PodRequests(pod, true): what scoring adds up.
	NonZeroRequests Resource
	// The pod's inter-pod (anti-)affinity terms, parsed (InterPodAffinity
	// reads them, for the pod being scheduled and for the pods on nodes).
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// ParseError is set when a term's selector does not parse; the terms
	// that parsed are kept.
	ParseError error
}

// NewPodInfo computes a PodInfo.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod, Requests: PodRequests(pod, false), NonZeroRequests: PodRequests(pod, true)}
	pi.parseAffinity()
	return pi
}

// QueuedPodInfo is a pod in the scheduling queue, with its attempt history.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod last entered the queue (added, or put back
	// after a failed attempt); the back-off counts from it and PrioritySort
	// breaks priority ties with it.
	Timestamp time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// InitialAttemptTimestamp is when the pod was first popped; nil before.
	InitialAttemptTimestamp *time.Time
	// UnschedulablePlugins are the plugins that rejected the pod in its last
	// attempt; only events those plugins registered move it back.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending in the last attempt.
	PendingPlugins sets.Set[string]
}

// NodeInfo is a node with the pods the scheduler counts on it, and their
// total requests (upstream: framework.NodeInfo). The cache keeps one per node
// and hands each scheduling cycle a snapshot (a copy).
type NodeInfo struct {
	node *v1.Node
	// Pods are the pods bound to the node, or assumed on it.
	Pods []*PodInfo
	// Requested is the sum of the pods' requests: what Fit compares with
	// Allocatable.
	Requested Resource
	// NonZeroRequested is the same sum with the scoring defaults for pods
	// that request nothing.
	NonZeroRequested Resource
	// Allocatable is the node's status.allocatable.
	//
	// The three are values, not pointers (upstream has pointers): the
	// filters and scores read them for hundreds of nodes per pod, and one
	// object per node instead of four keeps those reads in fewer cache lines.
	Allocatable Resource
	// PodsWithAffinity are the pods with any inter-pod (anti-)affinity
	// term; PodsWithRequiredAntiAffinity those with a required
	// anti-affinity term. InterPodAffinity only needs to look at these.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	// UsedPorts are the host ports the pods hold (NodePorts).
	UsedPorts HostPortInfo
	// ImageSizes maps every name of every image the kubelet reports in
	// node.status.images (normalized to name:tag) to its size in bytes
	// (ImageLocality). It is replaced, never modified.
	ImageSizes map[string]int64
}

// NewNodeInfo returns a NodeInfo with no node and the given pods.
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	n := &NodeInfo{}
	for _, p := range pods {
		n.AddPod(p)
	}
	return n
}

// Node returns the node; nil for a NodeInfo that only holds pods whose node
// the cache has not seen yet (or has seen deleted).
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// SetNode sets the node and its allocatable resources. A node whose status
// has no allocatable uses its capacity, as kube-apiserver's defaulting of
// NodeStatus does (pkg/apis/core/v1/defaults.go SetDefaults_NodeStatus).
func (n *NodeInfo) SetNode(node *v1.Node) {
	old := n.node
	n.node = node
	rl := node.Status.Allocatable
	if len(rl) == 0 {
		rl = node.Status.Capacity
	}
	n.Allocatable = *NewResource(rl)
	if old == nil || !imagesEqual(old.Status.Images, node.Status.Images) {
		n.ImageSizes = imageSizes(node.Status.Images)
	}
}

func imagesEqual(a, b []v1.ContainerImage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SizeBytes != b[i].SizeBytes || len(a[i].Names) != len(b[i].Names) {
			return false
		}
		for j := range a[i].Names {
			if a[i].Names[j] != b[i].Names[j] {
				return false
			}
		}
	}
	return true
}

func imageSizes(images []v1.ContainerImage) map[string]int64 {
	if len(images) == 0 {
		return nil
	}
	m := make(map[string]int64, len(images))
	for _, img := range images {
		for _, name := range img.Names {
			m[NormalizedImageName(name)] = img.SizeBytes
		}
	}
	return m
}

// NormalizedImageName adds the ":latest" tag a name without a tag or digest
// means, so "hello" in a pod and "hello:latest" in node.status.images match
// (upstream: imagelocality normalizedImageName).
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

// RemoveNode forgets the node but keeps its pods.
func (n *NodeInfo) RemoveNode() { n.node = nil }

// AddPod counts a pod on the node.
func (n *NodeInfo) AddPod(pod *v1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo counts a pod on the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	n.Requested.AddResource(&pi.Requests)
	n.NonZeroRequested.AddResource(&pi.NonZeroRequests)
	if pi.HasAffinity() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.updateUsedPorts(pi.Pod, true)
}

func (n *NodeInfo) updateUsedPorts(pod *v1.Pod, add bool) {
	for _, p := range HostPorts(pod) {
		if add {
			if n.UsedPorts == nil {
				n.UsedPorts = HostPortInfo{}
			}
			n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
		} else {
			n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
}

// removeFromList removes the pod with uid from list (order not kept).
func removeFromList(list []*PodInfo, uid types.UID) []*PodInfo {
	for i, pi := range list {
		if pi.Pod.UID == uid {
			last := len(list) - 1
			list[i] = list[last]
			list[last] = nil
			return list[:last]
		}
	}
	return list
}

// RemovePod stops counting the pod with pod's UID.
func (n *NodeInfo) RemovePod(pod *v1.Pod) error {
	for i, pi := range n.Pods {
		if pi.Pod.UID != pod.UID {
			continue
		}
		last := len(n.Pods) - 1
		n.Pods[i] = n.Pods[last]
		n.Pods[last] = nil
		n.Pods = n.Pods[:last]
		n.Requested.SubResource(&pi.Requests)
		n.NonZeroRequested.SubResource(&pi.NonZeroRequests)
		if pi.HasAffinity() {
			n.PodsWithAffinity = removeFromList(n.PodsWithAffinity, pod.UID)
		}
		if len(pi.RequiredAntiAffinityTerms) > 0 {
			n.PodsWithRequiredAntiAffinity = removeFromList(n.PodsWithRequiredAntiAffinity, pod.UID)
		}
		n.updateUsedPorts(pi.Pod, false)
		return nil
	}
	return fmt.Errorf("no corresponding pod %s in pods of node %s", pod.Name, n.nodeName())
}

func (n *NodeInfo) nodeName() string {
	if n.node == nil {
		return "<nil>"
	}
	return n.node.Name
}

// Snapshot returns a copy that later changes to n do not touch (the pod
// objects themselves are shared: nobody modifies them).
func (n *NodeInfo) Snapshot() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		Requested:        *n.Requested.Clone(),
		NonZeroRequested: *n.NonZeroRequested.Clone(),
		Allocatable:      *n.Allocatable.Clone(),
		ImageSizes:       n.ImageSizes,
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	if n.UsedPorts.Len() > 0 {
		c.UsedPorts = n.UsedPorts.Clone()
	}
	return c
}

// String is for test output.
func (n *NodeInfo) String() string {
	names := make([]string, len(n.Pods))
	for i, p := range n.Pods {
		names[i] = p.Pod.Namespace + "/" + p.Pod.Name
	}
	return fmt.Sprintf("&NodeInfo{Node:%s, Pods:%v, Requested:%+v, Allocatable:%+v}", n.nodeName(), names, n.Requested, n.Allocatable)
}
