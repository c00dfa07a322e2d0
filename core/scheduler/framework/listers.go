package framework

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// NodeInfoLister reads the NodeInfos of a snapshot (upstream:
// pkg/scheduler/framework/listers.go).
type NodeInfoLister interface {
	// List returns every node of the snapshot, in the snapshot's order.
	List() ([]*NodeInfo, error)
	// HavePodsWithAffinityList returns the nodes with at least one pod
	// with inter-pod (anti-)affinity terms.
	HavePodsWithAffinityList() ([]*NodeInfo, error)
	// HavePodsWithRequiredAntiAffinityList returns the nodes with at least
	// one pod with a required anti-affinity term.
	HavePodsWithRequiredAntiAffinityList() ([]*NodeInfo, error)
	// Get returns one node, or an error if it is not in the snapshot.
	Get(nodeName string) (*NodeInfo, error)
}

// SharedLister is the snapshot as plugins see it.
type SharedLister interface {
	NodeInfos() NodeInfoLister
}

// Lister reads one resource from an informer's cache; client.Informer
// implements it. Objects are the cache's own: never modify them.
type Lister[T runtime.Object] interface {
	// Get returns one object ("" namespace for cluster-scoped ones).
	Get(namespace, name string) (T, bool)
	// List returns every object.
	List() []T
}

// Listers are the informer caches the plugins read besides the snapshot
// (upstream plugins get them from the SharedInformerFactory). A field is nil
// when the API server does not serve that resource; plugins then behave as
// if there were none (no Services: default spreading uses the owner only; no
// PodDisruptionBudgets: preemption violates none).
type Listers struct {
	// Pods are all pods (preemption reads the latest version of the pod).
	Pods Lister[*v1.Pod]
	// Namespaces, for the namespaceSelector of pod affinity terms.
	Namespaces Lister[*v1.Namespace]
	// Services, ReplicationControllers, ReplicaSets and StatefulSets select
	// the pods that default topology spreading spreads together.
	Services               Lister[*v1.Service]
	ReplicationControllers Lister[*v1.ReplicationController]
	ReplicaSets            Lister[*appsv1.ReplicaSet]
	StatefulSets           Lister[*appsv1.StatefulSet]
	// PodDisruptionBudgets: preemption prefers victims whose budget allows
	// the disruption.
	PodDisruptionBudgets Lister[*policyv1.PodDisruptionBudget]
}
