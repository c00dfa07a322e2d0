package deployment

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// syncStatusOnly only updates the status: for Deployments being deleted.
func (dc *Controller) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// sync scales the ReplicaSets to a new spec.replicas, without rolling out
// anything: for scaling events and paused Deployments.
func (dc *Controller) sync(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := dc.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// checkPausedConditions sets Progressing to Unknown with reason
// DeploymentPaused or DeploymentResumed when spec.paused changes.
func (dc *Controller) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == TimedOutReason {
		return nil // a reported lack of progress stays
	}
	pausedCondExists := cond != nil && cond.Reason == PausedDeployReason
	switch {
	case d.Spec.Paused && !pausedCondExists:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, PausedDeployReason, "Deployment is paused", dc.clock.Now()))
	case !d.Spec.Paused && pausedCondExists:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ResumedDeployReason, "Deployment is resumed", dc.clock.Now()))
	default:
		return nil
	}
	return dc.updateStatus(ctx, d)
}

// updateStatus writes d's status and, when it changed, its revision
// annotation, and keeps d's resourceVersion current so the next write of
// the same sync does not conflict.
//
// Upstream writes the revision annotation through the status subresource
// (its status strategy resets only spec and labels). kubetab's registry
// resets annotations on status updates too, so a revision the status
// update did not store is written with a main-resource update; metadata
// changes do not bump the generation.
func (dc *Controller) updateStatus(ctx context.Context, d *appsv1.Deployment) error {
	updated, err := dc.client.Deployments().UpdateStatus(ctx, d)
	if err != nil {
		return err
	}
	if want, ok := d.Annotations[RevisionAnnotation]; ok && updated.Annotations[RevisionAnnotation] != want {
		cp := updated.DeepCopy()
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations[RevisionAnnotation] = want
		if updated, err = dc.client.Deployments().Update(ctx, cp); err != nil {
			return err
		}
	}
	d.ResourceVersion = updated.ResourceVersion
	return nil
}

// getAllReplicaSetsAndSyncRevision returns the new ReplicaSet (nil if
// there is none and createIfNotExisted is false) and the old ones, with
// the revision of the new one and of the Deployment brought up to date.
func (dc *Controller) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	oldRSs := findOldReplicaSets(d, rsList)
	newRS, err := dc.getNewReplicaSet(ctx, d, rsList, oldRSs, createIfNotExisted)
	if err != nil {
		return nil, nil, err
	}
	return newRS, oldRSs, nil
}

// getNewReplicaSet finds or creates the ReplicaSet of d's current
// template. A new one is named <deployment>-<pod-template-hash>, carries
// the hash in its labels, selector and template, and gets revision
// max(old revisions)+1.
func (dc *Controller) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(maxRevision(oldRSs)+1, 10)

	if existing != nil {
		rsCopy := existing.DeepCopy()
		annotationsUpdated := setNewReplicaSetAnnotations(d, rsCopy, newRevision, true)
		if annotationsUpdated || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			return dc.client.ReplicaSets().Update(ctx, rsCopy)
		}
		// The ReplicaSet's revision is the reliable one: copy it.
		needsUpdate := setDeploymentRevision(d, rsCopy.Annotations[RevisionAnnotation])
		if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			msg := fmt.Sprintf("Found new replica set %q", rsCopy.Name)
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason, msg, dc.clock.Now()))
			needsUpdate = true
		}
		if needsUpdate {
			if err := dc.updateStatus(ctx, d); err != nil {
				return nil, err
			}
		}
		return rsCopy, nil
	}
	if !createIfNotExisted {
		return nil, nil
	}

	template := *d.Spec.Template.DeepCopy()
	hash := controller.ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	selector := d.Spec.Selector.DeepCopy()
	selector.MatchLabels = withLabel(selector.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	zero := int32(0)
	newRS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			// Deterministic, so that creating it twice fails the second time.
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, controllerKind)},
			Labels:          template.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        &zero,
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        template,
		},
	}
	n := newRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS), newRS)
	newRS.Spec.Replicas = &n
	setNewReplicaSetAnnotations(d, newRS, newRevision, false)

	alreadyExists := false
	created, err := dc.client.ReplicaSets().Create(ctx, newRS)
	switch {
	case apierrors.IsAlreadyExists(err):
		// Our own, from a sync the cache has not caught up with; or an
		// unrelated ReplicaSet with the same name: a hash collision.
		alreadyExists = true
		rs, ok := dc.rsInformer.Get(newRS.Namespace, newRS.Name)
		if !ok {
			return nil, err // the cache will catch up; retry then
		}
		sameTemplate := equalIgnoreHash(&d.Spec.Template, &rs.Spec.Template)
		ref := metav1.GetControllerOfNoCopy(rs)
		if ref != nil && ref.UID == d.UID && sameTemplate {
			created, err = rs, nil
			break
		}
		previous := ref == nil || (ref.Kind == controllerKind.Kind && ref.Name == d.Name)
		if sameTemplate && previous {
			// Not a hash collision: the ReplicaSet of this very template,
			// still controlled by the previous Deployment of this name (the
			// collector has not orphaned it yet after `delete
			// --cascade=orphan`, or our cache has not seen it), or already an
			// orphan our claim has not adopted. (Owned by anything else, it
			// is a collision, handled below.) A new hash would only give
			// the template a second ReplicaSet. Retry: once it is an orphan,
			// getReplicaSetsForDeployment adopts it and it is the new one.
			// (Upstream bumps collisionCount here too; it only takes the
			// stale-cache path rarely, kubetab's caches often enough for a
			// learner to see: one run in five.)
			return nil, fmt.Errorf("replica set %s/%s of the same template is not controlled by deployment %s (yet): %w", rs.Namespace, rs.Name, d.Name, err)
		}
		// Move the hash aside: a new collisionCount gives a new hash.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		_ = dc.updateStatus(ctx, d)
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, dc.clock.Now()))
			_ = dc.updateStatus(ctx, d) // the create failure is the error to report
		}
		dc.recorder.Event(d, corev1.EventTypeWarning, FailedRSCreateReason, msg)
		return nil, err
	}
	if !alreadyExists && n > 0 {
		dc.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) {
		msg := fmt.Sprintf("Created new replica set %q", created.Name)
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason, msg, dc.clock.Now()))
		needsUpdate = true
	}
	if needsUpdate {
		err = dc.updateStatus(ctx, d)
	}
	return created, err
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// scale brings the ReplicaSets to spec.replicas when it changed:
//   - one active ReplicaSet (or none: the newest) takes all of it;
//   - a saturated new ReplicaSet means the old ones go to 0;
//   - mid-rollout, the difference is shared in proportion to each
//     ReplicaSet's size, largest first, leftovers to the largest.
func (dc *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if rs := findActiveOrLatest(newRS, oldRSs); rs != nil {
		if rsReplicas(rs) == replicas(d) {
			return nil
		}
		_, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, replicas(d), d)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range controller.FilterActiveReplicaSets(oldRSs) {
			if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	allRSs := controller.FilterActiveReplicaSets(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	allowed := int32(0)
	if replicas(d) > 0 {
		allowed = replicas(d) + maxSurge(d)
	}
	toAdd := allowed - specReplicaCount(allRSs)
	var op string
	switch {
	case toAdd > 0:
		sort.Sort(controller.ReplicaSetsBySizeNewer(allRSs))
		op = "up"
	case toAdd < 0:
		sort.Sort(controller.ReplicaSetsBySizeOlder(allRSs))
		op = "down"
	}
	added := int32(0)
	sizes := make(map[string]int32, len(allRSs))
	for _, rs := range allRSs {
		if toAdd != 0 {
			p := getProportion(rs, d, toAdd, added)
			sizes[rs.Name] = rsReplicas(rs) + p
			added += p
		} else {
			sizes[rs.Name] = rsReplicas(rs)
		}
	}
	for i, rs := range allRSs {
		if i == 0 && toAdd != 0 {
			sizes[rs.Name] = max(0, sizes[rs.Name]+toAdd-added)
		}
		if _, _, err := dc.scaleReplicaSet(ctx, rs, sizes[rs.Name], d, op); err != nil {
			return err
		}
	}
	return nil
}

func (dc *Controller) scaleReplicaSetAndRecordEvent(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, d *appsv1.Deployment) (bool, *appsv1.ReplicaSet, error) {
	if rsReplicas(rs) == newScale {
		return false, rs, nil
	}
	op := "down"
	if rsReplicas(rs) < newScale {
		op = "up"
	}
	return dc.scaleReplicaSet(ctx, rs, newScale, d, op)
}

// scaleReplicaSet sets a ReplicaSet's size and replicas annotations, and
// records "Scaled up replica set web-5d9c7b8f6 from 1 to 3".
func (dc *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, newScale int32, d *appsv1.Deployment, op string) (bool, *appsv1.ReplicaSet, error) {
	sizeNeedsUpdate := rsReplicas(rs) != newScale
	maxReplicas := replicas(d) + maxSurge(d)
	if !sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, replicas(d), maxReplicas) {
		return false, rs, nil
	}
	oldScale := rsReplicas(rs)
	rsCopy := rs.DeepCopy()
	rsCopy.Spec.Replicas = &newScale
	setReplicasAnnotations(rsCopy, replicas(d), maxReplicas)
	updated, err := dc.client.ReplicaSets().Update(ctx, rsCopy)
	if err != nil {
		return false, rs, err
	}
	if sizeNeedsUpdate {
		dc.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, updated.Name, oldScale, newScale)
	}
	return sizeNeedsUpdate, updated, nil
}

// cleanupDeployment deletes the oldest scaled-down ReplicaSets beyond
// spec.revisionHistoryLimit (they are what `kubectl rollout undo` uses).
func (dc *Controller) cleanupDeployment(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := int32(len(cleanable)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sort.Sort(replicaSetsByRevision(cleanable))
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue // still has pods, or its controller has not caught up
		}
		if err := dc.client.ReplicaSets().Delete(ctx, rs.Namespace, rs.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// syncDeploymentStatus writes the status computed from the ReplicaSets, if
// it changed.
func (dc *Controller) syncDeploymentStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	newStatus := calculateStatus(allRSs, newRS, d, dc.clock.Now())
	if reflect.DeepEqual(d.Status, newStatus) {
		return nil
	}
	d.Status = newStatus
	return dc.updateStatus(ctx, d)
}

// calculateStatus sums the ReplicaSets' status and sets the Available
// condition: available ≥ spec.replicas − maxUnavailable.
func calculateStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) appsv1.DeploymentStatus {
	available := availableReplicaCount(allRSs)
	unavailable := max(0, specReplicaCount(allRSs)-available)
	status := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            actualReplicaCount(allRSs),
		UpdatedReplicas:     actualReplicaCount([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyReplicaCount(allRSs),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		TerminatingReplicas: terminatingReplicaCount(allRSs),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...),
	}
	if available >= replicas(d)-maxUnavailable(d) {
		setCondition(&status, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, MinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		setCondition(&status, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, MinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	return status
}

// isScalingEvent: spec.replicas differs from what an active ReplicaSet was
// last sized for (its desired-replicas annotation).
func (dc *Controller) isScalingEvent(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (bool, error) {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range controller.FilterActiveReplicaSets(append(oldRSs, newRS)) {
		if desired, ok := intAnnotation(rs, DesiredReplicasAnnotation); ok && desired != replicas(d) {
			return true, nil
		}
	}
	return false, nil
}
