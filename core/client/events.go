package client

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// Recorder writes core/v1 Events about objects, as client-go's
// tools/record.EventRecorder does for upstream components: "Scheduled",
// "Pulled", "ScalingReplicaSet" ... are all Events a learner reads with
// `kubectl get events` or at the bottom of `kubectl describe`.
//
// Like upstream's EventCorrelator, a repeat of the same event (same object,
// type, reason, message and source) is not a new Event: the existing one gets
// count+1 and a new lastTimestamp, which kubectl shows as "(x4 over 2m)".
type Recorder struct {
	client    *Client
	component string // source.component: "default-scheduler", "kubelet"
	host      string // source.host: the node, for kubelets
	clock     clock.PassiveClock

	// mu guards seen: the event recorded last for each key, bounded.
	mu   sync.Mutex
	seen map[string]*corev1.Event
}

// maxSeen bounds the recorder's memory of past events (upstream's LRU holds 4096).
const maxSeen = 4096

// NewRecorder returns a recorder whose events name component (and host, for
// a kubelet) as their source.
func NewRecorder(c *Client, component, host string, clk clock.PassiveClock) *Recorder {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Recorder{client: c, component: component, host: host, clock: clk, seen: map[string]*corev1.Event{}}
}

// Event records an event; eventtype is corev1.EventTypeNormal or Warning.
// Failures to record are dropped, as upstream: events are best effort.
func (r *Recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.emit(obj, "", eventtype, reason, message)
}

// Eventf is Event with a format.
func (r *Recorder) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	r.emit(obj, "", eventtype, reason, fmt.Sprintf(format, args...))
}

// FieldEventf records an event about one part of an object, such as
// "spec.containers{hello}" for a container of a pod.
func (r *Recorder) FieldEventf(obj runtime.Object, fieldPath, eventtype, reason, format string, args ...any) {
	r.emit(obj, fieldPath, eventtype, reason, fmt.Sprintf(format, args...))
}

func (r *Recorder) emit(obj runtime.Object, fieldPath, eventtype, reason, message string) {
	ev := r.build(obj, fieldPath, eventtype, reason, message)
	if ev == nil {
		return
	}
	ctx := context.Background()
	o := ev.InvolvedObject
	key := strings.Join([]string{o.Kind, o.Namespace, o.Name, string(o.UID), o.FieldPath, eventtype, reason, message}, "\x00")
	r.mu.Lock()
	last, repeat := r.seen[key]
	r.mu.Unlock()
	if repeat {
		// The recorder counts from the event it wrote last, as upstream's
		// correlator does from its cache: a component may write events but
		// not read them back (eventsRule: create, update, patch).
		next := last.DeepCopy()
		next.Count++
		next.LastTimestamp = ev.LastTimestamp
		if out, err := r.client.Events().Update(ctx, next); err == nil {
			r.mu.Lock()
			r.seen[key] = out
			r.mu.Unlock()
			return
		}
	}
	// A new event. Its name has the time in nanoseconds; two events about
	// one object in the same instant (a fake clock, or the browser's
	// millisecond clock) take the next free nanosecond.
	base := ev.Name[:strings.LastIndexByte(ev.Name, '.')]
	nanos := ev.FirstTimestamp.UnixNano()
	for i := 0; i < 16; i++ {
		ev.Name = fmt.Sprintf("%s.%x", base, nanos+int64(i))
		out, err := r.client.Events().Create(ctx, ev)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err == nil {
			r.mu.Lock()
			if len(r.seen) >= maxSeen {
				clear(r.seen)
			}
			r.seen[key] = out
			r.mu.Unlock()
		}
		return
	}
}

func (r *Recorder) build(obj runtime.Object, fieldPath, eventtype, reason, message string) *corev1.Event {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		if s, ok := r.client.reg.ForKindOf(obj); ok {
			gvk = s.Resource.GroupVersionKind()
		}
	}
	now := r.clock.Now()
	ns := acc.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ts := metav1.NewTime(now)
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// Upstream names events <object>.<unix nanos in hex>.
			Name:      fmt.Sprintf("%v.%x", acc.GetName(), now.UnixNano()),
			Namespace: ns,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(),
			Namespace: acc.GetNamespace(), Name: acc.GetName(), UID: acc.GetUID(),
			ResourceVersion: acc.GetResourceVersion(), FieldPath: fieldPath,
		},
		Reason:              reason,
		Message:             message,
		Type:                eventtype,
		Source:              corev1.EventSource{Component: r.component, Host: r.host},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		ReportingController: r.component,
		ReportingInstance:   r.host,
	}
}
