package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// timerClock is a fake clock as the runtime sees it: it counts the timers
// created through it by duration. A guest's sleep(5) is a 5 s timer, so a
// test waits for that timer to exist before it steps the clock past it;
// stepping earlier would leave the guest asleep.
type timerClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	created map[time.Duration]int
	changed chan struct{} // closed and replaced at every new timer
}

var _ clock.Clock = (*timerClock)(nil)

func newTimerClock(c *testingclock.FakeClock) *timerClock {
	return &timerClock{FakeClock: c, created: map[time.Duration]int{}, changed: make(chan struct{})}
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d) // registered before it is counted
	c.mu.Lock()
	c.created[d]++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return t
}

// count is how many timers of d were created so far.
func (c *timerClock) count(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created[d]
}

// waitTimers waits until at least n timers of d were created.
func (c *timerClock) waitTimers(t *testing.T, d time.Duration, n int) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got, ch := c.created[d], c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%d timers of %v created within %v, want %d", got, d, waitTimeout, n)
		}
	}
}

// stepAfterSleep waits for the next timer of d a guest creates (the
// (n+1)th, n being the count before) and steps the clock by d.
func (n *testNode) stepAfterSleep(t *testing.T, d time.Duration, before int) {
	t.Helper()
	n.guestClock.waitTimers(t, d, before+1)
	n.clk.Step(d)
}

// eventCount returns how many times an event with this reason and message
// prefix about the pod was recorded (the recorder counts repeats).
func (n *testNode) eventCount(t *testing.T, name, reason, prefix string) int32 {
	t.Helper()
	list, _, err := n.c.Events().List(context.Background(), "default", registry.ListOptions{
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
}

func (n *testNode) createSecret(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data}
	if _, err := n.secrets().Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
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
