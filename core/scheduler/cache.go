package scheduler

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Cache is the scheduler's own view of the nodes and of the pods on them,
// kept current by the informers (upstream: pkg/scheduler/backend/cache).
//
// It differs from the API server's state in one way that matters: a pod the
// scheduler has just picked a node for is *assumed* there at once, before the
// binding reaches the API server. The next scheduling cycle, which starts
// right away, then sees the cpu and memory as taken. Without that, two pods
// scheduled back to back would both see the same free room.
//
//	           AssumePod                  AddPod (informer sees spec.nodeName)
//	(queue) ──────────────▶ assumed ──────────────────────────────────▶ added
//	                           │  ForgetPod (bind failed)                 │ RemovePod
//	                           ▼                                          ▼
//	                        (gone)                                      (gone)
//
// Every scheduling cycle works on a Snapshot, a copy refreshed by
// UpdateSnapshot; only the nodes that changed since the last refresh are
// copied.
type Cache struct {
	// mu guards every field. It is never held while calling out.
	mu sync.Mutex
	// nodes holds a NodeInfo per node name, including "ghost" entries with
	// pods but no node (a pod bound to a node the cache has not seen yet).
	nodes map[string]*framework.NodeInfo
	// order is the names of nodes with a Node, in the order they were added.
	order []string
	pods  map[types.UID]*podState
	// assumed counts the pods in pods that are assumed.
	assumed int
	// dirty are nodes changed since the last UpdateSnapshot.
	dirty sets.Set[string]
	// orderChanged: a node was added or removed since the last UpdateSnapshot.
	orderChanged bool
}

type podState struct {
	pod             *v1.Pod
	assumed         bool
	bindingFinished bool
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{nodes: map[string]*framework.NodeInfo{}, pods: map[types.UID]*podState{}, dirty: sets.New[string]()}
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// AddNode adds or updates a node.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[node.Name] = ni
	}
	if ni.Node() == nil {
		c.order = append(c.order, node.Name)
		c.orderChanged = true
	}
	ni.SetNode(node)
	c.dirty.Insert(node.Name)
}

// UpdateNode replaces a node.
func (c *Cache) UpdateNode(_, node *v1.Node) { c.AddNode(node) }

// RemoveNode removes a node. Its pods stay counted until they are deleted
// (the pod garbage collector deletes them upstream).
func (c *Cache) RemoveNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok || ni.Node() == nil {
		return
	}
	ni.RemoveNode()
	if len(ni.Pods) == 0 {
		delete(c.nodes, node.Name)
	}
	for i, n := range c.order {
		if n == node.Name {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.orderChanged = true
	c.dirty.Insert(node.Name)
}

// addPod counts pod on its node; called with mu held.
func (c *Cache) addPod(pod *v1.Pod) {
	ni, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[pod.Spec.NodeName] = ni
	}
	ni.AddPod(pod)
	c.dirty.Insert(pod.Spec.NodeName)
}

// removePod stops counting pod; called with mu held.
func (c *Cache) removePod(pod *v1.Pod) {
	ni, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return
	}
	_ = ni.RemovePod(pod)
	if ni.Node() == nil && len(ni.Pods) == 0 {
		delete(c.nodes, pod.Spec.NodeName)
	}
	c.dirty.Insert(pod.Spec.NodeName)
}

// AssumePod counts a pod (whose spec.nodeName the scheduler has set on its
// own copy) on its node before it is bound.
func (c *Cache) AssumePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %v(%v) is in the cache, so can't be assumed", podKey(pod), pod.UID)
	}
	c.addPod(pod)
	c.pods[pod.UID] = &podState{pod: pod, assumed: true}
	c.assumed++
	return nil
}

// FinishBinding notes that the binding of an assumed pod was sent. The pod
// stays assumed until the informer reports it bound (AddPod).
func (c *Cache) FinishBinding(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok && ps.assumed {
		ps.bindingFinished = true
	}
}

// ForgetPod undoes AssumePod (the bind failed).
func (c *Cache) ForgetPod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok || !ps.assumed {
		return fmt.Errorf("pod %v(%v) wasn't assumed so cannot be forgotten", podKey(pod), pod.UID)
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
	c.assumed--
	return nil
}

// AddPod records a pod the informer saw bound. It confirms an assumed pod
// (moving it if the API server put it elsewhere).
func (c *Cache) AddPod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	switch {
	case !ok:
		c.addPod(pod)
		c.pods[pod.UID] = &podState{pod: pod}
	case ps.assumed:
		c.removePod(ps.pod)
		c.addPod(pod)
		ps.pod, ps.assumed = pod, false
		c.assumed--
	default:
		return fmt.Errorf("pod %v(%v) was already in added state", podKey(pod), pod.UID)
	}
	return nil
}

// UpdatePod replaces a bound pod.
func (c *Cache) UpdatePod(_, pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		c.addPod(pod)
		c.pods[pod.UID] = &podState{pod: pod}
		return nil
	}
	c.removePod(ps.pod)
	c.addPod(pod)
	if ps.assumed {
		c.assumed--
	}
	ps.pod, ps.assumed = pod, false
	return nil
}

// RemovePod forgets a pod that was deleted or finished.
func (c *Cache) RemovePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return fmt.Errorf("pod %v(%v) is not found in scheduler cache, so cannot be removed from it", podKey(pod), pod.UID)
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
	if ps.assumed {
		c.assumed--
	}
	return nil
}

// IsAssumedPod reports whether pod is assumed and not yet seen bound.
func (c *Cache) IsAssumedPod(pod *v1.Pod) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	return ok && ps.assumed
}

// NodeCount is the number of nodes.
func (c *Cache) NodeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// BoundPodCount is the number of pods the informer has seen bound (assumed
// ones not included).
func (c *Cache) BoundPodCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods) - c.assumed
}

// PodCount is the number of pods, assumed ones included.
func (c *Cache) PodCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// UpdateSnapshot brings snap up to date: it copies the nodes that changed
// since the last call (a NodeInfo of an older snapshot is never modified),
// rebuilds the node list if nodes came or went, and the lists of nodes with
// affinity pods if a node that changed is or was in them.
func (c *Cache) UpdateSnapshot(snap *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rebuildAffinity := c.orderChanged
	for name := range c.dirty {
		ni := c.nodes[name]
		old := snap.nodeInfoMap[name]
		if old != nil && (len(old.PodsWithAffinity) > 0 || len(old.PodsWithRequiredAntiAffinity) > 0) {
			rebuildAffinity = true
		}
		if ni == nil || ni.Node() == nil {
			delete(snap.nodeInfoMap, name)
			continue
		}
		cp := ni.Snapshot()
		if len(cp.PodsWithAffinity) > 0 || len(cp.PodsWithRequiredAntiAffinity) > 0 {
			rebuildAffinity = true
		}
		snap.nodeInfoMap[name] = cp
		if i, ok := snap.index[name]; ok && !c.orderChanged {
			snap.nodeInfoList[i] = cp
		}
	}
	if c.orderChanged {
		snap.nodeInfoList = snap.nodeInfoList[:0]
		clear(snap.index)
		for i, name := range c.order {
			snap.nodeInfoList = append(snap.nodeInfoList, snap.nodeInfoMap[name])
			snap.index[name] = i
		}
	}
	if rebuildAffinity {
		snap.havePodsWithAffinity = nil
		snap.havePodsWithRequiredAntiAffinity = nil
		for _, ni := range snap.nodeInfoList {
			if len(ni.PodsWithAffinity) > 0 {
				snap.havePodsWithAffinity = append(snap.havePodsWithAffinity, ni)
			}
			if len(ni.PodsWithRequiredAntiAffinity) > 0 {
				snap.havePodsWithRequiredAntiAffinity = append(snap.havePodsWithRequiredAntiAffinity, ni)
			}
		}
	}
	clear(c.dirty)
	c.orderChanged = false
}

// Snapshot is the cluster as one scheduling cycle sees it: a copy of the
// cache's NodeInfos that does not change while the cycle runs (upstream:
// pkg/scheduler/backend/cache/snapshot.go). It is what plugins read through
// framework.Handle.SnapshotSharedLister.
type Snapshot struct {
	nodeInfoMap  map[string]*framework.NodeInfo
	nodeInfoList []*framework.NodeInfo
	index        map[string]int
	// The nodes with pods that have (anti-)affinity terms, and with pods
	// that have required anti-affinity terms (InterPodAffinity).
	havePodsWithAffinity             []*framework.NodeInfo
	havePodsWithRequiredAntiAffinity []*framework.NodeInfo
}

var (
	_ framework.SharedLister   = (*Snapshot)(nil)
	_ framework.NodeInfoLister = (*Snapshot)(nil)
)

// NewEmptySnapshot returns a snapshot with no nodes.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, index: map[string]int{}}
}

// NewSnapshot builds a snapshot from pods and nodes, for tests.
func NewSnapshot(pods []*v1.Pod, nodes []*v1.Node) *Snapshot {
	c := NewCache()
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		_ = c.AddPod(p)
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// NodeInfos implements framework.SharedLister.
func (s *Snapshot) NodeInfos() framework.NodeInfoLister { return s }

// List implements framework.NodeInfoLister.
func (s *Snapshot) List() ([]*framework.NodeInfo, error) { return s.nodeInfoList, nil }

// HavePodsWithAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithAffinity, nil
}

// HavePodsWithRequiredAntiAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithRequiredAntiAffinity, nil
}

// Get implements framework.NodeInfoLister.
func (s *Snapshot) Get(nodeName string) (*framework.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[nodeName]; ok && ni.Node() != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", nodeName)
}

// NumNodes is the number of nodes in the snapshot.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }
