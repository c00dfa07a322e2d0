package browser

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFlowBench is issue 10's speed line in headless Chromium: the main
// thread's long tasks (over 50 ms) while a 200-replica Deployment is created
// and scheduled with the Flow tab's diagram live, from the Enter to all 200
// pods Running, each round in a fresh page. It runs only with
// KUBETAB_BENCH_RUNS set (at most 3 rounds here; `./build.sh bench`) and
// prints count and longest; it asserts no time. KUBETAB_TRACE=1 records the
// first round's timeline and logs what its long tasks are made of
// (trace_test.go); KUBETAB_CPUPROFILE=FILE writes its CPU profile.
func TestFlowBench(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("KUBETAB_BENCH_RUNS"))
	if runs <= 0 {
		t.Skip("set KUBETAB_BENCH_RUNS to measure (./build.sh bench does)")
	}
	runs = min(runs, 3)
	var counts, longest []float64
	var rounds []string
	for i := 0; i < runs; i++ {
		ctx, _ := newBrowser(t)
		openFlow(t, ctx)
		waitJS(t, ctx, "the progress bar to fade out", `document.querySelector('#loader').hidden`, 30*time.Second)
		_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
		var tr *pageTrace
		if os.Getenv("KUBETAB_TRACE") != "" && i == 0 {
			tr = startTrace(t, ctx)
		}
		var stopProfile func()
		if os.Getenv("KUBETAB_CPUPROFILE") != "" && i == 0 {
			stopProfile = startCPUProfile(t, ctx)
		}
		start := time.Now()
		c := typeLine(t, ctx, "kubectl create deployment big --image=hello --replicas=200", 60*time.Second)
		if c.Code == nil || *c.Code != 0 {
			t.Fatalf("create: %s", c.Output)
		}
		waitJS(t, ctx, "200 pods Running", `kubetab.cluster.fetch('/apis/apps/v1/namespaces/default/deployments/big').then(r => r.json()).then(d => new Promise(r => setTimeout(() => r((d.status || {}).readyReplicas === 200), 250)))`, 5*time.Minute)
		n, max := longTasks(t, ctx)
		if tr != nil {
			tr.stop(t, ctx)
		}
		if stopProfile != nil {
			stopProfile()
		}
		hops := eval[float64](t, ctx, `kubetab.flow.state().kept || 0`)
		counts, longest = append(counts, float64(n)), append(longest, max)
		rounds = append(rounds, fmt.Sprintf("%d over 50 ms, longest %.0f ms", n, max))
		t.Logf("round %d: 200 pods Running in %v with the Flow tab live (%v hops): %d main-thread long tasks, longest %.0f ms", i+1, time.Since(start).Round(100*time.Millisecond), hops, n, max)
	}
	fmt.Printf("Flow tab live while 200 pods are created and scheduled (%d rounds): main-thread long tasks %s; longest %s (rounds: %s)\n",
		runs, spread(counts, ""), spread(longest, "ms"), strings.Join(rounds, "; "))
}
