package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// timerClock is a fake clock as the runtime sees it: it keeps track of the
// timers created through it. A guest's sleep(5) is a 5 s timer, so a test
// waits until the guest sleeps before it steps the clock past the sleep;
// stepping earlier would leave the guest asleep.
type timerClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	timers  []*trackedTimer
	changed chan struct{} // closed and replaced at every new timer
}

type trackedTimer struct {
	clock.Timer
	d       time.Duration
	target  time.Time
	stopped atomic.Bool
}

func (t *trackedTimer) Stop() bool {
	t.stopped.Store(true)
	return t.Timer.Stop()
}

var _ clock.Clock = (*timerClock)(nil)

func newTimerClock(c *testingclock.FakeClock) *timerClock {
	return &timerClock{FakeClock: c, changed: make(chan struct{})}
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	now := c.Now()
	t := &trackedTimer{Timer: c.FakeClock.NewTimer(d), d: d, target: now.Add(d)} // registered before it is tracked
	c.mu.Lock()
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return t
}

// count is how many timers of d were created so far.
func (c *timerClock) count(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.d == d {
			n++
		}
	}
	return n
}

// pending is how many timers of d are waiting for the clock.
func (c *timerClock) pending(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, n := c.Now(), 0
	for _, t := range c.timers {
		if t.d == d && t.target.After(now) && !t.stopped.Load() {
			n++
		}
	}
	return n
}

// wait waits until cond holds, checking at every new timer.
func (c *timerClock) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %s within %v", what, waitTimeout)
		}
	}
}

// waitTimers waits until at least n timers of d were created.
func (c *timerClock) waitTimers(t *testing.T, d time.Duration, n int) {
	t.Helper()
	c.wait(t, fmt.Sprintf("%d timers of %v", n, d), func() bool { return c.count(d) >= n })
}

// stepAfterSleep waits until a guest sleeps for d and steps the clock by d.
func (n *testNode) stepAfterSleep(t *testing.T, d time.Duration) {
	t.Helper()
	n.guestClock.wait(t, fmt.Sprintf("guest sleeping %v", d), func() bool { return n.guestClock.pending(d) > 0 })
	n.clk.Step(d)
}

// eventCount returns how many times an event with this reason and message
// prefix about the pod was recorded (the recorder counts repeats).
func (n *testNode) eventCount(t *testing.T, name, reason, prefix string) int32 {
	t.Helper()
	list, _, err := n.c.Events().List(context.Background(), "default", client.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name),
	})
	if err != nil {
		t.Fatal(err)
	}
	var c int32
	for _, e := range list {
		if e.Reason == reason && strings.HasPrefix(e.Message, prefix) {
			c += max(e.Count, 1)
		}
	}
	return c
}

// waitEvents waits until eventCount reaches want.
func (n *testNode) waitEvents(t *testing.T, name, reason, prefix string, want int32) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s event x%d", reason, want), func() bool { return n.eventCount(t, name, reason, prefix) >= want })
}

// waitLog waits until a container's log (current container) contains s.
func (n *testNode) waitLog(t *testing.T, p *corev1.Pod, container, s string) string {
	t.Helper()
	var out string
	waitFor(t, "log line "+s, func() bool {
		var buf bytes.Buffer
		_ = n.PodLogs(context.Background(), p, &corev1.PodLogOptions{Container: container}, &buf)
		out = buf.String()
		return strings.Contains(out, s)
	})
	return out
}

func (n *testNode) createConfigMap(t *testing.T, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data}
	if _, err := n.configMaps().Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	// Pods created next find it in the kubelet's watch cache (a real
	// kubelet could be slower, and a pod would show FailedMount first).
	waitFor(t, "the ConfigMap in the kubelet's cache", func() bool {
		_, err := n.getConfigMap(context.Background(), "default", name)
		return err == nil
	})
}

func (n *testNode) createSecret(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data}
	if _, err := n.secrets().Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Secret in the kubelet's cache", func() bool {
		_, err := n.getSecret(context.Background(), "default", name)
		return err == nil
	})
}

func containerStatus(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.Name == name {
			return cs
		}
	}
	return corev1.ContainerStatus{}
}

func isReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func withImage(image string, args ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = image
		p.Spec.Containers[0].Args = args
	}
}
