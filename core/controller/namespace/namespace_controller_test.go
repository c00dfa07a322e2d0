package namespace_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/namespace"
)

func ptr[T any](v T) *T { return &v }

func condition(ns *corev1.Namespace, t corev1.NamespaceConditionType) string {
	for _, c := range ns.Status.Conditions {
		if c.Type == t {
			return fmt.Sprintf("%s %s %s", c.Status, c.Reason, c.Message)
		}
	}
	return "(none)"
}

// Deleting a namespace deletes its content, waits for what takes time (a
// pod its kubelet still has to stop, an object held by a finalizer),
// saying so in the namespace's conditions, then finalizes the namespace,
// which disappears.
func TestNamespaceDeletion(t *testing.T) {
	e := controllertest.NewEnv(t)
	e.Step = 0
	nc, err := namespace.New(namespace.Config{Client: e.ClientFor(namespace.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("namespace", nc.Run)
	c := e.Client
	cms := client.For[*corev1.ConfigMap](c, "", "configmaps")
	if _, err := c.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, finalizers ...string) {
		if _, err := cms.Create(e.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", Finalizers: finalizers}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain")
	mk("held", "example.com/hold")
	if _, err := c.Deployments().Create(e.Ctx, func() *controllertest.DeploymentWrapper {
		d := controllertest.MakeDeployment("web")
		d.Namespace = "demo"
		return d
	}().Obj()); err != nil {
		t.Fatal(err)
	}
	unbound := controllertest.MakePod("pending").Obj()
	unbound.Namespace = "demo"
	bound := controllertest.MakePod("running").Obj()
	bound.Namespace, bound.Spec.NodeName = "demo", "node-1"
	for _, p := range []*corev1.Pod{unbound, bound} {
		if _, err := c.Pods().Create(e.Ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if ns, _ := c.Namespaces().Get(e.Ctx, "", "demo"); len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Fatalf("spec.finalizers = %v, want [kubernetes]", ns.Spec.Finalizers)
	}

	if err := c.Namespaces().Delete(e.Ctx, "", "demo", nil); err != nil {
		t.Fatal(err)
	}
	ns, err := c.Namespaces().Get(e.Ctx, "", "demo")
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("after delete: %v, phase %s; want Terminating", err, ns.Status.Phase)
	}
	// The controller starts 5 s after the deletion.
	e.Eventually("scheduled", func() (bool, string) { return e.Clock.HasWaiters(), "" })
	e.Clock.Step(namespace.DeletionGracePeriod)

	get := func() *corev1.Namespace {
		ns, err := c.Namespaces().Get(e.Ctx, "", "demo")
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	e.Eventually("content remaining conditions", func() (bool, string) {
		ns := get()
		got := condition(ns, corev1.NamespaceContentRemaining) + " | " + condition(ns, corev1.NamespaceFinalizersRemaining)
		return got == "True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances, pods. has 1 resource instances"+
			" | True SomeFinalizerRemain Some finalizers are remaining: example.com/hold in 1 resource instances", got
	})
	if got := condition(get(), corev1.NamespaceDeletionContentFailure); got != "False ContentDeleted All content successfully deleted, may be waiting on finalization" {
		t.Errorf("NamespaceDeletionContentFailure = %s", got)
	}
	// Everything else is gone; the bound pod waits for its kubelet.
	if _, err := c.Deployments().Get(e.Ctx, "demo", "web"); !apierrors.IsNotFound(err) {
		t.Errorf("deployment: %v, want NotFound", err)
	}
	if _, err := c.Pods().Get(e.Ctx, "demo", "pending"); !apierrors.IsNotFound(err) {
		t.Errorf("unbound pod: %v, want NotFound", err)
	}
	p, err := c.Pods().Get(e.Ctx, "demo", "running")
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("bound pod: %v, deletionTimestamp %v; want terminating", err, p.DeletionTimestamp)
	}

	// The kubelet finishes the pod; the finalizer holder lets go.
	if err := c.Pods().Delete(e.Ctx, "demo", "running", &metav1.DeleteOptions{GracePeriodSeconds: ptr[int64](0)}); err != nil {
		t.Fatal(err)
	}
	controllertest.Update(e, func() (*corev1.ConfigMap, error) { return cms.Get(e.Ctx, "demo", "held") },
		func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) { return cms.Update(e.Ctx, cm) },
		func(cm *corev1.ConfigMap) { cm.Finalizers = nil })
	// The next look comes half the estimate (30 s of grace for the pod) later.
	e.Step = time.Second
	e.Eventually("namespace gone", func() (bool, string) {
		ns, err := c.Namespaces().Get(e.Ctx, "", "demo")
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		var conds []string
		for _, c := range ns.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Message))
		}
		return false, fmt.Sprintf("finalizers %v, conditions %s", ns.Spec.Finalizers, strings.Join(conds, "; "))
	})
}

// A namespace with another finalizer in spec.finalizers loses only
// "kubernetes" and stays until that one goes too.
func TestOtherNamespaceFinalizerStays(t *testing.T) {
	e := controllertest.NewEnv(t)
	nc, err := namespace.New(namespace.Config{Client: e.ClientFor(namespace.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("namespace", nc.Run)
	if _, err := e.Client.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/other"}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Namespaces().Delete(e.Ctx, "", "demo", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("kubernetes finalizer removed", func() (bool, string) {
		ns, err := e.Client.Namespaces().Get(e.Ctx, "", "demo")
		if err != nil {
			return false, err.Error()
		}
		return len(ns.Spec.Finalizers) == 1 && ns.Spec.Finalizers[0] == "example.com/other", fmt.Sprint(ns.Spec.Finalizers)
	})
}

func TestNewValidates(t *testing.T) {
	if _, err := namespace.New(namespace.Config{}); err == nil {
		t.Error("New without a client: no error")
	}
}
