package replicaset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// calculateStatus computes a ReplicaSet's status from its active pods
// (upstream: replica_set_utils.go calculateStatus). fullyLabeledReplicas
// counts pods carrying every label of the template, not just the
// selector's; a failed create or delete shows as the ReplicaFailure
// condition until a sync succeeds.
func calculateStatus(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	newStatus := rs.Status
	newStatus.Conditions = append([]appsv1.ReplicaSetCondition(nil), rs.Status.Conditions...)
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	var fullyLabeled, ready, available int32
	for _, p := range active {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if controller.IsPodReady(p) {
			ready++
			if controller.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	failure := getCondition(rs.Status, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		reason := ""
		if diff := len(active) - int(controller.Replicas(rs.Spec.Replicas)); diff < 0 {
			reason = controller.FailedCreatePodReason
		} else if diff > 0 {
			reason = controller.FailedDeletePodReason
		}
		setCondition(&newStatus, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		removeCondition(&newStatus, appsv1.ReplicaSetReplicaFailure)
	}
	newStatus.Replicas = int32(len(active))
	newStatus.FullyLabeledReplicas = fullyLabeled
	newStatus.ReadyReplicas = ready
	newStatus.AvailableReplicas = available
	n := int32(len(terminating))
	newStatus.TerminatingReplicas = &n
	return newStatus
}

// filterTerminatingPods returns the pods being deleted that have not
// finished: they still run, but no longer count as replicas.
func filterTerminatingPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// filterClaimedPods returns the pods controlled by rs that match selector.
func filterClaimedPods(rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == rs.UID && selector.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func getCondition(status appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

func setCondition(status *appsv1.ReplicaSetStatus, c appsv1.ReplicaSetCondition) {
	if cur := getCondition(*status, c.Type); cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	removeCondition(status, c.Type)
	status.Conditions = append(status.Conditions, c)
}

func removeCondition(status *appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) {
	var out []appsv1.ReplicaSetCondition
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}
