package kubectl

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
)

// cluster fills an env with two nodes, a deployment with its replica set
// and pods (one running, one pending), a pod in another namespace, and
// events: a small cluster as the controllers would leave it.
func (e *env) cluster() {
	e.t.Helper()
	e.node("node-1", true)
	n2 := e.node("node-2", false)
	n2.Spec.Unschedulable = true
	if _, err := e.store(n2).Update(context.Background(), n2, registryUpdate()); err != nil {
		e.t.Fatal(err)
	}
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	e.mustRun("create deployment web --image=hello:1.0 --replicas=2")
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: "web-7d4b9", Namespace: "default",
		Labels:          map[string]string{"app": "web", "pod-template-hash": "7d4b9"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: ptr(true)}},
	}}
	rs.Spec.Replicas = ptr(int32(2))
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "7d4b9"}}
	rs.Spec.Template = *d.Spec.Template.DeepCopy()
	rs.Spec.Template.Labels = map[string]string{"app": "web", "pod-template-hash": "7d4b9"}
	rs = e.create(rs).(*appsv1.ReplicaSet)
	e.clock.Step(5 * time.Second)
	for i, name := range []string{"web-7d4b9-x2x8q", "web-7d4b9-k5zq7"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr(true)}},
		}}
		p.Spec = *rs.Spec.Template.Spec.DeepCopy()
		p = e.create(p).(*corev1.Pod)
		if i == 0 {
			e.runPod(p, "node-1", "10.244.1.2")
			e.event(p, "Normal", "Scheduled", "Successfully assigned default/"+name+" to node-1", "default-scheduler")
			e.event(p, "Normal", "Started", "Started container hello", "kubelet")
		}
	}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, FullyLabeledReplicas: 2, ObservedGeneration: 1}
	e.setStatus(rs)
	d = e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	d.Status = appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1, ObservedGeneration: 1}
	e.setStatus(d)
	e.event(d, "Normal", "ScalingReplicaSet", "Scaled up replica set web-7d4b9 from 0 to 2", "deployment-controller")
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team-a", Labels: map[string]string{"app": "db"}}}
	other.Spec.Containers = []corev1.Container{{Name: "db", Image: "kv:2"}}
	e.create(other)
	e.clock.Step(2 * time.Minute)
}

func TestGetGolden(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
	}{
		{"get-pods", []string{
			"get pods",
			"get po -o wide",
			"get pods --show-labels",
			"get pods -A",
			"get pods -l app=web --field-selector status.phase=Running",
			"get pod web-7d4b9-x2x8q",
			"get pods/web-7d4b9-x2x8q pod/nope",
			"get pods -n team-a --no-headers",
			"get pods -n empty",
			"get pods -l app=nothing",
		}},
		{"get-other", []string{
			"get nodes",
			"get no -o wide",
			"get deploy",
			"get deployments.apps -o wide",
			"get rs",
			"get ns",
			"get events",
			"get ev -o wide",
			"get all",
			"get deploy,po",
		}},
		{"get-output", []string{
			"get ns default -o yaml",
			"get ns -o name",
			"get ns default team-a -o json",
			"get nodes -l nothing=here -o yaml",
			"get pods -o name",
		}},
		{"get-errors", []string{
			"get",
			"get foos",
			"get pods nope",
			"get pods nope --ignore-not-found",
			"get pods -o table",
			"get pods -l 'a in (b'",
			"get pods --field-selector spec.bogus=1",
			"get pod web -A",
			"get pod pod/web",
			"get pods --bogus",
			"gets pods",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cluster()
			golden(t, tc.name, e.transcript(tc.lines...))
		})
	}
}

// TestGetWatch: `get -w` prints the list, then a row for each change, and
// ends when the context is cancelled (Ctrl-C), with exit code 0.
func TestGetWatch(t *testing.T) {
	e := newEnv(t)
	e.pod("first", map[string]string{"app": "web"}, "hello")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncbuf.Buffer{}
	done := make(chan int)
	go func() {
		args, _ := SplitWords("get pods -w --output-watch-events")
		done <- e.cli.Run(ctx, args, IOStreams{Out: out, ErrOut: out})
	}()
	waitFor(t, func() bool { return strings.Contains(out.String(), "first") })
	second := e.pod("second", nil, "hello")
	waitFor(t, func() bool { return strings.Contains(out.String(), "second") })
	e.runPod(second, "node-1", "10.244.1.9")
	waitFor(t, func() bool { return strings.Contains(out.String(), "Running") })
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("get -w did not end after cancel")
	}
	golden(t, "get-watch", out.String())
}

// TestGetWatchOne: `get pod NAME -w -o name` follows one object only.
func TestGetWatchOne(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	p := e.pod("one", nil, "hello")
	e.pod("other", nil, "hello")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncbuf.Buffer{}
	done := make(chan int)
	go func() {
		done <- e.cli.Run(ctx, []string{"get", "pod", "one", "-w", "-o", "name"}, IOStreams{Out: out, ErrOut: out})
	}()
	waitFor(t, func() bool { return out.String() == "pod/one\n" })
	e.runPod(e.get(&corev1.Pod{}, "default", "other").(*corev1.Pod), "node-1", "10.244.1.8")
	e.runPod(p, "node-1", "10.244.1.7")
	waitFor(t, func() bool { return strings.Count(out.String(), "pod/one\n") == 3 }) // bind, then status
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out.String(), "other") {
		t.Fatalf("watched another pod: %q", out.String())
	}
	if _, stderr, code := e.run("get pod nope -w"); code != 1 || stderr != "Error from server (NotFound): pods \"nope\" not found\n" {
		t.Fatalf("watch of a missing pod: %d %q", code, stderr)
	}
}
