package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// Fixture builders for container statuses.
func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, ContainerID: "wasm://run-" + name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func exited(name string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, ContainerID: "wasm://dead-" + name}}}
}

func waitingFor(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

// backingOff is a container waiting to be restarted after exiting with code.
func backingOff(name string, code int32) corev1.ContainerStatus {
	s := waitingFor(name, ReasonCrashLoopBackOff)
	s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, ContainerID: "wasm://prev-" + name}
	return s
}

func TestGetPhase(t *testing.T) {
	tests := []struct {
		name     string
		policy   corev1.RestartPolicy
		init     []corev1.ContainerStatus
		statuses []corev1.ContainerStatus
		terminal bool
		want     corev1.PodPhase
	}{
		{"creating", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{waitingFor("a", ReasonContainerCreating)}, false, corev1.PodPending},
		{"image pull failing", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{running("a"), waitingFor("b", ReasonErrImagePull)}, false, corev1.PodPending},
		{"running", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{running("a"), running("b")}, false, corev1.PodRunning},
		{"crash looping", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{backingOff("a", 1)}, false, corev1.PodRunning},
		{"always: all exited, restarting", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{exited("a", 0)}, false, corev1.PodRunning},
		{"never: all exited 0", corev1.RestartPolicyNever, nil, []corev1.ContainerStatus{exited("a", 0), exited("b", 0)}, false, corev1.PodSucceeded},
		{"never: one failed", corev1.RestartPolicyNever, nil, []corev1.ContainerStatus{exited("a", 0), exited("b", 2)}, false, corev1.PodFailed},
		{"never: one still running", corev1.RestartPolicyNever, nil, []corev1.ContainerStatus{exited("a", 2), running("b")}, false, corev1.PodRunning},
		{"on failure: exited 0", corev1.RestartPolicyOnFailure, nil, []corev1.ContainerStatus{exited("a", 0)}, false, corev1.PodSucceeded},
		{"on failure: failed, restarting", corev1.RestartPolicyOnFailure, nil, []corev1.ContainerStatus{exited("a", 0), backingOff("b", 1)}, false, corev1.PodRunning},
		{"deleted: killed", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{exited("a", 137)}, true, corev1.PodFailed},
		{"deleted: all exited 0", corev1.RestartPolicyAlways, nil, []corev1.ContainerStatus{exited("a", 0)}, true, corev1.PodSucceeded},
		{"init running", corev1.RestartPolicyAlways, []corev1.ContainerStatus{running("i")}, []corev1.ContainerStatus{waitingFor("a", ReasonPodInitializing)}, false, corev1.PodPending},
		{"init done", corev1.RestartPolicyAlways, []corev1.ContainerStatus{exited("i", 0)}, []corev1.ContainerStatus{running("a")}, false, corev1.PodRunning},
		{"init failed, never", corev1.RestartPolicyNever, []corev1.ContainerStatus{exited("i", 1)}, []corev1.ContainerStatus{waitingFor("a", ReasonPodInitializing)}, false, corev1.PodFailed},
		{"init failed, retrying", corev1.RestartPolicyAlways, []corev1.ContainerStatus{backingOff("i", 1)}, []corev1.ContainerStatus{waitingFor("a", ReasonPodInitializing)}, false, corev1.PodPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tt.policy}}
			if got := getPhase(p, tt.init, tt.statuses, tt.terminal); got != tt.want {
				t.Errorf("getPhase = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestValidateContainerLogStatus(t *testing.T) {
	exitedRestarted := exited("hello", 1)
	exitedRestarted.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ContainerID: "wasm://prev-hello"}
	tests := []struct {
		name     string
		status   corev1.ContainerStatus
		previous bool
		wantID   string
		wantErr  string
	}{
		{name: "running", status: running("hello"), wantID: "wasm://run-hello"},
		{name: "exited", status: exited("hello", 0), wantID: "wasm://dead-hello"},
		{name: "crash looping reads the last run", status: backingOff("hello", 1), wantID: "wasm://prev-hello"},
		{name: "previous", status: backingOff("hello", 1), previous: true, wantID: "wasm://prev-hello"},
		{name: "previous of exited", status: exitedRestarted, previous: true, wantID: "wasm://prev-hello"},
		{name: "no previous", status: running("hello"), previous: true, wantErr: `previous terminated container "hello" in pod "web-x" not found`},
		{name: "creating", status: waitingFor("hello", ReasonContainerCreating), wantErr: `container "hello" in pod "web-x" is waiting to start: ContainerCreating`},
		{name: "pull failed", status: waitingFor("hello", ReasonErrImagePull), wantErr: `container "hello" in pod "web-x" is waiting to start: image can't be pulled`},
		{name: "pull backing off", status: waitingFor("hello", ReasonImagePullBackOff), wantErr: `container "hello" in pod "web-x" is waiting to start: trying and failing to pull image`},
		{name: "no state", status: corev1.ContainerStatus{Name: "hello"}, wantErr: `container "hello" in pod "web-x" is waiting to start - no logs yet`},
		{name: "unknown container", status: running("other"), wantErr: `container "hello" in pod "web-x" is not available`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{tt.status}}
			id, err := validateContainerLogStatus("web-x", s, "hello", tt.previous)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || id != tt.wantID {
				t.Fatalf("= %q, %v; want %q", id, err, tt.wantID)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "EMPTY": ""}
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "x"},
		{"a-$(A)-b", "a-x-b"},
		{"$(EMPTY)!", "!"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(A)", "$(A)"},
		{"$$", "$"},
		{"cost $5", "cost $5"},
		{"$(A", "$(A"},
		{"end$", "end$"},
		{"$(A)$(A)", "xx"},
	}
	for _, tt := range tests {
		if got := expand(tt.in, vars); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBackOff(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	b := newBackOff(clk, backOffPeriod, maxContainerBackOff)
	const key = "uid/hello"
	if in, _ := b.InBackOffSince(key, clk.Now()); in {
		t.Fatal("a new key is backing off")
	}
	// Exits right after each restart: 10 s, 20 s, 40 s ... capped at 5 min.
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i, w := range want {
		b.Next(key, clk.Now())
		if got := b.Get(key); got != w*time.Second {
			t.Fatalf("step %d: back-off %v, want %v", i, got, w*time.Second)
		}
		if in, left := b.InBackOffSince(key, clk.Now()); !in || left != w*time.Second {
			t.Fatalf("step %d: InBackOffSince = %v %v", i, in, left)
		}
		clk.Step(w * time.Second)
		if in, _ := b.InBackOffSince(key, clk.Now().Add(-w*time.Second)); in {
			t.Fatalf("step %d: still backing off after %v", i, w*time.Second)
		}
	}
	// Ten quiet minutes: it starts over.
	clk.Step(2*maxContainerBackOff + time.Second)
	b.Next(key, clk.Now())
	if got := b.Get(key); got != backOffPeriod {
		t.Fatalf("after a quiet period: back-off %v, want %v", got, backOffPeriod)
	}
	b.DeletePrefix("uid/")
	if got := b.Get(key); got != 0 {
		t.Fatalf("after DeletePrefix: %v", got)
	}
}

func TestOwnStatusWrite(t *testing.T) {
	pod := func(rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1", ResourceVersion: rv}}
	}
	kl := &Kubelet{pods: map[types.UID]*podRecord{"u1": {}}}
	if kl.ownStatusWrite(pod("10"), pod("11")) {
		t.Fatal("no write yet: an update is not the kubelet's own")
	}
	kl.storeWritten(pod("11"), "10")
	for _, tc := range []struct {
		name     string
		old, cur string
		want     bool
	}{
		{"the write itself", "10", "11", true},
		{"a later update by someone else", "11", "12", false},
		{"from another version than the write's (a relist)", "9", "11", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kl.ownStatusWrite(pod(tc.old), pod(tc.cur)); got != tc.want {
				t.Errorf("ownStatusWrite(%s -> %s) = %v, want %v", tc.old, tc.cur, got, tc.want)
			}
		})
	}
	other := pod("11")
	other.UID = "u2"
	if kl.ownStatusWrite(pod("10"), other) {
		t.Error("a pod the kubelet has no record of")
	}
}
