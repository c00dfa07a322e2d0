package kubectl

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
)

// TestRun: kubectl run creates a bare pod labelled run=NAME (and with
// --expose a service for it), prints or dry-runs it, and refuses bad flags
// with upstream's words before it sends anything.
func TestRun(t *testing.T) {
	e := newEnv(t)
	e.create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	out := e.transcript(
		"run web --image=hello",
		"run web --image=hello",
		"run site --image=web --port=8080 --expose",
		"run api --image=registry.example/team/hello-api:2.1 --env=MODE=fast --env=EMPTY= --labels=app=api,tier=back --annotations=owner=team-a --image-pull-policy=IfNotPresent --restart=Never -- --ticks=3",
		"run taken --image=hello --port=80 --expose",
		"run named --image=hello -o name",
		"run multi --image=hello --port=80 --labels=app=multi,tier=x --env=A=1 --annotations=x=y --command --dry-run=client -o yaml --expose -- sh -c echo",
		"run preview --image=hello --dry-run=server",
		"run preview --image=hello:1.0 --privileged --dry-run=client -o json",
		"run preview --image=hello -n team-b --dry-run=client -o yaml",
		`run pinned --image=hello --overrides='{"spec":{"nodeName":"node-2"}}' --dry-run=client -o yaml`,
		`run pinned --image=hello --override-type=json --overrides='[{"op":"add","path":"/spec/nodeName","value":"n"}]' --dry-run=client -o jsonpath={.spec.nodeName}`,
		`run pinned --image=hello --override-type=strategic --overrides='{"spec":{"containers":[{"name":"pinned","image":"hello:2.0"}]}}' --dry-run=client -o jsonpath={.spec.containers[*].image}`,
	)
	e.takeWrites()
	out += e.transcript(
		"run",
		"run -- hello",
		"run x",
		"run x --image=",
		"run x --image=Bad..Image",
		"run x --image=hello -t",
		"run x --image=hello --expose",
		"run x --image=hello --restart=Sometimes",
		"run x --image=hello --rm",
		"run x --image=hello --rm -i --dry-run=client",
		"run x --image=hello --image-pull-policy=Sometimes",
		"run x --image=hello --env=FOO",
		"run x --image=hello --env=1A=b",
		"run x --image=hello --labels=a",
		"run x --image=hello --labels==b",
		"run x --image=hello --annotations=a --annotations==b",
		"run x --image=hello --port=http",
		"run x --image=hello --pod-running-timeout=0",
		"run x --image=hello --dry-run=maybe",
		"run x --image=hello -o bogus",
		`run x --image=hello --overrides='{"spec":'`,
		"run x --image=hello --override-type=bogus --overrides={}",
	)
	if w := e.takeWrites(); len(w) != 0 {
		t.Errorf("bad flags sent %v", w)
	}
	out += e.transcript("run Bad_Name --image=hello")
	golden(t, "run", out)

	web := e.get(&corev1.Pod{}, "default", "web").(*corev1.Pod)
	c := web.Spec.Containers[0]
	if web.Labels["run"] != "web" || c.Name != "web" || c.Image != "hello" || len(web.OwnerReferences) != 0 ||
		web.Spec.RestartPolicy != corev1.RestartPolicyAlways || len(c.Args)+len(c.Command)+len(c.Ports) != 0 {
		t.Errorf("run web made %+v", web)
	}
	if p := e.get(&corev1.Pod{}, "default", "api").(*corev1.Pod); p.Labels["app"] != "api" || p.Labels["run"] != "" ||
		p.Annotations["owner"] != "team-a" || p.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		strings.Join(p.Spec.Containers[0].Args, " ") != "--ticks=3" || len(p.Spec.Containers[0].Env) != 2 ||
		p.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("run api made %+v", p)
	}
	svc := e.get(&corev1.Service{}, "default", "site").(*corev1.Service)
	if svc.Spec.Selector["run"] != "site" || len(svc.Labels) != 0 || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) {
		t.Errorf("run --expose made %+v", svc)
	}
	// The pod stays when its service could not be made, as upstream.
	e.get(&corev1.Pod{}, "default", "taken")
	for _, name := range []string{"multi", "preview", "pinned", "x", "Bad_Name"} {
		if _, err := e.store(&corev1.Pod{}).Get(context.Background(), "default", name); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s: %v, want NotFound", name, err)
		}
	}
}

// finishPod ends a running pod's only container with code, as its
// kubelet would report it, and ends its followed log.
func (e *env) finishPod(name string, code int32) {
	e.t.Helper()
	p := e.get(&corev1.Pod{}, "default", name).(*corev1.Pod)
	now := metav1.NewTime(e.clock.Now())
	p.Status.Phase, p.Status.Conditions = corev1.PodSucceeded, nil
	reason := "Completed"
	if code != 0 {
		p.Status.Phase, reason = corev1.PodFailed, "Error"
	}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.Started = false, ptr(false)
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: now, FinishedAt: now}}
	e.setStatus(p)
	e.endLogs(name + "/" + p.Spec.Containers[0].Name)
}

// attached runs a `kubectl run --attach` command line in the background;
// the test plays scheduler and kubelet while it waits.
type attached struct {
	out, errOut *syncbuf.Buffer
	done        chan int
	cancel      context.CancelFunc
}

func (e *env) attach(line string) *attached {
	e.t.Helper()
	args, err := SplitWords(line)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &attached{out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}, done: make(chan int, 1), cancel: cancel}
	e.t.Cleanup(cancel)
	go func() { a.done <- e.cli.Run(ctx, args, IOStreams{Out: a.out, ErrOut: a.errOut}) }()
	return a
}

// exit waits for the command to end and returns its exit code.
func (a *attached) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-a.done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatalf("kubectl run did not end; printed %q %q", a.out.String(), a.errOut.String())
		return -1
	}
}

// created waits until kubectl has created the pod.
func (e *env) created(name string) *corev1.Pod {
	e.t.Helper()
	var p *corev1.Pod
	waitFor(e.t, func() bool {
		got, err := e.store(&corev1.Pod{}).Get(context.Background(), "default", name)
		p, _ = got.(*corev1.Pod)
		return err == nil
	})
	return p
}

// noAttach is what run prints when the API server cannot attach (this
// test's has no kubelet to attach with).
const noAttach = "If you don't see a command prompt, try pressing enter.\nwarning: couldn't attach to pod/%s, falling back to streaming logs: kubetab cannot attach to a running container for this request: attach streams over a WebSocket (the real kubectl against kubetab cluster) or over the bodies of a POST (kubetab's own kubectl); kubectl logs -f POD shows the output\n"

// TestRunAttach: --attach and -i wait for the pod to run, stream the
// container's log until it ends, return its exit code when the pod does
// not restart, and with --rm delete the pod.
func TestRunAttach(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	follow := func(a *attached, name, log string, code int32) {
		t.Helper()
		e.mu.Lock()
		e.logs[name+"/"+name] = log
		e.mu.Unlock()
		e.runPod(e.created(name), "node-1", "10.244.1.7")
		waitFor(t, func() bool { return strings.Contains(a.out.String(), log) }) // following now
		e.finishPod(name, code)
	}

	t.Run("rm, Never, exit 0", func(t *testing.T) {
		a := e.attach("run -i --rm --restart=Never once --image=hello -- --ticks=3")
		follow(a, "once", "Hello from once!\ntick 1\n", 0)
		if code := a.exit(t); code != 0 || a.out.String() != "Hello from once!\ntick 1\npod \"once\" deleted\n" ||
			a.errOut.String() != strings.ReplaceAll(noAttach, "%s", "once") {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
		if p, err := e.store(&corev1.Pod{}).Get(context.Background(), "default", "once"); err == nil && p.(*corev1.Pod).DeletionTimestamp == nil {
			t.Error("--rm did not delete the pod")
		}
	})
	t.Run("Never, exit 3", func(t *testing.T) {
		a := e.attach("run --attach --restart=Never fails --image=hello -- --exit=3")
		follow(a, "fails", "Hello from fails!\n", 3)
		if code := a.exit(t); code != 3 || a.out.String() != "Hello from fails!\n" ||
			a.errOut.String() != strings.ReplaceAll(noAttach, "%s", "fails")+"pod default/fails terminated (Error)\n" {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
	})
	t.Run("tty, Always, expose", func(t *testing.T) {
		a := e.attach("run -it --rm forever --image=hello --port=80 --expose")
		follow(a, "forever", "Hello from forever!\n", 0)
		if code := a.exit(t); code != 0 || a.out.String() != "service/forever created\nHello from forever!\npod \"forever\" deleted\nservice \"forever\" deleted\n" ||
			a.errOut.String() != "Unable to use a TTY - input is not a terminal or the right kind of file\n"+strings.ReplaceAll(noAttach, "%s", "forever") {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
		if _, err := e.store(&corev1.Service{}).Get(context.Background(), "default", "forever"); !apierrors.IsNotFound(err) {
			t.Errorf("--rm left the service: %v", err)
		}
	})
	t.Run("Ctrl-C with rm", func(t *testing.T) {
		a := e.attach("run -i -q --rm stopped --image=hello")
		e.mu.Lock()
		e.logs["stopped/stopped"] = "Hello from stopped!\n"
		e.mu.Unlock()
		e.runPod(e.created("stopped"), "node-1", "10.244.1.8")
		waitFor(t, func() bool { return strings.Contains(a.out.String(), "Hello from stopped!") })
		a.cancel()
		if code := a.exit(t); code != 0 || a.out.String() != "Hello from stopped!\n" {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
		if p, err := e.store(&corev1.Pod{}).Get(context.Background(), "default", "stopped"); err == nil && p.(*corev1.Pod).DeletionTimestamp == nil {
			t.Error("--rm did not delete the pod after Ctrl-C")
		}
	})
	t.Run("never runs", func(t *testing.T) {
		a := e.attach("run -i pending --image=hello --pod-running-timeout=50ms")
		if code := a.exit(t); code != 1 || a.out.String() != "" || a.errOut.String() != "error: timed out waiting for the condition\n" {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
	})
	t.Run("deleted while waiting", func(t *testing.T) {
		watches := e.watchCount()
		a := e.attach("run -i gone --image=hello")
		e.created("gone")
		waitFor(t, func() bool { return e.watchCount() > watches }) // kubectl watches the pod
		zero := int64(0)
		if _, _, err := e.store(&corev1.Pod{}).Delete(context.Background(), "default", "gone", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		if code := a.exit(t); code != 1 || a.errOut.String() != "Error from server (NotFound): pods \"\" not found\n" {
			t.Errorf("exit %d, printed %q %q", code, a.out.String(), a.errOut.String())
		}
	})
}

// TestRunAttachCompleted: a pod that ended before kubectl saw it running
// gets its log printed, with no attach attempt and no warning.
func TestRunAttachCompleted(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	e.logs["quick/quick"] = "Hello from quick!\nbye\n"
	// The pod runs and ends as soon as it is created, before kubectl
	// starts to watch it.
	cli, err := New(Config{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := InProcessTransport(e.srv).RoundTrip(req)
		if err == nil && req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/pods") {
			e.runPod(e.get(&corev1.Pod{}, "default", "quick").(*corev1.Pod), "node-1", "10.244.1.9")
			e.finishPod("quick", 0)
		}
		return resp, err
	})})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	code := cli.Run(context.Background(), []string{"run", "--attach", "--rm", "--restart=Never", "quick", "--image=hello"}, IOStreams{Out: &out, ErrOut: &errb})
	if code != 0 || out.String() != "Hello from quick!\nbye\npod \"quick\" deleted\n" || errb.String() != "" {
		t.Errorf("exit %d, printed %q %q", code, out.String(), errb.String())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
