package apiserver

import (
	"context"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

// QueueProvider serves the scheduler's queue (schedulingqueues); the
// scheduler implements it. Like DecisionProvider, the API server keeps
// none of it: it asks the component that has it.
type QueueProvider interface {
	// SchedulingQueue returns the queue now and its change count (its
	// resourceVersion); nil when no scheduler runs.
	SchedulingQueue() (*schedv1alpha1.SchedulingQueue, uint64)
	// QueueChanged returns a channel closed once the change count passes
	// seq.
	QueueChanged(seq uint64) <-chan struct{}
}

// queueCoalesce is how long a queue watch gathers changes before it sends
// the queue again: a Deployment of 100 replicas moves each pod through the
// queue several times within a second, and one event per change would send
// the whole queue hundreds of times. Ten answers a second at most is live
// enough to read.
const queueCoalesce = 100 * time.Millisecond

// schedulingQueuesResource serves
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/schedulingqueues[/default-scheduler][?watch=1]
//
// one object per scheduler: the pods waiting for a node, where each waits
// (activeQ, backoffQ, unschedulablePods, inFlightPods) and the last
// attempt's message. Read-only, cluster-scoped, left out of discovery like
// schedulingdecisions; list and watch work as for the flow resources
// (flow.go), with one difference: the queue is one object whose state is
// what matters, so a watch from an older resourceVersion gets a single
// MODIFIED with the queue now (the states in between are not kept), and
// changes that come close together are sent as one (queueCoalesce).
var schedulingQueuesResource = &flowResource{
	resource: schedv1alpha1.QueueResource, singular: "schedulingqueue", kind: schedv1alpha1.QueueKind, listKind: schedv1alpha1.QueueListKind,
	verbs: []string{"get", "list", "watch"},
	gv:    schedv1alpha1.SchemeGroupVersion,
	columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Active", Type: "integer", Description: "Pods in activeQ: ready to be tried."},
		{Name: "Backoff", Type: "integer", Description: "Pods in backoffQ: waiting for their back-off to end."},
		{Name: "Unschedulable", Type: "integer", Description: "Pods in unschedulablePods: waiting for a cluster event."},
		{Name: "In-Flight", Type: "integer", Description: "Pods being scheduled or bound now."},
	},
	served: func(s *Server) bool { return s.cfg.Queue != nil },
	list: func(s *Server, rv int64) ([]flowObject, int64, error) {
		q, seq := s.cfg.Queue.SchedulingQueue()
		cur := int64(seq)
		switch {
		case rv > cur:
			return nil, 0, tooLargeResourceVersion(rv, cur)
		case rv != 0 && rv < cur:
			return nil, 0, apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
		case q == nil:
			return nil, cur, nil
		}
		return []flowObject{queueObject(q, cur)}, cur, nil
	},
	watch: func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error) {
		_, seq := s.cfg.Queue.SchedulingQueue()
		if rv > int64(seq) {
			return nil, tooLargeResourceVersion(rv, int64(seq))
		}
		ch := make(chan flowEvent, 1)
		go func() {
			defer close(ch)
			last := uint64(rv)
			for {
				select {
				case <-ctx.Done():
					return
				case <-s.cfg.Queue.QueueChanged(last):
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(queueCoalesce):
				}
				q, seq := s.cfg.Queue.SchedulingQueue()
				if q == nil || seq <= last {
					continue
				}
				last = seq
				select {
				case ch <- flowEvent{typ: watch.Modified, obj: queueObject(q, int64(seq)), rv: int64(seq)}:
				case <-ctx.Done():
					return
				}
			}
		}()
		return ch, nil
	},
}

func queueObject(q *schedv1alpha1.SchedulingQueue, rv int64) flowObject {
	q.APIVersion = schedv1alpha1.SchemeGroupVersion.String()
	q.Kind = schedv1alpha1.QueueKind
	q.ResourceVersion = strconv.FormatInt(rv, 10)
	counts := map[string]int{}
	for _, p := range q.Pods {
		counts[p.Queue]++
	}
	return flowObject{
		obj: q, name: q.Name, order: q.Name, rv: rv,
		meta:  metav1.ObjectMeta{Name: q.Name, ResourceVersion: q.ResourceVersion, CreationTimestamp: q.CreationTimestamp},
		cells: []any{q.Name, counts[schedv1alpha1.QueueActive], counts[schedv1alpha1.QueueBackoff], counts[schedv1alpha1.QueueUnschedulable], counts[schedv1alpha1.QueueInFlight]},
	}
}
