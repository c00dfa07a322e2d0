package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/printers"
)

// TestCrashLoopBackOffSequence follows a container of the crash image that
// exits at once, every time: the first restart is immediate, then each
// restart waits 10 s, 20 s, 40 s, 80 s, 160 s, then 5 min, 5 min (upstream's
// back-off). The fake clock makes the waits exact: each run's startedAt is
// its predecessor's finishedAt plus the back-off, to the second.
func TestCrashLoopBackOffSequence(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("crash", withImage("crash", "--after=0")))
	crashLooping := func(restarts int32) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			cs := containerStatus(p, "hello")
			return cs.RestartCount == restarts && cs.State.Waiting != nil && cs.State.Waiting.Reason == ReasonCrashLoopBackOff
		}
	}
	p := n.waitPod(t, "crash", "restarted once and backing off", crashLooping(1))
	cs := containerStatus(p, "hello")
	last := cs.LastTerminationState.Terminated
	if last == nil || last.ExitCode != 1 || last.Reason != "Error" || !last.StartedAt.Time.Equal(t0) {
		t.Fatalf("after the first restart: %s", describe(p))
	}
	finished := last.FinishedAt.Time
	for i, d := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		d *= time.Second
		want := fmt.Sprintf("back-off %s restarting failed container=hello pod=crash_default(%s)", d, created.UID)
		if got := containerStatus(p, "hello").State.Waiting.Message; got != want {
			t.Fatalf("restart %d: waiting message %q, want %q", i+1, got, want)
		}
		// One second early, nothing happens; at the back-off, it restarts.
		n.clk.Step(d - time.Second)
		n.clk.Step(time.Second)
		p = n.waitPod(t, "crash", fmt.Sprintf("restarted %d times", i+2), crashLooping(int32(i+2)))
		last := containerStatus(p, "hello").LastTerminationState.Terminated
		if got := last.StartedAt.Time.Sub(finished); got != d {
			t.Fatalf("restart %d came %v after the exit, want %v", i+2, got, d)
		}
		finished = last.FinishedAt.Time
	}
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase = %s, want Running", p.Status.Phase)
	}
	if n := n.eventCount(t, "crash", EventBackOffStartContainer, "Back-off restarting failed container hello in pod crash_default"); n < 7 {
		t.Errorf("%d BackOff events, want at least 7", n)
	}
}

// TestCrashLoopBackOffReset: a container that ran for more than 10 minutes
// after its restart starts its back-off over, so it is restarted at once;
// one that ran 5 minutes backs off.
func TestCrashLoopBackOffReset(t *testing.T) {
	tests := []struct {
		name     string
		after    time.Duration
		backsOff bool
	}{
		{"ran 11 minutes", 660 * time.Second, false},
		{"ran 5 minutes", 300 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNode(t)
			n.create(t, pod("crash", withImage("crash", fmt.Sprintf("--after=%d", int(tt.after.Seconds())))))
			n.waitPod(t, "crash", "Running", isRunningReady)
			// First exit: restarted at once.
			n.stepAfterSleep(t, tt.after)
			n.waitPod(t, "crash", "restarted", func(p *corev1.Pod) bool {
				cs := containerStatus(p, "hello")
				return cs.RestartCount == 1 && cs.State.Running != nil
			})
			// Second exit, a run of `after` after the restart.
			n.stepAfterSleep(t, tt.after)
			p := n.waitPod(t, "crash", "exited twice", func(p *corev1.Pod) bool {
				cs := containerStatus(p, "hello")
				return (cs.RestartCount == 2 && cs.State.Running != nil) || (cs.RestartCount == 1 && cs.State.Waiting != nil)
			})
			cs := containerStatus(p, "hello")
			if backsOff := cs.State.Waiting != nil; backsOff != tt.backsOff {
				t.Fatalf("backing off = %v, want %v\n%s", backsOff, tt.backsOff, describe(p))
			}
			if tt.backsOff && !strings.HasPrefix(cs.State.Waiting.Message, "back-off 10s ") {
				t.Errorf("waiting message = %q", cs.State.Waiting.Message)
			}
		})
	}
}

func TestOOMKilled(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("oom", withImage("oom", "--step-ms=0"), func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}
	}))
	p := n.waitPod(t, "oom", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	term := containerStatus(p, "hello").State.Terminated
	if term == nil || term.ExitCode != 137 || term.Reason != "OOMKilled" {
		t.Fatalf("status: %s", describe(p))
	}
	if row := printedPod(t, p); row[2] != "OOMKilled" {
		t.Errorf("kubectl get pods STATUS = %v, want OOMKilled", row[2])
	}
	// The memory limit was the module's: it got near 16 MiB, not past it.
	out, _ := n.logs(t, p, nil)
	if !strings.Contains(out, "oom: allocated 14 MiB") || strings.Contains(out, "oom: allocated 16 MiB") {
		t.Errorf("log = %q", out)
	}
}

// printedPod is the pod's row in `kubectl get pods`: NAME READY STATUS RESTARTS AGE.
func printedPod(t *testing.T, p *corev1.Pod) []any {
	t.Helper()
	tab, err := printers.ToTable(p, t0)
	if err != nil || len(tab.Rows) != 1 {
		t.Fatalf("ToTable: %v", err)
	}
	return tab.Rows[0].Cells
}

func TestLimitsReachTheRuntime(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("limited", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("32Mi"),
		}
		p.Spec.Containers[0].WorkingDir = "/work"
	}))
	n.waitPod(t, "limited", "Running", isRunningReady)
	list := n.rt.ListContainers(cri.ContainerFilter{PodUID: string(created.UID)})
	if len(list) != 1 || list[0].CPULimitMillicores != 200 || list[0].MemoryLimitBytes != 32<<20 {
		t.Fatalf("runtime containers = %+v", list)
	}
}

func TestInitContainersInOrder(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("init", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{
			{Name: "first", Image: "job", Args: []string{"1"}},
			{Name: "second", Image: "job", Args: []string{"1"}},
		}
	}))
	// The first runs; the second and the app container wait.
	p := n.waitPod(t, "init", "first running", func(p *corev1.Pod) bool { return containerStatus(p, "first").State.Running != nil })
	if w := containerStatus(p, "second").State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
		t.Errorf("second while first runs: %s", describe(p))
	}
	if w := containerStatus(p, "hello").State.Waiting; w == nil || w.Reason != ReasonPodInitializing || p.Status.Phase != corev1.PodPending {
		t.Errorf("app container while first runs: %s", describe(p))
	}
	if c := podCondition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionFalse ||
		c.Message != "containers with incomplete status: [first second]" {
		t.Errorf("Initialized = %+v", c)
	}
	if row := printedPod(t, p); row[1] != "0/1" || row[2] != "Init:0/2" {
		t.Errorf("kubectl get pods = %v, want 0/1 Init:0/2", row)
	}

	// job 1 sleeps a second: then the second starts.
	n.stepAfterSleep(t, time.Second)
	p = n.waitPod(t, "init", "second running", func(p *corev1.Pod) bool { return containerStatus(p, "second").State.Running != nil })
	first := containerStatus(p, "first")
	if term := first.State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" || !first.Ready {
		t.Errorf("first after it finished: %s", describe(p))
	}
	if row := printedPod(t, p); row[2] != "Init:1/2" {
		t.Errorf("kubectl get pods STATUS = %v, want Init:1/2", row[2])
	}
	n.stepAfterSleep(t, time.Second)
	p = n.waitPod(t, "init", "Running and Ready", isRunningReady)
	second := containerStatus(p, "second").State.Terminated
	if second == nil || second.StartedAt.Time.Before(first.State.Terminated.FinishedAt.Time) {
		t.Errorf("second did not start after first finished: %s", describe(p))
	}
	if c := podCondition(p, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Initialized = %+v", c)
	}
}

func TestTerminationMessages(t *testing.T) {
	t.Run("fallback to logs on error", func(t *testing.T) {
		n := newTestNode(t)
		n.create(t, pod("crash", withImage("crash", "--after=0", "--code=2"), func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		}))
		p := n.waitPod(t, "crash", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		term := containerStatus(p, "hello").State.Terminated
		want := "crash: running; exiting with code 2 in 0s\ncrash: giving up (exit code 2)\n"
		if term == nil || term.ExitCode != 2 || term.Message != want {
			t.Fatalf("terminated = %+v, want message %q", term, want)
		}
	})
	t.Run("policy File ignores the log", func(t *testing.T) {
		n := newTestNode(t)
		n.create(t, pod("crash", withImage("crash", "--after=0"), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }))
		p := n.waitPod(t, "crash", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		if term := containerStatus(p, "hello").State.Terminated; term == nil || term.Message != "" {
			t.Fatalf("terminated = %+v, want no message", term)
		}
	})
	t.Run("the file in a volume", func(t *testing.T) {
		n := newTestNode(t)
		n.create(t, pod("msg", withImage("web", "--unhealthy"), func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			c := &p.Spec.Containers[0]
			c.TerminationMessagePath = "/data/unhealthy"
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}))
		p := n.waitPod(t, "msg", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		if term := containerStatus(p, "hello").State.Terminated; term == nil || term.Message != "unhealthy\n" {
			t.Fatalf("terminated = %+v, want the file's content", term)
		}
	})
}

func TestCreateContainerConfigError(t *testing.T) {
	tests := []struct {
		name    string
		env     func(*corev1.Container)
		message string
		fix     func(*testNode)
	}{
		{
			name: "envFrom a missing ConfigMap",
			env: func(c *corev1.Container) {
				c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
			},
			message: `configmap "settings" not found`,
			fix:     func(n *testNode) { n.createConfigMap(t, "settings", map[string]string{"A": "1"}) },
		},
		{
			name: "a missing key",
			env: func(c *corev1.Container) {
				c.Env = []corev1.EnvVar{{Name: "COLOR", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "color"}}}}
			},
			message: `couldn't find key color in ConfigMap default/settings`,
			fix: func(n *testNode) {
				cm, err := n.configMaps().Get(context.Background(), "default", "settings")
				if err != nil {
					t.Fatal(err)
				}
				cm.Data = map[string]string{"color": "blue"}
				if _, err := n.configMaps().Update(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "a missing Secret",
			env: func(c *corev1.Container) {
				c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}}
			},
			message: `secret "creds" not found`,
			fix:     func(n *testNode) { n.createSecret(t, "creds", map[string][]byte{"PASSWORD": []byte("s3cr3t")}) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNode(t)
			if tt.name == "a missing key" {
				n.createConfigMap(t, "settings", map[string]string{"shape": "round"})
			}
			n.create(t, pod("cfg", func(p *corev1.Pod) { tt.env(&p.Spec.Containers[0]) }))
			p := n.waitPod(t, "cfg", ReasonCreateContainerConfigError, func(p *corev1.Pod) bool {
				return waitingOf(p, "hello") == ReasonCreateContainerConfigError
			})
			if w := containerState(p, "hello").Waiting; w.Message != tt.message {
				t.Errorf("message = %q, want %q", w.Message, tt.message)
			}
			if !hasEvent(n.events(t, "cfg"), "Failed: Error: "+tt.message) {
				t.Errorf("events = %q", n.events(t, "cfg"))
			}
			if row := printedPod(t, p); row[2] != ReasonCreateContainerConfigError {
				t.Errorf("STATUS = %v", row[2])
			}
			// Fixed, the next try (10 s later) starts it.
			tt.fix(n)
			waitFor(t, "the kubelet's cache updated", func() bool {
				_, err := n.makeEnvironment(context.Background(), p, &p.Spec.Containers[0], "")
				return err == nil
			})
			n.clk.Step(sandboxRetryDelay)
			n.waitPod(t, "cfg", "Running", isRunningReady)
		})
	}
}

// TestDownwardAPIEnv checks the container's environment as the guest sees
// it: the config image prints it.
func TestDownwardAPIEnv(t *testing.T) {
	n := newTestNode(t)
	n.createConfigMap(t, "settings", map[string]string{"COLOR": "blue", "SIZE": "L"})
	n.createSecret(t, "creds", map[string][]byte{"password": []byte("s3cr3t")})
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web-svc", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}, Selector: map[string]string{"app": "web"}},
	}
	svc, err := client.For[*corev1.Service](n.c, "", "services").Create(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	created := n.create(t, pod("dapi", withImage("config", "--rounds=1", "/nothing"), func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		c := &p.Spec.Containers[0]
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		c.EnvFrom = []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
		field := func(path string) *corev1.EnvVarSource {
			return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
		}
		c.Env = []corev1.EnvVar{
			{Name: "MY_POD", ValueFrom: field("metadata.name")},
			{Name: "MY_NAMESPACE", ValueFrom: field("metadata.namespace")},
			{Name: "MY_IP", ValueFrom: field("status.podIP")},
			{Name: "MY_NODE", ValueFrom: field("spec.nodeName")},
			{Name: "MY_MEM_MIB", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "MY_CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
			{Name: "CFG_SIZE", Value: "XL"}, // env overrides envFrom
			{Name: "WHERE", Value: "$(MY_POD)@$(MY_NODE) via $(WEB_SVC_SERVICE_HOST)"},
		}
	}))
	n.waitPod(t, "dapi", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	out, err := n.logs(t, created, nil)
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	for _, want := range []string{
		"env HOSTNAME=dapi", "env CFG_COLOR=blue", "env CFG_SIZE=XL", "env MY_POD=dapi", "env MY_NAMESPACE=default",
		"env MY_IP=10.244.1.2", "env MY_NODE=node-1", "env MY_MEM_MIB=64", "env MY_CPU=4", "env PASSWORD=s3cr3t",
		"env WHERE=dapi@node-1 via " + ip,
		"env WEB_SVC_SERVICE_HOST=" + ip, "env WEB_SVC_SERVICE_PORT=80", "env WEB_SVC_SERVICE_PORT_HTTP=80",
		"env WEB_SVC_PORT=tcp://" + ip + ":80", "env WEB_SVC_PORT_80_TCP_ADDR=" + ip,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no %q in the guest's environment:\n%s", want, out)
		}
	}
}

// TestResourceMetrics: what `kubectl top` reads. CPU is a rate between two
// samples; memory is the guest's linear memory.
func TestResourceMetrics(t *testing.T) {
	n := newTestNode(t)
	n.create(t, pod("busy", withImage("cpu"), func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "busy"}
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}
	}))
	n.create(t, pod("idle"))
	n.waitPod(t, "busy", "Running", isRunningReady)
	n.waitPod(t, "idle", "Running", isRunningReady)
	find := func(pods []metricsPod, name string) *metricsPod {
		for i := range pods {
			if pods[i].Name == name {
				return &pods[i]
			}
		}
		return nil
	}
	var node metricsNode
	var pods []metricsPod
	waitFor(t, "CPU used by the busy pod", func() bool {
		n.sampleStats()
		node, pods = n.ResourceMetrics()
		busy := find(pods, "busy")
		return busy != nil && len(busy.Containers) == 1 && busy.Containers[0].Usage.Cpu().MilliValue() > 0
	})
	busy, idle := find(pods, "busy"), find(pods, "idle")
	if idle == nil || len(pods) != 2 || busy.Namespace != "default" || busy.Labels["app"] != "busy" {
		t.Fatalf("pod metrics = %+v", pods)
	}
	mem := idle.Containers[0].Usage.Memory().Value()
	if mem <= 0 || mem%(64<<10) != 0 {
		t.Errorf("idle memory = %d, want whole wasm pages", mem)
	}
	sum := busy.Containers[0].Usage.Memory().Value() + mem
	if node.Name != "node-1" || node.Usage.Memory().Value() != sum || node.Usage.Cpu().Cmp(*busy.Containers[0].Usage.Cpu()) < 0 {
		t.Errorf("node metrics = %+v, want the sum of the pods'", node)
	}
	if node.Labels["kubernetes.io/hostname"] != "node-1" || node.Window.Duration <= 0 {
		t.Errorf("node metrics = %+v", node)
	}
	// A pod with nothing running has no metrics.
	if err := n.c.Pods().Delete(context.Background(), "default", "idle", nil); err != nil {
		t.Fatal(err)
	}
	n.waitGone(t, "idle")
	n.sampleStats()
	if _, pods := n.ResourceMetrics(); find(pods, "idle") != nil {
		t.Errorf("a deleted pod still has metrics: %+v", pods)
	}
}

type (
	metricsPod  = metricsv1beta1.PodMetrics
	metricsNode = metricsv1beta1.NodeMetrics
)
