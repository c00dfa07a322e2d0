package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/snapshot"
	"github.com/kubetab/kubetab/wasm/images"
)

// cluster300 is a cluster (not running) holding what 300 Running pods of a
// Deployment leave in the store: each pod bound, with its IP and a running
// container, and the five events of its start.
func cluster300(b *testing.B) *cluster.Cluster {
	c, err := cluster.New(cluster.Config{Images: images.New()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cl := c.Client("bench")
	now := metav1.Now()
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("web-7d4b9c8f5-%05d", i)
		p, err := cl.Pods().Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f5"}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%3+1), Containers: []corev1.Container{{Name: "hello", Image: "hello",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}},
		})
		if err != nil {
			b.Fatal(err)
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.244.%d.%d", i%3+1, i/3+2), HostIP: fmt.Sprintf("172.18.0.%d", i%3+2), StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "hello", Image: "hello:1.0", ImageID: "sha256:0123456789abcdef", ContainerID: "wasm://" + name + "-0", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
		if _, err := cl.Pods().UpdateStatus(ctx, p); err != nil {
			b.Fatal(err)
		}
		for j, reason := range []string{"Scheduled", "Pulled", "Created", "Started", "Killing"} {
			if _, err := cl.Events().Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", name, j), Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: name, UID: p.UID}, Reason: reason,
				Message: "Successfully assigned default/" + name + " to node-1", Type: corev1.EventTypeNormal, Count: 1,
				FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "kubelet"}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return c
}

// Saving the store of a 300-pod cluster (what the page does after changes)
// and starting a cluster from it (what a reload does before its controllers
// run: every key decoded once to be checked).
func BenchmarkSnapshot300Pods(b *testing.B) {
	c := cluster300(b)
	var snap bytes.Buffer
	if err := c.Snapshot(&snap); err != nil {
		b.Fatal(err)
	}
	b.Run("save", func(b *testing.B) {
		var buf bytes.Buffer
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := c.Snapshot(&buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "snapshot-bytes")
	})
	b.Run("restore", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := cluster.New(cluster.Config{Images: images.New(), Snapshot: snap.Bytes()}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("link", func(b *testing.B) {
		var err error
		for i := 0; i < b.N; i++ {
			_, err = snapshot.EncodeLink(snap.Bytes())
		}
		b.Log("share link of 300 pods:", err)
	})
}
