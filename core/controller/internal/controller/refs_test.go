package controller

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/store"
)

func TestResolveControllerRefAndSelecting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Bootstrap(ctx, registry.BootstrapConfig{}); err != nil {
		t.Fatal(err)
	}
	c := client.New(reg, "test")
	rs := func(name string, sel *metav1.LabelSelector) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "hello"}}}}}}
	}
	web, err := c.ReplicaSets().Create(ctx, rs("web", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReplicaSets().Create(ctx, rs("other", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}})); err != nil {
		t.Fatal(err)
	}
	inf := client.NewInformer(c.ReplicaSets(), "", client.ListOptions{})
	inf.AddIndex(NamespaceIndex, IndexByNamespace[*appsv1.ReplicaSet])
	go inf.Run(ctx)
	for deadline := time.Now().Add(10 * time.Second); !inf.HasSynced() || len(inf.List()) != 2; {
		if time.Now().After(deadline) {
			t.Fatal("informer did not sync")
		}
		time.Sleep(time.Millisecond)
	}

	ref := metav1.NewControllerRef(web, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	if got, ok := ResolveControllerRef(inf, "ReplicaSet", "default", ref); !ok || got.Name != "web" {
		t.Errorf("resolve web: %v %v", got, ok)
	}
	for name, r := range map[string]*metav1.OwnerReference{
		"nil":          nil,
		"another kind": {Kind: "Deployment", Name: "web", UID: web.UID},
		"another UID":  {Kind: "ReplicaSet", Name: "web", UID: "recreated"},
		"missing":      {Kind: "ReplicaSet", Name: "nope", UID: web.UID},
	} {
		if _, ok := ResolveControllerRef(inf, "ReplicaSet", "default", r); ok {
			t.Errorf("%s resolved", name)
		}
	}

	sel := func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }
	names := func(l []*appsv1.ReplicaSet) (out []string) {
		for _, x := range l {
			out = append(out, x.Name)
		}
		return out
	}
	if got := names(Selecting(inf, "default", map[string]string{"app": "web"}, sel)); len(got) != 1 || got[0] != "web" {
		t.Errorf("app=web selected by %v, want [web]", got)
	}
	if got := Selecting(inf, "default", map[string]string{"app": "web", "tier": "x"}, sel); len(got) != 2 {
		t.Errorf("app=web,tier=x selected by %v, want both", names(got))
	}
	if got := Selecting(inf, "kube-system", map[string]string{"app": "web"}, sel); len(got) != 0 {
		t.Errorf("another namespace selected by %v", names(got))
	}
	empty := func(*appsv1.ReplicaSet) *metav1.LabelSelector { return &metav1.LabelSelector{} }
	if got := Selecting(inf, "default", map[string]string{"app": "web"}, empty); len(got) != 0 {
		t.Errorf("an empty selector selected %v; it must match nothing", names(got))
	}
}
