package cluster_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// BenchmarkDeployment300Pods is `kubectl create deployment web
// --image=hello --replicas=300` on a fresh cluster (started, caches
// filled, before the timer), until all 300 pods are Running and Ready: the
// whole path of issue 16's figure, the Deployment and ReplicaSet
// controllers' creates, the scheduler's binds and the kubelets' starts
// and status writes. The cluster is stopped outside the timer.
func BenchmarkDeployment300Pods(b *testing.B) {
	labels := map[string]string{"app": "web"}
	replicas := int32(300)
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, err := cluster.New(cluster.Config{Images: images.New()})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := processCPU()
		if _, err := c.Client("bench").Deployments().Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}},
		}); err != nil {
			b.Fatal(err)
		}
		waitRunning300(b, ctx, c, nil)
		cpu += processCPU() - cpu0
		b.StopTimer()
		cancel()
		c.Wait()
		b.StartTimer()
	}
	// CPU time of the whole process per run (see BenchmarkRestore300Pods).
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
}
