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

// TestClaimOrder: Claim keeps the objects of the controller and adopts the
// matching orphans in the order it is given them, but writes (adoptions
// and releases) in the order of their names, whatever that order is.
func TestClaimOrder(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Bootstrap(ctx, registry.BootstrapConfig{}); err != nil {
		t.Fatal(err)
	}
	c := client.New(reg, "test")
	labels := map[string]string{"app": "web"}
	rs, err := c.ReplicaSets().Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "hello"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	kind := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ours := []metav1.OwnerReference{*metav1.NewControllerRef(rs, kind)}
	theirs := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "x", UID: "other", Controller: ptr(true)}}
	pod := func(name string, lbls map[string]string, refs []metav1.OwnerReference) *corev1.Pod {
		p, err := c.Pods().Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: lbls, OwnerReferences: refs},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "hello"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Given in no order: orphans c, a, b; d ours; e ours but no longer
	// matching; f another's.
	given := []*corev1.Pod{pod("c", labels, nil), pod("d", labels, ours), pod("a", labels, nil), pod("f", labels, theirs),
		pod("e", map[string]string{"app": "db"}, ours), pod("b", labels, nil)}
	sel, _ := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	claimed, err := Claim(ctx, &RefManager{Controller: rs, ControllerKind: kind, Selector: sel}, c.Pods(), given)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range claimed {
		got = append(got, p.Name)
	}
	if want := []string{"c", "d", "a", "b"}; !slicesEqual(got, want) {
		t.Errorf("claimed %v, want %v (the order given)", got, want)
	}
	// The writes' revisions follow the names: a, b, c adopted, then e released.
	var revs []string
	for _, name := range []string{"a", "b", "c", "e"} {
		p, err := c.Pods().Get(ctx, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		if ref := metav1.GetControllerOf(p); (ref != nil && ref.UID == rs.UID) != (name != "e") {
			t.Errorf("%s: controller %v", name, ref)
		}
		revs = append(revs, p.ResourceVersion)
	}
	for i := 1; i < len(revs); i++ {
		if len(revs[i]) < len(revs[i-1]) || (len(revs[i]) == len(revs[i-1]) && revs[i] <= revs[i-1]) {
			t.Errorf("written at revisions %v for a, b, c, e: not in name order", revs)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
