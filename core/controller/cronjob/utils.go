package cronjob

// Schedule arithmetic and the small helpers of the controller (upstream
// utils.go).

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/client"
)

// nextScheduleDelta pads each requeue, as upstream does, so that a clock a
// little behind still finds the schedule time passed when the key returns.
const nextScheduleDelta = 100 * time.Millisecond

// tooManyMissed is upstream's limit: more missed start times than this and
// the controller warns (TooManyMissedTimes) instead of believing them.
const tooManyMissed = 100

type missedSchedulesType int

const (
	noneMissed missedSchedulesType = iota
	fewMissed
	manyMissed
)

// formatSchedule prefixes the schedule with the CronJob's spec.timeZone
// ("TZ=Asia/Tokyo */5 * * * *"), which robfig/cron understands. A schedule
// that already names a zone (TZ= or CRON_TZ=) is kept as written, with
// upstream's warning that this is not supported; recorder may be nil.
func formatSchedule(cj *batchv1.CronJob, recorder *client.Recorder) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		if recorder != nil {
			recorder.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule", "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
		}
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			return cj.Spec.Schedule
		}
		return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
	}
	return cj.Spec.Schedule
}

// mostRecentScheduleTime returns the time counting starts from (the last
// schedule time, else the CronJob's creation), the latest schedule time at
// or before now that is after it (nil: none), whether schedules were
// missed, and an error for a schedule that parses but never fires twice
// ("59 23 31 2 *"). With withDeadline, times older than
// startingDeadlineSeconds are not counted.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, missedSchedulesType, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, noneMissed, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	// Rather than walk every missed time (decades of them with a wrong
	// clock), estimate their number from the interval and walk only the
	// last few.
	missed := int64(now.Sub(t1).Seconds())/between + 1
	var recent time.Time
	from := t1.Add(time.Duration((missed-2)*between) * time.Second)
	for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
		recent = t
	}
	kind := fewMissed
	if missed > tooManyMissed {
		kind = manyMissed
	}
	if recent.IsZero() {
		return earliest, nil, kind, nil
	}
	return earliest, &recent, kind, nil
}

// nextScheduleTimeDuration is how long until the next schedule time after
// the most recent one (plus nextScheduleDelta): when the key comes back.
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) *time.Duration {
	earliest, recent, missed, err := mostRecentScheduleTime(cj, now, sched, false)
	switch {
	case err != nil:
		recent = &now
	case recent == nil && missed == noneMissed:
		recent = &earliest
	case recent == nil:
		recent = &now
	}
	d := sched.Next(*recent).Add(nextScheduleDelta).Sub(now)
	return &d
}

// nextScheduleTime returns the schedule time to start a Job for now, or
// nil; with more than 100 missed times it warns.
func nextScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, recorder *client.Recorder) (*time.Time, error) {
	_, recent, missed, err := mostRecentScheduleTime(cj, now, sched, true)
	if recent == nil || recent.After(now) {
		return nil, err
	}
	if missed == manyMissed {
		recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return recent, err
}

// getJobName is <cronjob>-<scheduled time in minutes since the epoch>: the
// same name for the same start, so a Job is never created twice for it.
func getJobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// getJobFromTemplate builds the Job of one scheduled time: the template's
// labels, annotations and spec, the controller reference, and the
// annotation batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339, in
// the CronJob's time zone).
func getJobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	tz := ""
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Labels {
		labels[k] = v
	}
	annotations := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:              getJobName(cj, scheduled),
			Namespace:         cj.Namespace,
			Labels:            labels,
			Annotations:       annotations,
			CreationTimestamp: metav1.Time{Time: scheduled},
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&j.Spec)
	return j, nil
}

// finishedCondition returns the Job's Complete or Failed condition type
// when it is true.
func finishedCondition(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func isJobFinished(j *batchv1.Job) bool {
	ok, _ := finishedCondition(j)
	return ok
}

func isJobSucceeded(j *batchv1.Job) bool {
	ok, t := finishedCondition(j)
	return ok && t == batchv1.JobComplete
}

func inActiveList(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func inActiveListByName(cj *batchv1.CronJob, name string) bool {
	for _, r := range cj.Status.Active {
		if r.Name == name && r.Namespace == cj.Namespace {
			return true
		}
	}
	return false
}

func deleteFromActiveList(cj *batchv1.CronJob, uid types.UID) {
	var keep []corev1.ObjectReference
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			keep = append(keep, r)
		}
	}
	cj.Status.Active = keep
}

// jobRef is the reference status.active holds.
func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind:            "Job",
		APIVersion:      batchv1.SchemeGroupVersion.String(),
		Namespace:       j.Namespace,
		Name:            j.Name,
		UID:             j.UID,
		ResourceVersion: j.ResourceVersion,
	}
}

// sortByStartTime orders Jobs oldest start first; Jobs that never started
// go last, ties by name (upstream byJobStartTime).
func sortByStartTime(js []*batchv1.Job) {
	sort.SliceStable(js, func(i, k int) bool {
		a, b := js[i].Status.StartTime, js[k].Status.StartTime
		switch {
		case a == nil && b != nil:
			return false
		case a != nil && b == nil:
			return true
		case a == nil && b == nil, a.Equal(b):
			return js[i].Name < js[k].Name
		}
		return a.Before(b)
	})
}
