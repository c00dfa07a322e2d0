package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

// Two controllers' informers over pods from one factory are one list, one
// watch and one cache: each controller's handlers get every change, the
// indexes are shared, a view of another Go type (the garbage collector's
// runtime.Object) sees the same objects, and the trace shows each
// controller listing and receiving the events as with informers of their
// own.
func TestSharedInformerFactory(t *testing.T) {
	rec := trace.New(0, nil)
	kv := store.New(store.Config{})
	reg, err := registry.Default(registry.Config{Store: kv, Trace: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := New(reg, "test")
	if _, err := admin.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Pods().Create(ctx, pod("a", "node-1")); err != nil {
		t.Fatal(err)
	}

	f := NewSharedInformerFactory()
	var mu sync.Mutex
	var log []string
	note := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	one := NewInformer(New(reg, "one-controller").WithSharedInformers(f).Pods(), "", ListOptions{})
	one.AddIndex("node", func(p *corev1.Pod) []string { return []string{p.Spec.NodeName} })
	one.AddHandler(Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod) { note("one add " + p.Name) },
		OnUpdate: func(_, p *corev1.Pod) { note("one update " + p.Name) },
	})
	two := NewInformer(For[runtime.Object](New(reg, "two-controller").WithSharedInformers(f), "", "pods"), "", ListOptions{})
	// The same index name keeps the first function.
	two.AddIndex("node", func(runtime.Object) []string { return []string{"elsewhere"} })
	two.AddHandler(Handler[runtime.Object]{OnAdd: func(o runtime.Object) { note("two add " + o.(*corev1.Pod).Name) }})
	// Another namespace is another informer.
	other := NewInformer(New(reg, "one-controller").WithSharedInformers(f).Pods(), "kube-system", ListOptions{})
	if one.shared != two.shared || one.shared == other.shared {
		t.Fatal("the factory did not share the pods informer by namespace")
	}

	watchers := kv.Status().Watchers
	f.Start(ctx)
	for _, inf := range []interface{ Run(context.Context) }{one, two, other} {
		go inf.Run(ctx) // a view's Run waits for ctx: the factory runs it
	}
	if !WaitForCacheSync(ctx, one.HasSynced, two.HasSynced, other.HasSynced) {
		t.Fatal("no sync")
	}
	if _, err := admin.Pods().Create(ctx, pod("b", "node-2")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both views see b", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(log, "one add b") && slices.Contains(log, "two add b")
	})
	if n := kv.Status().Watchers - watchers; n != 2 {
		t.Errorf("%d watches for two informers (pods in all namespaces and in kube-system), want 2", n)
	}
	mu.Lock()
	if got := fmt.Sprint(log); got != "[one add a two add a one add b two add b]" {
		t.Errorf("notifications %s", got)
	}
	mu.Unlock()
	if p, ok := two.Get("default", "b"); !ok || p.(*corev1.Pod).Spec.NodeName != "node-2" {
		t.Errorf("the other view's Get: %v %v", p, ok)
	}
	if got := two.ByIndex("node", "node-2"); len(got) != 1 {
		t.Errorf("the shared index: %d pods on node-2 from the second view, want 1", len(got))
	}
	if n := len(one.List()); n != 2 {
		t.Errorf("%d pods cached, want 2", n)
	}

	// The trace: each component's list answered and b's event reaching each.
	hops, _, _ := rec.Since(0)
	for _, who := range []string{"one-controller", "two-controller"} {
		var listed, watched, sawB bool
		for _, h := range hops {
			switch {
			case h.Kind == trace.Response && h.To == who && h.Resource == "pods" && h.Code == 200 && h.Namespace == "":
				listed = true
			case h.Kind == trace.Request && h.From == who && h.Verb == "watch" && h.Resource == "pods":
				watched = true
			case h.Kind == trace.Watch && h.To == who && h.Verb == "ADDED" && h.Name == "b":
				sawB = true
			}
		}
		if !listed || !watched || !sawB {
			t.Errorf("trace for %s: list answered %v, watch asked %v, b seen %v", who, listed, watched, sawB)
		}
	}

	// After Start, an informer is its own (it lists and watches itself).
	late := NewInformer(New(reg, "late").WithSharedInformers(f).Pods(), "", ListOptions{})
	if late.shared == one.shared || !late.own {
		t.Error("an informer made after Start joined a running shared informer")
	}
	cancel()
	f.Shutdown()
}

// The mutation detector (KUBE_CACHE_MUTATION_DETECTOR) panics, naming the
// object, when a cached object changed before it left the cache; an
// untouched one passes, and so does a Quantity whose cached string form was
// filled in by reading it.
func TestMutationDetector(t *testing.T) {
	d := &mutationDetector{copies: map[string]runtime.Object{}}
	a := pod("a", "node-1")
	a.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	d.cached("default/a", nil, a)
	q := a.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	_ = q.String()
	newer := a.DeepCopy()
	d.cached("default/a", a, newer) // unchanged: no panic
	newer.Spec.NodeName = "node-2"  // a handler "fixing" the cached object
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "cache mutation detected for *v1.Pod \"default/a\"") {
			t.Errorf("panic %q", msg)
		}
	}()
	d.cached("default/a", newer, nil)
	t.Error("no panic for a modified cached object")
}
