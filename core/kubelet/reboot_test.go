package kubelet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// reboot is the node's machine restarting: the kubelet stops, every
// process ends, and a new runtime comes up holding the containers' records
// (RecoveredContainers of the pods the API binds to the node, what
// containerd would load from its disk), under a new kubelet.
func (n *testNode) reboot(t *testing.T) *testNode {
	t.Helper()
	n.stop()
	if err := n.rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	pods, _, err := n.c.Pods().List(context.Background(), "", client.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.nodeName)})
	if err != nil {
		t.Fatal(err)
	}
	var recs []cri.RecoveredContainer
	for _, p := range pods {
		recs = append(recs, RecoveredContainers(p)...)
	}
	var kp atomic.Pointer[Kubelet]
	gc := newTimerClock(n.clk)
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: gc, OnEvent: func(e cri.ContainerEvent) {
		if k := kp.Load(); k != nil {
			k.HandleContainerEvent(e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Recover(recs); err != nil {
		t.Fatal(err)
	}
	kl, err := New(Config{Client: n.c, NodeName: n.nodeName, Runtime: rt, Clock: n.clk, PodCIDR: "10.244.1.0/24", NodeIP: "192.168.49.2"})
	if err != nil {
		t.Fatal(err)
	}
	kp.Store(kl)
	m := &testNode{Kubelet: kl, c: n.c, clk: n.clk, guestClock: gc, rt: rt}
	m.stop = m.start(t)
	t.Cleanup(func() { rt.Close(context.Background()) })
	return m
}

// After a reboot each pod does what upstream's kubelet makes of a pod whose
// sandbox is gone and whose containers exited 255 Unknown: a new sandbox
// (SandboxChanged) and its containers restarted under its restartPolicy,
// init containers first; a pod never restarted ends Failed.
func TestRebootRestartsContainers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy corev1.RestartPolicy
		init   bool
	}{
		{name: "always", policy: corev1.RestartPolicyAlways},
		{name: "onfailure", policy: corev1.RestartPolicyOnFailure},
		{name: "init containers run again", policy: corev1.RestartPolicyAlways, init: true},
		{name: "never", policy: corev1.RestartPolicyNever},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNode(t)
			n.create(t, pod("web", func(p *corev1.Pod) {
				p.Spec.RestartPolicy = tc.policy
				if tc.init {
					p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "job", Args: []string{"0"}}}
				}
			}))
			before := n.waitPod(t, "web", "Running and Ready", isRunningReady)
			was := containerStatus(before, "hello")

			// Every status written from the reboot on.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := n.c.Pods().Watch(ctx, "default", client.ListOptions{ResourceVersion: before.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			n = n.reboot(t)
			if tc.policy == corev1.RestartPolicyNever {
				p := n.waitPod(t, "web", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
				term := containerStatus(p, "hello").State.Terminated
				if term == nil || term.ExitCode != cri.ExitCodeUnknown || term.Reason != cri.ReasonUnknown || term.ContainerID != was.ContainerID {
					t.Errorf("after the reboot: %s", describe(p))
				}
				if c := n.eventCount(t, "web", EventSandboxChanged, ""); c != 0 {
					t.Errorf("%d SandboxChanged events for a pod that is not restarted", c)
				}
				return
			}
			p := n.waitPod(t, "web", "Running again", func(p *corev1.Pod) bool {
				return isRunningReady(p) && containerStatus(p, "hello").ContainerID != was.ContainerID
			})
			cs := containerStatus(p, "hello")
			last := cs.LastTerminationState.Terminated
			if cs.RestartCount != was.RestartCount+1 || last == nil || last.ExitCode != cri.ExitCodeUnknown || last.Reason != cri.ReasonUnknown ||
				last.ContainerID != was.ContainerID || !last.StartedAt.Equal(&was.State.Running.StartedAt) {
				t.Errorf("after the reboot: %s", describe(p))
			}
			n.waitEvents(t, "web", EventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.", 1)
			// The sync that re-creates the sandbox writes once, after
			// starting the containers: the pod never shows the old
			// sandbox's exited containers (not ready) in between.
			if !tc.init {
				for ev := range w.ResultChan() {
					q := ev.Object.(*corev1.Pod)
					if q.Name == "web" && !isRunningReady(q) {
						t.Errorf("a status written between the reboot and Running again: %s", describe(q))
					}
					if q.Name == "web" && q.ResourceVersion == p.ResourceVersion {
						break
					}
				}
			}
			if tc.init {
				setup := containerStatus(p, "setup")
				if setup.RestartCount != 1 || setup.State.Terminated == nil || setup.State.Terminated.ExitCode != 0 ||
					!setup.State.Terminated.StartedAt.After(time.Time{}) || setup.ContainerID == containerStatus(before, "setup").ContainerID {
					t.Errorf("init container after the reboot: %s", describe(p))
				}
			}
		})
	}
}
