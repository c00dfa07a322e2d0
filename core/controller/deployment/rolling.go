package deployment

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// rolloutRolling does one step of a RollingUpdate. With 3 replicas and the
// default 25% / 25% (surge 1, unavailable 0), from template v1 to v2:
//
//	old 3  new 0   create new RS with 1 (3+1 = 4 pods at most)
//	old 3  new 1   wait until the new pod is available
//	old 2  new 1   scale old down by 1 (3 available are required)
//	old 2  new 2   scale new up by 1 ...     until old 0, new 3.
//
// Each step is one sync; the next event (a pod became available, a
// ReplicaSet was resized) brings the next.
func (dc *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)

	scaledUp, err := dc.reconcileNewReplicaSet(ctx, allRSs, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	scaledDown, err := dc.reconcileOldReplicaSets(ctx, allRSs, controller.FilterActiveReplicaSets(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
}

// reconcileNewReplicaSet grows the new ReplicaSet as far as maxSurge
// allows (or shrinks it to spec.replicas).
func (dc *Controller) reconcileNewReplicaSet(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if rsReplicas(newRS) == replicas(d) {
		return false, nil
	}
	if rsReplicas(newRS) > replicas(d) {
		scaled, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, replicas(d), d)
		return scaled, err
	}
	scaled, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, newRSNewReplicas(d, allRSs, newRS), d)
	return scaled, err
}

// reconcileOldReplicaSets shrinks old ReplicaSets as far as
// maxUnavailable allows: first their unhealthy pods, which cost no
// availability, then healthy ones.
func (dc *Controller) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if specReplicaCount(oldRSs) == 0 {
		return false, nil // nothing to scale down
	}
	allPods := specReplicaCount(allRSs)
	minAvailable := replicas(d) - maxUnavailable(d)
	newRSUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := allPods - minAvailable - newRSUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	// Unhealthy old replicas first, or they could block the rollout forever.
	oldRSs, cleaned, err := dc.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, err
	}
	allRSs = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown, err := dc.scaleDownOldReplicaSetsForRollingUpdate(ctx, allRSs, oldRSs, d)
	if err != nil {
		return false, err
	}
	return cleaned+scaledDown > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their unavailable
// pods, oldest first, at most maxCleanup in total.
func (dc *Controller) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	sort.Sort(controller.ReplicaSetsByCreationTimestamp(oldRSs))
	var total int32
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		if rsReplicas(rs) == 0 || rsReplicas(rs) == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxCleanup-total, rsReplicas(rs)-rs.Status.AvailableReplicas)
		newSize := rsReplicas(rs) - n
		if newSize > rsReplicas(rs) {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, rsReplicas(rs), newSize)
		}
		_, updated, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, newSize, d)
		if err != nil {
			return nil, total, err
		}
		total += n
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down,
// oldest first, by as many pods as are available above
// spec.replicas − maxUnavailable.
func (dc *Controller) scaleDownOldReplicaSetsForRollingUpdate(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := replicas(d) - maxUnavailable(d)
	available := boundedAvailableReplicaCount(allRSs)
	if available <= minAvailable {
		return 0, nil
	}
	sort.Sort(controller.ReplicaSetsByCreationTimestamp(oldRSs))
	var total int32
	want := available - minAvailable
	for _, rs := range oldRSs {
		if total >= want {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), want-total)
		if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, rsReplicas(rs)-n, d); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
