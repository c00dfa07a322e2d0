package client

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// Recorder writes core/v1 Events about objects, as client-go's
// tools/record.EventRecorder does for upstream components: "Scheduled",
// "Pulled", "ScalingReplicaSet" ... are all Events a learner reads with
// `kubectl get events` or at the bottom of `kubectl describe`.
type Recorder struct {
	client    *Client
	component string // source.component: "default-scheduler", "kubelet"
	host      string // source.host: the node, for kubelets
	clock     clock.PassiveClock
}

// NewRecorder returns a recorder whose events name component (and host, for
// a kubelet) as their source.
func NewRecorder(c *Client, component, host string, clk clock.PassiveClock) *Recorder {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Recorder{client: c, component: component, host: host, clock: clk}
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
	_, _ = r.client.Events().Create(context.Background(), ev)
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
