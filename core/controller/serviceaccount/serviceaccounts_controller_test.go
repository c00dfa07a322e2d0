package serviceaccount

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// The default ServiceAccount comes back after `kubectl delete sa default`,
// so pods are admitted again; every new namespace gets one.
func TestDefaultServiceAccountRecreated(t *testing.T) {
	e := controllertest.NewEnv(t)
	c, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(Component, c.Run)
	sas := serviceAccounts(e.Client)
	exists := func(ns string) func() (bool, string) {
		return func() (bool, string) {
			_, err := sas.Get(e.Ctx, ns, "default")
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		}
	}
	e.Eventually("default/default", exists("default"))
	if err := sas.Delete(e.Ctx, "default", "default", nil); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "hello"}}}}
	e.Eventually("the default ServiceAccount recreated", exists("default"))
	if _, err := e.Client.Pods().Create(e.Ctx, pod); err != nil {
		t.Fatalf("a pod after the ServiceAccount came back: %v", err)
	}

	if _, err := e.Client.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	if err := sas.Delete(e.Ctx, "team", "default", nil); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	e.Eventually("team/default", exists("team"))
}
