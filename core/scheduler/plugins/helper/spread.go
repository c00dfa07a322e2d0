package helper

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// DefaultSelector is the selector of the pods that "belong together" with
// pod, for default topology spreading: the union of the selectors of the
// Services that select the pod and of the ReplicationController, ReplicaSet
// or StatefulSet that controls it (upstream: plugins/helper/spread.go). The
// pods of one Deployment's ReplicaSet therefore spread across nodes even
// though nobody asked. An empty selector means "spread with nothing".
func DefaultSelector(pod *v1.Pod, l framework.Listers) labels.Selector {
	set := labels.Set{}
	if l.Services != nil {
		for _, svc := range l.Services.List() {
			if svc.Namespace != pod.Namespace || len(svc.Spec.Selector) == 0 {
				continue
			}
			if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				set = labels.Merge(set, svc.Spec.Selector)
			}
		}
	}
	selector := set.AsSelector()
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	addSelector := func(ls *metav1.LabelSelector) {
		other, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return
		}
		if reqs, ok := other.Requirements(); ok {
			selector = selector.Add(reqs...)
		}
	}
	switch {
	case owner.APIVersion == "v1" && owner.Kind == "ReplicationController" && l.ReplicationControllers != nil:
		if rc, ok := l.ReplicationControllers.Get(pod.Namespace, owner.Name); ok {
			set = labels.Merge(set, rc.Spec.Selector)
			selector = set.AsSelector()
		}
	case owner.APIVersion == appsv1.SchemeGroupVersion.String() && owner.Kind == "ReplicaSet" && l.ReplicaSets != nil:
		if rs, ok := l.ReplicaSets.Get(pod.Namespace, owner.Name); ok {
			addSelector(rs.Spec.Selector)
		}
	case owner.APIVersion == appsv1.SchemeGroupVersion.String() && owner.Kind == "StatefulSet" && l.StatefulSets != nil:
		if ss, ok := l.StatefulSets.Get(pod.Namespace, owner.Name); ok {
			addSelector(ss.Spec.Selector)
		}
	}
	return selector
}
