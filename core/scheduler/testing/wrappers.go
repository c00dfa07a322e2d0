// Package testing has fixture builders for scheduler tests, shaped like
// upstream's pkg/scheduler/testing/wrappers.go, so a test reads
//
//	st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
//	st.MakeNode().Name("n").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
//
// Import it as st.
package testing

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PauseImage is the image of the containers the builders add.
const PauseImage = "registry.k8s.io/pause:3.10"

// PodWrapper builds a pod.
type PodWrapper struct{ v1.Pod }

// MakePod starts a pod in namespace "default" with the default scheduler
// name (upstream's MakePod leaves both empty; the API server would default
// them, and tests here often skip the API server).
func MakePod() *PodWrapper {
	return &PodWrapper{v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault},
		Spec:       v1.PodSpec{SchedulerName: v1.DefaultSchedulerName},
	}}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *v1.Pod { return &p.Pod }

// Name sets the name (and, if unset, a UID derived from it).
func (p *PodWrapper) Name(s string) *PodWrapper {
	p.SetName(s)
	if p.Pod.UID == "" {
		p.Pod.UID = types.UID("uid-" + s)
	}
	return p
}

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(s string) *PodWrapper { p.SetNamespace(s); return p }

// UID sets the UID.
func (p *PodWrapper) UID(s string) *PodWrapper { p.SetUID(types.UID(s)); return p }

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(s string) *PodWrapper { p.Spec.SchedulerName = s; return p }

// Node sets spec.nodeName (a bound pod).
func (p *PodWrapper) Node(s string) *PodWrapper { p.Spec.NodeName = s; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.Spec.Priority = &v; return p }

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Terminating sets a deletion timestamp.
func (p *PodWrapper) Terminating() *PodWrapper {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

// Toleration adds a toleration of every effect of the taint key.
func (p *PodWrapper) Toleration(key string) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists})
	return p
}

// Container adds a container with no requests.
func (p *PodWrapper) Container(image string) *PodWrapper {
	name := fmt.Sprintf("con%d", len(p.Spec.Containers))
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: name, Image: image})
	return p
}

// Req adds a container with these requests ("cpu": "500m").
func (p *PodWrapper) Req(res map[v1.ResourceName]string) *PodWrapper {
	name := fmt.Sprintf("con%d", len(p.Spec.Containers))
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{
		Name: name, Image: PauseImage,
		Resources: v1.ResourceRequirements{Requests: ResourceList(res)},
	})
	return p
}

// InitReq adds an init container with these requests.
func (p *PodWrapper) InitReq(res map[v1.ResourceName]string) *PodWrapper {
	name := fmt.Sprintf("init%d", len(p.Spec.InitContainers))
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
		Name: name, Image: PauseImage,
		Resources: v1.ResourceRequirements{Requests: ResourceList(res)},
	})
	return p
}

// SidecarReq adds an init container with restartPolicy Always (a sidecar)
// with these requests.
func (p *PodWrapper) SidecarReq(res map[v1.ResourceName]string) *PodWrapper {
	p.InitReq(res)
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers[len(p.Spec.InitContainers)-1].RestartPolicy = &always
	return p
}

// NodeWrapper builds a node.
type NodeWrapper struct{ v1.Node }

// MakeNode starts a node.
func MakeNode() *NodeWrapper { return &NodeWrapper{} }

// Obj returns the node.
func (n *NodeWrapper) Obj() *v1.Node { return &n.Node }

// Name sets the name and the kubernetes.io/hostname label.
func (n *NodeWrapper) Name(s string) *NodeWrapper {
	n.SetName(s)
	n.UID = types.UID("uid-" + s)
	return n.Label(v1.LabelHostname, s)
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// Capacity sets status.capacity and status.allocatable.
func (n *NodeWrapper) Capacity(res map[v1.ResourceName]string) *NodeWrapper {
	n.Status.Capacity = ResourceList(res)
	n.Status.Allocatable = ResourceList(res)
	return n
}

// Unschedulable sets spec.unschedulable (a cordoned node).
func (n *NodeWrapper) Unschedulable(b bool) *NodeWrapper { n.Spec.Unschedulable = b; return n }

// Taints sets spec.taints.
func (n *NodeWrapper) Taints(taints []v1.Taint) *NodeWrapper { n.Spec.Taints = taints; return n }

// Ready adds a Ready=True condition.
func (n *NodeWrapper) Ready() *NodeWrapper {
	n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue})
	return n
}

// ResourceList parses quantities; it panics on a bad one (a test bug).
func ResourceList(res map[v1.ResourceName]string) v1.ResourceList {
	rl := v1.ResourceList{}
	for name, q := range res {
		rl[name] = resource.MustParse(q)
	}
	return rl
}
