package scheduler

import (
	"reflect"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// addEventHandlers connects the informers to the queue and the cache
// (upstream: pkg/scheduler/eventhandlers.go). One pod informer feeds both:
//
//   - a pod with no spec.nodeName whose spec.schedulerName is ours goes to
//     the queue (a pod for another scheduler is left alone);
//   - a pod with spec.nodeName, whoever put it there, goes to the cache, so
//     its requests count on its node;
//   - a pod moving from the first kind to the second (it was bound) leaves
//     the queue and enters the cache, confirming an assumed pod.
//
// Node changes and pod deletions are also cluster events that may make
// waiting pods schedulable: they are passed to
// MoveAllToActiveOrBackoffQueue.
func (s *Scheduler) addEventHandlers() {
	s.podInformer.AddHandler(client.Handler[*v1.Pod]{
		OnAdd:    s.onPodAdd,
		OnUpdate: s.onPodUpdate,
		OnDelete: s.onPodDelete,
	})
	s.nodeInformer.AddHandler(client.Handler[*v1.Node]{
		OnAdd: func(node *v1.Node) {
			s.cache.AddNode(node)
			s.queue.MoveAllToActiveOrBackoffQueue(framework.NodeAdd)
		},
		OnUpdate: func(old, node *v1.Node) {
			s.cache.UpdateNode(old, node)
			for _, ev := range framework.NodeSchedulingPropertiesChange(node, old) {
				s.queue.MoveAllToActiveOrBackoffQueue(ev)
			}
		},
		OnDelete: func(node *v1.Node) {
			s.cache.RemoveNode(node)
			// Fewer domains can help a pod waiting on topology spread.
			s.queue.MoveAllToActiveOrBackoffQueue(framework.NodeDelete)
		},
	})
}

func assignedPod(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

// responsibleForPod: the pod asks for this scheduler.
func (s *Scheduler) responsibleForPod(pod *v1.Pod) bool {
	return pod.Spec.SchedulerName == s.schedulerName
}

// waitingForUs: not bound yet, and ours to schedule.
func (s *Scheduler) waitingForUs(pod *v1.Pod) bool {
	return !assignedPod(pod) && s.responsibleForPod(pod)
}

func (s *Scheduler) onPodAdd(pod *v1.Pod) {
	switch {
	case assignedPod(pod):
		s.addPodToCache(pod)
	case s.responsibleForPod(pod):
		s.addPodToSchedulingQueue(pod)
	}
}

// onPodUpdate applies the update to the cache side and the queue side,
// turning a pod that enters or leaves a side into an add or a delete there
// (client-go's FilteringResourceEventHandler does this upstream).
func (s *Scheduler) onPodUpdate(old, pod *v1.Pod) {
	switch oa, na := assignedPod(old), assignedPod(pod); {
	case oa && na:
		s.updatePodInCache(old, pod)
	case !oa && na:
		s.addPodToCache(pod)
	case oa && !na:
		s.deletePodFromCache(old)
	}
	switch ow, nw := s.waitingForUs(old), s.waitingForUs(pod); {
	case ow && nw:
		s.updatePodInSchedulingQueue(old, pod)
	case !ow && nw:
		s.addPodToSchedulingQueue(pod)
	case ow && !nw:
		s.queue.Delete(old)
	}
}

func (s *Scheduler) onPodDelete(pod *v1.Pod) {
	switch {
	case assignedPod(pod):
		s.deletePodFromCache(pod)
	case s.responsibleForPod(pod):
		s.queue.Delete(pod)
	}
	s.decisions.forget(pod)
}

func (s *Scheduler) addPodToSchedulingQueue(pod *v1.Pod) {
	if pod.DeletionTimestamp != nil {
		return // being deleted: there is nothing left to schedule
	}
	s.queue.Add(pod)
}

func (s *Scheduler) updatePodInSchedulingQueue(old, pod *v1.Pod) {
	if old.ResourceVersion == pod.ResourceVersion {
		return
	}
	if pod.DeletionTimestamp != nil {
		s.queue.Delete(pod)
		return
	}
	if s.cache.IsAssumedPod(pod) {
		return // being bound; its own binding will move it to the cache
	}
	s.queue.Update(old, pod)
}

func (s *Scheduler) addPodToCache(pod *v1.Pod) {
	_ = s.cache.AddPod(pod)
	s.queue.MoveAllToActiveOrBackoffQueue(framework.AssignedPodAdd)
}

func (s *Scheduler) updatePodInCache(old, pod *v1.Pod) {
	_ = s.cache.UpdatePod(old, pod)
	if !reflect.DeepEqual(old.Labels, pod.Labels) {
		s.queue.MoveAllToActiveOrBackoffQueue(framework.AssignedPodLabelChange)
	}
	if podScaledDown(old, pod) {
		s.queue.MoveAllToActiveOrBackoffQueue(framework.AssignedPodScaleDown)
	}
}

func (s *Scheduler) deletePodFromCache(pod *v1.Pod) {
	_ = s.cache.RemovePod(pod)
	s.queue.MoveAllToActiveOrBackoffQueue(framework.AssignedPodDelete)
}

// podScaledDown: an in-place resize lowered the pod's requests.
func podScaledDown(old, pod *v1.Pod) bool {
	if reflect.DeepEqual(old.Spec.Containers, pod.Spec.Containers) && reflect.DeepEqual(old.Spec.InitContainers, pod.Spec.InitContainers) {
		return false
	}
	a, b := framework.PodRequests(old, false), framework.PodRequests(pod, false)
	return b.MilliCPU < a.MilliCPU || b.Memory < a.Memory || b.EphemeralStorage < a.EphemeralStorage
}
