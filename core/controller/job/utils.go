package job

import (
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

func hasFinalizer(finalizers []string, f string) bool {
	for _, x := range finalizers {
		if x == f {
			return true
		}
	}
	return false
}

func hasJobTrackingFinalizer(p *corev1.Pod) bool {
	return hasFinalizer(p.Finalizers, batchv1.JobTrackingFinalizer)
}

// isJobFinished: the Job has its Complete or Failed condition.
func isJobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobSuspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

// isPodFailed: Failed, or being deleted before it succeeded (a pod deleted
// from under the Job never reaches Failed: it counts as failed anyway,
// podReplacementPolicy TerminatingOrFailed).
func isPodFailed(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func countReadyPods(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if controller.IsPodReady(p) {
			n++
		}
	}
	return n
}

// countTerminatingPods counts pods being deleted that have not finished.
func countTerminatingPods(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

func findCondition(list []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}

func newCondition(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now)
	return &batchv1.JobCondition{Type: t, Status: status, LastProbeTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
}

// ensureJobConditionStatus sets a condition, or adds it unless it would be
// False (from nothing to False says nothing); it reports a change.
func ensureJobConditionStatus(list []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	if c := findCondition(list, t); c != nil {
		if c.Status != status || c.Reason != reason || c.Message != message {
			*c = *newCondition(t, status, reason, message, now)
			return list, true
		}
		return list, false
	}
	if status != corev1.ConditionFalse {
		return append(list, *newCondition(t, status, reason, message, now)), true
	}
	return list, false
}

// uncountedTerminatedPods is status.uncountedTerminatedPods as sets.
type uncountedTerminatedPods struct {
	succeeded, failed sets.Set[string]
}

func newUncounted(in *batchv1.UncountedTerminatedPods) uncountedTerminatedPods {
	u := uncountedTerminatedPods{succeeded: sets.New[string](), failed: sets.New[string]()}
	for _, uid := range in.Succeeded {
		u.succeeded.Insert(string(uid))
	}
	for _, uid := range in.Failed {
		u.failed.Insert(string(uid))
	}
	return u
}

// uidTrackingExpectations remembers, per Job, the pods whose finalizer
// removal was sent but not yet seen in the informer, so they are not
// counted twice (upstream tracking_utils.go).
type uidTrackingExpectations struct {
	// mu guards uids.
	mu   sync.Mutex
	uids map[string]sets.Set[string]
}

func newUIDTrackingExpectations() *uidTrackingExpectations {
	return &uidTrackingExpectations{uids: map[string]sets.Set[string]{}}
}

func (u *uidTrackingExpectations) expected(key string) sets.Set[string] {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.uids[key].Clone()
}

func (u *uidTrackingExpectations) expect(key string, uids []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.uids[key] == nil {
		u.uids[key] = sets.New[string]()
	}
	u.uids[key].Insert(uids...)
}

func (u *uidTrackingExpectations) removalObserved(key, uid string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.uids[key]; s != nil {
		s.Delete(uid)
		if s.Len() == 0 {
			delete(u.uids, key)
		}
	}
}

func (u *uidTrackingExpectations) delete(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.uids, key)
}

// --- the failure back-off (upstream backoff_utils.go) ---

// backoffRecord is how many pods of a Job failed since the last success,
// and when the last one did.
type backoffRecord struct {
	key                      string
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

type backoffStore struct {
	// mu guards records.
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

func (s *backoffStore) update(r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[r.key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// newRecord is the Job's record with the newly finished pods applied: a
// success resets the count to the failures that came after it.
func (s *backoffStore) newRecord(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	s.mu.Lock()
	r, ok := s.records[key]
	s.mu.Unlock()
	if !ok {
		r = backoffRecord{key: key}
	}
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	switch {
	case len(succeeded) == 0 && len(failed) == 0:
	case len(succeeded) == 0:
		r.failuresAfterLastSuccess += int32(len(failed))
		t := getFinishedTime(failed[len(failed)-1])
		r.lastFailureTime = &t
	default:
		r.failuresAfterLastSuccess, r.lastFailureTime = 0, nil
		lastSuccess := getFinishedTime(succeeded[len(succeeded)-1])
		for i := len(failed) - 1; i >= 0; i-- {
			t := getFinishedTime(failed[i])
			if !t.After(lastSuccess) {
				break
			}
			if r.lastFailureTime == nil {
				r.lastFailureTime = &t
			}
			r.failuresAfterLastSuccess++
		}
	}
	return r
}

// remainingTime is how long to wait before creating a pod: base·2^(n-1)
// (capped) after the last of n failures in a row.
func (r backoffRecord) remainingTime(clk clock.PassiveClock, base, maxBackoff time.Duration) time.Duration {
	if r.failuresAfterLastSuccess == 0 || r.lastFailureTime == nil {
		return 0
	}
	d := base
	for i := 1; i < int(r.failuresAfterLastSuccess); i++ {
		d *= 2
		if d >= maxBackoff {
			d = maxBackoff
			break
		}
	}
	elapsed := clk.Since(*r.lastFailureTime)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}

func sortByFinishedTime(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return getFinishedTime(pods[i]).Before(getFinishedTime(pods[j])) })
}

// getFinishedTime is when a pod finished: its last container's finishedAt,
// else when it turned not Ready, else its deletion time, else its creation.
func getFinishedTime(p *corev1.Pod) time.Time {
	var latest *time.Time
	all := len(p.Status.ContainerStatuses) > 0
	for _, s := range p.Status.ContainerStatuses {
		t := s.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			all = false
			break
		}
		if latest == nil || latest.Before(t.FinishedAt.Time) {
			ft := t.FinishedAt.Time
			latest = &ft
		}
	}
	if all && latest != nil {
		return *latest
	}
	if c := controller.PodReadyCondition(p); c != nil && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	if p.DeletionTimestamp != nil {
		grace := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		return p.DeletionTimestamp.Add(-time.Duration(grace) * time.Second)
	}
	return p.CreationTimestamp.Time
}
