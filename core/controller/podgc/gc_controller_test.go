package podgc

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// newTestController returns a controller whose caches are filled but whose
// loop does not run: the tests call gc themselves, at fake-clock times of
// their choosing.
func newTestController(t *testing.T, threshold int) (*controllertest.Env, *Controller) {
	t.Helper()
	e := controllertest.NewEnv(t)
	e.Step = 0 // the tests move the clock
	gcc, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock, TerminatedPodThreshold: threshold})
	if err != nil {
		t.Fatal(err)
	}
	go gcc.podInformer.Run(e.Ctx)
	go gcc.nodeInformer.Run(e.Ctx)
	return e, gcc
}

// gcNow waits until the caches hold what the store holds, then runs one
// pass.
func gcNow(t *testing.T, e *controllertest.Env, gcc *Controller) {
	t.Helper()
	e.Eventually("caches current", func() (bool, string) {
		pods, rv, err := e.Client.Pods().List(e.Ctx, "", client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		nodes, _, err := e.Client.Nodes().List(e.Ctx, "", client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		cached := map[string]string{}
		for _, p := range gcc.podInformer.List() {
			cached[p.Name] = p.ResourceVersion
		}
		for _, p := range pods {
			if cached[p.Name] != p.ResourceVersion {
				return false, "pod " + p.Name + " not current at " + rv
			}
		}
		return len(cached) == len(pods) && len(gcc.nodeInformer.List()) == len(nodes), "counts differ"
	})
	gcc.gc(e.Ctx)
}

func createNode(t *testing.T, e *controllertest.Env, name string, ready bool, taints ...corev1.Taint) {
	t.Helper()
	n, err := e.Client.Nodes().Create(e.Ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}})
	if err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	if _, err := e.Client.Nodes().UpdateStatus(e.Ctx, n); err != nil {
		t.Fatal(err)
	}
}

// createPod creates a pod bound to node ("" for none) and gives it phase.
func createPod(t *testing.T, e *controllertest.Env, name, node string, phase corev1.PodPhase, reason string) *corev1.Pod {
	t.Helper()
	p := controllertest.MakePod(name).Obj()
	p.Spec.NodeName = node
	p, err := e.Client.Pods().Create(e.Ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase, p.Status.Reason = phase, reason
	p, err = e.Client.Pods().UpdateStatus(e.Ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func podNames(t *testing.T, e *controllertest.Env) []string {
	t.Helper()
	var names []string
	for _, p := range e.Pods("default") {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Terminated pods beyond the threshold go, the kubelet's evictions first,
// then the oldest; running pods do not count.
func TestGCTerminated(t *testing.T) {
	e, gcc := newTestController(t, 2)
	for _, p := range []struct {
		name   string
		phase  corev1.PodPhase
		reason string
	}{
		{"old-succeeded", corev1.PodSucceeded, ""},
		{"mid-failed", corev1.PodFailed, ""},
		{"evicted", corev1.PodFailed, "Evicted"},
		{"new-succeeded", corev1.PodSucceeded, ""},
		{"running", corev1.PodRunning, ""},
	} {
		createPod(t, e, p.name, "node-1", p.phase, p.reason)
		e.Clock.Step(time.Minute) // creation times a minute apart
	}
	gcNow(t, e, gcc)
	if got, want := podNames(t, e), []string{"mid-failed", "new-succeeded", "running"}; !slices.Equal(got, want) {
		t.Errorf("pods left %v, want %v", got, want)
	}
	gcNow(t, e, gcc) // at the threshold: nothing more
	if got := podNames(t, e); len(got) != 3 {
		t.Errorf("pods left after a second pass: %v", got)
	}
}

// A negative threshold turns the terminated-pod collection off.
func TestGCTerminatedOff(t *testing.T) {
	e, gcc := newTestController(t, -1)
	createPod(t, e, "done", "node-1", corev1.PodSucceeded, "")
	gcNow(t, e, gcc)
	if got := podNames(t, e); len(got) != 1 {
		t.Errorf("pods left %v, want [done]", got)
	}
}

// A pod bound to a node that does not exist is deleted once the node has
// been missing for QuarantineTime, marked Failed with the DisruptionTarget
// condition first. A node that appears during the quarantine keeps its pods.
func TestGCOrphaned(t *testing.T) {
	e, gcc := newTestController(t, 0)
	createNode(t, e, "node-1", true)
	createPod(t, e, "healthy", "node-1", corev1.PodRunning, "")
	orphan := createPod(t, e, "orphan", "node-gone", corev1.PodRunning, "")
	createPod(t, e, "late", "node-late", corev1.PodRunning, "")

	w, err := e.Client.Pods().Watch(e.Ctx, "default", client.ListOptions{ResourceVersion: orphan.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	gcNow(t, e, gcc) // t=0: node-gone and node-late quarantined
	createNode(t, e, "node-late", true)
	e.Clock.Step(QuarantineTime - time.Second)
	gcNow(t, e, gcc)
	if got, want := podNames(t, e), []string{"healthy", "late", "orphan"}; !slices.Equal(got, want) {
		t.Fatalf("before the quarantine ended: pods %v, want %v", got, want)
	}
	e.Clock.Step(time.Second)
	gcNow(t, e, gcc)
	if got, want := podNames(t, e), []string{"healthy", "late"}; !slices.Equal(got, want) {
		t.Fatalf("after the quarantine: pods %v, want %v", got, want)
	}

	// The orphan's last update before its deletion: Failed, DisruptionTarget.
	var last *corev1.Pod
	timeout := time.After(controllertest.Timeout)
	for {
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.Name != "orphan" {
				continue
			}
			if ev.Type == watch.Deleted {
				c := condition(last, corev1.DisruptionTarget)
				if last == nil || last.Status.Phase != corev1.PodFailed || c == nil || c.Status != corev1.ConditionTrue ||
					c.Reason != "DeletionByPodGC" || c.Message != "PodGC: node no longer exists" {
					t.Fatalf("orphan before its deletion: %+v", last)
				}
				return
			}
			last = p
		case <-timeout:
			t.Fatal("no deletion of the orphan in the watch")
		}
	}
}

// Terminating pods go at once when their node is down and tainted
// out-of-service, and so do terminating pods never scheduled.
func TestGCTerminating(t *testing.T) {
	e, gcc := newTestController(t, 0)
	createNode(t, e, "node-down", false, corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoExecute})
	createNode(t, e, "node-slow", false)
	for _, name := range []string{"on-down", "on-slow"} {
		node := "node-" + name[3:]
		createPod(t, e, name, node, corev1.PodRunning, "")
		if err := e.Client.Pods().Delete(e.Ctx, "default", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	held := controllertest.MakePod("unscheduled").Obj()
	held.Finalizers = []string{"example.com/hold"}
	if _, err := e.Client.Pods().Create(e.Ctx, held); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Pods().Delete(e.Ctx, "default", "unscheduled", nil); err != nil {
		t.Fatal(err)
	}

	gcNow(t, e, gcc)
	if got, want := podNames(t, e), []string{"on-slow", "unscheduled"}; !slices.Equal(got, want) {
		t.Fatalf("pods %v, want %v (on-slow waits for its kubelet)", got, want)
	}
	p, err := e.Client.Pods().Get(e.Ctx, "default", "unscheduled")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodFailed || *p.DeletionGracePeriodSeconds != 0 {
		t.Errorf("unscheduled pod: phase %s grace %d; want Failed and 0 (its finalizer holds it)", p.Status.Phase, *p.DeletionGracePeriodSeconds)
	}
}

// The loop runs every GCCheckPeriod on the controller's clock.
func TestRunCollectsOnTheClock(t *testing.T) {
	e := controllertest.NewEnv(t)
	e.Step = 5 * time.Second
	gcc, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("podgc", gcc.Run)
	createPod(t, e, "orphan", "node-gone", corev1.PodRunning, "")
	e.Eventually("the orphan deleted", func() (bool, string) {
		_, err := e.Client.Pods().Get(e.Ctx, "default", "orphan")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	if p == nil {
		return nil
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
