package registry

import (
	"bytes"
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello:1.0"}}},
	}
}

// Built-in objects are stored as kube-apiserver stores them: "k8s\x00" and a
// runtime.Unknown envelope around the object's protobuf.
func TestStoredAsProtobuf(t *testing.T) {
	reg := newRegistry(t)
	pods := storeOf(t, reg, "", "pods")
	ctx := context.Background()
	if _, err := pods.Create(ctx, "default", testPod("web"), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kv, err := reg.kv.Get("/registry/pods/default/web")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(kv.Value, []byte("k8s\x00")) {
		t.Fatalf("stored value starts %q, want the protobuf magic k8s\\x00", kv.Value[:min(8, len(kv.Value))])
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(kv.Value[4:]); err != nil {
		t.Fatal(err)
	}
	if unk.APIVersion != "v1" || unk.Kind != "Pod" {
		t.Fatalf("envelope says %s %s, want v1 Pod", unk.APIVersion, unk.Kind)
	}
	var p corev1.Pod
	if err := p.Unmarshal(unk.Raw); err != nil {
		t.Fatal(err)
	}
	if p.Name != "web" || p.Spec.Containers[0].Image != "hello:1.0" || p.ResourceVersion != "" {
		t.Fatalf("stored pod: name %q image %q resourceVersion %q", p.Name, p.Spec.Containers[0].Image, p.ResourceVersion)
	}
}

// A value written as JSON (a snapshot from before protobuf storage) still
// reads; a value of the wrong kind is an error, not a wrong object.
func TestStoredJSONAndWrongKind(t *testing.T) {
	reg := newRegistry(t)
	pods := storeOf(t, reg, "", "pods")
	ctx := context.Background()
	if _, err := reg.kv.Create("/registry/pods/default/old", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"old","namespace":"default"},"spec":{"containers":[{"name":"c","image":"hello"}]}}`)); err != nil {
		t.Fatal(err)
	}
	obj, err := pods.Get(ctx, "default", "old")
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*corev1.Pod).Spec.Containers[0].Image; got != "hello" {
		t.Fatalf("JSON value read back with image %q", got)
	}
	node, err := marshalStorage(&corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.kv.Create("/registry/pods/default/node", node); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "default", "node"); err == nil {
		t.Fatal("a stored Node read as a Pod")
	}
}

// Every reader gets its own copy of a decoded object: what one changes, no
// other reader sees.
func TestDecodedObjectsAreCopies(t *testing.T) {
	reg := newRegistry(t)
	pods := storeOf(t, reg, "", "pods")
	ctx := context.Background()
	if _, err := pods.Create(ctx, "default", testPod("web"), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Read once, so the decoded object is in the cache before the watchers
	// replay the creation from history: both then start from the same
	// shared object.
	if _, err := pods.Get(ctx, "default", "web"); err != nil {
		t.Fatal(err)
	}
	w1, err := pods.Watch(ctx, "default", ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := pods.Watch(ctx, "default", ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	e1 := <-w1.ResultChan()
	e1.Object.(*corev1.Pod).Labels["app"] = "changed by watcher 1"
	e2 := <-w2.ResultChan()
	if got := e2.Object.(*corev1.Pod).Labels["app"]; got != "web" {
		t.Fatalf("watcher 2 sees label %q", got)
	}
	got1, err := pods.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	got1.(*corev1.Pod).Spec.Containers[0].Image = "changed by a reader"
	got2, err := pods.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if img := got2.(*corev1.Pod).Spec.Containers[0].Image; img != "hello:1.0" {
		t.Fatalf("second Get sees image %q", img)
	}
	list, err := pods.List(ctx, "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := list.(*corev1.PodList).Items[0].Spec.Containers[0].Image; img != "hello:1.0" {
		t.Fatalf("List sees image %q", img)
	}
	// A listed object is the caller's too (its labels map is what a shared
	// object would share).
	list.(*corev1.PodList).Items[0].Labels["app"] = "changed by a lister"
	again, err := pods.List(ctx, "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if app := again.(*corev1.PodList).Items[0].Labels["app"]; app != "web" {
		t.Fatalf("second List sees label %q", app)
	}
}

// The decoded cache follows the stored bytes, not the revision: restoring
// an older snapshot, then writing the same key at the same revision with
// other content, reads the new content.
func TestDecodedCacheAfterRestore(t *testing.T) {
	reg := newRegistry(t)
	pods := storeOf(t, reg, "", "pods")
	ctx := context.Background()
	var snap bytes.Buffer
	if err := reg.kv.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, "default", testPod("web"), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := pods.Get(ctx, "default", "web") // decoded and cached
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.kv.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	p := testPod("web")
	p.Spec.Containers[0].Image = "hello:2.0"
	if _, err := pods.Create(ctx, "default", p, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := pods.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if before.(*corev1.Pod).ResourceVersion != after.(*corev1.Pod).ResourceVersion {
		t.Fatalf("test setup: revisions %s and %s differ", before.(*corev1.Pod).ResourceVersion, after.(*corev1.Pod).ResourceVersion)
	}
	if img := after.(*corev1.Pod).Spec.Containers[0].Image; img != "hello:2.0" {
		t.Fatalf("after restore and rewrite Get returns image %q, want hello:2.0", img)
	}
}

// A watcher with selectors still sees an object that stops matching as
// DELETED, with its last matching state; one without sees MODIFIED.
func TestWatchSelectorsWithDecodedCache(t *testing.T) {
	reg := newRegistry(t)
	pods := storeOf(t, reg, "", "pods")
	ctx := context.Background()
	sel := ListOptions{ResourceVersion: "1", LabelSelector: mustSelector(t, "app=web")}
	wSel, err := pods.Watch(ctx, "default", sel)
	if err != nil {
		t.Fatal(err)
	}
	defer wSel.Stop()
	wAll, err := pods.Watch(ctx, "default", ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer wAll.Stop()
	created, err := pods.Create(ctx, "default", testPod("web"), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := created.(*corev1.Pod)
	p.Labels["app"] = "db"
	if _, err := pods.Update(ctx, p, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		w     watch.Interface
		types []watch.EventType
		app   []string
	}{
		{wSel, []watch.EventType{watch.Added, watch.Deleted}, []string{"web", "web"}},
		{wAll, []watch.EventType{watch.Added, watch.Modified}, []string{"web", "db"}},
	} {
		for i, want := range tc.types {
			ev := <-tc.w.ResultChan()
			if ev.Type != want || ev.Object.(*corev1.Pod).Labels["app"] != tc.app[i] {
				t.Errorf("event %d: %s app=%s, want %s app=%s", i, ev.Type, ev.Object.(*corev1.Pod).Labels["app"], want, tc.app[i])
			}
		}
	}
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
