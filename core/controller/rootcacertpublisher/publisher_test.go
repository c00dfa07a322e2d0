package rootcacertpublisher

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// kube-root-ca.crt comes back after a delete (kubectl delete cm --all) and
// after an edit, in every namespace, new ones included.
func TestPublisherKeepsRootCA(t *testing.T) {
	e := controllertest.NewEnv(t)
	p, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(Component, p.Run)
	cms := client.For[*corev1.ConfigMap](e.Client, "", "configmaps")
	want := e.Registry.RootCA()
	published := func(ns string) func() (bool, string) {
		return func() (bool, string) {
			cm, err := cms.Get(e.Ctx, ns, registry.RootCAConfigMapName)
			if err != nil {
				return false, err.Error()
			}
			if cm.Data[registry.RootCAKey] != want || cm.Annotations[registry.RootCADescriptionAnnotation] != registry.RootCADescription {
				return false, fmt.Sprintf("data %v, annotations %v", cm.Data, cm.Annotations)
			}
			return true, ""
		}
	}
	e.Eventually("kube-root-ca.crt in default", published("default"))

	// Deleted, as `kubectl delete cm --all` does.
	if err := cms.Delete(e.Ctx, "default", registry.RootCAConfigMapName, nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("kube-root-ca.crt recreated", published("default"))

	// Edited.
	cm, err := cms.Get(e.Ctx, "default", registry.RootCAConfigMapName)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"ca.crt": "forged", "extra": "x"}
	delete(cm.Annotations, registry.RootCADescriptionAnnotation)
	if _, err := cms.Update(e.Ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.Eventually("kube-root-ca.crt restored", published("default"))

	// A new namespace whose ConfigMap is gone at once.
	if _, err := e.Client.Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(e.Ctx, "team", registry.RootCAConfigMapName, nil); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	e.Eventually("kube-root-ca.crt in a new namespace", published("team"))
}
