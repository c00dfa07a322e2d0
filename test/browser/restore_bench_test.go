package browser

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRestoreTime measures the saved cluster (#11's bench line) in headless
// Chromium: a Deployment of 300 replicas, Running; the worker's save of that
// store (its own figure, ms of worker time from the store to the snapshot's
// bytes, and the snapshot's size); then a reload, and the time from the
// reload to all 300 pods Running again as the API says, with the worker's
// restore time (the saved bytes to a started cluster with its caches filled).
// It runs only when KUBETAB_BENCH_RUNS is set (at most 3 rounds here: each
// makes 600 pods) and prints medians; it asserts no wall-clock time.
func TestRestoreTime(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("KUBETAB_BENCH_RUNS"))
	if runs <= 0 {
		t.Skip("set KUBETAB_BENCH_RUNS to measure (./build.sh bench does)")
	}
	runs = min(runs, 3)
	const replicas = 300
	var saves, restores, running, sizes []float64
	for i := 0; i < runs; i++ {
		ctx, _ := newBrowser(t)
		openSite(t, ctx, siteURL)
		c := typeLine(t, ctx, fmt.Sprintf("kubectl create deployment web --image=hello --replicas=%d", replicas), 60*time.Second)
		if c.Code == nil || *c.Code != 0 {
			t.Fatalf("create deployment: %s", c.Output)
		}
		waitJS(t, ctx, fmt.Sprintf("%d web pods Running", replicas), runningWebJS+fmt.Sprintf(`.then((n) => n === %d)`, replicas), 5*time.Minute)
		waitSaved(t, ctx)
		saved := eval[map[string]any](t, ctx, `kubetab.persist.saved`)
		_ = eval[bool](t, ctx, `(() => { sessionStorage.setItem('t0', String(Date.now())); return true })()`)
		reload(t, ctx)
		waitJS(t, ctx, fmt.Sprintf("%d web pods Running after the reload", replicas), runningWebJS+fmt.Sprintf(`.then((n) => n === %d)`, replicas), 5*time.Minute)
		toRunning := eval[float64](t, ctx, `Date.now() - Number(sessionStorage.getItem('t0'))`)
		restored := eval[map[string]any](t, ctx, `kubetab.persist.restored`)
		save, _ := saved["ms"].(float64)
		wall, _ := saved["wallMs"].(float64)
		bytes, _ := saved["bytes"].(float64)
		restore, _ := restored["ms"].(float64)
		saves, sizes, restores, running = append(saves, save), append(sizes, bytes), append(restores, restore), append(running, toRunning)
		t.Logf("round %d: save %.0f ms of worker time (%.0f ms wall, with the turns it gave), %.0f bytes; restore %.0f ms in the worker; reload to %d pods Running %.0f ms",
			i+1, save, wall, bytes, restore, replicas, toRunning)
	}
	fmt.Printf("saved cluster of %d pods in Chromium (%d rounds): save %s of worker time, snapshot %.0f KB; restore %s in the worker; reload to all Running %s\n",
		replicas, runs, spread(saves, "ms"), median(sizes)/1024, spread(restores, "ms"), spread(running, "ms"))
}

// median is the middle of vs (the mean of the two middle ones for an even
// count); vs is left sorted.
func median(vs []float64) float64 {
	slices.Sort(vs)
	if len(vs) == 0 {
		return 0
	}
	if len(vs)%2 == 0 {
		return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return vs[len(vs)/2]
}

// spread prints "median U (min-max)".
func spread(vs []float64, unit string) string {
	m := median(vs)
	parts := []string{fmt.Sprintf("median %.0f %s", m, unit)}
	if len(vs) > 1 {
		parts = append(parts, fmt.Sprintf("(%.0f-%.0f)", vs[0], vs[len(vs)-1]))
	}
	return strings.Join(parts, " ")
}
