package kubelet

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// The eviction manager (upstream: pkg/kubelet/eviction, eviction_manager.go
// and helpers.go): the kubelet watches its node's memory and, before the
// node runs out, ends a pod to get memory back.
//
//	every 10 s (monitoring interval, on the kubelet's clock)
//	  memory.available = allocatable memory - Σ working sets of the pods
//	  below the hard threshold (memory.available<100Mi)?
//	    ├─ MemoryPressure True (KubeletHasInsufficientMemory) at the next
//	    │  node status; the node lifecycle controller taints the node
//	    │  node.kubernetes.io/memory-pressure:NoSchedule, so the scheduler
//	    │  sends no new pods there
//	    └─ rank the pods and evict the first one: its containers are
//	       killed, it ends Failed with reason Evicted, an Evicted event
//	       and a DisruptionTarget condition; its controller makes a
//	       replacement (somewhere with room)
//	  MemoryPressure goes back to False once the threshold has not been
//	  met for the pressure transition period (5 min)
//
// The ranking for memory (upstream rankMemoryPressure): pods whose usage
// exceeds their memory requests first (a BestEffort pod requests nothing,
// so any use exceeds it), then by priority (lowest first), then by how far
// usage is above requests (most first). Critical pods (priority at or
// above system-critical) are never evicted. One pod is evicted per
// interval, as upstream.
//
// Upstream reads memory.available from the node's root cgroup and its
// allocatable signal from the pods' cgroup; a kubetab node runs nothing but
// its pods, so the pods' working sets (cri.ContainerStats, the guests'
// linear memory) are all there is, counted against allocatable. The
// runtime's MemoryPool is the last line below this: a guest whose grow does
// not fit in the node is OOMKilled, as by the kernel's OOM killer.
const (
	// evictionMonitoringInterval is how often the manager looks
	// (housekeeping-interval... upstream's monitoringInterval, 10 s).
	evictionMonitoringInterval = 10 * time.Second
	// evictionPressureTransitionPeriod is how long a node condition stays
	// after its signal was last seen (--eviction-pressure-transition-period).
	evictionPressureTransitionPeriod = 5 * time.Minute
	// systemCriticalPriority: pods at or above it are never evicted
	// (scheduling.SystemCriticalPriority).
	systemCriticalPriority = int32(2000000000)

	// ReasonEvicted is the evicted pod's status.reason and its event's.
	ReasonEvicted = "Evicted"
	// podReasonTerminationByKubelet is the DisruptionTarget condition's
	// reason (v1.PodReasonTerminationByKubelet).
	podReasonTerminationByKubelet = "TerminationByKubelet"

	// The eviction message's parts, upstream's words, trailing spaces
	// included (helpers.go).
	nodeLowMessageFmt      = "The node was low on resource: %v. "
	thresholdMetMessageFmt = "Threshold quantity: %v, available: %v. "
	containerMessageFmt    = "Container %s was using %s, request is %s, has larger consumption of %v. "

	reasonKubeletHasInsufficientMem  = "KubeletHasInsufficientMemory"
	messageKubeletHasInsufficientMem = "kubelet has insufficient memory available"
	EventNodeHasInsufficientMemory   = "NodeHasInsufficientMemory"
)

// DefaultEvictionHard is the hard eviction threshold for memory,
// upstream's default --eviction-hard memory.available<100Mi.
var DefaultEvictionHard = resource.MustParse("100Mi")

// evictionManager is the eviction manager's state.
type evictionManager struct {
	threshold resource.Quantity // memory.available below it: evict

	mu           sync.Mutex // guards the fields below
	lastObserved time.Time  // when memory.available was last below the threshold
	pressure     bool       // MemoryPressure, as the next node status reports it
}

// underMemoryPressure is what the MemoryPressure condition reports.
func (m *evictionManager) underMemoryPressure() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pressure
}

// evictionLoop runs the manager every evictionMonitoringInterval until ctx
// is done.
func (kl *Kubelet) evictionLoop(ctx context.Context) {
	t := kl.clock.NewTicker(evictionMonitoringInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			kl.synchronizeEviction()
		}
	}
}

// podMemory is one pod's memory use, for the ranking and the message.
type podMemory struct {
	pod        *corev1.Pod
	usage      int64 // bytes, all its running containers
	request    int64 // bytes, its memory requests
	containers map[string]int64
}

// synchronizeEviction is one pass of the manager (upstream: synchronize):
// observe, update the condition, evict at most one pod.
func (kl *Kubelet) synchronizeEviction() {
	now := kl.clock.Now()
	pods := kl.activePodsMemory()
	var used int64
	for _, p := range pods {
		used += p.usage
	}
	allocatable := kl.capacity[corev1.ResourceMemory]
	available := allocatable.Value() - used
	m := &kl.eviction
	met := available < m.threshold.Value()
	m.mu.Lock()
	if met {
		m.lastObserved = now
	}
	m.pressure = !m.lastObserved.IsZero() && now.Sub(m.lastObserved) < evictionPressureTransitionPeriod
	m.mu.Unlock()
	if !met {
		return
	}
	rankMemoryPressure(pods)
	for _, p := range pods {
		if p.pod.Spec.Priority != nil && *p.pod.Spec.Priority >= systemCriticalPriority {
			continue
		}
		kl.evictPod(p, m.threshold, available)
		return // one pod per pass
	}
}

// activePodsMemory is the memory use of the node's pods that still run:
// not finished, not being deleted, not already evicted.
func (kl *Kubelet) activePodsMemory() []*podMemory {
	kl.mu.Lock()
	inf := kl.informer
	kl.mu.Unlock()
	if inf == nil {
		return nil
	}
	byUID := map[types.UID]*podMemory{}
	var out []*podMemory
	for _, pod := range inf.List() {
		if pod.DeletionTimestamp != nil || isTerminal(pod.Status.Phase) || kl.evictionMessage(pod.UID) != "" {
			continue
		}
		pm := &podMemory{pod: pod, request: podMemoryRequest(pod), containers: map[string]int64{}}
		byUID[pod.UID] = pm
		out = append(out, pm)
	}
	running := cri.ContainerRunning
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{State: &running}) {
		pm := byUID[types.UID(c.PodUID)]
		if pm == nil {
			continue
		}
		ws := int64(kl.runtime.WorkingSetBytes(c.ID))
		pm.usage += ws
		pm.containers[c.Name] += ws
	}
	return out
}

// podMemoryRequest is the pod's memory request: its containers' requests
// together, or its largest init container's if that is more (upstream's
// resourcehelper.PodRequests).
func podMemoryRequest(pod *corev1.Pod) int64 {
	var sum, initMax int64
	for _, c := range pod.Spec.Containers {
		sum += c.Resources.Requests.Memory().Value()
	}
	for _, c := range pod.Spec.InitContainers {
		initMax = max(initMax, c.Resources.Requests.Memory().Value())
	}
	return max(sum, initMax)
}

// rankMemoryPressure orders pods by who goes first (upstream
// rankMemoryPressure: exceedMemoryRequests, then priority, then memory).
func rankMemoryPressure(pods []*podMemory) {
	prio := func(p *corev1.Pod) int32 {
		if p.Spec.Priority != nil {
			return *p.Spec.Priority
		}
		return 0
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if ea, eb := a.usage > a.request, b.usage > b.request; ea != eb {
			return ea
		}
		if pa, pb := prio(a.pod), prio(b.pod); pa != pb {
			return pa < pb
		}
		return a.usage-a.request > b.usage-b.request
	})
}

// evictPod ends a pod to reclaim memory (upstream evictPod): the pod
// worker kills its containers and writes the Failed/Evicted status; the
// Evicted event comes now.
func (kl *Kubelet) evictPod(p *podMemory, threshold resource.Quantity, available int64) {
	msg := fmt.Sprintf(nodeLowMessageFmt, corev1.ResourceMemory)
	msg += fmt.Sprintf(thresholdMetMessageFmt, threshold.String(), resource.NewQuantity(max(available, 0), resource.BinarySI).String())
	for _, c := range p.pod.Spec.Containers {
		usage, ok := p.containers[c.Name]
		if !ok {
			continue
		}
		req := c.Resources.Requests.Memory()
		if usage > req.Value() {
			msg += fmt.Sprintf(containerMessageFmt, c.Name, resource.NewQuantity(usage, resource.BinarySI).String(), req.String(), corev1.ResourceMemory)
		}
	}
	kl.mu.Lock()
	rec := kl.pods[p.pod.UID]
	if rec != nil {
		rec.evicted = msg
	}
	kl.mu.Unlock()
	if rec == nil {
		return
	}
	kl.recorder.Eventf(p.pod, corev1.EventTypeWarning, ReasonEvicted, "%s", msg)
	kl.enqueue(p.pod.UID)
}

// evictionMessage is why the eviction manager ended the pod; "" if it did
// not.
func (kl *Kubelet) evictionMessage(uid types.UID) string {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		return rec.evicted
	}
	return ""
}

// applyEviction marks an evicted pod's status as upstream's evictPod does
// through the status manager: phase Failed, reason Evicted, the message,
// and a DisruptionTarget condition.
func applyEviction(s *corev1.PodStatus, msg string, now metav1.Time) {
	s.Phase = corev1.PodFailed
	s.Reason = ReasonEvicted
	s.Message = msg
	for i := range s.Conditions {
		if s.Conditions[i].Type == corev1.DisruptionTarget {
			return
		}
	}
	// First, where the next sync keeps the conditions the kubelet does not
	// generate itself.
	s.Conditions = append([]corev1.PodCondition{{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: now,
		Reason: podReasonTerminationByKubelet, Message: msg,
	}}, s.Conditions...)
}
