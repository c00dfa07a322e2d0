package browser

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImageStartTime measures, for every image of the catalog, a pod's
// start in headless Chromium as a learner sees it: from the create call to
// the first byte of its log, polled through the page's bridge every 5 ms
// (the README's image table). Each image runs twice on a node, the first
// pulling (compiling) it, the second from the compiled module. busybox runs
// `echo hi` (its sh would wait for input). It runs only with
// KUBETAB_BENCH_RUNS set (rounds) and asserts no time.
func TestImageStartTime(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("KUBETAB_BENCH_RUNS"))
	if runs <= 0 {
		t.Skip("set KUBETAB_BENCH_RUNS to measure (./build.sh bench does)")
	}
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	var lines []string
	for _, image := range []string{"hello", "web", "crash", "oom", "cpu", "sleep", "config", "job", "busybox"} {
		var first, cached []float64
		for r := 0; r < runs; r++ {
			for i, into := range []*[]float64{&first, &cached} {
				if i == 0 && r > 0 {
					continue // only the first round pulls
				}
				ms := eval[float64](t, ctx, fmt.Sprintf(`(async (image, name) => {
					const headers = {Accept: 'application/json', 'Content-Type': 'application/json'};
					const c = {name: 'c', image};
					if (image === 'busybox') c.command = ['echo', 'hi'];
					const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {nodeName: 'node-1', restartPolicy: 'Never', containers: [c]}};
					const t0 = performance.now();
					const res = await kubetab.cluster.fetch('/api/v1/namespaces/default/pods', {method: 'POST', headers, body: JSON.stringify(pod)});
					if (res.status !== 201) throw new Error('create: ' + res.status);
					for (;;) {
						const log = await kubetab.cluster.fetch('/api/v1/namespaces/default/pods/' + name + '/log');
						if (log.status === 200 && (await log.text()).length > 0) return performance.now() - t0;
						await new Promise((r) => setTimeout(r, 5));
						if (performance.now() - t0 > 30000) throw new Error(name + ': no output in 30 s');
					}
				})(%q, %q)`, image, fmt.Sprintf("%s-%d-%d", image, r, i)))
				*into = append(*into, ms)
			}
		}
		line := fmt.Sprintf("%s: first (pull) %.0f ms, compiled median %.0f ms", image, first[0], percentile(cached, 0.5))
		t.Log(line)
		lines = append(lines, line)
	}
	fmt.Printf("image start in Chromium, create to first log byte (%d rounds): %s\n", runs, strings.Join(lines, "; "))
}
