package job_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/job"
)

func ptr[T any](v T) *T { return &v }

type env struct {
	*controllertest.Env
	t    *testing.T
	jobs client.Resource[*batchv1.Job]
}

func newEnv(t *testing.T) *env {
	e := controllertest.NewEnv(t)
	jc, err := job.New(job.Config{Client: e.ClientFor(job.Component), Clock: e.Clock, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("job", jc.Run)
	return &env{Env: e, t: t, jobs: client.For[*batchv1.Job](e.Client, "batch", "jobs")}
}

// makeJob is a Job "pi" of completions/parallelism (nil: unset) running hello.
func makeJob(name string, completions, parallelism *int32, restart corev1.RestartPolicy) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: completions, Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: restart,
				Containers:    []corev1.Container{{Name: "app", Image: "hello", Args: []string{"--ticks=1"}}},
			}},
		},
	}
}

func (e *env) create(j *batchv1.Job) *batchv1.Job {
	out, err := e.jobs.Create(e.Ctx, j)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) get(name string) *batchv1.Job {
	j, err := e.jobs.Get(e.Ctx, "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// activePods returns the pods that neither finished nor are being deleted.
func (e *env) activePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range e.Pods("default") {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// finish plays the kubelet: the pod's container ran and exited with code.
func (e *env) finish(p *corev1.Pod, code int32) {
	controllertest.Update(e.Env, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, p.Namespace, p.Name) },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
		func(p *corev1.Pod) {
			now := metav1.NewTime(e.Clock.Now())
			p.Status.Phase = corev1.PodSucceeded
			reason := "Completed"
			if code != 0 {
				p.Status.Phase, reason = corev1.PodFailed, "Error"
			}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: now, FinishedAt: now}}}}
		})
}

func conditions(j *batchv1.Job) string {
	var out []string
	for _, c := range j.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(out, ",")
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// watchActive records the most pods of the namespace active at once.
func (e *env) watchActive() func() int {
	w, err := e.Client.Pods().Watch(e.Ctx, "default", client.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var mu sync.Mutex
	most := 0
	cur := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			active := ev.Type != watch.Deleted && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
			mu.Lock()
			if active {
				cur[p.Name] = true
			} else {
				delete(cur, p.Name)
			}
			most = max(most, len(cur))
			mu.Unlock()
		}
	}()
	e.t.Cleanup(func() { w.Stop(); <-done })
	return func() int { mu.Lock(); defer mu.Unlock(); return most }
}

func TestCompletionsAndParallelism(t *testing.T) {
	e := newEnv(t)
	most := e.watchActive()
	j := e.create(makeJob("pi", ptr[int32](3), ptr[int32](2), corev1.RestartPolicyNever))
	for done := 0; done < 3; done++ {
		var active []*corev1.Pod
		want := min(2, 3-done)
		e.Eventually(fmt.Sprintf("%d active pods after %d succeeded", want, done), func() (bool, string) {
			active = e.activePods()
			return len(active) == want, fmt.Sprint(len(active))
		})
		e.finish(active[0], 0)
	}
	e.Eventually("Complete", func() (bool, string) {
		j := e.get("pi")
		c := condition(j, batchv1.JobComplete)
		return c != nil && c.Status == corev1.ConditionTrue, conditions(j)
	})
	j = e.get("pi")
	s := j.Status
	if s.Succeeded != 3 || s.Failed != 0 || s.Active != 0 || s.Ready == nil || *s.Ready != 0 || s.Terminating == nil || *s.Terminating != 0 {
		t.Errorf("status: succeeded %d failed %d active %d ready %v terminating %v", s.Succeeded, s.Failed, s.Active, s.Ready, s.Terminating)
	}
	if s.StartTime == nil || s.CompletionTime == nil || s.CompletionTime.Before(s.StartTime) {
		t.Errorf("startTime %v completionTime %v", s.StartTime, s.CompletionTime)
	}
	if u := s.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		t.Errorf("uncounted pods left: %+v", u)
	}
	if c := condition(j, batchv1.JobSuccessCriteriaMet); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "CompletionsReached" {
		t.Errorf("SuccessCriteriaMet = %+v", c)
	}
	if got := most(); got != 2 {
		t.Errorf("at most %d pods ran at once, want parallelism 2", got)
	}
	pods := e.Pods("default")
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || ref.UID != j.UID || p.Labels["job-name"] != "pi" || p.Labels[batchv1.JobNameLabel] != "pi" ||
			p.Labels[batchv1.ControllerUidLabel] != string(j.UID) || !strings.HasPrefix(p.Name, "pi-") {
			t.Errorf("pod %s: controller %+v labels %v", p.Name, ref, p.Labels)
		}
		if len(p.Finalizers) != 0 {
			t.Errorf("pod %s still has finalizers %v", p.Name, p.Finalizers)
		}
		if ok, msg := e.HasEvent("default", "SuccessfulCreate", "Created pod: "+p.Name); !ok {
			t.Error(msg)
		}
	}
	e.Eventually("Completed event", func() (bool, string) { return e.HasEvent("default", "Completed", "Job completed") })
}

// A running pod carries the job-tracking finalizer until it is counted.
func TestTrackingFinalizer(t *testing.T) {
	e := newEnv(t)
	e.create(makeJob("pi", nil, nil, corev1.RestartPolicyNever))
	var p *corev1.Pod
	e.Eventually("pod", func() (bool, string) {
		a := e.activePods()
		if len(a) == 1 {
			p = a[0]
		}
		return len(a) == 1, ""
	})
	if len(p.Finalizers) != 1 || p.Finalizers[0] != batchv1.JobTrackingFinalizer {
		t.Errorf("finalizers %v, want [%s]", p.Finalizers, batchv1.JobTrackingFinalizer)
	}
	// Deleted while running: it stays until the Job counted it as failed,
	// and a replacement is created.
	if err := e.Client.Pods().Delete(e.Ctx, "default", p.Name, nil); err != nil {
		t.Fatal(err)
	}
	e.Step = time.Second // the replacement waits out the 10 s failure back-off
	e.Eventually("counted as failed, replaced", func() (bool, string) {
		j := e.get("pi")
		return j.Status.Failed == 1 && len(e.activePods()) == 1, fmt.Sprintf("failed %d active %d", j.Status.Failed, len(e.activePods()))
	})
	e.Eventually("deleted pod gone", func() (bool, string) { return len(e.Pods("default")) == 1, fmt.Sprint(len(e.Pods("default"))) })
}

func TestBackoffLimitExceeded(t *testing.T) {
	e := newEnv(t)
	e.Step = time.Second // each poll moves the clock a second
	j := makeJob("fail", nil, nil, corev1.RestartPolicyNever)
	j.Spec.BackoffLimit = ptr[int32](2)
	e.create(j)
	var lastFailure time.Time
	for i := 0; i < 3; i++ {
		var active []*corev1.Pod
		e.Eventually(fmt.Sprintf("pod %d", i+1), func() (bool, string) {
			active = e.activePods()
			return len(active) == 1, fmt.Sprint(len(active))
		})
		// The replacement of the i-th failure in a row comes 10 s·2^(i-1) later.
		if i > 0 {
			wait := job.DefaultJobPodFailureBackOff << (i - 1)
			if d := active[0].CreationTimestamp.Sub(lastFailure); d < wait || d > wait+3*time.Second {
				t.Errorf("pod %d created %v after the previous failure, want %v", i+1, d, wait)
			}
		}
		lastFailure = e.Clock.Now()
		e.finish(active[0], 1)
	}
	e.Step = 100 * time.Millisecond
	e.Eventually("Failed", func() (bool, string) {
		j := e.get("fail")
		c := condition(j, batchv1.JobFailed)
		return c != nil && c.Status == corev1.ConditionTrue, conditions(j)
	})
	got := e.get("fail")
	c := condition(got, batchv1.JobFailed)
	if c.Reason != "BackoffLimitExceeded" || c.Message != "Job has reached the specified backoff limit" {
		t.Errorf("Failed condition %s %q", c.Reason, c.Message)
	}
	if ft := condition(got, batchv1.JobFailureTarget); ft == nil || ft.Reason != "BackoffLimitExceeded" {
		t.Errorf("FailureTarget = %+v", ft)
	}
	if got.Status.Failed != 3 || got.Status.Succeeded != 0 || got.Status.Active != 0 || got.Status.CompletionTime != nil {
		t.Errorf("status: failed %d succeeded %d active %d completionTime %v", got.Status.Failed, got.Status.Succeeded, got.Status.Active, got.Status.CompletionTime)
	}
	e.Eventually("event", func() (bool, string) {
		return e.HasEvent("default", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	})
	if n := len(e.Pods("default")); n != 3 {
		t.Errorf("%d pods, want the 3 failed ones kept", n)
	}
}

// restartPolicy OnFailure: the kubelet restarts the container in place;
// the restarts count toward backoffLimit, and the failed Job's pod is
// deleted.
func TestOnFailureRestartsCount(t *testing.T) {
	e := newEnv(t)
	j := makeJob("crash", nil, nil, corev1.RestartPolicyOnFailure)
	j.Spec.BackoffLimit = ptr[int32](2)
	e.create(j)
	var p *corev1.Pod
	e.Eventually("pod", func() (bool, string) {
		a := e.activePods()
		if len(a) == 1 {
			p = a[0]
		}
		return len(a) == 1, ""
	})
	restart := func(n int32) {
		controllertest.Update(e.Env, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, "default", p.Name) },
			func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
			func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: n,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			})
	}
	restart(1)
	e.Clock.Step(5 * time.Second)
	if c := condition(e.get("crash"), batchv1.JobFailureTarget); c != nil {
		t.Fatal("failed after 1 restart of 2")
	}
	restart(2)
	e.Eventually("Failed", func() (bool, string) {
		j := e.get("crash")
		c := condition(j, batchv1.JobFailed)
		return c != nil && c.Reason == "BackoffLimitExceeded", conditions(j)
	})
	if got := e.get("crash").Status; got.Failed != 1 || got.Active != 0 {
		t.Errorf("failed %d active %d, want 1 and 0", got.Failed, got.Active)
	}
	if n := len(e.Pods("default")); n != 0 {
		t.Errorf("%d pods left, want the running one deleted", n)
	}
}

func TestActiveDeadlineSeconds(t *testing.T) {
	e := newEnv(t)
	e.Step = 0
	j := makeJob("slow", ptr[int32](1), ptr[int32](1), corev1.RestartPolicyNever)
	j.Spec.ActiveDeadlineSeconds = ptr[int64](30)
	e.create(j)
	e.Eventually("pod", func() (bool, string) { return len(e.activePods()) == 1, "" })
	e.Eventually("deadline scheduled", func() (bool, string) { return e.Clock.HasWaiters(), "" })
	e.Clock.Step(29 * time.Second)
	if c := condition(e.get("slow"), batchv1.JobFailureTarget); c != nil {
		t.Fatal("failed before the deadline")
	}
	e.Clock.Step(2 * time.Second)
	e.Step = 100 * time.Millisecond
	e.Eventually("Failed", func() (bool, string) {
		j := e.get("slow")
		c := condition(j, batchv1.JobFailed)
		return c != nil && c.Reason == "DeadlineExceeded" && c.Message == "Job was active longer than specified deadline", conditions(j)
	})
	e.Eventually("event", func() (bool, string) {
		return e.HasEvent("default", "DeadlineExceeded", "Job was active longer than specified deadline")
	})
	if n := len(e.Pods("default")); n != 0 {
		t.Errorf("%d pods left after the deadline", n)
	}
}

func TestSuspendAndResume(t *testing.T) {
	e := newEnv(t)
	e.create(makeJob("batch", ptr[int32](4), ptr[int32](2), corev1.RestartPolicyNever))
	e.Eventually("2 pods", func() (bool, string) { return len(e.activePods()) == 2, "" })
	set := func(suspend bool) {
		controllertest.Update(e.Env, func() (*batchv1.Job, error) { return e.jobs.Get(e.Ctx, "default", "batch") },
			func(j *batchv1.Job) (*batchv1.Job, error) { return e.jobs.Update(e.Ctx, j) },
			func(j *batchv1.Job) { j.Spec.Suspend = &suspend })
	}
	set(true)
	e.Eventually("suspended", func() (bool, string) {
		j := e.get("batch")
		c := condition(j, batchv1.JobSuspended)
		return c != nil && c.Status == corev1.ConditionTrue && len(e.Pods("default")) == 0 && j.Status.Active == 0, conditions(j)
	})
	if ok, msg := e.HasEvent("default", "Suspended", "Job suspended"); !ok {
		t.Error(msg)
	}
	if f := e.get("batch").Status.Failed; f != 0 {
		t.Errorf("suspending counted %d failures", f)
	}
	set(false)
	e.Eventually("resumed", func() (bool, string) {
		j := e.get("batch")
		c := condition(j, batchv1.JobSuspended)
		return c != nil && c.Status == corev1.ConditionFalse && len(e.activePods()) == 2, conditions(j)
	})
	if ok, msg := e.HasEvent("default", "Resumed", "Job resumed"); !ok {
		t.Error(msg)
	}
}

// Deleting a Job leaves its pods to the garbage collector; their tracking
// finalizers are removed so nothing holds them.
func TestDeletedJobReleasesFinalizers(t *testing.T) {
	e := newEnv(t)
	e.create(makeJob("gone", ptr[int32](2), ptr[int32](2), corev1.RestartPolicyNever))
	e.Eventually("2 pods", func() (bool, string) { return len(e.activePods()) == 2, "" })
	if err := e.jobs.Delete(e.Ctx, "default", "gone", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("finalizers removed", func() (bool, string) {
		var fs []string
		for _, p := range e.Pods("default") {
			fs = append(fs, p.Finalizers...)
		}
		return len(fs) == 0, fmt.Sprint(fs)
	})
}

func TestNewValidates(t *testing.T) {
	if _, err := job.New(job.Config{}); err == nil {
		t.Error("New without a client: no error")
	}
}

func indexOf(p *corev1.Pod) string { return p.Annotations[batchv1.JobCompletionIndexAnnotation] }

// An Indexed Job runs one pod per index (annotation, label, env var,
// hostname, name), replaces a failed index with the same index, and
// records the completed indexes.
func TestIndexedJob(t *testing.T) {
	e := newEnv(t)
	e.Step = time.Second
	j := makeJob("sq", ptr[int32](3), ptr[int32](2), corev1.RestartPolicyNever)
	mode := batchv1.IndexedCompletion
	j.Spec.CompletionMode = &mode
	e.create(j)
	byIndex := func() map[string]*corev1.Pod {
		out := map[string]*corev1.Pod{}
		for _, p := range e.activePods() {
			out[indexOf(p)] = p
		}
		return out
	}
	var active map[string]*corev1.Pod
	e.Eventually("indexes 0 and 1", func() (bool, string) {
		active = byIndex()
		return len(active) == 2 && active["0"] != nil && active["1"] != nil, fmt.Sprint(len(active))
	})
	p := active["1"]
	env := p.Spec.Containers[0].Env
	if !strings.HasPrefix(p.Name, "sq-1-") || p.Spec.Hostname != "sq-1" || p.Labels[batchv1.JobCompletionIndexAnnotation] != "1" ||
		len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("pod %s: hostname %q labels %v env %+v", p.Name, p.Spec.Hostname, p.Labels, env)
	}
	e.finish(active["1"], 0)
	e.Eventually("index 2 started, 1 completed", func() (bool, string) {
		active = byIndex()
		return active["2"] != nil && e.get("sq").Status.CompletedIndexes == "1", e.get("sq").Status.CompletedIndexes
	})
	e.finish(active["2"], 1) // fails: replaced with index 2 again
	e.finish(active["0"], 0)
	e.Eventually("index 2 again", func() (bool, string) {
		active = byIndex()
		j := e.get("sq")
		return active["2"] != nil && len(active) == 1 && j.Status.Failed == 1 && j.Status.CompletedIndexes == "0,1",
			fmt.Sprintf("%d active, completed %q failed %d", len(active), j.Status.CompletedIndexes, j.Status.Failed)
	})
	e.finish(active["2"], 0)
	e.Eventually("Complete", func() (bool, string) {
		j := e.get("sq")
		c := condition(j, batchv1.JobComplete)
		return c != nil && j.Status.CompletedIndexes == "0-2" && j.Status.Succeeded == 3, conditions(j) + " " + j.Status.CompletedIndexes
	})
}
