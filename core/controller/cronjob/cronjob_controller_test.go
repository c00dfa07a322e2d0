package cronjob_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/cronjob"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func ptr[T any](v T) *T { return &v }

// base is the fake clock's start (controllertest): 09:00 UTC.
var base = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

type env struct {
	*controllertest.Env
	t        *testing.T
	cronJobs client.Resource[*batchv1.CronJob]
	jobs     client.Resource[*batchv1.Job]
}

func newEnv(t *testing.T) *env {
	e := controllertest.NewEnv(t)
	// The clock moves only by at (and 1 ms per poll, for retries).
	e.Step = time.Millisecond
	cc, err := cronjob.New(cronjob.Config{Client: e.ClientFor(cronjob.Component), Clock: e.Clock, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("cronjob", cc.Run)
	return &env{Env: e, t: t,
		cronJobs: client.For[*batchv1.CronJob](e.Client, "batch", "cronjobs"),
		jobs:     client.For[*batchv1.Job](e.Client, "batch", "jobs")}
}

// at sets the clock to base + d (it never goes back). It first gives the
// controller's informers a moment of real time: a fake minute passes in no
// time, and a controller whose cache has not yet seen the CronJob's own
// status write (status.active) would start the next Job as if none were
// running (under GOOS=js, one thread, TestForbid ran a second Job so).
func (e *env) at(d time.Duration) {
	time.Sleep(100 * time.Millisecond)
	if t := base.Add(d); t.After(e.Clock.Now()) {
		e.Clock.SetTime(t)
	}
}

// jobName is upstream's name of the Job for base + m minutes.
func jobName(cj string, m int) string {
	return fmt.Sprintf("%s-%d", cj, base.Add(time.Duration(m)*time.Minute).Unix()/60)
}

func makeCronJob(name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "app", Image: "hello"}},
				}}},
			},
		},
	}
}

func (e *env) create(cj *batchv1.CronJob) *batchv1.CronJob {
	out, err := e.cronJobs.Create(e.Ctx, cj)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) get(name string) *batchv1.CronJob {
	cj, err := e.cronJobs.Get(e.Ctx, "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return cj
}

// jobNames lists the Jobs of the namespace, sorted.
func (e *env) jobNames() []string {
	js, _, err := e.jobs.List(e.Ctx, "default", client.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, j := range js {
		if j.DeletionTimestamp == nil {
			out = append(out, j.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) waitJobs(want ...string) {
	e.t.Helper()
	sort.Strings(want)
	e.Eventually("jobs "+strings.Join(want, ","), func() (bool, string) {
		got := e.jobNames()
		return strings.Join(got, ",") == strings.Join(want, ","), fmt.Sprintf("jobs %v", got)
	})
}

func activeNames(cj *batchv1.CronJob) string {
	var out []string
	for _, r := range cj.Status.Active {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (e *env) waitActive(cj string, want ...string) {
	e.t.Helper()
	sort.Strings(want)
	e.Eventually(cj+" active "+strings.Join(want, ","), func() (bool, string) {
		got := activeNames(e.get(cj))
		return got == strings.Join(want, ","), "active " + got
	})
}

func (e *env) waitEvent(reason, message string) {
	e.t.Helper()
	e.Eventually(reason+" event", func() (bool, string) { return e.HasEvent("default", reason, message) })
}

// finish plays the Job controller: the Job ends Complete or Failed, having
// started at base + started.
func (e *env) finish(name string, cond batchv1.JobConditionType, started time.Duration) {
	e.t.Helper()
	controllertest.Update(e.Env, func() (*batchv1.Job, error) { return e.jobs.Get(e.Ctx, "default", name) },
		func(j *batchv1.Job) (*batchv1.Job, error) { return e.jobs.UpdateStatus(e.Ctx, j) },
		func(j *batchv1.Job) {
			now := metav1.NewTime(e.Clock.Now())
			j.Status.StartTime = &metav1.Time{Time: base.Add(started)}
			first := batchv1.JobSuccessCriteriaMet
			if cond == batchv1.JobFailed {
				first = batchv1.JobFailureTarget
				j.Status.Failed = 1
			} else {
				j.Status.Succeeded = 1
				j.Status.CompletionTime = &now
			}
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: first, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
				{Type: cond, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now},
			}
		})
}

// A "*/1 * * * *" CronJob creates one Job a minute, named and annotated as
// upstream, owned by the CronJob, and keeps status.active,
// lastScheduleTime and lastSuccessfulTime.
func TestOneJobPerMinute(t *testing.T) {
	e := newEnv(t)
	cj := e.create(makeCronJob("tick", "*/1 * * * *"))
	e.at(time.Minute + 200*time.Millisecond)
	j1 := jobName("tick", 1)
	e.waitJobs(j1)
	e.waitActive("tick", j1)
	e.waitEvent("SuccessfulCreate", "Created job "+j1)
	job, err := e.jobs.Get(e.Ctx, "default", j1)
	if err != nil {
		t.Fatal(err)
	}
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-11-29T09:01:00Z" {
		t.Errorf("annotation %s = %q", batchv1.CronJobScheduledTimestampAnnotation, got)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.UID != cj.UID || ref.APIVersion != "batch/v1" {
		t.Errorf("controller reference %+v", ref)
	}
	if job.Labels["app"] != "tick" || job.Spec.Template.Spec.Containers[0].Image != "hello" {
		t.Errorf("job not from the template: labels %v", job.Labels)
	}
	if got := e.get("tick").Status.LastScheduleTime; got == nil || !got.Time.Equal(base.Add(time.Minute)) {
		t.Errorf("lastScheduleTime %v", got)
	}

	// Allow: the next minute's Job runs beside the first.
	e.at(2*time.Minute + 200*time.Millisecond)
	j2 := jobName("tick", 2)
	e.waitJobs(j1, j2)
	e.waitActive("tick", j1, j2)

	e.finish(j1, batchv1.JobComplete, time.Minute)
	e.waitActive("tick", j2)
	e.waitEvent("SawCompletedJob", "Saw completed job: "+j1+", condition: Complete")
	e.Eventually("lastSuccessfulTime", func() (bool, string) {
		got := e.get("tick").Status.LastSuccessfulTime
		return got != nil, fmt.Sprint(got)
	})
}

// Forbid: no second Job while one is active; the skipped time is made up
// when the active Job finishes (no startingDeadlineSeconds).
func TestForbid(t *testing.T) {
	e := newEnv(t)
	cj := makeCronJob("lock", "*/1 * * * *")
	cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
	e.create(cj)
	e.at(time.Minute + 200*time.Millisecond)
	j1 := jobName("lock", 1)
	e.waitActive("lock", j1)
	e.at(2*time.Minute + 200*time.Millisecond)
	e.waitEvent("JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
	if got := e.jobNames(); len(got) != 1 {
		t.Fatalf("Forbid ran a second Job: %v", got)
	}
	e.finish(j1, batchv1.JobComplete, time.Minute)
	j2 := jobName("lock", 2)
	e.waitJobs(j1, j2)
	e.waitActive("lock", j2)
}

// Replace: the active Job is deleted before the next one is created.
func TestReplace(t *testing.T) {
	e := newEnv(t)
	cj := makeCronJob("swap", "*/1 * * * *")
	cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
	e.create(cj)
	e.at(time.Minute + 200*time.Millisecond)
	j1 := jobName("swap", 1)
	e.waitActive("swap", j1)
	e.at(2*time.Minute + 200*time.Millisecond)
	j2 := jobName("swap", 2)
	e.waitJobs(j2)
	e.waitActive("swap", j2)
	e.waitEvent("SuccessfulDelete", "Deleted job "+j1)
}

// suspend: no Jobs; unsuspended, the most recent missed time starts.
func TestSuspend(t *testing.T) {
	e := newEnv(t)
	sus := makeCronJob("paused", "*/1 * * * *")
	sus.Spec.Suspend = ptr(true)
	e.create(sus)
	e.create(makeCronJob("control", "*/1 * * * *"))
	e.at(time.Minute + 200*time.Millisecond)
	e.waitJobs(jobName("control", 1))
	e.at(2*time.Minute + 200*time.Millisecond)
	e.waitJobs(jobName("control", 1), jobName("control", 2))
	if a := e.get("paused").Status.Active; len(a) != 0 {
		t.Fatalf("suspended CronJob has active %v", a)
	}
	controllertest.Update(e.Env, func() (*batchv1.CronJob, error) { return e.cronJobs.Get(e.Ctx, "default", "paused") },
		func(cj *batchv1.CronJob) (*batchv1.CronJob, error) { return e.cronJobs.Update(e.Ctx, cj) },
		func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr(false) })
	e.waitJobs(jobName("control", 1), jobName("control", 2), jobName("paused", 2))
}

// History limits: the oldest finished Jobs past successfulJobsHistoryLimit
// and failedJobsHistoryLimit are deleted.
func TestHistoryLimits(t *testing.T) {
	e := newEnv(t)
	cj := makeCronJob("hist", "*/1 * * * *")
	cj.Spec.SuccessfulJobsHistoryLimit = ptr(int32(2))
	cj.Spec.FailedJobsHistoryLimit = ptr(int32(1))
	e.create(cj)
	var names []string
	for m := 1; m <= 5; m++ {
		e.at(time.Duration(m)*time.Minute + 200*time.Millisecond)
		n := jobName("hist", m)
		e.waitActive("hist", n)
		cond := batchv1.JobComplete
		if m >= 4 {
			cond = batchv1.JobFailed
		}
		e.finish(n, cond, time.Duration(m)*time.Minute)
		e.waitActive("hist")
		names = append(names, n)
	}
	e.waitJobs(names[1], names[2], names[4])
	e.waitEvent("SuccessfulDelete", "Deleted job "+names[0])
	e.waitEvent("SuccessfulDelete", "Deleted job "+names[3])
	e.waitEvent("SawCompletedJob", "Saw completed job: "+names[3]+", condition: Failed")
}

// The default history: 3 succeeded Jobs are kept.
func TestDefaultHistoryLimit(t *testing.T) {
	e := newEnv(t)
	e.create(makeCronJob("dflt", "*/1 * * * *"))
	var names []string
	for m := 1; m <= 4; m++ {
		e.at(time.Duration(m)*time.Minute + 200*time.Millisecond)
		n := jobName("dflt", m)
		e.waitActive("dflt", n)
		e.finish(n, batchv1.JobComplete, time.Duration(m)*time.Minute)
		e.waitActive("dflt")
		names = append(names, n)
	}
	e.waitJobs(names[1:]...)
}

// A start missed by more than startingDeadlineSeconds is skipped: no Job
// for it, and the next time runs.
func TestStartingDeadline(t *testing.T) {
	e := newEnv(t)
	cj := makeCronJob("late", "*/1 * * * *")
	cj.Spec.StartingDeadlineSeconds = ptr(int64(30))
	e.create(cj)
	e.create(makeCronJob("control", "*/1 * * * *"))
	// The controller wakes 45 s after 09:01 (as if it had been stopped).
	e.at(time.Minute + 45*time.Second)
	e.waitJobs(jobName("control", 1))
	e.waitActive("control", jobName("control", 1))
	if got := e.get("late").Status; got.LastScheduleTime != nil || len(got.Active) != 0 {
		t.Fatalf("09:01 was started past its deadline: %+v", got)
	}
	e.at(2*time.Minute + 200*time.Millisecond)
	e.waitJobs(jobName("control", 1), jobName("control", 2), jobName("late", 2))
}

// More than 100 missed start times: upstream's warning, and only the most
// recent one starts.
func TestTooManyMissed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		minutes int
		warn    bool
	}{
		{"few", 50, false},
		{"many", 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.Step = 0
			// Stop the clock-driven requeues from firing on the way: jump.
			e.create(makeCronJob("sleepy", "*/1 * * * *"))
			e.at(time.Duration(tc.minutes)*time.Minute + 30*time.Second)
			e.waitJobs(jobName("sleepy", tc.minutes))
			ok, _ := e.HasEvent("default", "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
			if ok != tc.warn {
				t.Errorf("TooManyMissedTimes event: %v, want %v", ok, tc.warn)
			}
		})
	}
}

// spec.timeZone: the schedule is read in that zone, and the annotation is
// written in it. (UTC always loads; other zones need tzdata on the host.)
func TestTimeZone(t *testing.T) {
	e := newEnv(t)
	if _, err := time.LoadLocation("Asia/Tokyo"); err != nil {
		t.Skip("no tzdata:", err)
	}
	cj := makeCronJob("tokyo", "0 18 * * *") // 18:00 in Tokyo is 09:00 UTC
	cj.Spec.TimeZone = ptr("Asia/Tokyo")
	e.create(cj)
	e.at(24*time.Hour + 200*time.Millisecond)
	name := fmt.Sprintf("tokyo-%d", base.Add(24*time.Hour).Unix()/60)
	e.waitJobs(name)
	j, err := e.jobs.Get(e.Ctx, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-11-30T18:00:00+09:00" {
		t.Errorf("annotation %q", got)
	}
}

// A Job that names the CronJob as its controller but is not in
// status.active: upstream's UnexpectedJob warning.
func TestUnexpectedJob(t *testing.T) {
	e := newEnv(t)
	cj := e.create(makeCronJob("adopt", "0 0 1 1 *"))
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if _, err := e.jobs.Create(e.Ctx, j); err != nil {
		t.Fatal(err)
	}
	e.waitEvent("UnexpectedJob", "Saw a job that the controller did not create or forgot: stray")
}
