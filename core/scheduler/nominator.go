package scheduler

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// nominator remembers which pods are nominated to which node: the pods for
// which preemption deleted victims there, as their
// status.nominatedNodeName says (upstream: the nominator in
// pkg/scheduler/backend/queue). Until such a pod is bound, the filters count
// it on its node for every pod that is not more important (see
// runtime.Framework.RunFilterPluginsWithNominatedPods), so the room made
// for it is not taken by someone else.
type nominator struct {
	// podLister, when set, is consulted before nominating: a pod that is
	// gone or already bound is not nominated.
	podLister framework.Lister[*v1.Pod]

	// mu guards the maps; it is a leaf lock (taken under the queue's mu).
	mu            sync.RWMutex
	nominatedPods map[string][]*framework.PodInfo // node -> pods
	podToNode     map[types.UID]string
	// count is len(podToNode), read without the lock: the filters ask for
	// every node of every cycle, and almost always nobody is nominated.
	count atomic.Int32
}

func newNominator() *nominator {
	return &nominator{nominatedPods: map[string][]*framework.PodInfo{}, podToNode: map[types.UID]string{}}
}

// HasNominatedPods reports whether any pod is nominated.
func (n *nominator) HasNominatedPods() bool { return n.count.Load() > 0 }

// NominatedPodsForNode implements framework.PodNominator. The slice is a
// copy; the PodInfos are shared.
func (n *nominator) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]*framework.PodInfo(nil), n.nominatedPods[nodeName]...)
}

// add nominates pi to nodeName; with override false, to the node its
// status names ("" means no nomination). Any earlier nomination of the pod
// is replaced.
func (n *nominator) add(pi *framework.PodInfo, nodeName string, override bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.addLocked(pi, nodeName, override)
}

func (n *nominator) addLocked(pi *framework.PodInfo, nodeName string, override bool) {
	n.deleteLocked(pi.Pod)
	if !override {
		nodeName = pi.Pod.Status.NominatedNodeName
	}
	if nodeName == "" {
		return
	}
	if n.podLister != nil {
		cur, ok := n.podLister.Get(pi.Pod.Namespace, pi.Pod.Name)
		if !ok || cur.Spec.NodeName != "" {
			return
		}
	}
	n.podToNode[pi.Pod.UID] = nodeName
	n.nominatedPods[nodeName] = append(n.nominatedPods[nodeName], pi)
	n.count.Store(int32(len(n.podToNode)))
}

// delete forgets the pod's nomination.
func (n *nominator) delete(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *nominator) deleteLocked(pod *v1.Pod) {
	node, ok := n.podToNode[pod.UID]
	if !ok {
		return
	}
	list := n.nominatedPods[node]
	for i, pi := range list {
		if pi.Pod.UID == pod.UID {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(n.nominatedPods, node)
	} else {
		n.nominatedPods[node] = list
	}
	delete(n.podToNode, pod.UID)
	n.count.Store(int32(len(n.podToNode)))
}

// update follows a pod update. An update that carries no nominatedNodeName
// on either side keeps the nomination the scheduler made itself (the status
// write that records it may still be on its way).
func (n *nominator) update(oldPod *v1.Pod, newPodInfo *framework.PodInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	node, override := "", false
	if oldPod.Status.NominatedNodeName == "" && newPodInfo.Pod.Status.NominatedNodeName == "" {
		if nnn, ok := n.podToNode[oldPod.UID]; ok {
			node, override = nnn, true
		}
	}
	n.deleteLocked(oldPod)
	n.addLocked(newPodInfo, node, override)
}
