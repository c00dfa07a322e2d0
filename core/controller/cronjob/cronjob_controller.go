// Package cronjob is the CronJob controller: it creates a Job at each time
// a CronJob's schedule names, and keeps the CronJob's history of Jobs.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/cronjob
// (cronjob_controllerv2.go, utils.go).
//
// A CronJob "tick" with schedule "*/1 * * * *", created at 09:00:30:
//
//	09:01:00  Job tick-29410621 created (29410621 = minutes since 1970)
//	          status.active [tick-29410621], lastScheduleTime 09:01:00
//	09:01:05  tick-29410621 Complete: "Saw completed job", active [],
//	          lastSuccessfulTime 09:01:05
//	09:02:00  Job tick-29410622 ...
//	...       past 3 succeeded Jobs (successfulJobsHistoryLimit) the
//	          oldest is deleted: "Deleted job tick-29410621"
//
// The controller does not poll: after each sync it puts the CronJob back
// in its queue for the next schedule time (plus 100 ms), on the cluster's
// clock. The schedule is cron's five fields (robfig/cron's ParseStandard:
// "@hourly" and "@every 5m" too), read in spec.timeZone, else the
// controller's zone (UTC here).
//
// A start missed (the controller was down, or a Forbid CronJob's Job was
// still running) is made up at the next sync, unless it is older than
// spec.startingDeadlineSeconds: then "MissSchedule" and the next time is
// awaited. Only the most recent missed time is started, once.
//
// spec.concurrencyPolicy: Allow runs Jobs side by side; Forbid skips a time
// while a Job is active ("JobAlreadyActive"); Replace deletes the active
// Jobs first. spec.suspend stops new Jobs (running ones go on).
package cronjob

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-cron-job-syncs (upstream 5).
	DefaultWorkers = 5
	// Component is the event source and user agent.
	Component = "cronjob-controller"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock decides which schedule times have come; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of CronJobs synced at once (default 5).
	Workers int
}

// Controller is the CronJob controller.
type Controller struct {
	cronJobs client.Resource[*batchv1.CronJob]
	jobs     client.Resource[*batchv1.Job]
	clock    clock.WithDelayedExecution
	workers  int
	recorder *client.Recorder

	cronJobInformer *client.Informer[*batchv1.CronJob]
	jobInformer     *client.Informer[*batchv1.Job]
	queue           *client.Queue[string]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("cronjob", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	cronJobs := client.For[*batchv1.CronJob](cfg.Client, batchv1.GroupName, "cronjobs")
	jobs := client.For[*batchv1.Job](cfg.Client, batchv1.GroupName, "jobs")
	jm := &Controller{
		cronJobs:        cronJobs,
		jobs:            jobs,
		clock:           cfg.Clock,
		workers:         cfg.Workers,
		recorder:        client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		cronJobInformer: client.NewInformer(cronJobs, "", client.ListOptions{}),
		jobInformer:     client.NewInformer(jobs, "", client.ListOptions{}),
		queue:           client.NewQueue[string](cfg.Clock),
	}
	jm.jobInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*batchv1.Job])
	jm.jobInformer.AddHandler(client.Handler[*batchv1.Job]{
		OnAdd:    jm.enqueueOwner,
		OnUpdate: jm.updateJob,
		OnDelete: jm.enqueueOwner,
	})
	jm.cronJobInformer.AddHandler(client.Handler[*batchv1.CronJob]{
		OnAdd:    func(cj *batchv1.CronJob) { jm.queue.Add(client.Key(cj)) },
		OnUpdate: jm.updateCronJob,
		OnDelete: func(cj *batchv1.CronJob) { jm.queue.Add(client.Key(cj)) },
	})
	return jm, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (jm *Controller) HasSynced() bool {
	return controller.Synced(jm.cronJobInformer, jm.jobInformer)
}

// Run watches CronJobs and Jobs and syncs CronJobs until ctx is done.
func (jm *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, []controller.Informer{jm.cronJobInformer, jm.jobInformer},
		controller.Worker[string]{Queue: jm.queue, Workers: jm.workers, Reconcile: jm.Reconcile})
}

// --- event handlers ---

func (jm *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batchv1.CronJob {
	cj, _ := controller.ResolveControllerRef(jm.cronJobInformer, controllerKind.Kind, namespace, ref)
	return cj
}

// enqueueOwner queues the CronJob that controls j (a Job added or deleted).
func (jm *Controller) enqueueOwner(j *batchv1.Job) {
	if cj := jm.resolveControllerRef(j.Namespace, metav1.GetControllerOfNoCopy(j)); cj != nil {
		jm.queue.Add(client.Key(cj))
	}
}

func (jm *Controller) updateJob(old, cur *batchv1.Job) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
	if !reflect.DeepEqual(oldRef, curRef) && oldRef != nil {
		jm.enqueueOwner(old)
	}
	jm.enqueueOwner(cur)
}

// updateCronJob: a changed schedule or zone moves the next sync to its
// next time; another change syncs now.
func (jm *Controller) updateCronJob(old, cur *batchv1.CronJob) {
	key := client.Key(cur)
	if old.Spec.Schedule != cur.Spec.Schedule || !reflect.DeepEqual(old.Spec.TimeZone, cur.Spec.TimeZone) {
		sched, err := cron.ParseStandard(formatSchedule(cur, nil))
		if err != nil {
			jm.recorder.Eventf(cur, corev1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", cur.Spec.Schedule)
			return
		}
		jm.queue.AddAfter(key, *nextScheduleTimeDuration(cur, jm.clock.Now(), sched))
		return
	}
	jm.queue.Add(key)
}

// --- sync ---

// Reconcile syncs the CronJob with cache key "namespace/name" and queues it
// again for its next schedule time (upstream: sync).
func (jm *Controller) Reconcile(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	cached, ok := jm.cronJobInformer.Get(ns, name)
	if !ok {
		return nil // deleted: the garbage collector deletes its Jobs
	}
	var jobs []*batchv1.Job
	for _, j := range jm.jobInformer.ByIndex(controller.NamespaceIndex, ns) {
		if ref := metav1.GetControllerOfNoCopy(j); ref != nil && ref.Kind == controllerKind.Kind && ref.Name == cached.Name {
			jobs = append(jobs, j)
		}
	}
	cj := cached.DeepCopy()
	updateAfterCleanup := jm.cleanupFinishedJobs(ctx, cj, jobs)
	start := jm.clock.Now()
	requeueAfter, updateAfterSync, syncErr := jm.syncCronJob(ctx, cj, jobs)
	if updateAfterCleanup || updateAfterSync {
		if _, err := jm.cronJobs.UpdateStatus(ctx, cj); err != nil {
			return err
		}
	}
	if requeueAfter != nil {
		// The wait counts from the time the sync read, not from now: a sync
		// that took long (a busy tab, a clock set forward meanwhile) must
		// not push the next schedule time back by as much.
		jm.queue.AddAfter(key, *requeueAfter-jm.clock.Since(start))
		return nil
	}
	return syncErr
}

// syncCronJob brings status.active up to date with the Jobs, then starts
// the Job of the most recent unmet schedule time if the policies allow. It
// returns when to sync again (nil: only on a change) and whether the
// status changed.
func (jm *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	now := jm.clock.Now()
	updateStatus := false

	children := map[types.UID]bool{}
	for _, j := range jobs {
		children[j.UID] = true
		found := inActiveList(cj, j.UID)
		switch {
		case !found && !isJobFinished(j):
			// Maybe our own status write is not in the cache yet: ask.
			fresh, err := jm.cronJobs.Get(ctx, cj.Namespace, cj.Name)
			if err != nil {
				return nil, updateStatus, err
			}
			if inActiveList(fresh, j.UID) {
				*cj = *fresh
				continue
			}
			jm.recorder.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case found && isJobFinished(j):
			_, cond := finishedCondition(j)
			deleteFromActiveList(cj, j.UID)
			jm.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
			updateStatus = true
		case isJobSucceeded(j):
			// Succeeded Jobs, active or not, move lastSuccessfulTime.
			if cj.Status.LastSuccessfulTime == nil {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
				updateStatus = true
			}
			if j.Status.CompletionTime != nil && j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
				updateStatus = true
			}
		}
	}
	// Active Jobs the cache does not have: gone, or only not seen yet?
	for _, r := range cj.Status.Active {
		if children[r.UID] {
			continue
		}
		_, err := jm.jobs.Get(ctx, r.Namespace, r.Name)
		switch {
		case apierrors.IsNotFound(err):
			jm.recorder.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", r.Name)
			deleteFromActiveList(cj, r.UID)
			updateStatus = true
		case err != nil:
			return nil, updateStatus, err
		}
	}

	if cj.DeletionTimestamp != nil {
		return nil, updateStatus, nil
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			jm.recorder.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
			return nil, updateStatus, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, updateStatus, nil
	}
	sched, err := cron.ParseStandard(formatSchedule(cj, jm.recorder))
	if err != nil {
		// The user's to fix; nothing happens until the spec changes.
		jm.recorder.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, updateStatus, nil
	}
	scheduled, err := nextScheduleTime(cj, now, sched, jm.recorder)
	if err != nil {
		jm.recorder.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, updateStatus, nil
	}
	if scheduled == nil {
		return nextScheduleTimeDuration(cj, now, sched), updateStatus, nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		jm.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return nextScheduleTimeDuration(cj, now, sched), updateStatus, nil
	}
	if inActiveListByName(cj, getJobName(cj, *scheduled)) || cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: *scheduled}) {
		return nextScheduleTimeDuration(cj, now, sched), updateStatus, nil // done already
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		jm.recorder.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return nextScheduleTimeDuration(cj, now, sched), updateStatus, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, r := range cj.Status.Active {
			j, err := jm.jobs.Get(ctx, r.Namespace, r.Name)
			if err != nil {
				jm.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, updateStatus, err
			}
			if !jm.deleteJob(ctx, cj, j) {
				return nil, updateStatus, fmt.Errorf("could not replace job %s/%s", j.Namespace, j.Name)
			}
			updateStatus = true
		}
	}

	req, err := getJobFromTemplate(cj, *scheduled)
	if err != nil {
		return nil, updateStatus, err
	}
	created, err := jm.jobs.Create(ctx, req)
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, updateStatus, err
	case apierrors.IsAlreadyExists(err):
		// Created before, and the status write then failed? Only if it is ours.
		existing, err := jm.jobs.Get(ctx, req.Namespace, req.Name)
		if err != nil {
			return nil, updateStatus, err
		}
		if !metav1.IsControlledBy(existing, cj) || inActiveList(cj, existing.UID) {
			return nil, updateStatus, nil
		}
		created = existing
	case err != nil:
		jm.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, updateStatus, err
	default:
		jm.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	}
	// The Job's name is the lock: were this status write lost, the next
	// sync's create would get AlreadyExists and land above.
	cj.Status.Active = append(cj.Status.Active, jobRef(created))
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return nextScheduleTimeDuration(cj, now, sched), true, nil
}

// cleanupFinishedJobs deletes the oldest succeeded and failed Jobs past
// the history limits; it reports whether the status changed.
func (jm *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch ok, t := finishedCondition(j); {
		case ok && t == batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case ok && t == batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	update := false
	if l := cj.Spec.SuccessfulJobsHistoryLimit; l != nil && jm.removeOldestJobs(ctx, cj, succeeded, *l) {
		update = true
	}
	if l := cj.Spec.FailedJobsHistoryLimit; l != nil && jm.removeOldestJobs(ctx, cj, failed, *l) {
		update = true
	}
	return update
}

func (jm *Controller) removeOldestJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int32) bool {
	n := len(jobs) - int(keep)
	if n <= 0 {
		return false
	}
	sortByStartTime(jobs)
	update := false
	for _, j := range jobs[:n] {
		if jm.deleteJob(ctx, cj, j) {
			update = true
		}
	}
	return update
}

// deleteJob deletes a Job (its pods in the background, by the garbage
// collector) and its entry in status.active.
func (jm *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	background := metav1.DeletePropagationBackground
	if err := jm.jobs.Delete(ctx, j.Namespace, j.Name, &metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		jm.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		return false
	}
	deleteFromActiveList(cj, j.UID)
	jm.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}
