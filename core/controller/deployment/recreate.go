package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// rolloutRecreate does one step of a Recreate rollout: scale every old
// ReplicaSet to 0, wait until none of their pods runs, then create and
// scale up the new one. Old and new versions never run side by side.
func (dc *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, podMap map[types.UID][]*corev1.Pod) error {
	// No new ReplicaSet yet: scaling up must wait for the scale-down.
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)

	scaledDown := false
	for _, rs := range controller.FilterActiveReplicaSets(oldRSs) {
		scaled, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown || oldPodsRunning(newRS, oldRSs, podMap) {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if newRS == nil {
		if newRS, oldRSs, err = dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return err
		}
		allRSs = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	}
	if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, replicas(d), d); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
}

// oldPodsRunning reports whether an old ReplicaSet still has a pod that
// has not finished (a terminating pod still runs).
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, podMap map[types.UID][]*corev1.Pod) bool {
	if actualReplicaCount(oldRSs) > 0 {
		return true
	}
	for uid, pods := range podMap {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
				return true
			}
		}
	}
	return false
}
