package kubelet

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeCondition returns the node's condition of type ct.
func (n *testNode) nodeCondition(t *testing.T, ct corev1.NodeConditionType) corev1.NodeCondition {
	t.Helper()
	node, err := n.c.Nodes().Get(context.Background(), "", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == ct {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// TestEvictionMemoryPressure is #15's memory hog without a limit: on a
// node of 128Mi, a BestEffort pod that holds 40 MiB leaves less than the
// hard threshold (memory.available<100Mi). At the eviction manager's next
// pass it is evicted, as upstream (Failed, Evicted, the message naming the
// threshold, what is available and the container's use, an Evicted event,
// DisruptionTarget), while the other pod of the node keeps running; the
// node reports MemoryPressure until the pressure transition period has
// passed without the threshold being met.
func TestEvictionMemoryPressure(t *testing.T) {
	n := newTestNode(t, func(c *Config) {
		c.Capacity = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
	})
	n.create(t, pod("quiet", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	}))
	n.create(t, pod("hog", func(p *corev1.Pod) {
		p.Spec.Containers[0] = corev1.Container{Name: "hog", Image: "oom", Args: []string{"--step-ms=0", "--max-mib=40", "--hold"}}
	}))
	n.waitPod(t, "quiet", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	hog := n.waitPod(t, "hog", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	n.waitLog(t, hog, "hog", "oom: holding 40 MiB")
	if c := n.nodeCondition(t, corev1.NodeMemoryPressure); c.Status != corev1.ConditionFalse {
		t.Fatalf("MemoryPressure before the pass: %+v", c)
	}

	// The eviction manager's pass (every 10 s).
	n.clk.Step(evictionMonitoringInterval)
	hog = n.waitPod(t, "hog", "Evicted", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == ReasonEvicted
	})
	msg := hog.Status.Message
	const head = "The node was low on resource: memory. Threshold quantity: 100Mi, available: "
	if !strings.HasPrefix(msg, head) || !strings.Contains(msg, ". Container hog was using ") ||
		!strings.HasSuffix(msg, ", request is 0, has larger consumption of memory. ") {
		t.Fatalf("message %q", msg)
	}
	avail := resource.MustParse(strings.SplitN(strings.TrimPrefix(msg, head), ".", 2)[0])
	if avail.Cmp(resource.MustParse("100Mi")) >= 0 || avail.Cmp(resource.MustParse("60Mi")) < 0 {
		t.Errorf("available %s, want 60Mi..100Mi (128Mi less 40 MiB and the small pods)", avail.String())
	}
	dt := podCondition(hog, corev1.DisruptionTarget)
	if dt == nil || dt.Status != corev1.ConditionTrue || dt.Reason != "TerminationByKubelet" || dt.Message != msg {
		t.Fatalf("DisruptionTarget %+v", dt)
	}
	if term := containerStatus(hog, "hog").State.Terminated; term == nil || term.ExitCode != 137 {
		t.Fatalf("hog's container: %s", describe(hog))
	}
	// (kubectl get pods shows Error here, as upstream's printer does for
	// an evicted pod whose container was killed: the container's reason
	// wins over the pod's.)
	n.waitEvents(t, "hog", "Evicted", head, 1)
	if q, _ := n.c.Pods().Get(context.Background(), "default", "quiet"); q.Status.Phase != corev1.PodRunning || !isReady(q) {
		t.Fatalf("quiet: %s", describe(q))
	}

	// The node's next status says MemoryPressure ...
	n.clk.Step(DefaultNodeStatusUpdateFrequency)
	waitFor(t, "MemoryPressure True", func() bool {
		return n.nodeCondition(t, corev1.NodeMemoryPressure).Status == corev1.ConditionTrue
	})
	c := n.nodeCondition(t, corev1.NodeMemoryPressure)
	if c.Reason != "KubeletHasInsufficientMemory" || c.Message != "kubelet has insufficient memory available" {
		t.Fatalf("MemoryPressure %+v", c)
	}
	n.waitEvents(t, "node-1", "NodeHasInsufficientMemory", "Node node-1 status is now: NodeHasInsufficientMemory", 1)

	// ... until the transition period has passed: the hog's memory is
	// back, the threshold is no longer met. The pass that evicted was one
	// interval after t0; 28 intervals later it is still within the period.
	evictedAt := t0.Add(evictionMonitoringInterval)
	for i := 0; i < 28; i++ {
		n.clk.Step(evictionMonitoringInterval)
	}
	waitFor(t, "a heartbeat after the steps", func() bool {
		return !n.nodeCondition(t, corev1.NodeMemoryPressure).LastHeartbeatTime.Time.Before(n.clk.Now().Add(-DefaultNodeStatusUpdateFrequency))
	})
	if got := n.nodeCondition(t, corev1.NodeMemoryPressure).Status; got != corev1.ConditionTrue {
		t.Fatalf("MemoryPressure %s %v after the eviction, within the transition period", got, n.clk.Since(evictedAt))
	}
	waitFor(t, "MemoryPressure False", func() bool {
		n.clk.Step(evictionMonitoringInterval)
		return n.nodeCondition(t, corev1.NodeMemoryPressure).Status == corev1.ConditionFalse
	})
	if c := n.nodeCondition(t, corev1.NodeMemoryPressure); c.LastTransitionTime.Time.Before(evictedAt.Add(evictionPressureTransitionPeriod)) {
		t.Fatalf("MemoryPressure False at %v, before the transition period", c.LastTransitionTime.Sub(evictedAt))
	}
	if q, _ := n.c.Pods().Get(context.Background(), "default", "quiet"); q.Status.Phase != corev1.PodRunning {
		t.Fatalf("quiet: %s", describe(q))
	}
}

// TestOOMKilledRestarts: a container that grows past its limit is
// OOMKilled (137) and, under restartPolicy Always, restarted: the status
// keeps the kill as lastState.
func TestOOMKilledRestarts(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("oom", withImage("oom", "--step-ms=0"), func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}
	}))
	p := n.waitPod(t, "oom", "the OOM kill as lastState", func(p *corev1.Pod) bool {
		last := containerStatus(p, "hello").LastTerminationState.Terminated
		return last != nil && last.Reason == "OOMKilled"
	})
	cs := containerStatus(p, "hello")
	if last := cs.LastTerminationState.Terminated; last.ExitCode != 137 || cs.RestartCount < 1 || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("status: %s", describe(p))
	}
}

// TestRankMemoryPressure is upstream's order: usage above requests first,
// then lower priority, then the most above requests.
func TestRankMemoryPressure(t *testing.T) {
	mk := func(name string, usage, request int64, prio int32) *podMemory {
		return &podMemory{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Priority: &prio}}, usage: usage, request: request}
	}
	tests := []struct {
		name string
		pods []*podMemory
		want string
	}{
		{"over requests first", []*podMemory{mk("under", 90, 100, 0), mk("over", 20, 10, 0)}, "over under"},
		{"then lower priority", []*podMemory{mk("high", 50, 0, 1000), mk("low", 20, 0, 0)}, "low high"},
		{"then most above requests", []*podMemory{mk("a", 30, 0, 0), mk("b", 80, 10, 0), mk("c", 50, 0, 0)}, "b c a"},
		{"priority beats size", []*podMemory{mk("big", 500, 0, 10), mk("small", 5, 0, 0), mk("guaranteed", 100, 100, 0)}, "small big guaranteed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rankMemoryPressure(tt.pods)
			var got []string
			for _, p := range tt.pods {
				got = append(got, p.pod.Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("order %v, want %s", got, tt.want)
			}
		})
	}
}
