package client

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

func newClient(t *testing.T, history int) *Client {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{HistoryLimit: history})})
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg, "test")
	if _, err := c.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	return c
}

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "hello"}}},
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestInformerSeesChangesAndIndexes(t *testing.T) {
	c := newClient(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Pods().Create(ctx, pod("a", "node-1"))

	inf := NewInformer(c.Pods(), "", ListOptions{})
	inf.AddIndex("node", func(p *corev1.Pod) []string { return []string{p.Spec.NodeName} })
	var mu sync.Mutex
	var log []string
	inf.AddHandler(Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod) { mu.Lock(); log = append(log, "add "+p.Name); mu.Unlock() },
		OnUpdate: func(_, p *corev1.Pod) { mu.Lock(); log = append(log, "update "+p.Name); mu.Unlock() },
		OnDelete: func(p *corev1.Pod) { mu.Lock(); log = append(log, "delete "+p.Name); mu.Unlock() },
	})
	go inf.Run(ctx)
	if !WaitForCacheSync(ctx, inf.HasSynced) {
		t.Fatal("no sync")
	}
	c.Pods().Create(ctx, pod("b", "node-2"))
	p, _ := c.Pods().Get(ctx, "default", "a")
	p.Labels = map[string]string{"x": "y"}
	c.Pods().Update(ctx, p)
	c.Pods().Delete(ctx, "default", "a", nil) // a bound pod is deleted gracefully: an update
	eventually(t, "4 notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(log) >= 4 })
	mu.Lock()
	got := fmt.Sprint(log)
	mu.Unlock()
	if got != "[add a add b update a update a]" {
		t.Fatalf("notifications %s", got)
	}
	if n := len(inf.ByIndex("node", "node-2")); n != 1 {
		t.Fatalf("index node-2 has %d pods", n)
	}
}

func TestInformerRelistsAfterCompaction(t *testing.T) {
	c := newClient(t, 5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A field selector informer, like a kubelet's.
	inf := NewInformer(c.Pods(), "", ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "")})
	go inf.Run(ctx)
	WaitForCacheSync(ctx, inf.HasSynced)
	for i := 0; i < 50; i++ {
		c.Pods().Create(ctx, pod(fmt.Sprintf("p%d", i), ""))
	}
	eventually(t, "50 pods cached", func() bool { return len(inf.List()) == 50 })
}

func TestQueueDedupAndBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := NewQueue[string](clk)
	q.Add("a")
	q.Add("a")
	q.Add("b")
	if q.Len() != 2 {
		t.Fatalf("len %d, want 2 (deduplicated)", q.Len())
	}
	ctx := context.Background()
	item, _ := q.Get(ctx)
	q.Add(item) // added while processing: comes back after Done, not before
	other, _ := q.Get(ctx)
	if item != "a" || other != "b" || q.Len() != 0 {
		t.Fatalf("got %q %q len %d", item, other, q.Len())
	}
	q.Done(item)
	if q.Len() != 1 {
		t.Fatalf("re-added item not queued after Done")
	}
	q.Get(ctx)
	q.Done("a")
	q.AddRateLimited("a")
	q.AddRateLimited("a")
	if q.NumRequeues("a") != 2 || q.Len() != 0 {
		t.Fatalf("requeues %d len %d", q.NumRequeues("a"), q.Len())
	}
	clk.Step(10 * time.Millisecond) // 5ms and 10ms back-offs have passed
	if q.Len() != 1 {
		t.Fatalf("after back-off len %d, want 1", q.Len())
	}
	if d := Backoff(30, 5*time.Millisecond, 1000*time.Second); d != 1000*time.Second {
		t.Fatalf("cap: %v", d)
	}
}

// An informer whose handler stalls falls behind; the store drops its watch
// once the queue holds WatcherQueueBytesLimit (the API server's 410), and
// the informer lists again and ends with every change.
func TestInformerRelistsAfterFallingBehind(t *testing.T) {
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{WatcherQueueBytesLimit: 64 << 10})})
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg, "test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	inf := NewInformer(c.Pods(), "", ListOptions{})
	release := make(chan struct{})
	var once sync.Once
	inf.AddHandler(Handler[*corev1.Pod]{OnAdd: func(*corev1.Pod) { once.Do(func() { <-release }) }})
	go inf.Run(ctx)
	WaitForCacheSync(ctx, inf.HasSynced)
	w, err := c.Pods().Watch(ctx, "", ListOptions{ResourceVersion: fmt.Sprint(reg.KV().Revision())})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := 0; i < 300; i++ { // ~300 KB of pods: far past the 64 KiB queue
		p := pod(fmt.Sprintf("p%d", i), "")
		p.Annotations = map[string]string{"pad": string(make([]byte, 1000))}
		if _, err := c.Pods().Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// A watcher that is not reading is told to relist with 410 Gone.
	deadline := time.After(10 * time.Second)
	for gone := false; !gone; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended without 410 Gone")
			}
			st, isStatus := ev.Object.(*metav1.Status)
			gone = isStatus && ev.Type == "ERROR" && st.Code == 410
		case <-deadline:
			t.Fatal("the slow watcher was not told 410 Gone")
		}
	}
	close(release)
	eventually(t, "the stalled informer to relist all 300 pods", func() bool { return len(inf.List()) == 300 })
}
