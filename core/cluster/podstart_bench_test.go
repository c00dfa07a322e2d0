package cluster_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// BenchmarkPodStart measures pod start as the Kubernetes SLO does: from the
// create call to the pod's Running status seen through a watch, over the
// whole path (scheduler, kubelet, CNI, image pull, CRI start). "uncached"
// pulls each pod's image for the first time in a fresh cluster (each run
// gets a new process-wide compile cache); "cached" reuses images every node
// already has. It reports p50 and p99 in milliseconds.
func BenchmarkPodStart(b *testing.B) {
	for _, tc := range []struct {
		name  string
		image string
		warm  bool
	}{{"uncached", "cpu", false}, {"cached", "hello", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				lat = append(lat, podStartRound(b, tc.image, tc.warm)...)
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.5), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// podStartRound starts a fresh 3-node cluster and measures 30 pods.
func podStartRound(b *testing.B, image string, warm bool) []time.Duration {
	b.StopTimer()
	c, err := cluster.New(cluster.Config{Images: images.New()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	cl := c.Client("bench")
	mk := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image, Args: []string{"--work=1"}}}}}
	}
	w, err := cl.Pods().Watch(ctx, "default", client.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	running := map[string]time.Time{}
	waitRunning := func(n int) {
		deadline := time.After(60 * time.Second)
		for len(running) < n {
			select {
			case ev := <-w.ResultChan():
				if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted && p.Status.Phase != corev1.PodPending {
					if _, seen := running[p.Name]; !seen {
						running[p.Name] = time.Now()
					}
				}
			case <-deadline:
				b.Fatalf("only %d of %d pods started", len(running), n)
			}
		}
	}
	if warm { // every node pulls the image once before the measured pods
		for i := 0; i < 6; i++ {
			if _, err := cl.Pods().Create(ctx, mk(fmt.Sprintf("warm-%d", i))); err != nil {
				b.Fatal(err)
			}
		}
		waitRunning(6)
	}
	const n = 30
	created := map[string]time.Time{}
	b.StartTimer()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p-%d", i)
		created[name] = time.Now()
		if _, err := cl.Pods().Create(ctx, mk(name)); err != nil {
			b.Fatal(err)
		}
	}
	base := len(running)
	waitRunning(base + n)
	b.StopTimer()
	var out []time.Duration
	for name, t0 := range created {
		out = append(out, running[name].Sub(t0))
	}
	return out
}
