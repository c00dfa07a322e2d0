package browser

import (
	"strings"
	"testing"
	"time"
)

// TestMemoryHog is #15's guest memory in Chromium, where every guest
// lives in the tab's one wasm heap: a memory hog without a limit on
// node-1 (512Mi) is evicted by node-1's kubelet once less than 100Mi is
// available, the node is tainted memory-pressure, the other pod on node-1
// keeps running, and a hog under a 16Mi limit is OOMKilled (137) there.
// The tab lives on: the console still answers.
func TestMemoryHog(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	run := func(line string) command {
		t.Helper()
		c := typeLine(t, ctx, line, 60*time.Second)
		if *c.Code != 0 {
			t.Fatalf("%s: code %d, output %q", line, *c.Code, c.Output)
		}
		return c
	}
	// poll runs line until its output contains want.
	poll := func(line, want string, timeout time.Duration) string {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			c := typeLine(t, ctx, line, 60*time.Second)
			if strings.Contains(c.Output, want) {
				return c.Output
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never printed %q; last output:\n%s", line, want, c.Output)
			}
			waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 1000))`, 10*time.Second)
		}
	}
	const onNode1 = `--overrides='{"apiVersion":"v1","spec":{"nodeName":"node-1"}}'`
	run("kubectl run quiet --image=hello " + onNode1)
	poll("kubectl get pod quiet", "Running", 90*time.Second)
	run("kubectl run hog --image=oom " + onNode1 + " -- --step-ms=0 --max-mib=440 --hold")
	run(`kubectl run limited --image=oom --restart=Never --overrides='{"apiVersion":"v1","spec":{"nodeName":"node-2","containers":[{"name":"limited","image":"oom","args":["--step-ms=0"],"resources":{"limits":{"memory":"16Mi"}}}]}}'`)

	poll("kubectl get pod hog -o jsonpath={.status.reason}", "Evicted", 180*time.Second)
	msg := run("kubectl get pod hog -o jsonpath={.status.message}").Output
	if !strings.Contains(msg, "The node was low on resource: memory. Threshold quantity: 100Mi, available: ") || !strings.Contains(msg, "Container hog was using ") {
		t.Errorf("the hog's message: %q", msg)
	}
	poll("kubectl get node node-1 -o jsonpath={.spec.taints[*].key}", "node.kubernetes.io/memory-pressure", 60*time.Second)
	if out := run("kubectl get pod quiet -o jsonpath={.status.phase}/{.status.containerStatuses[0].restartCount}").Output; !strings.Contains(out, "Running/0") {
		t.Errorf("quiet: %q", out)
	}
	poll("kubectl get pod limited -o jsonpath={.status.containerStatuses[0].state.terminated.reason}/{.status.containerStatuses[0].state.terminated.exitCode}", "OOMKilled/137", 120*time.Second)
	run("kubectl get pods -o wide")
}
