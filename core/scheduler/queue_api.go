package scheduler

import (
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

// SchedulingQueue is the queue now in the shape the API serves
// (schedulingqueues/<scheduler name>), and the queue's change count, which
// is its resourceVersion. Each pod carries its last attempt's result and
// message from the decision records, so a learner reads why it waits.
func (s *Scheduler) SchedulingQueue() (*v1alpha1.SchedulingQueue, uint64) {
	pods, changes := s.queue.Snapshot()
	out := &v1alpha1.SchedulingQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.QueueKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.schedulerName, ResourceVersion: strconv.FormatUint(changes, 10)},
		Pods:       make([]v1alpha1.QueuedPod, 0, len(pods)),
	}
	counts := map[string]int{}
	for _, p := range pods {
		counts[p.Queue]++
		qp := v1alpha1.QueuedPod{
			Namespace: p.Pod.Namespace, Name: p.Pod.Name, UID: string(p.Pod.UID),
			Queue: p.Queue, Attempts: p.Attempts, Timestamp: metav1.NewTime(p.Timestamp),
			UnschedulablePlugins: sortedSet(p.UnschedulablePlugins),
			PendingPlugins:       sortedSet(p.PendingPlugins),
		}
		if p.Pod.Spec.Priority != nil {
			qp.Priority = *p.Pod.Spec.Priority
		}
		if p.InitialAttemptTimestamp != nil {
			t := metav1.NewTime(*p.InitialAttemptTimestamp)
			qp.InitialAttemptTimestamp = &t
		}
		if !p.BackoffExpiration.IsZero() {
			t := metav1.NewTime(p.BackoffExpiration)
			qp.BackoffExpiration = &t
		}
		if d, ok := s.decisions.last(types.NamespacedName{Namespace: p.Pod.Namespace, Name: p.Pod.Name}); ok {
			qp.LastResult, qp.Message = d.Result, d.Message
		}
		out.Pods = append(out.Pods, qp)
	}
	out.Summary = fmt.Sprintf("activeQ:%d; backoffQ:%d; unschedulablePods:%d", counts[ActiveQ], counts[BackoffQ], counts[UnschedulablePods])
	return out, changes
}

// QueueChanged returns a channel closed once the queue's change count
// passes seq (at once if it already has).
func (s *Scheduler) QueueChanged(seq uint64) <-chan struct{} {
	n, ch := s.queue.Changed()
	if n > seq {
		done := make(chan struct{})
		close(done)
		return done
	}
	return ch
}

func sortedSet(set sets.Set[string]) []string {
	if len(set) == 0 {
		return nil
	}
	out := set.UnsortedList()
	sort.Strings(out)
	return out
}
