package kubelet

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func httpProbe(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(80)}},
		PeriodSeconds: period, FailureThreshold: failures, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
}

func execProbe(period, failures int32, cmd ...string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}},
		PeriodSeconds: period, FailureThreshold: failures, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
}

// webPod runs the web image with an emptyDir at /data, where
// `web --unhealthy` leaves the file that makes /healthz fail.
func webPod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	return pod(name, append([]func(*corev1.Pod){func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.Name, c.Image = "web", "web"
		c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}}, mods...)...)
}

// stepIdle steps the clock once no probe is in flight: a probe running
// while the clock jumps past its timeout times out.
func (n *testNode) stepIdle(t *testing.T, d time.Duration) {
	t.Helper()
	waitFor(t, "probes idle", func() bool { return n.probes.probing.Load() == 0 })
	n.clk.Step(d)
}

// exec runs a command in a pod's container through the kubelet's Exec.
func (n *testNode) exec(t *testing.T, p *corev1.Pod, container string, cmd ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code, err := n.Exec(context.Background(), p, container, cmd, nil, &out, &errOut)
	if err != nil {
		t.Fatalf("exec %v: %v", cmd, err)
	}
	return out.String(), errOut.String(), code
}

func TestLivenessProbeRestarts(t *testing.T) {
	n := newTestNode(t)
	n.create(t, webPod("web", func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.Env = []corev1.EnvVar{{Name: "UNHEALTHY", Value: "1"}} // /healthz answers 500
		c.LivenessProbe = httpProbe("/healthz", 10, 3)
	}))
	const failed = "Liveness probe failed: HTTP probe failed with statuscode: 500"
	// The first probe right away, then every 10 s: three failures in a row.
	n.waitEvents(t, "web", EventContainerUnhealthy, failed, 1)
	p := n.waitPod(t, "web", "Running", isRunningReady)
	n.clk.Step(10 * time.Second)
	n.waitEvents(t, "web", EventContainerUnhealthy, failed, 2)
	if p, _ := n.c.Pods().Get(context.Background(), "default", "web"); containerStatus(p, "web").RestartCount != 0 {
		t.Fatalf("restarted after two failures: %s", describe(p))
	}
	n.clk.Step(10 * time.Second)
	n.waitEvents(t, "web", EventContainerUnhealthy, failed, 3)
	p = n.waitPod(t, "web", "restarted", func(p *corev1.Pod) bool {
		cs := containerStatus(p, "web")
		return cs.RestartCount == 1 && cs.State.Running != nil
	})
	last := containerStatus(p, "web").LastTerminationState.Terminated
	if last == nil || last.ExitCode != 137 || last.Reason != "Error" {
		t.Errorf("lastState = %s", describe(p))
	}
	if !hasEvent(n.events(t, "web"), "Killing: Container web failed liveness probe, will be restarted") {
		t.Errorf("events = %q", n.events(t, "web"))
	}
	// The worker probes the new container at its next period (still failing).
	n.clk.Step(10 * time.Second)
	n.waitEvents(t, "web", EventContainerUnhealthy, failed, 4)
}

func TestReadinessProbe(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, webPod("web", func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = httpProbe("/healthz", 5, 1)
	}))
	p := n.waitPod(t, "web", "Ready", isRunningReady)
	if !containerStatus(p, "web").Ready {
		t.Fatalf("status: %s", describe(p))
	}

	// kubectl exec web -- web --unhealthy: the file in the emptyDir makes
	// /healthz fail; at the next probe the pod is not ready, and stays up.
	out, _, code := n.exec(t, created, "web", "web", "--unhealthy")
	if code != 0 || out != "web: /healthz will fail\n" {
		t.Fatalf("exec = %q, %d", out, code)
	}
	n.stepIdle(t, 5*time.Second)
	p = n.waitPod(t, "web", "not Ready", func(p *corev1.Pod) bool { return !isReady(p) })
	cs := containerStatus(p, "web")
	if cs.Ready || cs.State.Running == nil || cs.RestartCount != 0 || p.Status.Phase != corev1.PodRunning {
		t.Errorf("status: %s", describe(p))
	}
	if c := podCondition(p, corev1.ContainersReady); c.Status != corev1.ConditionFalse || c.Reason != ReasonContainersNotReady ||
		c.Message != "containers with unready status: [web]" {
		t.Errorf("ContainersReady = %+v", c)
	}
	if row := printedPod(t, p); row[1] != "0/1" || row[2] != "Running" {
		t.Errorf("kubectl get pods = %v", row)
	}
	if !hasEvent(n.events(t, "web"), "Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500") {
		t.Errorf("events = %q", n.events(t, "web"))
	}

	// Healed, it is ready again at the next probe.
	n.exec(t, created, "web", "web", "--healthy")
	n.stepIdle(t, 5*time.Second)
	n.waitPod(t, "web", "Ready again", isRunningReady)
}

func TestStartupProbe(t *testing.T) {
	t.Run("succeeds, then the others run", func(t *testing.T) {
		n := newTestNode(t)
		n.create(t, webPod("web", func(p *corev1.Pod) {
			c := &p.Spec.Containers[0]
			c.StartupProbe = httpProbe("/healthz", 10, 3)
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, PeriodSeconds: 10, FailureThreshold: 3, SuccessThreshold: 1}
		}))
		p := n.waitPod(t, "web", "Ready", isRunningReady)
		if cs := containerStatus(p, "web"); cs.Started == nil || !*cs.Started {
			t.Errorf("started = %v", cs.Started)
		}
	})
	t.Run("fails: restarted", func(t *testing.T) {
		n := newTestNode(t)
		n.create(t, pod("slow", func(p *corev1.Pod) {
			p.Spec.Containers[0].StartupProbe = execProbe(10, 2, "hello", "--ticks=0", "--exit=1")
			p.Spec.Containers[0].LivenessProbe = execProbe(10, 1, "hello", "--ticks=0", "--exit=1")
		}))
		const failed = "Startup probe failed: Hello from slow! (hello:1.0)"
		n.waitEvents(t, "slow", EventContainerUnhealthy, failed, 1)
		p, _ := n.c.Pods().Get(context.Background(), "default", "slow")
		if cs := containerStatus(p, "hello"); cs.Ready || (cs.Started != nil && *cs.Started) {
			t.Errorf("before its startup probe passed: %s", describe(p))
		}
		n.clk.Step(10 * time.Second)
		p = n.waitPod(t, "slow", "restarted", func(p *corev1.Pod) bool { return containerStatus(p, "hello").RestartCount == 1 })
		ev := n.events(t, "slow")
		if !hasEvent(ev, "Killing: Container hello failed startup probe, will be restarted") || hasEvent(ev, "Unhealthy: Liveness") {
			t.Errorf("events = %q", ev)
		}
	})
}

func TestProbeHandlers(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, webPod("web", func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "udp", ContainerPort: 53, Protocol: corev1.ProtocolUDP})
	}))
	p := n.waitPod(t, "web", "Running", isRunningReady)
	status, _ := n.lastStatus(created.UID)
	tests := []struct {
		name  string
		probe *corev1.Probe
		res   outcome
		out   string
	}{
		{"http 200", httpProbe("/healthz", 10, 1), outcomeSuccess, "ok\n"},
		{"http 404", httpProbe("/nothing", 10, 1), outcomeFailure, "HTTP probe failed with statuscode: 404"},
		{"http named port", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "healthz", Port: intstr.FromString("http")}}}, outcomeSuccess, "ok\n"},
		{"exec exit 0", execProbe(10, 1, "web", "--healthy"), outcomeSuccess, "web: /healthz will pass\n"},
		{"tcp declared", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}, outcomeSuccess, ""},
		{"tcp undeclared", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}, outcomeFailure, "dial tcp 10.244.1.2:8080: connect: connection refused"},
		{"tcp udp port", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("udp")}}}, outcomeFailure, "dial tcp 10.244.1.2:53: connect: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &probeWorker{m: n.probes, key: probeKey{created.UID, "web", liveness}, container: p.Spec.Containers[0], spec: tt.probe}
			res, out, err := w.runProbe(context.Background(), status, strings.TrimPrefix(status.ContainerStatuses[0].ContainerID, containerIDPrefix))
			if err != nil || res != tt.res || !strings.HasPrefix(out, tt.out) {
				t.Errorf("= %s %q %v, want %s %q", res, out, err, tt.res, tt.out)
			}
		})
	}
	// A named port the container does not have errors, in strconv's words.
	w := &probeWorker{m: n.probes, key: probeKey{created.UID, "web", readiness}, container: p.Spec.Containers[0],
		spec: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("metrics")}}}}
	if _, err := w.probe(context.Background(), p, status, "x"); err == nil || err.Error() != `strconv.Atoi: parsing "metrics": invalid syntax` {
		t.Errorf("unknown named port: %v", err)
	}
	if !hasEvent(n.events(t, "web"), `Unhealthy: Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "metrics": invalid syntax`) {
		t.Errorf("events = %q", n.events(t, "web"))
	}
}

// TestExecProbeTimeout: a command that outlives timeoutSeconds fails the
// probe as upstream words it.
func TestExecProbeTimeout(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("slow", func(p *corev1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = execProbe(10, 1, "sleep", "5")
		p.Spec.Containers[0].Image = "sleep"
	}))
	n.waitPod(t, "slow", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	// The probe's 1 s timeout and the command's 5 s sleep are both timers
	// on the clock: stepping 1 s ends the probe first.
	n.guestClock.waitTimers(t, 5*time.Second, 1)
	n.guestClock.waitTimers(t, time.Second, 1)
	n.clk.Step(time.Second)
	n.waitEvents(t, "slow", EventContainerUnhealthy, `Readiness probe failed: command "sleep 5" timed out`, 1)
	p := n.waitPod(t, "slow", "not ready", func(p *corev1.Pod) bool { return !isReady(p) })
	if containerStatus(p, "hello").Ready {
		t.Errorf("status: %s", describe(p))
	}
}

func TestExec(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("web-1", func(p *corev1.Pod) {
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "GREETING", Value: "hi"}}
	}))
	n.waitPod(t, "web-1", "Running", isRunningReady)
	out, _, code := n.exec(t, created, "", "hello", "--ticks=0", "--exit=3", "$(GREETING)")
	if code != 3 || !strings.Contains(out, "Hello from web-1! (hello:1.0)") || !strings.Contains(out, "hello: done after 0 ticks, exit code 3") {
		t.Errorf("exec = %q, %d", out, code)
	}
	var buf bytes.Buffer
	for _, tt := range []struct {
		container string
		stdin     io.Reader
		want      string
	}{
		{"nope", nil, `container not found ("nope")`},
	} {
		_, err := n.Exec(context.Background(), created, tt.container, []string{"hello"}, tt.stdin, &buf, &buf)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("exec in %q = %v, want %s", tt.container, err, tt.want)
		}
	}
	// An empty stdin is no input: the command runs.
	if code, err := n.Exec(context.Background(), created, "hello", []string{"hello", "--ticks=0"}, strings.NewReader(""), &buf, &buf); err != nil || code != 0 {
		t.Errorf("exec with an empty stdin = %d, %v", code, err)
	}
	// The command reads stdin: echo hi | kubectl exec -i web-1 -- hello --stdin.
	buf.Reset()
	if code, err := n.Exec(context.Background(), created, "hello", []string{"hello", "--stdin"}, strings.NewReader("hi\nthere\n"), &buf, &buf); err != nil || code != 0 ||
		!strings.Contains(buf.String(), "hello: stdin: hi\nhello: stdin: there\nhello: done after 2 lines of stdin") {
		t.Errorf("exec reading stdin = %d, %v, %q", code, err, buf.String())
	}
}
