package cluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// TestMemoryHogEvicted is #15's guest-memory acceptance in a whole cluster:
// a memory hog without a limit on a 128Mi node leaves it below the hard
// eviction threshold; the kubelet's eviction manager evicts it (Failed,
// Evicted, the Evicted event), its node reports MemoryPressure and the
// node lifecycle controller taints it node.kubernetes.io/memory-pressure,
// while the node's other pod keeps running.
func TestMemoryHogEvicted(t *testing.T) {
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Clock: clk, NodeSpecs: []cluster.NodeSpec{
		{Name: "node-1", Memory: resource.MustParse("128Mi")}, {Name: "node-2"}, {Name: "node-3"},
	}})
	f := &fakeCluster{Cluster: c, t: t, ctx: ctx, clk: clk, cl: c.Client("test"), start: start}
	onNode1 := func(name string, ctr corev1.Container) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{ctr}}}
		if _, err := f.cl.Pods().Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	onNode1("quiet", corev1.Container{Name: "hello", Image: "hello"})
	onNode1("hog", corev1.Container{Name: "hog", Image: "oom", Args: []string{"--step-ms=0", "--max-mib=40", "--hold"}})
	pod := func(name string) *corev1.Pod {
		p, err := f.cl.Pods().Get(ctx, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.until("the hog evicted", func() (bool, string) {
		p := pod("hog")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted", fmt.Sprint(p.Status.Phase, p.Status.Reason)
	})
	msg := pod("hog").Status.Message
	if !strings.HasPrefix(msg, "The node was low on resource: memory. Threshold quantity: 100Mi, available: ") ||
		!strings.Contains(msg, "Container hog was using ") {
		t.Fatalf("message %q", msg)
	}
	f.waitEvent("default", "Evicted", msg)
	f.until("node-1 tainted memory-pressure", func() (bool, string) {
		n, err := f.cl.Nodes().Get(ctx, "", "node-1")
		if err != nil {
			return false, err.Error()
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeMemoryPressure && tn.Effect == corev1.TaintEffectNoSchedule {
				return true, ""
			}
		}
		return false, fmt.Sprint(n.Spec.Taints, n.Status.Conditions)
	})
	if q := pod("quiet"); q.Status.Phase != corev1.PodRunning {
		t.Fatalf("quiet is %s", q.Status.Phase)
	}
}
