package cluster_test

import (
	"bytes"
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// running300 runs a Deployment of 300 hello replicas to all Running and
// returns the store's snapshot (what the page saves), the whole cluster
// stopped afterwards.
func running300(b *testing.B) []byte {
	b.Helper()
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
	labels := map[string]string{"app": "web"}
	replicas := int32(300)
	if _, err := cl.Deployments().Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}},
	}); err != nil {
		b.Fatal(err)
	}
	waitRunning300(b, ctx, c, nil)
	var snap bytes.Buffer
	if err := c.Snapshot(&snap); err != nil {
		b.Fatal(err)
	}
	return snap.Bytes()
}

// waitRunning300 waits until the 300 web pods are Running and Ready, each
// in a container other than the one old names for it (nil: any). It
// reads them from an informer of its own, as the page does (one watch, no
// copy per look): listing 300 pods from the API server every 20 ms cost a
// tenth of the restore it measured.
func waitRunning300(b *testing.B, ctx context.Context, c *cluster.Cluster, old map[string]string) {
	b.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inf := client.NewInformer(c.Client("bench").Pods(), "default", client.ListOptions{})
	go inf.Run(ctx)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		pods := inf.List()
		n := 0
		for _, p := range pods {
			if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready {
				continue
			}
			if st := p.Status.ContainerStatuses[0]; st.State.Running == nil || (old != nil && st.ContainerID == old[p.Name]) {
				continue
			}
			n++
		}
		if n == 300 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of 300 pods Running", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkRestore300Pods is a reload of the page with 300 Running pods
// saved: a cluster made from the snapshot, started (caches filled:
// "restore" in the page's figures), then until every pod runs again in a
// container of its own ("running").
func BenchmarkRestore300Pods(b *testing.B) {
	snap := running300(b)
	b.ReportMetric(float64(len(snap)), "snapshot-bytes")
	// The containers the snapshot's pods ran in: a restore is done when
	// every pod runs in a new one. (Their start times, cut to the second,
	// could not tell a restore that began in the second of the snapshot.)
	saved, err := cluster.New(cluster.Config{Images: images.New(), Snapshot: snap})
	if err != nil {
		b.Fatal(err)
	}
	pods, _, err := saved.Client("bench").Pods().List(context.Background(), "default", client.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	old := map[string]string{}
	for _, p := range pods {
		if len(p.Status.ContainerStatuses) == 1 {
			old[p.Name] = p.Status.ContainerStatuses[0].ContainerID
		}
	}
	if len(old) != 300 {
		b.Fatalf("the snapshot has %d pods with a container, want 300", len(old))
	}
	var started, running, cpu time.Duration
	if path := os.Getenv("KUBETAB_RESTORE_PROFILE"); path != "" { // the restores alone
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, cpu0 := time.Now(), processCPU()
		c, err := cluster.New(cluster.Config{Images: images.New(), Snapshot: snap})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		started += time.Since(t0)
		waitRunning300(b, ctx, c, old)
		running += time.Since(t0)
		cpu += processCPU() - cpu0
		b.StopTimer()
		cancel()
		c.Wait()
		b.StartTimer()
	}
	b.ReportMetric(float64(started.Milliseconds())/float64(b.N), "started-ms")
	b.ReportMetric(float64(running.Milliseconds())/float64(b.N), "running-ms")
	// CPU time of the whole process (every component) per restore: on a
	// busy machine a steadier figure than the wall time.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
}
