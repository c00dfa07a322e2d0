package deployment

// The helpers of upstream's pkg/controller/deployment/util/deployment_util.go
// that the walking skeleton needs: revisions and annotations, surge and
// unavailability arithmetic, conditions, and replica counts.

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Annotations the controller writes on Deployments and ReplicaSets.
const (
	// RevisionAnnotation numbers the rollouts: 1 for the first template,
	// 2 for the next ... `kubectl rollout history` lists them.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation keeps the older revisions of a ReplicaSet
	// that a rollback brought back.
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is spec.replicas of the Deployment when the
	// ReplicaSet was last scaled.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is spec.replicas + maxSurge at that time;
	// proportional scaling divides by it.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"

	// maxRevHistoryLengthInChars bounds RevisionHistoryAnnotation.
	maxRevHistoryLengthInChars = 2000
)

// Reasons of the Deployment conditions, with upstream's wording.
const (
	// Progressing.
	NewReplicaSetReason     = "NewReplicaSetCreated"
	FoundNewRSReason        = "FoundNewReplicaSet"
	ReplicaSetUpdatedReason = "ReplicaSetUpdated"
	NewRSAvailableReason    = "NewReplicaSetAvailable"
	TimedOutReason          = "ProgressDeadlineExceeded"
	PausedDeployReason      = "DeploymentPaused"
	ResumedDeployReason     = "DeploymentResumed"
	FailedRSCreateReason    = "ReplicaSetCreateError"
	// Available.
	MinimumReplicasAvailable   = "MinimumReplicasAvailable"
	MinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:                 true,
	RevisionHistoryAnnotation:          true,
	DesiredReplicasAnnotation:          true,
	MaxReplicasAnnotation:              true,
	appsv1.DeprecatedRollbackTo:        true,
}

// revision parses a ReplicaSet's revision annotation (0 when missing).
func revision(obj metav1.Object) (int64, error) {
	v, ok := obj.GetAnnotations()[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// maxRevision is the highest revision among rss.
func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if v, err := revision(rs); err == nil {
			m = max(m, v)
		}
	}
	return m
}

// copyDeploymentAnnotationsToReplicaSet copies the Deployment's own
// annotations (not the ones the controller manages) to the ReplicaSet.
func copyDeploymentAnnotationsToReplicaSet(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if cur, ok := rs.Annotations[k]; annotationsToSkip[k] || (ok && cur == v) {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// setNewReplicaSetAnnotations brings the new ReplicaSet's annotations up to
// date: the Deployment's annotations, revision newRevision (never lowered;
// a raised one keeps the old in the history) and, for a ReplicaSet about to
// be created, the replicas annotations.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotationsToReplicaSet(d, rs)
	oldRevision, had := rs.Annotations[RevisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
	}
	// A ReplicaSet that gets a higher revision is being rolled back to:
	// remember the revisions it had.
	if had && oldInt < newInt {
		history := rs.Annotations[RevisionHistoryAnnotation]
		old := strings.Split(history, ",")
		if old[0] == "" {
			rs.Annotations[RevisionHistoryAnnotation] = oldRevision
		} else {
			total := len(history) + len(oldRevision) + 1
			start := 0
			for total > maxRevHistoryLengthInChars && start < len(old) {
				total -= len(old[start]) + 1
				start++
			}
			if total <= maxRevHistoryLengthInChars {
				rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(old[start:], oldRevision), ",")
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, replicas(d), replicas(d)+maxSurge(d)) {
		changed = true
	}
	return changed
}

// setDeploymentRevision sets the Deployment's revision annotation.
func setDeploymentRevision(d *appsv1.Deployment, rev string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	d.Annotations[RevisionAnnotation] = rev
	return true
}

func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range map[string]string{
		DesiredReplicasAnnotation: strconv.Itoa(int(desired)),
		MaxReplicasAnnotation:     strconv.Itoa(int(maxReplicas)),
	} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

func replicas(d *appsv1.Deployment) int32 { return controller.Replicas(d.Spec.Replicas) }

func rsReplicas(rs *appsv1.ReplicaSet) int32 { return controller.Replicas(rs.Spec.Replicas) }

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// resolveFenceposts turns maxSurge and maxUnavailable into pod counts for
// desired replicas: a percentage of surge rounds up, of unavailable down
// (so 25% of 3 is a surge of 1 and 0 unavailable). When both come out 0,
// maxUnavailable becomes 1, or the rollout could never move.
func resolveFenceposts(surge, unavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	zero := intstr.FromInt32(0)
	s, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(surge, zero), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(unavailable, zero), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

// maxUnavailable is how many pods below spec.replicas a rolling update may
// go (0 for Recreate and for 0 replicas).
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicas(d) == 0 || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	_, u, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d))
	return min(u, replicas(d))
}

// maxSurge is how many pods above spec.replicas a rolling update may go.
func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	s, _, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d))
	return s
}

// getProportion is how many replicas rs gets of toAdd (negative: removes)
// when a Deployment in the middle of a rollout is scaled, in proportion to
// its share of the old max-replicas.
func getProportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := getReplicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func getReplicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if replicas(d) == 0 {
		return -rsReplicas(rs)
	}
	maxReplicas := replicas(d) + maxSurge(d)
	before, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || before == 0 {
		before = d.Status.Replicas
	}
	size := float64(rsReplicas(rs)*maxReplicas) / float64(before)
	return int32(math.Round(size)) - rsReplicas(rs)
}

// equalIgnoreHash compares two pod templates, ignoring the
// pod-template-hash label: how a Deployment finds the ReplicaSet of its
// current template.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return equality.Semantic.DeepEqual(a, b)
}

// findNewReplicaSet returns the oldest ReplicaSet whose template is the
// Deployment's, or nil.
func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sort.Sort(controller.ReplicaSetsByCreationTimestamp(sorted))
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets returns the ReplicaSets other than the new one.
func findOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	newRS := findNewReplicaSet(d, rsList)
	var old []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
		}
	}
	return old
}

// findActiveOrLatest returns the only active ReplicaSet, or the newest when
// none is active, or nil when several are.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.Sort(sort.Reverse(controller.ReplicaSetsByCreationTimestamp(sorted)))
	active := controller.FilterActiveReplicaSets(append(sorted, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

// isSaturated: the new ReplicaSet has all the Deployment's replicas, all available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && rsReplicas(rs) == replicas(d) && desired == replicas(d) && rs.Status.AvailableReplicas == replicas(d)
}

// newRSNewReplicas is how big the new ReplicaSet may be now: up to
// spec.replicas, without the total exceeding spec.replicas + maxSurge.
//
// The total counts, for each ReplicaSet, the larger of spec.replicas and
// status.replicas (kubetab; upstream counts spec.replicas only). An old
// ReplicaSet just scaled from 10 to 9 still has 10 running pods until its
// own controller deletes one; counting 9 would let the new ReplicaSet's
// controller race ahead and run 13 pods for a moment with maxSurge 2.
// Waiting for the status keeps the pods, not only the specs, within
// spec.replicas + maxSurge.
func newRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return replicas(d)
	}
	maxTotal := replicas(d) + maxSurge(d)
	current := podReplicaCount(allRSs)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	return rsReplicas(newRS) + min(maxTotal-current, replicas(d)-rsReplicas(newRS))
}

func specReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

func statusCount(rss []*appsv1.ReplicaSet, f func(appsv1.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs.Status)
		}
	}
	return n
}

func actualReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	return statusCount(rss, func(s appsv1.ReplicaSetStatus) int32 { return s.Replicas })
}

func readyReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	return statusCount(rss, func(s appsv1.ReplicaSetStatus) int32 { return s.ReadyReplicas })
}

// podReplicaCount sums max(spec.replicas, status.replicas): the pods each
// ReplicaSet has or is about to have.
func podReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += max(rsReplicas(rs), rs.Status.Replicas)
		}
	}
	return n
}

// boundedAvailableReplicaCount sums min(status.availableReplicas,
// spec.replicas): a ReplicaSet just scaled down is about to lose the pods
// above its spec, even if its status (not yet updated) still counts them
// available. Scale-down decisions use it (kubetab; upstream uses the
// status alone, and a stale status can let it scale down twice for the
// same available pods).
func boundedAvailableReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += min(rs.Status.AvailableReplicas, rsReplicas(rs))
		}
	}
	return n
}

func availableReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	return statusCount(rss, func(s appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
}

// terminatingReplicaCount is nil when any ReplicaSet does not report it.
func terminatingReplicaCount(rss []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range rss {
		switch {
		case rs == nil:
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}

// --- conditions ---

func newCondition(t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: t, Status: status, LastUpdateTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
}

func getCondition(status appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// setCondition adds or replaces a condition; the same status and reason
// again changes nothing, the same status keeps lastTransitionTime.
func setCondition(status *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(*status, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(status, c.Type)
	status.Conditions = append(status.Conditions, c)
}

func removeCondition(status *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// deploymentComplete: every replica updated and available, and the status
// describes the current generation.
func deploymentComplete(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	return s.UpdatedReplicas == replicas(d) && s.Replicas == replicas(d) &&
		s.AvailableReplicas == replicas(d) && s.ObservedGeneration >= d.Generation
}

// deploymentProgressing: the new status shows progress over the old one.
func deploymentProgressing(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	old := d.Status
	return s.UpdatedReplicas > old.UpdatedReplicas ||
		s.Replicas-s.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		s.ReadyReplicas > old.ReadyReplicas ||
		s.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut: no progress reported for progressDeadlineSeconds.
func deploymentTimedOut(d *appsv1.Deployment, s *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(*s, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == NewRSAvailableReason {
		return false
	}
	if c.Reason == TimedOutReason {
		return true
	}
	deadline := time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
	return c.LastUpdateTime.Add(deadline).Before(now)
}

// ReplicaSetsByRevision sorts by revision, lowest first (then by age).
type replicaSetsByRevision []*appsv1.ReplicaSet

func (o replicaSetsByRevision) Len() int      { return len(o) }
func (o replicaSetsByRevision) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o replicaSetsByRevision) Less(i, j int) bool {
	ri, _ := revision(o[i])
	rj, _ := revision(o[j])
	if ri == rj {
		return controller.ReplicaSetsByCreationTimestamp(o).Less(i, j)
	}
	return ri < rj
}
