package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubectl"
)

// The in-browser kubectl's top and exec against a running cluster: the
// kubelets' metrics through metrics.k8s.io, and a command run in a pod.
func TestConsoleTopAndExec(t *testing.T) {
	c, ctx := startCluster(t)
	cl := c.Client("test")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hi", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
	}
	if _, err := cl.Pods().Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the pod Running", func() (bool, string) {
		p, err := cl.Pods().Get(ctx, "default", "hi")
		return err == nil && p.Status.Phase == corev1.PodRunning, fmt.Sprint(err)
	})
	tr := kubectl.InProcessTransport(c.Handler())
	run := func(line string) (string, string, int) {
		args, err := kubectl.SplitWords(line)
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := kubectl.Run(context.Background(), args, kubectl.IOStreams{Out: &out, ErrOut: &errb}, tr)
		return out.String(), errb.String(), code
	}

	eventually(t, 30*time.Second, "kubectl top pods", func() (bool, string) {
		out, errs, code := run("top pods")
		return code == 0 && regexp.MustCompile(`(?m)^NAME +CPU\(cores\) +MEMORY\(bytes\)\s*\nhi +\d+m +\d+Mi`).MatchString(out), out + errs
	})
	out, errs, code := run("top nodes")
	if code != 0 || !regexp.MustCompile(`(?m)^node-1 +\d+m +\d+% +\d+Mi +\d+%`).MatchString(out) {
		t.Errorf("top nodes: %d %q %q", code, out, errs)
	}

	out, errs, code = run("exec hi -- hello --ticks=0 --exit=2")
	if code != 2 || !strings.Contains(out, "Hello from hi!") || errs != "command terminated with exit code 2\n" {
		t.Errorf("exec exiting 2: %d %q %q", code, out, errs)
	}
	out, errs, code = run("exec hi -c hello -- hello --ticks=0")
	if code != 0 || !strings.Contains(out, "Hello from hi!") {
		t.Errorf("exec: %d %q %q", code, out, errs)
	}
	if _, errs, code = run("exec hi hello"); code != 1 || !strings.Contains(errs, "Use exec [POD] -- [COMMAND] instead") {
		t.Errorf("exec without --: %d %q", code, errs)
	}
	if _, errs, code = run("exec nope -- hello"); code != 1 || !strings.Contains(errs, `pods "nope" not found`) {
		t.Errorf("exec into a missing pod: %d %q", code, errs)
	}
}

// kubectl drain: cordon, evict through pods/eviction, wait; the Deployment's
// pods come back on the other nodes.
func TestConsoleDrain(t *testing.T) {
	c, ctx := startCluster(t)
	cl := c.Client("test")
	tr := kubectl.InProcessTransport(c.Handler())
	run := func(line string) (string, string, int) {
		args, _ := kubectl.SplitWords(line)
		var out, errb bytes.Buffer
		code := kubectl.Run(context.Background(), args, kubectl.IOStreams{Out: &out, ErrOut: &errb}, tr)
		return out.String(), errb.String(), code
	}
	if _, errs, code := run("create deployment web --image=hello --replicas=6"); code != 0 {
		t.Fatal(errs)
	}
	lone := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lone", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
	}
	if _, err := cl.Pods().Create(ctx, lone); err != nil {
		t.Fatal(err)
	}
	running := func(node string) (n int, total int) {
		pods, _, _ := cl.Pods().List(ctx, "default", client.ListOptions{})
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				total++
				if p.Spec.NodeName == node {
					n++
				}
			}
		}
		return n, total
	}
	eventually(t, 60*time.Second, "7 pods Running", func() (bool, string) {
		_, total := running("")
		return total == 7, fmt.Sprint(total)
	})

	out, errs, code := run("drain node-1")
	if code != 1 || !strings.Contains(out, "node/node-1 cordoned") ||
		!strings.Contains(errs, "cannot delete Pods that declare no controller (use --force to override): default/lone") {
		t.Fatalf("drain without --force: %d %q %q", code, out, errs)
	}
	out, errs, code = run("drain node-1 --force --grace-period=0")
	if code != 0 || !strings.Contains(out, "node/node-1 already cordoned") || !strings.Contains(out, "node/node-1 drained") ||
		!strings.Contains(out, "evicting pod default/lone") {
		t.Fatalf("drain --force: %d %q %q", code, out, errs)
	}
	eventually(t, 60*time.Second, "6 web pods Running elsewhere", func() (bool, string) {
		onNode1, total := running("node-1")
		return onNode1 == 0 && total == 6, fmt.Sprint(onNode1, total)
	})
}
