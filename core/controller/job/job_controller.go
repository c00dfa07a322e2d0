// Package job is the Job controller: it runs pods until a number of them
// have succeeded, retrying failures up to a limit.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/job
// (job_controller.go, backoff_utils.go, tracking_utils.go, utils.go).
//
// A Job of completions 3 and parallelism 2:
//
//	t     pods                                      status
//	0     pi-a Running, pi-b Running                active 2
//	1     pi-a Succeeded → pi-c created            active 2, succeeded 1
//	2     pi-b Succeeded (no new pod: 1 to go)      active 1, succeeded 2
//	3     pi-c Succeeded                            succeeded 3: SuccessCriteriaMet, then Complete
//
// A pod that fails (restartPolicy Never: the pod ends Failed) counts in
// status.failed and is replaced after a back-off: 10 s, doubling with each
// failure in a row, up to 10 minutes (upstream's DefaultJobPodFailureBackOff
// and MaxJobPodFailureBackOff). With
// restartPolicy OnFailure the kubelet restarts the container in place
// instead, and the restarts count toward the limit. When status.failed
// exceeds spec.backoffLimit (or the restarts reach it), the Job fails:
// FailureTarget, then Failed with reason BackoffLimitExceeded, "Job has
// reached the specified backoff limit"; its running pods are deleted. A Job
// running longer than spec.activeDeadlineSeconds fails the same way, with
// DeadlineExceeded.
//
// # Counting with finalizers
//
// Pods are created with the finalizer batch.kubernetes.io/job-tracking, so
// that a finished pod cannot disappear (deleted by a user, by the pod
// garbage collector) before the Job has counted it:
//
//	pod finished ──▶ its UID in status.uncountedTerminatedPods ──▶ finalizer removed
//	             ──▶ UID moved into status.succeeded / status.failed
//
// Each step is written before the next, so a controller that crashes in
// between neither loses nor double-counts a pod. The Job's terminal
// condition (Complete, Failed) is only set once every pod is counted and
// none is still terminating; SuccessCriteriaMet / FailureTarget say so in
// the meantime.
//
// Indexed Jobs (completionMode Indexed) are in indexed_job_utils.go.
//
// Not here (yet): podFailurePolicy, successPolicy, backoffLimitPerIndex,
// podReplacementPolicy Failed, managedBy.
package job

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Timings and limits, upstream's.
const (
	// SyncJobBatchPeriod batches the syncs that pod events cause.
	SyncJobBatchPeriod = time.Second
	// DefaultJobPodFailureBackOff is the wait before replacing a failed pod;
	// it doubles with each failure in a row...
	DefaultJobPodFailureBackOff = 10 * time.Second
	// MaxJobPodFailureBackOff ... up to this.
	MaxJobPodFailureBackOff = 10 * time.Minute
	// MaxUncountedPods bounds status.uncountedTerminatedPods.
	MaxUncountedPods = 500
	// MaxPodCreateDeletePerSync bounds pod creations and deletions per sync.
	MaxPodCreateDeletePerSync = 500
	// DefaultWorkers is --concurrent-job-syncs (upstream 5).
	DefaultWorkers = 5
	// Component is the event source and user agent.
	Component = "job-controller"
	// finalizerRemovalRetries is how often a finalizer removal is retried
	// after a 409 Conflict (the kubelet writes pods often).
	finalizerRemovalRetries = 5
)

// Condition reasons and messages, upstream's.
const (
	ReasonBackoffLimitExceeded  = batchv1.JobReasonBackoffLimitExceeded
	MessageBackoffLimitExceeded = "Job has reached the specified backoff limit"
	ReasonDeadlineExceeded      = batchv1.JobReasonDeadlineExceeded
	MessageDeadlineExceeded     = "Job was active longer than specified deadline"
)

var controllerKind = batchv1.SchemeGroupVersion.WithKind("Job")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times back-offs, deadlines and conditions; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of Jobs synced at once (default 5).
	Workers int
}

// Controller is the Job controller.
type Controller struct {
	client     *client.Client
	jobs       client.Resource[*batchv1.Job]
	clock      clock.WithDelayedExecution
	workers    int
	recorder   *client.Recorder
	podControl controller.PodControl

	jobInformer *client.Informer[*batchv1.Job]
	podInformer *client.Informer[*corev1.Pod]
	queue       *client.Queue[string] // Jobs, "namespace/name"
	orphanQueue *client.Queue[string] // pods whose finalizer no Job will remove

	expectations          *controller.Expectations
	finalizerExpectations *uidTrackingExpectations
	backoff               *backoffStore

	// writtenMu guards written: the resourceVersion of each Job's last
	// status write. A sync from a cache older than that would count pods
	// whose finalizers are gone but whose counts it cannot see yet.
	writtenMu sync.Mutex
	written   map[string]int64
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("job", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	jobs := client.For[*batchv1.Job](cfg.Client, batchv1.GroupName, "jobs")
	recorder := client.NewRecorder(cfg.Client, Component, "", cfg.Clock)
	jm := &Controller{
		client:                cfg.Client,
		jobs:                  jobs,
		clock:                 cfg.Clock,
		workers:               cfg.Workers,
		recorder:              recorder,
		podControl:            controller.PodControl{Client: cfg.Client, Recorder: recorder},
		jobInformer:           client.NewInformer(jobs, "", client.ListOptions{}),
		podInformer:           client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		queue:                 client.NewQueue[string](cfg.Clock),
		orphanQueue:           client.NewQueue[string](cfg.Clock),
		expectations:          controller.NewExpectations(cfg.Clock),
		finalizerExpectations: newUIDTrackingExpectations(),
		backoff:               newBackoffStore(),
		written:               map[string]int64{},
	}
	jm.jobInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*batchv1.Job])
	jm.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	jm.jobInformer.AddHandler(client.Handler[*batchv1.Job]{
		OnAdd:    func(j *batchv1.Job) { jm.queue.Add(client.Key(j)) },
		OnUpdate: jm.updateJob,
		OnDelete: jm.deleteJob,
	})
	jm.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    jm.addPod,
		OnUpdate: jm.updatePod,
		OnDelete: func(p *corev1.Pod) { jm.deletePod(p, true) },
	})
	return jm, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (jm *Controller) HasSynced() bool { return controller.Synced(jm.informers()...) }

func (jm *Controller) informers() []controller.Informer {
	return []controller.Informer{jm.jobInformer, jm.podInformer}
}

// Run watches Jobs and pods and syncs Jobs until ctx is done.
func (jm *Controller) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer jm.orphanQueue.ShutDown()
	informers := jm.informers()
	runErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr <- controller.Run(ctx, Component, informers,
			controller.Worker[string]{Queue: jm.queue, Workers: jm.workers, Reconcile: jm.Reconcile})
	}()
	if client.WaitForCacheSync(ctx, jm.HasSynced) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jm.orphanWorker(ctx)
		}()
	}
	<-ctx.Done()
	return <-runErr
}

// --- event handlers ---

func (jm *Controller) enqueueBatched(j *batchv1.Job) {
	jm.queue.AddAfter(client.Key(j), SyncJobBatchPeriod)
}

func (jm *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batchv1.Job {
	j, _ := controller.ResolveControllerRef(jm.jobInformer, controllerKind.Kind, namespace, ref)
	return j
}

// podJobs returns the Jobs whose selector matches an orphan pod.
func (jm *Controller) podJobs(pod *corev1.Pod) []*batchv1.Job {
	return controller.Selecting(jm.jobInformer, pod.Namespace, pod.Labels, func(j *batchv1.Job) *metav1.LabelSelector { return j.Spec.Selector })
}

func (jm *Controller) addPod(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		jm.deletePod(pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		j := jm.resolveControllerRef(pod.Namespace, ref)
		if j == nil {
			// Its Job is gone: if this informer saw the pod only after the
			// Job's deletion, deleteJob did not queue it, and nothing else
			// would remove its tracking finalizer (upstream relies on the
			// garbage collector deleting the pod, which then goes through
			// deletePod; kubetab queues it now).
			if hasJobTrackingFinalizer(pod) && ref.Kind == controllerKind.Kind {
				jm.orphanQueue.Add(client.Key(pod))
			}
			return
		}
		jm.expectations.CreationObserved(client.Key(j))
		jm.enqueueBatched(j)
		return
	}
	if hasJobTrackingFinalizer(pod) {
		jm.orphanQueue.Add(client.Key(pod))
	}
	for _, j := range jm.podJobs(pod) {
		jm.enqueueBatched(j)
	}
}

func (jm *Controller) updatePod(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		jm.deletePod(cur, false)
		return
	}
	finalizerRemoved := !hasJobTrackingFinalizer(cur)
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if j := jm.resolveControllerRef(old.Namespace, oldRef); j != nil {
			if finalizerRemoved {
				jm.finalizerExpectations.removalObserved(client.Key(j), string(cur.UID))
			}
			jm.enqueueBatched(j)
		}
	}
	if curRef != nil {
		j := jm.resolveControllerRef(cur.Namespace, curRef)
		if j == nil {
			if !finalizerRemoved && curRef.Kind == controllerKind.Kind {
				jm.orphanQueue.Add(client.Key(cur)) // as in addPod
			}
			return
		}
		if isJobFinished(j) && !finalizerRemoved {
			jm.orphanQueue.Add(client.Key(cur)) // no sync of a finished Job removes it
		}
		if finalizerRemoved {
			jm.finalizerExpectations.removalObserved(client.Key(j), string(cur.UID))
		}
		jm.enqueueBatched(j)
		return
	}
	if hasJobTrackingFinalizer(cur) {
		jm.orphanQueue.Add(client.Key(cur))
	}
	if refChanged || !reflect.DeepEqual(old.Labels, cur.Labels) {
		for _, j := range jm.podJobs(cur) {
			jm.enqueueBatched(j)
		}
	}
}

// deletePod: final is true when the pod is gone, false when it only got
// its deletionTimestamp.
func (jm *Controller) deletePod(pod *corev1.Pod, final bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	hasFinalizer := hasJobTrackingFinalizer(pod)
	if ref == nil {
		if hasFinalizer {
			jm.orphanQueue.Add(client.Key(pod))
		}
		return
	}
	j := jm.resolveControllerRef(pod.Namespace, ref)
	if j == nil || isJobFinished(j) {
		if hasFinalizer {
			jm.orphanQueue.Add(client.Key(pod)) // no sync will remove it
		}
		return
	}
	key := client.Key(j)
	jm.expectations.DeletionObserved(key, controller.PodKey(pod))
	if final || !hasFinalizer {
		jm.finalizerExpectations.removalObserved(key, string(pod.UID))
	}
	jm.enqueueBatched(j)
}

func (jm *Controller) updateJob(old, cur *batchv1.Job) {
	key := client.Key(cur)
	if old.UID != cur.UID {
		jm.deleteJob(old)
	}
	if cur.Generation == old.Generation {
		jm.enqueueBatched(cur) // a status update: batch it with the pod events
	} else {
		jm.queue.Add(key) // a spec change: at once
	}
	// A finished Job has no sync to remove its pods' finalizers.
	if isJobFinished(cur) {
		jm.cleanupPodFinalizers(cur)
	}
	// A changed activeDeadlineSeconds: look again when it passes.
	if cur.Status.StartTime != nil && cur.Spec.ActiveDeadlineSeconds != nil &&
		(old.Spec.ActiveDeadlineSeconds == nil || *old.Spec.ActiveDeadlineSeconds != *cur.Spec.ActiveDeadlineSeconds) {
		total := time.Duration(*cur.Spec.ActiveDeadlineSeconds) * time.Second
		jm.queue.AddAfter(key, total-jm.clock.Since(cur.Status.StartTime.Time))
	}
}

func (jm *Controller) deleteJob(j *batchv1.Job) {
	jm.queue.Add(client.Key(j))
	jm.cleanupPodFinalizers(j)
}

// cleanupPodFinalizers queues the pods of j that still have the tracking
// finalizer, for the orphan worker.
func (jm *Controller) cleanupPodFinalizers(j *batchv1.Job) {
	for _, p := range jm.podInformer.ByIndex(controller.NamespaceIndex, j.Namespace) {
		if metav1.IsControlledBy(p, j) && hasJobTrackingFinalizer(p) {
			jm.orphanQueue.Add(client.Key(p))
		}
	}
}

// --- orphans ---

func (jm *Controller) orphanWorker(ctx context.Context) {
	for {
		key, ok := jm.orphanQueue.Get(ctx)
		if !ok {
			return
		}
		if err := jm.syncOrphanPod(ctx, key); err != nil {
			jm.orphanQueue.AddRateLimited(key)
		} else {
			jm.orphanQueue.Forget(key)
		}
		jm.orphanQueue.Done(key)
	}
}

// syncOrphanPod removes the tracking finalizer of a pod whose Job is gone
// or finished (or that no Job controls any more).
func (jm *Controller) syncOrphanPod(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	pod, ok := jm.podInformer.Get(ns, name)
	if !ok {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if ref.Kind != controllerKind.Kind || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return nil // not a Job's pod: not ours to touch
		}
		if j := jm.resolveControllerRef(pod.Namespace, ref); j != nil && !isJobFinished(j) {
			return nil // its Job will count it
		}
	}
	return jm.removeTrackingFinalizer(ctx, pod)
}

// --- sync ---

// syncJobCtx is what one sync knows.
type syncJobCtx struct {
	job                  *batchv1.Job
	pods                 []*corev1.Pod
	activePods           []*corev1.Pod
	finishedCondition    *batchv1.JobCondition
	succeeded, failed    int32
	ready, terminating   int32
	newBackoffRecord     backoffRecord
	expectedRmFinalizers sets.Set[string]
	uncounted            uncountedTerminatedPods
	// Indexed Jobs: the completed indexes in the status, and with the
	// succeeded pods not counted yet.
	prevSucceededIndexes, succeededIndexes orderedIntervals
}

// Reconcile syncs the Job with cache key "namespace/name": it counts its
// finished pods, decides whether it is complete or failed, and creates or
// deletes pods (upstream: syncJob).
func (jm *Controller) Reconcile(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	shared, ok := jm.jobInformer.Get(ns, name)
	if !ok {
		jm.expectations.Delete(key)
		jm.finalizerExpectations.delete(key)
		jm.backoff.remove(key)
		jm.forgetWritten(key)
		return nil
	}
	if jm.staleCache(key, shared) {
		return errStaleCache // the write's event is on its way; retry then
	}
	if isJobFinished(shared) {
		jm.backoff.remove(key)
		return nil
	}
	if m := shared.Spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		jm.recorder.Event(shared, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	job := shared.DeepCopy()
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	// Expectations before the pods: a pod arriving in between is seen next time.
	satisfied := jm.expectations.Satisfied(key)
	pods, err := jm.getPodsForJob(ctx, job)
	if err != nil {
		return err
	}
	jc := &syncJobCtx{
		job:                  job,
		pods:                 pods,
		activePods:           controller.FilterActivePods(pods),
		uncounted:            newUncounted(job.Status.UncountedTerminatedPods),
		expectedRmFinalizers: jm.finalizerExpectations.expected(key),
		terminating:          countTerminatingPods(pods),
	}
	jc.ready = countReadyPods(jc.activePods)
	active := int32(len(jc.activePods))
	newSucceeded, newFailed := getNewFinishedPods(jc)
	jc.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(jc.uncounted.succeeded.Len())
	jc.failed = job.Status.Failed + int32(len(newFailed)) + int32(jc.uncounted.failed.Len())

	if job.Status.StartTime == nil && !jobSuspended(job) {
		now := metav1.NewTime(jm.clock.Now())
		job.Status.StartTime = &now
	}
	jc.newBackoffRecord = jm.backoff.newRecord(key, newSucceeded, newFailed)

	var manageErr error
	jc.finishedCondition = findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet)
	if c := jc.finishedCondition; c != nil && c.Status != corev1.ConditionTrue {
		jc.finishedCondition = nil
	}
	if jc.finishedCondition == nil {
		if c := findCondition(job.Status.Conditions, batchv1.JobFailureTarget); c != nil && c.Status == corev1.ConditionTrue {
			jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, c.Reason, c.Message, jm.clock.Now())
		}
	}
	if jc.finishedCondition == nil {
		switch {
		case jc.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, pods):
			jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, ReasonBackoffLimitExceeded, MessageBackoffLimitExceeded, jm.clock.Now())
		case jm.pastActiveDeadline(job):
			jc.finishedCondition = newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, ReasonDeadlineExceeded, MessageDeadlineExceeded, jm.clock.Now())
		case job.Spec.ActiveDeadlineSeconds != nil && !jobSuspended(job):
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - jm.clock.Since(job.Status.StartTime.Time)
			jm.queue.AddAfter(key, left)
		}
	}

	if isIndexedJob(job) {
		jc.prevSucceededIndexes, jc.succeededIndexes = calculateSucceededIndexes(job, pods)
		jc.succeeded = int32(jc.succeededIndexes.total())
	}

	suspendChanged := false
	if jc.finishedCondition != nil {
		// Failed (or succeeded): stop what still runs, keeping the
		// finalizers so those pods are counted (as failed) below.
		deletedReady, deleted, err := jm.deleteActivePods(ctx, job, jc.activePods)
		if deleted != active || !satisfied {
			// Not finished until every pod is gone and counted.
			jc.finishedCondition = nil
		}
		active -= deleted
		jc.terminating += deleted
		jc.ready -= deletedReady
		manageErr = err
	} else {
		manageCalled := false
		if satisfied && job.DeletionTimestamp == nil {
			active, manageErr = jm.manageJob(ctx, job, jc)
			manageCalled = true
		}
		var complete bool
		if job.Spec.Completions == nil {
			// Done when any pod succeeded and the others have finished.
			complete = jc.succeeded > 0 && active == 0
		} else {
			complete = jc.succeeded >= *job.Spec.Completions && active == 0
		}
		switch {
		case complete:
			jc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", jm.clock.Now())
		case manageCalled && jobSuspended(job):
			var changed bool
			job.Status.Conditions, changed = ensureJobConditionStatus(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", jm.clock.Now())
			if changed {
				suspendChanged = true
				jm.recorder.Event(job, corev1.EventTypeNormal, "Suspended", "Job suspended")
			}
		case manageCalled:
			var changed bool
			job.Status.Conditions, changed = ensureJobConditionStatus(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", jm.clock.Now())
			if changed {
				suspendChanged = true
				jm.recorder.Event(job, corev1.EventTypeNormal, "Resumed", "Job resumed")
				// activeDeadlineSeconds counts continuous activity.
				now := metav1.NewTime(jm.clock.Now())
				job.Status.StartTime = &now
			}
		}
	}

	needsUpdate := suspendChanged || active != job.Status.Active || job.Status.Ready == nil || *job.Status.Ready != jc.ready ||
		job.Status.Terminating == nil || *job.Status.Terminating != jc.terminating
	job.Status.Active = active
	job.Status.Ready = &jc.ready
	terminating := jc.terminating
	job.Status.Terminating = &terminating
	if err := jm.trackJobStatusAndRemoveFinalizers(ctx, jc, needsUpdate); err != nil {
		return fmt.Errorf("tracking status: %w", err)
	}
	return manageErr
}

// getPodsForJob returns the pods of the Job: ours, and orphans matching the
// selector, which are adopted. Adopted pods are counted as if they had the
// tracking finalizer.
func (jm *Controller) getPodsForJob(ctx context.Context, j *batchv1.Job) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("couldn't convert Job selector: %w", err)
	}
	m := &controller.RefManager{
		Controller: j, ControllerKind: controllerKind, Selector: sel,
		CanAdopt: controller.RecheckDeletionTimestamp(j.UID, func(ctx context.Context) (metav1.Object, error) {
			return jm.jobs.Get(ctx, j.Namespace, j.Name)
		}),
	}
	all := jm.podInformer.ByIndex(controller.NamespaceIndex, j.Namespace)
	sort.Slice(all, func(a, b int) bool { return all[a].Name < all[b].Name })
	pods, err := controller.Claim(ctx, m, jm.client.Pods(), all)
	for i, p := range pods {
		if !metav1.IsControlledBy(p, j) || hasJobTrackingFinalizer(p) {
			continue
		}
		adopted := true
		for _, r := range p.OwnerReferences {
			adopted = adopted && r.UID != j.UID
		}
		if adopted {
			pods[i] = p.DeepCopy()
			pods[i].Finalizers = append(pods[i].Finalizers, batchv1.JobTrackingFinalizer)
		}
	}
	return pods, err
}

// manageJob creates or deletes pods so that as many run as the Job wants
// now: parallelism, but no more than the completions still needed. It
// respects the failure back-off, and returns the number of active pods.
func (jm *Controller) manageJob(ctx context.Context, job *batchv1.Job, jc *syncJobCtx) (int32, error) {
	active := int32(len(jc.activePods))
	key := client.Key(job)
	parallelism := *job.Spec.Parallelism

	if jobSuspended(job) {
		toDelete := activePodsForRemoval(job, jc, int(active))
		jm.expectDeletions(key, toDelete)
		removedReady, removed, err := jm.deleteJobPods(ctx, job, key, toDelete)
		jc.terminating += removed
		jc.ready -= removedReady
		return active - removed, err
	}

	var wantActive int32
	if job.Spec.Completions == nil {
		// Work-queue Jobs: parallelism pods until one succeeds, then let
		// the others finish.
		if jc.succeeded > 0 {
			wantActive = active
		} else {
			wantActive = parallelism
		}
	} else {
		wantActive = max(0, min(*job.Spec.Completions-jc.succeeded, parallelism))
	}

	if toDelete := activePodsForRemoval(job, jc, int(max(0, active-wantActive))); len(toDelete) > 0 {
		// An Indexed Job also removes pods of a duplicated or finished index.
		toDelete = toDelete[:min(len(toDelete), MaxPodCreateDeletePerSync)]
		jm.expectDeletions(key, toDelete)
		removedReady, removed, err := jm.deleteJobPods(ctx, job, key, toDelete)
		jc.terminating += removed
		jc.ready -= removedReady
		return active - removed, err
	}

	diff := wantActive - active
	if diff <= 0 {
		return active, nil
	}
	// Upstream returns an active count of 0 here; the pods that do run
	// are still active, so kubetab keeps counting them.
	if left := jc.newBackoffRecord.remainingTime(jm.clock, DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff); left > 0 {
		jm.queue.AddAfter(key, max(left, SyncJobBatchPeriod))
		return active, nil
	}
	diff = min(diff, MaxPodCreateDeletePerSync)
	var indexes []int
	if isIndexedJob(job) {
		indexes = firstPendingIndexes(jc, int(diff), *job.Spec.Completions)
		diff = int32(len(indexes))
		if diff == 0 {
			return active, nil
		}
	}
	jm.expectations.ExpectCreations(key, int(diff))
	template := job.Spec.Template.DeepCopy()
	if !hasFinalizer(template.Finalizers, batchv1.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	ref := metav1.NewControllerRef(job, controllerKind)
	// Slow start: batches of 1, 2, 4 ..., stopping at the first batch
	// with a failure (a quota, a bad template: all would fail alike).
	var firstErr error
	created := int32(0)
	for batch := min(diff, 1); diff > 0; batch = min(2*batch, diff) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			tmpl, generateName := template, job.Name+"-"
			if len(indexes) > 0 {
				ix := indexes[0]
				indexes = indexes[1:]
				tmpl, generateName = indexedTemplate(job, template, ix), fmt.Sprintf("%s-%d-", job.Name, ix)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := jm.createPod(ctx, job, tmpl, ref, generateName)
				if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					err = nil // the namespace is going away: so is this Job
				}
				if err != nil {
					jm.expectations.CreationObserved(key) // it will never be seen
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		failed := int32(len(errs))
		created += batch - failed
		diff -= batch
		if failed > 0 {
			firstErr = <-errs
			for range diff { // never attempted
				jm.expectations.CreationObserved(key)
			}
			break
		}
	}
	return active + created, firstErr
}

func (jm *Controller) expectDeletions(key string, pods []*corev1.Pod) {
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = controller.PodKey(p)
	}
	jm.expectations.ExpectDeletions(key, keys)
}

// activePodsForRemoval returns at least n active pods to delete, the most
// expendable first: not yet scheduled, pending, not ready, newest. An
// Indexed Job first removes the pods of invalid, finished or duplicated
// indexes, even when n is 0.
func activePodsForRemoval(job *batchv1.Job, jc *syncJobCtx, n int) []*corev1.Pod {
	var rm []*corev1.Pod
	left := jc.activePods
	if isIndexedJob(job) {
		rm = duplicatedIndexPodsForRemoval(jc.activePods, *job.Spec.Completions, jc.succeededIndexes)
		drop := map[*corev1.Pod]bool{}
		for _, p := range rm {
			drop[p] = true
		}
		left = nil
		for _, p := range jc.activePods {
			if !drop[p] {
				left = append(left, p)
			}
		}
	}
	if len(rm) >= n {
		return rm
	}
	sorted := append([]*corev1.Pod(nil), left...)
	sort.Sort(controller.ActivePodsWithRanks{Pods: sorted, Rank: make([]int, len(sorted))})
	return append(rm, sorted[:min(n-len(rm), len(sorted))]...)
}

// createPod creates a pod of the Job from template with generateName,
// recording SuccessfulCreate or FailedCreate as PodControl does.
func (jm *Controller) createPod(ctx context.Context, job *batchv1.Job, template *corev1.PodTemplateSpec, ref *metav1.OwnerReference, generateName string) error {
	pod := controller.GetPodFromTemplate(template, job, ref)
	pod.Namespace, pod.GenerateName = job.Namespace, generateName
	created, err := jm.client.Pods().Create(ctx, pod)
	if err != nil {
		if !apierrors.IsTimeout(err) {
			jm.recorder.Eventf(job, corev1.EventTypeWarning, controller.FailedCreatePodReason, "Error creating: %v", err)
		}
		return err
	}
	jm.recorder.Eventf(job, corev1.EventTypeNormal, controller.SuccessfulCreatePodReason, "Created pod: %v", created.Name)
	return nil
}

// deleteJobPods removes the tracking finalizer and deletes each pod: for
// pods the Job no longer wants (they are not counted).
func (jm *Controller) deleteJobPods(ctx context.Context, job *batchv1.Job, key string, pods []*corev1.Pod) (deletedReady, deleted int32, err error) {
	var errs []error
	for _, p := range pods {
		rmErr := jm.removeTrackingFinalizer(ctx, p)
		if rmErr == nil {
			rmErr = jm.podControl.DeletePod(ctx, job.Namespace, p.Name, job)
		}
		if rmErr != nil {
			jm.expectations.DeletionObserved(key, controller.PodKey(p))
			if !apierrors.IsNotFound(rmErr) {
				errs = append(errs, rmErr)
				continue
			}
		}
		deleted++
		if controller.IsPodReady(p) {
			deletedReady++
		}
	}
	return deletedReady, deleted, errors.Join(errs...)
}

// deleteActivePods deletes the active pods of a finished Job, keeping their
// finalizers: trackJobStatusAndRemoveFinalizers counts them as failed.
func (jm *Controller) deleteActivePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (deletedReady, deleted int32, err error) {
	var errs []error
	for _, p := range pods {
		if err := jm.podControl.DeletePod(ctx, job.Namespace, p.Name, job); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		deleted++
		if controller.IsPodReady(p) {
			deletedReady++
		}
	}
	return deletedReady, deleted, errors.Join(errs...)
}

// trackJobStatusAndRemoveFinalizers counts finished pods in three writes
// (uncounted UIDs; finalizers removed; counters) and, when the Job is done
// and every pod counted, sets its terminal condition (upstream's function
// of the same name).
func (jm *Controller) trackJobStatusAndRemoveFinalizers(ctx context.Context, jc *syncJobCtx, needsFlush bool) error {
	job := jc.job
	uncounted := job.Status.UncountedTerminatedPods
	withFinalizer := sets.New[string]()
	for _, p := range jc.pods {
		if hasJobTrackingFinalizer(p) && !jc.expectedRmFinalizers.Has(string(p.UID)) {
			withFinalizer.Insert(string(p.UID))
		}
	}
	if cleanUncountedPodsWithoutFinalizers(&job.Status, withFinalizer) {
		needsFlush = true
	}
	var toRemove []*corev1.Pod
	reachedMax := false
	indexed := isIndexedJob(job)
	var newSucceededIndexes []int
	for _, p := range jc.pods {
		uid := string(p.UID)
		if !hasJobTrackingFinalizer(p) || jc.expectedRmFinalizers.Has(uid) {
			continue // counted in an earlier sync
		}
		failed := isPodFailed(p)
		if !canRemoveFinalizer(jc, p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		ix, validIx := 0, true
		if indexed {
			ix, validIx = validIndex(p, *job.Spec.Completions)
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncounted.failed.Has(uid):
			switch {
			case indexed:
				// The index is the count: no UID needs remembering.
				if validIx && !jc.prevSucceededIndexes.has(ix) {
					newSucceededIndexes = append(newSucceededIndexes, ix)
					needsFlush = true
				}
			case !jc.uncounted.succeeded.Has(uid):
				needsFlush = true
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
			}
		case failed || (jc.finishedCondition != nil && jc.finishedCondition.Type != batchv1.JobSuccessCriteriaMet):
			// When the Job failed, every pod still running counts as failed.
			if !jc.uncounted.failed.Has(uid) && validIx {
				needsFlush = true
				uncounted.Failed = append(uncounted.Failed, p.UID)
			}
		}
		if len(uncounted.Succeeded)+len(uncounted.Failed) >= MaxUncountedPods {
			reachedMax = true
			break
		}
	}
	if indexed {
		jc.succeededIndexes = jc.succeededIndexes.with(newSucceededIndexes)
		if str := jc.succeededIndexes.String(); str != job.Status.CompletedIndexes {
			job.Status.CompletedIndexes = str
			needsFlush = true
		}
		job.Status.Succeeded = int32(jc.succeededIndexes.total())
	}
	// The interim conditions go in with the uncounted pods; the terminal
	// ones once they are counted.
	if c := jc.finishedCondition; c != nil && c.Type == batchv1.JobFailureTarget {
		job.Status.Conditions = append(job.Status.Conditions, *c)
		needsFlush = true
		jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, c.Reason, c.Message, jm.clock.Now())
	}
	if c := jc.finishedCondition; c != nil && c.Type == batchv1.JobSuccessCriteriaMet {
		if findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet) == nil {
			job.Status.Conditions = append(job.Status.Conditions, *c)
			needsFlush = true
		}
		jc.finishedCondition = newCondition(batchv1.JobComplete, corev1.ConditionTrue, c.Reason, c.Message, jm.clock.Now())
	}

	// 1. Write the uncounted UIDs (and interim conditions).
	if needsFlush {
		updated, err := jm.updateStatus(ctx, job)
		if err != nil {
			return fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		job = updated
		jc.job = updated
		jm.backoff.update(jc.newBackoffRecord)
		needsFlush = false
	}
	// 2. Remove the finalizers.
	var rmErr error
	if len(toRemove) > 0 {
		key := client.Key(job)
		uids := make([]string, len(toRemove))
		for i, p := range toRemove {
			uids[i] = string(p.UID)
		}
		jm.finalizerExpectations.expect(key, uids)
		var errs []error
		for _, p := range toRemove {
			if err := jm.removeTrackingFinalizer(ctx, p); err != nil && !apierrors.IsNotFound(err) {
				jm.finalizerExpectations.removalObserved(key, string(p.UID))
				errs = append(errs, err)
				continue
			}
			withFinalizer.Delete(string(p.UID))
		}
		rmErr = errors.Join(errs...)
	}
	// 3. Count the pods whose finalizer is gone.
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if cleanUncountedPodsWithoutFinalizers(&job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil {
		if needsFlush {
			if _, err := jm.updateStatus(ctx, job); err != nil {
				return fmt.Errorf("removing uncounted pods from status: %w", err)
			}
		}
		return rmErr
	}
	finished := !reachedMax && jm.enactJobFinished(jc)
	if finished {
		needsFlush = true
	}
	if needsFlush {
		if _, err := jm.updateStatus(ctx, job); err != nil {
			return fmt.Errorf("removing uncounted pods from status: %w", err)
		}
		if finished {
			jm.recordJobFinished(job, jc.finishedCondition)
		}
	}
	return nil
}

// canRemoveFinalizer: the pod has been counted for good: it succeeded or
// failed, or the Job is being deleted or has finished.
func canRemoveFinalizer(jc *syncJobCtx, p *corev1.Pod, failed bool) bool {
	return jc.job.DeletionTimestamp != nil || jc.finishedCondition != nil || p.Status.Phase == corev1.PodSucceeded || failed
}

// cleanUncountedPodsWithoutFinalizers moves the UIDs of pods that lost
// their finalizer from uncountedTerminatedPods into the counters.
func cleanUncountedPodsWithoutFinalizers(status *batchv1.JobStatus, withFinalizer sets.Set[string]) bool {
	u := status.UncountedTerminatedPods
	changed := false
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer.Has(string(uid)) {
				out = append(out, uid)
			}
		}
		return out
	}
	if kept := keep(u.Succeeded); len(kept) != len(u.Succeeded) {
		status.Succeeded += int32(len(u.Succeeded) - len(kept))
		u.Succeeded = kept
		changed = true
	}
	if kept := keep(u.Failed); len(kept) != len(u.Failed) {
		status.Failed += int32(len(u.Failed) - len(kept))
		u.Failed = kept
		changed = true
	}
	return changed
}

// enactJobFinished sets the terminal condition once every pod is counted
// and none is terminating.
func (jm *Controller) enactJobFinished(jc *syncJobCtx) bool {
	c := jc.finishedCondition
	if c == nil {
		return false
	}
	job := jc.job
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	if jc.terminating > 0 {
		return false
	}
	job.Status.Conditions, _ = ensureJobConditionStatus(job.Status.Conditions, c.Type, c.Status, c.Reason, c.Message, jm.clock.Now())
	if c.Type == batchv1.JobComplete {
		t := c.LastTransitionTime
		job.Status.CompletionTime = &t
	}
	return true
}

func (jm *Controller) recordJobFinished(job *batchv1.Job, c *batchv1.JobCondition) {
	if c.Type == batchv1.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			jm.recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		jm.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	jm.recorder.Event(job, corev1.EventTypeWarning, c.Reason, c.Message)
}

// errStaleCache: the Job cache is older than the controller's last write.
var errStaleCache = errors.New("job: the Job cache has not seen this controller's last status write yet")

// updateStatus writes a Job's status and remembers the version written.
func (jm *Controller) updateStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	updated, err := jm.jobs.UpdateStatus(ctx, job)
	if err != nil {
		return nil, err
	}
	var rv int64
	fmt.Sscan(updated.ResourceVersion, &rv)
	jm.writtenMu.Lock()
	jm.written[client.Key(updated)] = rv
	jm.writtenMu.Unlock()
	return updated, nil
}

// staleCache reports whether the cached Job is older than the last status
// written for it (kubetab: upstream relies on its 1 s batching of pod
// events for the cache to catch up; a fake clock, or a busy browser tab,
// gives no such guarantee).
func (jm *Controller) staleCache(key string, cached *batchv1.Job) bool {
	jm.writtenMu.Lock()
	defer jm.writtenMu.Unlock()
	want, ok := jm.written[key]
	if !ok {
		return false
	}
	var have int64
	fmt.Sscan(cached.ResourceVersion, &have)
	if have >= want {
		delete(jm.written, key)
		return false
	}
	return true
}

func (jm *Controller) forgetWritten(key string) {
	jm.writtenMu.Lock()
	defer jm.writtenMu.Unlock()
	delete(jm.written, key)
}

// removeTrackingFinalizer removes batch.kubernetes.io/job-tracking from a
// pod (read fresh), retrying on conflicts.
func (jm *Controller) removeTrackingFinalizer(ctx context.Context, p *corev1.Pod) error {
	if !hasJobTrackingFinalizer(p) {
		return nil
	}
	var err error
	for i := 0; i < finalizerRemovalRetries; i++ {
		var pod *corev1.Pod
		if pod, err = jm.client.Pods().Get(ctx, p.Namespace, p.Name); err != nil {
			return err
		}
		if pod.UID != p.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), p.Name)
		}
		if !hasJobTrackingFinalizer(pod) {
			return nil
		}
		pod = pod.DeepCopy()
		var kept []string
		for _, f := range pod.Finalizers {
			if f != batchv1.JobTrackingFinalizer {
				kept = append(kept, f)
			}
		}
		pod.Finalizers = kept
		if _, err = jm.client.Pods().Update(ctx, pod); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure, the restarts of
// the running pods' containers reach backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, s := range p.Status.InitContainerStatuses {
			restarts += s.RestartCount
		}
		for _, s := range p.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}

// pastActiveDeadline: the Job has been active (not suspended) for
// activeDeadlineSeconds.
func (jm *Controller) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || jobSuspended(job) {
		return false
	}
	return jm.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// getNewFinishedPods returns the finished pods not counted yet: they still
// have the finalizer and are not in uncountedTerminatedPods.
func getNewFinishedPods(jc *syncJobCtx) (succeeded, failed []*corev1.Pod) {
	for _, p := range jc.pods {
		uid := string(p.UID)
		if !hasJobTrackingFinalizer(p) || jc.expectedRmFinalizers.Has(uid) {
			continue
		}
		if _, ok := validIndex(p, deref(jc.job.Spec.Completions)); isIndexedJob(jc.job) && !ok {
			continue
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncounted.succeeded.Has(uid):
			succeeded = append(succeeded, p)
		case isPodFailed(p) && !jc.uncounted.failed.Has(uid):
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
