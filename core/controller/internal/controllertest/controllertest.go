// Package controllertest runs controllers against a real in-memory API
// server (store + registry + client) for tests, with fixture builders in the
// style of the scheduler's st.MakePod().Name("p").Obj().
package controllertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/trace"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/store"
)

// Timeout bounds every wait. It is generous because the same tests run
// under Node (GOOS=js), several times slower than native.
const Timeout = 60 * time.Second

// Env is one API server with the "default" namespace, and the context the
// controllers of a test run in.
type Env struct {
	T        *testing.T
	Ctx      context.Context
	Registry *registry.Registry
	Client   *client.Client
	// Clock is the fake clock of the registry and the controllers.
	Clock *testingclock.FakeClock
	// Step is how far Eventually moves Clock at each poll (default 10ms),
	// so retries with back-off on the fake clock still happen. Zero it
	// while a test controls time itself.
	Step time.Duration
	// Trace records the components' requests (NewTracedEnv); nil otherwise.
	Trace *trace.Recorder

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewEnv returns an Env; its controllers stop when the test ends.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	return newEnv(t, false)
}

// NewTracedEnv is NewEnv with a trace (core/trace) of every request the
// components send, in Env.Trace: a test can wait for a controller's call
// ("deployment-controller tried to create web-... and got 409").
func NewTracedEnv(t *testing.T) *Env {
	t.Helper()
	return newEnv(t, true)
}

func newEnv(t *testing.T, traced bool) *Env {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	var rec *trace.Recorder
	if traced {
		rec = trace.New(0, clk)
	}
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk, Trace: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Env{T: t, Ctx: ctx, Registry: reg, Client: client.New(reg, "test"), Clock: clk, Step: 10 * time.Millisecond, Trace: rec, cancel: cancel}
	t.Cleanup(func() {
		cancel()
		e.wg.Wait()
	})
	if _, err := e.Client.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	return e
}

// ClientFor returns a client naming component, as a controller would use.
func (e *Env) ClientFor(component string) *client.Client { return client.New(e.Registry, component) }

// Start runs a controller's Run until the test ends; a Run that returns an
// error fails the test.
func (e *Env) Start(name string, run func(ctx context.Context) error) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := run(e.Ctx); err != nil {
			e.T.Errorf("%s: Run: %v", name, err)
		}
	}()
}

// Eventually polls cond until it holds, failing the test at Timeout with
// the last message cond returned. It waits on a real ticker: the fake clock
// is only stepped, never waited on.
func (e *Env) Eventually(what string, cond func() (bool, string)) {
	e.T.Helper()
	deadline := time.Now().Add(Timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("timed out waiting for %s: %s", what, msg)
		}
		<-tick.C
		if e.Step > 0 {
			e.Clock.Step(e.Step)
		}
	}
}

// Pods lists the pods of namespace, or fails the test.
func (e *Env) Pods(namespace string) []*corev1.Pod {
	e.T.Helper()
	pods, _, err := e.Client.Pods().List(e.Ctx, namespace, client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return pods
}

// ActivePods lists the pods of namespace that are not being deleted.
func (e *Env) ActivePods(namespace string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range e.Pods(namespace) {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// ReplicaSets lists the replica sets of namespace, or fails the test.
func (e *Env) ReplicaSets(namespace string) []*appsv1.ReplicaSet {
	e.T.Helper()
	list, _, err := e.Client.ReplicaSets().List(e.Ctx, namespace, client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return list
}

// Events lists the events of namespace, or fails the test.
func (e *Env) Events(namespace string) []*corev1.Event {
	e.T.Helper()
	list, _, err := e.Client.Events().List(e.Ctx, namespace, client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return list
}

// HasEvent reports whether an event with reason and message exists.
func (e *Env) HasEvent(namespace, reason, message string) (bool, string) {
	var seen []string
	for _, ev := range e.Events(namespace) {
		if ev.Reason == reason && ev.Message == message {
			return true, ""
		}
		seen = append(seen, ev.Reason+": "+ev.Message)
	}
	return false, fmt.Sprintf("no %s event %q among %q", reason, message, seen)
}

// Update re-reads an object, applies mutate and writes it back, retrying
// on conflicts: how a user's `kubectl edit` behaves.
func Update[T interface {
	comparable
	metav1.Object
}](e *Env, get func() (T, error), write func(T) (T, error), mutate func(T)) T {
	e.T.Helper()
	for range 100 {
		obj, err := get()
		if err != nil {
			e.T.Fatal(err)
		}
		mutate(obj)
		out, err := write(obj)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			e.T.Fatal(err)
		}
		return out
	}
	e.T.Fatal("update: too many conflicts")
	var zero T
	return zero
}

// SetPodStatus writes a pod's status as a kubelet would: phase, and the
// Ready condition (with its transition time from the env's clock).
func (e *Env) SetPodStatus(pod *corev1.Pod, phase corev1.PodPhase, ready bool) *corev1.Pod {
	e.T.Helper()
	return Update(e, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, pod.Namespace, pod.Name) },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
		func(p *corev1.Pod) { setPodStatus(p, phase, ready, e.Clock) })
}

func setPodStatus(p *corev1.Pod, phase corev1.PodPhase, ready bool, clk clock.PassiveClock) {
	p.Status.Phase = phase
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	now := metav1.NewTime(clk.Now())
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status != status {
				p.Status.Conditions[i].Status, p.Status.Conditions[i].LastTransitionTime = status, now
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: now})
}

// RunReadyKubelet stands in for the scheduler and the kubelets: it marks
// every new pod Running and Ready, so rollouts that wait for availability
// can proceed. It writes through the API like a kubelet does.
func (e *Env) RunReadyKubelet() {
	c := e.ClientFor("kubelet")
	inf := client.NewInformer(c.Pods(), "", client.ListOptions{})
	q := client.NewQueue[string](e.Clock)
	mark := func(p *corev1.Pod) {
		if p.DeletionTimestamp == nil && (p.Status.Phase != corev1.PodRunning || !isReady(p)) {
			q.Add(client.Key(p))
		}
	}
	inf.AddHandler(client.Handler[*corev1.Pod]{OnAdd: mark, OnUpdate: func(_, p *corev1.Pod) { mark(p) }})
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		inf.Run(e.Ctx)
	}()
	go func() {
		defer e.wg.Done()
		defer q.ShutDown()
		for {
			key, ok := q.Get(e.Ctx)
			if !ok {
				return
			}
			if p, ok := inf.GetByKey(key); ok && p.DeletionTimestamp == nil {
				p = p.DeepCopy()
				setPodStatus(p, corev1.PodRunning, true, e.Clock)
				if _, err := c.Pods().UpdateStatus(e.Ctx, p); apierrors.IsConflict(err) {
					q.Add(key) // the newer version will come as an event, too
				}
			}
			q.Done(key)
		}
	}()
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// --- fixture builders ---

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment starts a Deployment "name" in "default" with one container
// "app" of image "hello", selecting app=<name>.
func MakeDeployment(name string) *DeploymentWrapper {
	one := int32(1)
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: PodTemplate(map[string]string{"app": name}, "hello"),
		},
	}}
}

// Replicas sets spec.replicas.
func (w *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper { w.Spec.Replicas = &n; return w }

// Image sets the container's image.
func (w *DeploymentWrapper) Image(image string) *DeploymentWrapper {
	w.Spec.Template.Spec.Containers[0].Image = image
	return w
}

// Recreate selects the Recreate strategy.
func (w *DeploymentWrapper) Recreate() *DeploymentWrapper {
	w.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	return w
}

// Rolling sets the RollingUpdate strategy's maxSurge and maxUnavailable.
func (w *DeploymentWrapper) Rolling(maxSurge, maxUnavailable intstr.IntOrString) *DeploymentWrapper {
	w.Spec.Strategy = appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
	}
	return w
}

// Paused sets spec.paused.
func (w *DeploymentWrapper) Paused(p bool) *DeploymentWrapper { w.Spec.Paused = p; return w }

// Obj returns the Deployment.
func (w *DeploymentWrapper) Obj() *appsv1.Deployment { return w.Deployment.DeepCopy() }

// ReplicaSetWrapper builds a ReplicaSet.
type ReplicaSetWrapper struct{ appsv1.ReplicaSet }

// MakeReplicaSet starts a ReplicaSet "name" in "default" selecting
// app=<name>, with one container "app" of image "hello".
func MakeReplicaSet(name string) *ReplicaSetWrapper {
	one := int32(1)
	return &ReplicaSetWrapper{appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: PodTemplate(map[string]string{"app": name}, "hello"),
		},
	}}
}

// Replicas sets spec.replicas.
func (w *ReplicaSetWrapper) Replicas(n int32) *ReplicaSetWrapper { w.Spec.Replicas = &n; return w }

// MinReadySeconds sets spec.minReadySeconds.
func (w *ReplicaSetWrapper) MinReadySeconds(n int32) *ReplicaSetWrapper {
	w.Spec.MinReadySeconds = n
	return w
}

// TemplateLabel adds a label to the pod template only (not the selector).
func (w *ReplicaSetWrapper) TemplateLabel(k, v string) *ReplicaSetWrapper {
	w.Spec.Template.Labels[k] = v
	return w
}

// Obj returns the ReplicaSet.
func (w *ReplicaSetWrapper) Obj() *appsv1.ReplicaSet { return w.ReplicaSet.DeepCopy() }

// PodTemplate is a template with labels and one container "app".
func PodTemplate(labels map[string]string, image string) corev1.PodTemplateSpec {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pod "name" in "default" with one container "app".
func MakePod(name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "hello"}}},
	}}
}

// Label sets a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Owner adds an owner reference.
func (w *PodWrapper) Owner(ref metav1.OwnerReference) *PodWrapper {
	w.OwnerReferences = append(w.OwnerReferences, ref)
	return w
}

// Obj returns the Pod.
func (w *PodWrapper) Obj() *corev1.Pod { return w.Pod.DeepCopy() }
