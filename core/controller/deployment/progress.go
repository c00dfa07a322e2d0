package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/client"
)

// syncRolloutStatus writes the status of a rollout, including the
// Progressing condition:
//
//	complete (all updated and available)    True  NewReplicaSetAvailable   ReplicaSet "web-5d9c7b8f6" has successfully progressed.
//	more pods updated, ready or available   True  ReplicaSetUpdated        ReplicaSet "web-5d9c7b8f6" is progressing.
//	no progress for progressDeadlineSeconds False ProgressDeadlineExceeded ReplicaSet "web-5d9c7b8f6" has timed out progressing.
//
// A ReplicaFailure condition of a ReplicaSet (pods cannot be created) is
// copied to the Deployment.
func (dc *Controller) syncRolloutStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	now := dc.clock.Now()
	newStatus := calculateStatus(allRSs, newRS, d, now)
	if !hasProgressDeadline(d) {
		removeCondition(&newStatus, appsv1.DeploymentProgressing)
	}
	current := getCondition(d.Status, appsv1.DeploymentProgressing)
	isComplete := newStatus.Replicas == newStatus.UpdatedReplicas && current != nil && current.Reason == NewRSAvailableReason
	if hasProgressDeadline(d) && !isComplete {
		what := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			what = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case deploymentComplete(d, &newStatus):
			setCondition(&newStatus, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason, what+" has successfully progressed.", now))
		case deploymentProgressing(d, &newStatus):
			// Progress refreshes lastUpdateTime even with the same reason,
			// which setCondition would not do: replace the condition.
			c := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, what+" is progressing.", now)
			if current != nil {
				if current.Status == corev1.ConditionTrue {
					c.LastTransitionTime = current.LastTransitionTime
				}
				removeCondition(&newStatus, appsv1.DeploymentProgressing)
			}
			setCondition(&newStatus, c)
		case deploymentTimedOut(d, &newStatus, now):
			setCondition(&newStatus, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason, what+" has timed out progressing.", now))
		}
	}
	if failures := replicaFailures(allRSs, newRS); len(failures) > 0 {
		setCondition(&newStatus, failures[0])
	} else {
		removeCondition(&newStatus, appsv1.DeploymentReplicaFailure)
	}
	if reflect.DeepEqual(d.Status, newStatus) {
		dc.requeueStuckDeployment(d, newStatus, now)
		return nil
	}
	d.Status = newStatus
	return dc.updateStatus(ctx, d)
}

// replicaFailures returns the ReplicaFailure conditions of the new
// ReplicaSet, or else of the old ones, as Deployment conditions.
func replicaFailures(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	collect := func(rss []*appsv1.ReplicaSet) []appsv1.DeploymentCondition {
		var out []appsv1.DeploymentCondition
		for _, rs := range rss {
			if rs == nil {
				continue
			}
			for _, c := range rs.Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure {
					out = append(out, appsv1.DeploymentCondition{
						Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message,
						LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime,
					})
				}
			}
		}
		return out
	}
	if out := collect([]*appsv1.ReplicaSet{newRS}); len(out) > 0 {
		return out
	}
	return collect(allRSs)
}

// requeueStuckDeployment looks at a rollout again when its progress
// deadline passes, since no event will say that nothing happened.
func (dc *Controller) requeueStuckDeployment(d *appsv1.Deployment, newStatus appsv1.DeploymentStatus, now time.Time) {
	c := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || c == nil || deploymentComplete(d, &newStatus) || c.Reason == TimedOutReason {
		return
	}
	after := c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
	if after < time.Second {
		dc.queue.AddRateLimited(client.Key(d))
		return
	}
	dc.queue.AddAfter(client.Key(d), after+time.Second)
}
