package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/internal/syncbuf"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/wasm/images"
)

// `kubectl drain` against a PodDisruptionBudget: a Deployment of 3 on
// node-1 with minAvailable 2 loses at most one pod at a time. The first
// eviction is allowed; the others get 429 and drain retries them every 5
// seconds until the disruption controller has seen a replacement Ready on
// node-2. The drain ends once all three have moved.
func TestDrainHonoursDisruptionBudget(t *testing.T) {
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Nodes: 2})
	cl := c.Client("test")
	tr := kubectl.InProcessTransport(c.Handler())
	run := func(line string, out, errOut *syncbuf.Buffer) int {
		args, err := kubectl.SplitWords(line)
		if err != nil {
			t.Fatal(err)
		}
		return kubectl.Run(context.Background(), args, kubectl.IOStreams{Out: out, ErrOut: errOut}, tr)
	}
	must := func(line string) {
		var out, errOut syncbuf.Buffer
		if code := run(line, &out, &errOut); code != 0 {
			t.Fatalf("kubectl %s: %d %s %s", line, code, out.String(), errOut.String())
		}
	}

	// All three replicas on node-1: node-2 takes nothing yet.
	eventually(t, 60*time.Second, "node-2 registered", func() (bool, string) {
		_, err := cl.Nodes().Get(ctx, "", "node-2")
		return err == nil, fmt.Sprint(err)
	})
	must("cordon node-2")
	must("create deployment web --image=hello --replicas=3")
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	ready := func(node string) (n int, state string) {
		pods, _, _ := cl.Pods().List(ctx, "default", client.ListOptions{LabelSelector: web})
		var s []string
		for _, p := range pods {
			s = append(s, fmt.Sprintf("%s@%s:%s/%v/deleting=%v", p.Name, p.Spec.NodeName, p.Status.Phase, isReady(p), p.DeletionTimestamp != nil))
			if p.Spec.NodeName == node && isReady(p) && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n, strings.Join(s, " ")
	}
	eventually(t, 60*time.Second, "3 Ready pods on node-1", func() (bool, string) {
		n, s := ready("node-1")
		return n == 3, s
	})

	pdbs := client.For[*policyv1.PodDisruptionBudget](cl, policyv1.GroupName, "poddisruptionbudgets")
	two := intstr.FromInt32(2)
	if _, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the budget allows 1", func() (bool, string) {
		p, err := pdbs.Get(ctx, "default", "web")
		if err != nil {
			return false, err.Error()
		}
		return p.Status.ObservedGeneration == 1 && p.Status.DisruptionsAllowed == 1 && p.Status.CurrentHealthy == 3,
			fmt.Sprintf("%+v", p.Status)
	})
	var out, errOut, table syncbuf.Buffer
	run("get pdb", &table, &errOut)
	if !regexp.MustCompile(`(?m)^NAME +MIN AVAILABLE +MAX UNAVAILABLE +ALLOWED DISRUPTIONS +AGE\nweb +2 +N/A +1 +\d+s$`).MatchString(table.String()) {
		t.Errorf("kubectl get pdb:\n%s", table.String())
	}

	// Watch the Deployment's pods: Ready and not being deleted is healthy.
	list, rv, err := cl.Pods().List(ctx, "default", client.ListOptions{LabelSelector: web})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cl.Pods().Watch(ctx, "default", client.ListOptions{LabelSelector: web, ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	healthy := map[string]bool{}
	for _, p := range list {
		healthy[p.Name] = isReady(p) && p.DeletionTimestamp == nil
	}
	minHealthy := make(chan int, 1)
	go func() {
		lowest := 3
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			healthy[p.Name] = ev.Type != watch.Deleted && isReady(p) && p.DeletionTimestamp == nil
			n := 0
			for _, h := range healthy {
				if h {
					n++
				}
			}
			lowest = min(lowest, n)
		}
		minHealthy <- lowest
	}()

	// Cordon node-1 before the drain does, and wait until the scheduler
	// knows: otherwise the first replacement may still be bound to node-1
	// by a scheduler whose cache has not seen the cordon yet.
	must("cordon node-1")
	// A probe pod tells when the scheduler has seen the cordon: once it is
	// Unschedulable on both nodes. A probe bound before the cordon reached
	// the scheduler proves nothing: it is deleted and another one tried.
	probes := 0
	eventually(t, 60*time.Second, "a probe pod unschedulable on both nodes", func() (bool, string) {
		name := fmt.Sprintf("probe-%d", probes)
		p, err := cl.Pods().Get(ctx, "default", name)
		if apierrors.IsNotFound(err) {
			probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}
			_, err = cl.Pods().Create(ctx, probe)
			return false, fmt.Sprint("created ", name, err)
		}
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			if err := cl.Pods().Delete(ctx, "default", name, nil); err != nil {
				t.Fatal(err)
			}
			probes++
			return false, name + " was bound to " + p.Spec.NodeName + " before the scheduler saw the cordon"
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				return c.Reason == corev1.PodReasonUnschedulable && strings.Contains(c.Message, "2 node(s) were unschedulable"), c.Message
			}
		}
		return false, "not tried yet"
	})
	if err := cl.Pods().Delete(ctx, "default", fmt.Sprintf("probe-%d", probes), nil); err != nil {
		t.Fatal(err)
	}

	done := make(chan int, 1)
	go func() { done <- run("drain node-1", &out, &errOut) }()
	retry := regexp.MustCompile(`error when evicting pods/"web-[a-z0-9-]+" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\.`)
	eventually(t, 60*time.Second, "an eviction refused and retried", func() (bool, string) {
		return retry.MatchString(errOut.String()), out.String() + errOut.String()
	})
	if n, s := ready("node-1"); n != 2 {
		t.Fatalf("while the budget is spent: %d Ready pods left on node-1, want 2: %s", n, s)
	}
	must("uncordon node-2") // the replacements may start now

	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "node/node-1 drained") || strings.Count(out.String(), " evicted\n") != 3 {
			t.Fatalf("drain: %d\n%s\n%s", code, out.String(), errOut.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("drain did not finish:\n%s\n%s", out.String(), errOut.String())
	}
	eventually(t, 60*time.Second, "3 Ready pods on node-2", func() (bool, string) {
		n, s := ready("node-2")
		return n == 3, s
	})
	w.Stop()
	if lowest := <-minHealthy; lowest < 2 {
		t.Errorf("the Deployment went down to %d healthy pods; the budget keeps 2", lowest)
	}
	t.Logf("drain output:\n%s%s", out.String(), errOut.String())
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
