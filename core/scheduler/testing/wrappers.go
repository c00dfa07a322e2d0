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

// PriorityClassName sets spec.priorityClassName (the Priority admission
// plugin then sets spec.priority).
func (p *PodWrapper) PriorityClassName(s string) *PodWrapper { p.Spec.PriorityClassName = s; return p }

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

// Tolerations adds tolerations.
func (p *PodWrapper) Tolerations(t ...v1.Toleration) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, t...)
	return p
}

// NodeSelector sets spec.nodeSelector.
func (p *PodWrapper) NodeSelector(m map[string]string) *PodWrapper {
	p.Spec.NodeSelector = m
	return p
}

func (p *PodWrapper) nodeAffinity() *v1.NodeAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return p.Spec.Affinity.NodeAffinity
}

// NodeAffinityIn adds a required node affinity term "key In vals" (each
// call adds a term; terms are ORed).
func (p *PodWrapper) NodeAffinityIn(key string, vals ...string) *PodWrapper {
	return p.NodeAffinityTerm(v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: vals})
}

// NodeAffinityTerm adds a required node affinity term with these
// requirements (ANDed).
func (p *PodWrapper) NodeAffinityTerm(reqs ...v1.NodeSelectorRequirement) *PodWrapper {
	na := p.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	ns := na.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: reqs})
	return p
}

// PreferredNodeAffinityIn adds a preferred node affinity term.
func (p *PodWrapper) PreferredNodeAffinityIn(weight int32, key string, vals ...string) *PodWrapper {
	na := p.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, v1.PreferredSchedulingTerm{
		Weight:     weight,
		Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: vals}}},
	})
	return p
}

// SpreadConstraint adds a topology spread constraint over the pods with the
// label key=value.
func (p *PodWrapper) SpreadConstraint(maxSkew int32, topologyKey string, mode v1.UnsatisfiableConstraintAction, key, value string) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: mode,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
	})
	return p
}

// PodAffinityKind says which kind of pod (anti-)affinity term to add.
type PodAffinityKind int

// Kinds of pod (anti-)affinity terms.
const (
	Required PodAffinityKind = iota
	Preferred
)

func (p *PodWrapper) affinity() *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

func term(key, value, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
		TopologyKey:   topologyKey,
	}
}

// PodAffinity adds a pod affinity term for pods labelled key=value within
// topologyKey (a preferred one gets weight 1 unless WeightedPodAffinity).
func (p *PodWrapper) PodAffinity(key, value, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return p.WeightedPodAffinity(1, key, value, topologyKey, kind)
}

// WeightedPodAffinity is PodAffinity with a weight for a preferred term.
func (p *PodWrapper) WeightedPodAffinity(weight int32, key, value, topologyKey string, kind PodAffinityKind) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	t := term(key, value, topologyKey)
	if kind == Required {
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	} else {
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	}
	return p
}

// PodAntiAffinity adds a pod anti-affinity term.
func (p *PodWrapper) PodAntiAffinity(key, value, topologyKey string, kind PodAffinityKind) *PodWrapper {
	return p.WeightedPodAntiAffinity(1, key, value, topologyKey, kind)
}

// WeightedPodAntiAffinity is PodAntiAffinity with a weight for a preferred
// term.
func (p *PodWrapper) WeightedPodAntiAffinity(weight int32, key, value, topologyKey string, kind PodAffinityKind) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	t := term(key, value, topologyKey)
	if kind == Required {
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	} else {
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	}
	return p
}

// HostPort adds a container with a host port (TCP, all IPs unless hostIP
// is given).
func (p *PodWrapper) HostPort(port int32, hostIP ...string) *PodWrapper {
	name := fmt.Sprintf("con%d", len(p.Spec.Containers))
	cp := v1.ContainerPort{ContainerPort: 8080, HostPort: port, Protocol: v1.ProtocolTCP}
	if len(hostIP) > 0 {
		cp.HostIP = hostIP[0]
	}
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: name, Image: PauseImage, Ports: []v1.ContainerPort{cp}})
	return p
}

// OwnedBy sets a controller owner reference (apiVersion, kind, name).
func (p *PodWrapper) OwnedBy(apiVersion, kind, name string) *PodWrapper {
	yes := true
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes,
	})
	return p
}

// PreemptionPolicy sets spec.preemptionPolicy.
func (p *PodWrapper) PreemptionPolicy(policy v1.PreemptionPolicy) *PodWrapper {
	p.Spec.PreemptionPolicy = &policy
	return p
}

// StartTime sets status.startTime.
func (p *PodWrapper) StartTime(t metav1.Time) *PodWrapper {
	p.Status.StartTime = &t
	return p
}

// NominatedNodeName sets status.nominatedNodeName.
func (p *PodWrapper) NominatedNodeName(n string) *PodWrapper {
	p.Status.NominatedNodeName = n
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

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect v1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Images sets status.images: name -> size in bytes.
func (n *NodeWrapper) Images(images map[string]int64) *NodeWrapper {
	n.Status.Images = nil
	for name, size := range images {
		n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{name}, SizeBytes: size})
	}
	return n
}

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
