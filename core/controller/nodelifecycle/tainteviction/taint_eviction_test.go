package tainteviction_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle/tainteviction"
)

func ptr[T any](v T) *T { return &v }

func setup(t *testing.T) *controllertest.Env {
	e := controllertest.NewEnv(t)
	e.Step = 0
	if _, err := e.Client.Nodes().Create(e.Ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}); err != nil {
		t.Fatal(err)
	}
	tc, err := tainteviction.New(tainteviction.Config{Client: e.ClientFor(tainteviction.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("tainteviction", tc.Run)
	return e
}

func pod(t *testing.T, e *controllertest.Env, name string, tol ...corev1.Toleration) {
	p := controllertest.MakePod(name).Obj()
	p.Spec.NodeName = "node-1"
	p.Spec.Tolerations = tol
	if _, err := e.Client.Pods().Create(e.Ctx, p); err != nil {
		t.Fatal(err)
	}
}

func gpu(secs *int64) corev1.Toleration {
	return corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
}

func setTaints(t *testing.T, e *controllertest.Env, taints ...corev1.Taint) {
	controllertest.Update(e, func() (*corev1.Node, error) { return e.Client.Nodes().Get(e.Ctx, "", "node-1") },
		func(n *corev1.Node) (*corev1.Node, error) { return e.Client.Nodes().Update(e.Ctx, n) },
		func(n *corev1.Node) { n.Spec.Taints = taints })
}

// scheduled waits until n evictions wait on the clock.
func scheduled(e *controllertest.Env, n int) {
	e.Eventually(fmt.Sprintf("%d evictions scheduled", n), func() (bool, string) {
		return e.Clock.Waiters() == n, fmt.Sprint(e.Clock.Waiters())
	})
}

func deleted(t *testing.T, e *controllertest.Env, name string) bool {
	p, err := e.Client.Pods().Get(e.Ctx, "default", name)
	if err != nil {
		return true
	}
	return p.DeletionTimestamp != nil
}

var dedicated = corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}

func TestEvictionByTolerations(t *testing.T) {
	e := setup(t)
	pod(t, e, "untolerated")
	pod(t, e, "tolerates-60s", gpu(ptr[int64](60)))
	pod(t, e, "tolerates-forever", gpu(nil))
	pod(t, e, "tolerates-other-value", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cpu", Effect: corev1.TaintEffectNoExecute})
	// A NoSchedule taint evicts nobody.
	setTaints(t, e, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	setTaints(t, e, dedicated)

	for _, name := range []string{"untolerated", "tolerates-other-value"} {
		e.Eventually(name+" evicted at once", func() (bool, string) { return deleted(t, e, name), "" })
		if ok, msg := e.HasEvent("default", "TaintManagerEviction", "Marking for deletion Pod default/"+name); !ok {
			t.Error(msg)
		}
	}
	scheduled(e, 1) // tolerates-60s
	e.Clock.Step(59 * time.Second)
	if deleted(t, e, "tolerates-60s") {
		t.Fatal("tolerates-60s evicted before its 60 s")
	}
	e.Clock.Step(time.Second)
	e.Eventually("tolerates-60s evicted at 60 s", func() (bool, string) { return deleted(t, e, "tolerates-60s"), "" })
	e.Clock.Step(time.Hour)
	if deleted(t, e, "tolerates-forever") {
		t.Error("a pod tolerating forever was evicted")
	}
}

func TestUntaintCancelsEviction(t *testing.T) {
	e := setup(t)
	pod(t, e, "web", gpu(ptr[int64](60)))
	setTaints(t, e, dedicated)
	scheduled(e, 1)
	e.Clock.Step(30 * time.Second)
	setTaints(t, e)
	scheduled(e, 0) // the eviction's timer is stopped
	e.Eventually("cancel event", func() (bool, string) {
		return e.HasEvent("default", "TaintManagerEviction", "Cancelling deletion of Pod default/web")
	})
	e.Clock.Step(time.Hour)
	if deleted(t, e, "web") {
		t.Error("evicted after the taint was removed")
	}
	// Tainted again: a fresh 60 s.
	setTaints(t, e, dedicated)
	scheduled(e, 1)
	e.Clock.Step(59 * time.Second)
	if deleted(t, e, "web") {
		t.Fatal("evicted before 60 s")
	}
	e.Clock.Step(time.Second)
	e.Eventually("evicted", func() (bool, string) { return deleted(t, e, "web"), fmt.Sprint(e.Events("default")) })
}
