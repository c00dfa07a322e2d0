package browser

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// The Store view of /registry/deployments/default/web: the tree leads to the
// key, its value reads as YAML, and the mod revision shown is the
// resourceVersion kubectl prints (the same number: kube-apiserver's
// resourceVersion is etcd's modRevision). Scaling the Deployment writes the
// key again: the history grows and the mod revision follows.
func TestStoreView(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	c := typeLine(t, ctx, "kubectl create deployment web --image=hello", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create: %q", c.Output)
	}
	click(t, ctx, `[data-view-tab="store"]`)
	const key = `[data-view="store"] [data-store-key="/registry/deployments/default/web"]`
	click(t, ctx, `[data-view="store"] [data-store-folder="/registry/deployments"]`)
	click(t, ctx, `[data-view="store"] [data-store-folder="/registry/deployments/default"]`)
	click(t, ctx, key)
	waitJS(t, ctx, "the YAML of web", `(document.querySelector('[data-view="store"] [data-store-yaml]') || {}).textContent?.includes('kind: Deployment')`, 30*time.Second)
	yaml := eval[string](t, ctx, `document.querySelector('[data-view="store"] [data-store-yaml]').textContent`)
	for _, want := range []string{"apiVersion: apps/v1\n", "  name: web\n", "  namespace: default\n", "      containers:\n      - image: hello\n"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("the YAML has no %q:\n%s", want, yaml)
		}
	}

	// sameRevision waits until the view's mod revision is what kubectl
	// prints (the controllers write the status a few times at first).
	sameRevision := func(what string) int {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			c := typeLine(t, ctx, "kubectl get deploy web -o jsonpath={.metadata.resourceVersion}", 30*time.Second)
			rv := strings.TrimSpace(c.Output)
			shown := eval[string](t, ctx, `(document.querySelector('[data-view="store"] [data-store-modrev]') || {}).textContent || ''`)
			if rv != "" && shown == rv {
				n, _ := strconv.Atoi(rv)
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the view shows mod revision %q, kubectl prints resourceVersion %q", what, shown, rv)
			}
			waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 300))`, 10*time.Second)
		}
	}
	rev := sameRevision("after create")
	writes := func() int {
		return eval[int](t, ctx, `document.querySelectorAll('[data-view="store"] .store-history [data-store-rev]').length`)
	}
	waitJS(t, ctx, "the history", fmt.Sprintf(`document.querySelector('[data-view="store"] .store-history [data-store-rev="%d"]')`, rev), 30*time.Second)
	before := writes()
	viewShots(t, ctx, "store-web", "")
	viewShots(t, ctx, "store-web-history", `[data-view="store"] .store-history`)

	c = typeLine(t, ctx, "kubectl scale deploy web --replicas=2", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("scale: %q", c.Output)
	}
	rev2 := sameRevision("after scale")
	waitJS(t, ctx, "the history to grow", fmt.Sprintf(`document.querySelector('[data-view="store"] .store-history [data-store-rev="%d"]')`, rev2), 30*time.Second)
	if rev2 <= rev || writes() <= before {
		t.Errorf("after scale: mod revision %d (was %d), %d writes kept (was %d)", rev2, rev, writes(), before)
	}
	// The newest write's diff shows the replicas change.
	diff := eval[string](t, ctx, `document.querySelector('[data-view="store"] .store-history [data-store-rev] .store-diff').textContent`)
	if !strings.Contains(diff, "+   replicas: 2") || !strings.Contains(diff, "-   replicas: 1") {
		t.Logf("the newest write's diff (it may be the controller's status write):\n%s", diff)
	}
	all := eval[string](t, ctx, `[...document.querySelectorAll('[data-view="store"] .store-history .store-diff')].map(e => e.textContent).join('\n')`)
	if !strings.Contains(all, "+   replicas: 2") || !strings.Contains(all, "-   replicas: 1") {
		t.Errorf("no write's diff shows spec.replicas going from 1 to 2:\n%s", all)
	}
	shownRev := eval[string](t, ctx, `document.querySelector('[data-view="store"] [data-store-revision]').dataset.storeRevision`)
	if n, _ := strconv.Atoi(shownRev); n < rev2 {
		t.Errorf("store revision shown %q, older than the key's mod revision %d", shownRev, rev2)
	}

	// A pointer moving on the tree holds new rows (a row appearing above
	// the one being aimed at would move it); leaving the tree draws them.
	// The hold is made long here: a loaded machine's mouse events are slow.
	_ = eval[bool](t, ctx, `(document.querySelector('[data-view="store"]').storeHold.ms = 60000, true)`)
	box := eval[[]float64](t, ctx, `(e => (e.scrollIntoView({block: 'nearest'}), (r => [r.left, r.top, r.width, r.height])(e.getBoundingClientRect())))(document.querySelector('[data-view="store"] [data-store-folder="/registry"]'))`)
	mouseMove(t, ctx, box[0]+box[2]/2, box[1]+box[3]/2)
	mouseMove(t, ctx, box[0]+box[2]/2+3, box[1]+box[3]/2+1)
	if st := eval[map[string]any](t, ctx, `document.querySelector('[data-view="store"]').storeHold.state()`); st["aiming"] != true {
		t.Fatalf("the pointer on the tree's /registry row (%v) is not aiming: %v", box, st)
	}
	const jobsFolder = `[data-view="store"] [data-store-folder="/registry/jobs"]`
	if eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector(%q)`, jobsFolder)) {
		t.Fatal("a jobs folder before any Job")
	}
	// In a namespace of its own: its pod stays out of pods/default, counted below.
	if c = typeLine(t, ctx, "kubectl create namespace side", 60*time.Second); *c.Code != 0 {
		t.Fatalf("create namespace: %q", c.Output)
	}
	c = typeLine(t, ctx, "kubectl create job held --image=hello -n side", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create job: %q", c.Output)
	}
	waitJS(t, ctx, "the Job's key in the view", `document.querySelector('[data-view="store"]').storeHold.has('/registry/jobs/side/held')`, 30*time.Second)
	if eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector(%q)`, jobsFolder)) {
		t.Error("a new folder row appeared while the pointer was moving on the tree")
	}
	mouseMove(t, ctx, 2, 2) // off the panel: the tree draws what waited
	waitJS(t, ctx, "the jobs folder once the pointer left", fmt.Sprintf(`!!document.querySelector(%q)`, jobsFolder), 10*time.Second)
	_ = eval[bool](t, ctx, `(document.querySelector('[data-view="store"]').storeHold.ms = 1200, true)`)

	// 100 pods created with the store view open and the pods folder open:
	// the main thread's long tasks.
	// Open the folders (a click toggles: one already open stays open).
	for _, folder := range []string{"/registry/pods", "/registry/pods/default"} {
		sel := fmt.Sprintf(`[data-view="store"] [data-store-folder=%q]`, folder)
		waitJS(t, ctx, folder+" in the tree", fmt.Sprintf(`document.querySelector(%q)`, sel), 30*time.Second)
		// The element's own click: the tree redraws as keys arrive (events,
		// leases), and a mouse click at a row's old position can land on
		// its neighbour.
		eval[bool](t, ctx, fmt.Sprintf(`(e => (e.getAttribute('aria-expanded') !== 'true' && e.click(), true))(document.querySelector(%q))`, sel))
		waitJS(t, ctx, folder+" open", fmt.Sprintf(`document.querySelector(%q).getAttribute('aria-expanded') === 'true'`, sel), 10*time.Second)
	}
	_ = eval[bool](t, ctx, `(s => (s.frames = 0, s.totalMs = 0, s.maxMs = 0, true))(document.querySelector('[data-view="store"]').storeStats)`)
	_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
	start := time.Now()
	c = typeLine(t, ctx, "kubectl create deployment many --image=hello --replicas=100", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create many: %q", c.Output)
	}
	waitJS(t, ctx, "100 pods ready", `kubetab.cluster.fetch('/apis/apps/v1/namespaces/default/deployments/many').then(r => r.json()).then(d => new Promise(r => setTimeout(() => r((d.status || {}).readyReplicas === 100), 500)))`, 240*time.Second)
	waitJS(t, ctx, "the tree to show them", `document.querySelectorAll('[data-view="store"] [data-store-key^="/registry/pods/default/many-"]').length === 100`, 30*time.Second)
	n, longest := longTasks(t, ctx)
	stats := eval[map[string]float64](t, ctx, `document.querySelector('[data-view="store"]').storeStats`)
	t.Logf("100 pods created and Running in %v with the store view open (pods folder open): %d main-thread long tasks, longest %.0f ms; the view redrew %.0f times, %.0f ms in all, longest %.1f ms",
		time.Since(start).Round(100*time.Millisecond), n, longest, stats["frames"], stats["totalMs"], stats["maxMs"])
}

// mouseMove moves the mouse to (x, y) in CSS pixels, as a learner's pointer.
func mouseMove(t *testing.T, ctx context.Context, x, y float64) {
	t.Helper()
	if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
}
