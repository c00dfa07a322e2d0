package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The Flow view (site/src/views/flow): the seeds' diagram with the cluster's
// hops drawn on it, and step mode.

// openFlow opens the site and the Flow tab, and waits for its hop watch.
func openFlow(t *testing.T, ctx context.Context) {
	t.Helper()
	openSite(t, ctx, siteURL)
	_ = eval[bool](t, ctx, `kubetab.views.show('flow'), true`)
	waitJS(t, ctx, "the flow view's hop watch", `kubetab.flow && kubetab.flow.state().stream === 'live'`, 30*time.Second)
}

// flowJS is evaluated in the page: helpers over the flow view's hooks.
const flowJS = `
window.__flow = {
  drawn() {
    return [...document.querySelectorAll('[data-view=flow] svg [data-hop]')].map(e => [e.dataset.from, e.dataset.to]);
  },
  // The hops the diagram has drawn, as the issue names them.
  missing() {
    const d = this.drawn();
    const has = (f, t) => d.some(([a, b]) => f(a) && t(b));
    const is = (n) => (x) => x === n;
    const pre = (p) => (x) => x.startsWith(p);
    const want = {
      'kubectl → kube-apiserver': has(is('kubectl'), is('kube-apiserver')),
      'kube-apiserver → etcd': has(is('kube-apiserver'), is('etcd')),
      'kube-apiserver → deployment-controller': has(is('kube-apiserver'), is('deployment-controller')),
      'deployment-controller → kube-apiserver': has(is('deployment-controller'), is('kube-apiserver')),
      'kube-apiserver → replicaset-controller': has(is('kube-apiserver'), is('replicaset-controller')),
      'replicaset-controller → kube-apiserver': has(is('replicaset-controller'), is('kube-apiserver')),
      'kube-apiserver → kube-scheduler': has(is('kube-apiserver'), is('kube-scheduler')),
      'kube-scheduler → kube-apiserver': has(is('kube-scheduler'), is('kube-apiserver')),
      'kube-apiserver → kubelet': has(is('kube-apiserver'), pre('kubelet/')),
      'kubelet → cni': has(pre('kubelet/'), is('cni')),
      'kubelet → cri': has(pre('kubelet/'), is('cri')),
    };
    return Object.entries(want).filter(([, ok]) => !ok).map(([k]) => k);
  },
  // Every listed hop (the list has only the rows in sight in the DOM).
  rows() {
    return kubetab.flow.rows();
  },
  // The rows in the DOM, as drawn.
  drawnRows() {
    return [...document.querySelectorAll('[data-view=flow] .flow-list li')].map(li => li.querySelector('.who').textContent + ' ' + li.querySelector('.what').textContent);
  },
  // The number on the list's first row, scrolled to the top.
  async firstNumber() {
    const box = document.querySelector('[data-view=flow] .flow-scroll');
    box.scrollTop = 0;
    for (let frame = 0; frame < 120; frame++) {
      await new Promise(r => requestAnimationFrame(r));
      const li = [...box.querySelectorAll('li[data-seq]')].find(li => li.style.transform === 'translateY(0px)');
      if (li) return li.querySelector('.n').textContent;
    }
    return '';
  },
  // Scroll the list to the first hop whose row has all of parts, as a
  // learner would, and click its row.
  async clickRow(...parts) {
    const box = document.querySelector('[data-view=flow] .flow-scroll');
    for (let attempt = 0; attempt < 20; attempt++) {
      const i = kubetab.flow.rows().findIndex(r => parts.every(p => r.includes(p)));
      if (i < 0) return false;
      box.scrollTop = Math.max(0, i * 34 - 40);
      for (let frame = 0; frame < 10; frame++) {
        await new Promise(r => requestAnimationFrame(r));
        const li = [...box.querySelectorAll('li[data-seq]')].find(li => parts.every(p => li.textContent.includes(p)));
        if (li) {
          li.click();
          return true;
        }
      }
    }
    return false;
  },
  set(sel, value) {
    const e = document.querySelector('[data-view=flow] ' + sel);
    e.value = value;
    e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
    e.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
    return true;
  },
  pending() {
    return [...document.querySelectorAll('[data-view=flow] [data-step-pending]')]
      .filter(e => e.offsetParent !== null)
      .map(e => ({id: Number(e.dataset.stepPending), component: e.dataset.component, verb: e.dataset.verb, resource: e.dataset.resource, text: e.textContent}));
  },
  runningPods(prefix) {
    return [...kubetab.cache.items('/api/v1/pods').values()].filter(p => p.metadata.name.startsWith(prefix) && p.status && p.status.phase === 'Running').length;
  },
};
true`

// TestFlowDiagram: after kubectl create deployment web --replicas=3 typed in
// the console, the diagram has drawn hops through kube-apiserver, etcd, the
// deployment and replicaset controllers, the scheduler and a kubelet, the
// list has them in the seeds' order, a hop's detail shows its request line,
// status, key, revision, who was told and the object's YAML, and following
// web replays its story from its creation.
func TestFlowDiagram(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openFlow(t, ctx)
	_ = eval[bool](t, ctx, flowJS)
	_ = eval[bool](t, ctx, `__flow.set('[data-play=speed]', '4')`)

	c := typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=3", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create deployment: %q", c.Output)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`__flow.missing().length === 0`,
		chromedp.WithPollingTimeout(120*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the diagram never drew %v (drawn: %v)", eval[[]string](t, ctx, `__flow.missing()`), eval[[][]string](t, ctx, `__flow.drawn()`))
	}

	// The list is in the order things happened, numbered from 1.
	rows := eval[[]string](t, ctx, `__flow.rows()`)
	if len(rows) == 0 || !strings.HasPrefix(rows[0], "kubectl → kube-apiserver create deployments default/web") {
		t.Fatalf("the first hop listed is %q, want kubectl's create", rows)
	}
	if n := eval[string](t, ctx, `__flow.firstNumber()`); n != "1" {
		t.Errorf("the first hop is numbered %q, want 1", n)
	}
	order := []string{
		"kubectl → kube-apiserver create deployments",
		"kube-apiserver → deployment-controller ADDED deployments",
		"deployment-controller → kube-apiserver create replicasets",
		"kube-apiserver → replicaset-controller ADDED replicasets",
		"replicaset-controller → kube-apiserver create pods",
		"kube-apiserver → kube-scheduler ADDED pods",
		"kube-scheduler → ⚖ → node-",
		"kube-scheduler → kube-apiserver create pods/binding",
		"→ cni ADD default/web-",
		"→ cri StartContainer default/web-",
	}
	at := 0
	for _, want := range order {
		found := -1
		for i := at; i < len(rows); i++ {
			if strings.Contains(rows[i], want) {
				found = i
				break
			}
		}
		if found < 0 {
			t.Fatalf("no %q after row %d in the list:\n%s", want, at, strings.Join(rows, "\n"))
		}
		at = found
	}

	// Click the deployment controller's create: its detail.
	if !eval[bool](t, ctx, `__flow.clickRow('deployment-controller → kube-apiserver', 'create replicasets')`) {
		t.Fatalf("no row of the deployment controller's create to click:\n%s", strings.Join(eval[[]string](t, ctx, `__flow.rows()`), "\n"))
	}
	waitJS(t, ctx, "the hop's YAML", `document.querySelector('[data-view=flow] .flow-detail pre.yaml') && document.querySelector('[data-view=flow] .flow-detail pre.yaml').textContent.includes('kind: ReplicaSet')`, 30*time.Second)
	detail := eval[string](t, ctx, `document.querySelector('[data-view=flow] .flow-detail').innerText`)
	for _, want := range []string{
		"POST /apis/apps/v1/namespaces/default/replicasets",
		"201 Created",
		"/registry/replicasets/default/web-",
		"replicaset-controller", // told by watch
		"YAML at revision",
		"name: web",
		"This write created the object", // no earlier version to compare
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the hop's detail has no %q:\n%s", want, detail)
		}
	}
	// A binding writes the pod again: its detail shows what changed, the
	// node the scheduler chose, against the version before.
	if !eval[bool](t, ctx, `__flow.clickRow('kube-scheduler → kube-apiserver', 'binding')`) {
		t.Fatal("no row of a binding to click")
	}
	waitJS(t, ctx, "the binding's change: + nodeName", `(p => p && /^\+ +nodeName: node-\d/m.test(p.textContent))(document.querySelector('[data-view=flow] .flow-detail pre.flow-diff'))`, 30*time.Second)
	if title := eval[string](t, ctx, `document.querySelector('[data-view=flow] .flow-detail .flow-diff-title').textContent`); !strings.Contains(title, "What this write changed (from revision ") {
		t.Errorf("the change's title is %q", title)
	}

	// Follow web: only its hops and its descendants', from its creation.
	_ = eval[bool](t, ctx, `__flow.set('[data-flow=follow]', 'web')`)
	waitJS(t, ctx, "following web", `kubetab.flow.state().follow === 'web'`, 10*time.Second)
	rows = eval[[]string](t, ctx, `__flow.rows()`)
	if len(rows) == 0 || !strings.HasPrefix(rows[0], "kubectl → kube-apiserver create deployments default/web") {
		t.Fatalf("following web, the first hop is %q", rows)
	}
	for _, r := range rows {
		if !strings.Contains(r, " default/web") && !strings.Contains(r, "/registry/") && !strings.Contains(r, "/default/web") {
			t.Errorf("following web lists a hop of something else: %q", r)
		}
	}
	if st := eval[string](t, ctx, `kubetab.flow.state().mode`); st != "play" && st != "live" {
		t.Errorf("following web: playback mode %q, want play (the replay from its creation)", st)
	}
	// Step back and forward move the drawn hop.
	jsClick := func(sel string) {
		_ = eval[bool](t, ctx, `document.querySelector('[data-view=flow] `+sel+`').click(), true`)
	}
	// The replay draws its first hops (8 a second at 4×) before the pause.
	waitJS(t, ctx, "the replay's first hops", `kubetab.flow.state().cursor >= 1`, 30*time.Second)
	if eval[string](t, ctx, `kubetab.flow.state().mode`) != "paused" {
		jsClick(`[data-play=toggle]`)
	}
	waitJS(t, ctx, "paused", `kubetab.flow.state().mode === 'paused'`, 10*time.Second)
	before := eval[int](t, ctx, `kubetab.flow.state().cursor`)
	jsClick(`[data-play=back]`)
	if got := eval[map[string]any](t, ctx, `kubetab.flow.state()`); got["cursor"] != float64(before-1) {
		t.Fatalf("step back from %d: %v", before, got)
	}
	jsClick(`[data-play=forward]`)
	if got := eval[map[string]any](t, ctx, `kubetab.flow.state()`); got["cursor"] != float64(before) {
		t.Fatalf("step forward to %d: %v", before, got)
	}
}

// TestFlowStepMode: with step mode on, the Deployment's creation waits at
// the API server hop by hop: the pending write names the deployment
// controller creating a ReplicaSet, then Step shows the ReplicaSet
// controller's pod creates and the scheduler's bindings in order, and
// Continue lets the three pods run.
func TestFlowStepMode(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openFlow(t, ctx)
	_ = eval[bool](t, ctx, flowJS)

	click(t, ctx, `[data-view=flow] [data-flow=stepmode]`)
	waitJS(t, ctx, "step mode on", `document.querySelector('[data-view=flow] .flow-step').dataset.stepmode === 'on'`, 30*time.Second)
	c := typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=3", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create deployment with step mode on (kubectl's own write is never held): %q", c.Output)
	}
	waitJS(t, ctx, "the deployment controller's ReplicaSet create to wait",
		`__flow.pending().some(p => p.component === 'deployment-controller' && p.verb === 'create' && p.resource === 'replicasets.apps' && p.text.includes('web-'))`, 60*time.Second)
	waitJS(t, ctx, "the diagram to show who waits", `document.querySelector('[data-view=flow] svg .box.pending[data-component=deployment-controller]')`, 10*time.Second)
	if n := eval[int](t, ctx, `__flow.runningPods('web-') + [...kubetab.cache.items('/api/v1/pods').keys()].filter(k => k.startsWith('default/web-')).length`); n != 0 {
		t.Fatalf("%d web pods exist while the ReplicaSet's create waits", n)
	}
	saveFlowShots(t, ctx, "step")

	type pw struct {
		ID        int    `json:"id"`
		Component string `json:"component"`
		Verb      string `json:"verb"`
		Resource  string `json:"resource"`
		Text      string `json:"text"`
	}
	var released []pw
	podCreates, bindings := 0, 0
	firstCreate, firstBinding := -1, -1
	for step := 0; step < 200 && (podCreates < 3 || bindings < 3); step++ {
		var next []pw
		if err := json.Unmarshal([]byte(eval[string](t, ctx, `JSON.stringify(__flow.pending())`)), &next); err != nil {
			t.Fatal(err)
		}
		if len(next) == 0 {
			waitJS(t, ctx, "a write to wait", `__flow.pending().length > 0`, 30*time.Second)
			continue
		}
		p := next[0]
		released = append(released, p)
		switch {
		case p.Component == "replicaset-controller" && p.Verb == "create" && p.Resource == "pods":
			if firstCreate < 0 {
				firstCreate = len(released)
			}
			podCreates++
		case p.Component == "kube-scheduler" && p.Verb == "create" && p.Resource == "pods/binding":
			if firstBinding < 0 {
				firstBinding = len(released)
			}
			if podCreates == 0 {
				t.Fatalf("the scheduler binds before any pod was created: %+v", released)
			}
			bindings++
		}
		click(t, ctx, `[data-view=flow] [data-action=step]`)
		waitJS(t, ctx, fmt.Sprintf("write %d to be released", p.ID),
			fmt.Sprintf(`!__flow.pending().some(p => p.id === %d)`, p.ID), 30*time.Second)
	}
	if podCreates < 3 || bindings < 3 || firstCreate > firstBinding {
		t.Fatalf("stepping released %d pod creates and %d bindings (first create at %d, first binding at %d):\n%+v", podCreates, bindings, firstCreate, firstBinding, released)
	}
	t.Logf("%d steps: the first pod create at step %d, the first binding at step %d", len(released), firstCreate, firstBinding)

	// The diagram drew what was released.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`__flow.missing().filter(m => !m.includes('cni') && !m.includes('cri') && !m.includes('→ kubelet')).length === 0`,
		chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("after the steps the diagram has not drawn %v", eval[[]string](t, ctx, `__flow.missing()`))
	}

	click(t, ctx, `[data-view=flow] [data-action=continue]`)
	waitJS(t, ctx, "step mode off", `document.querySelector('[data-view=flow] .flow-step').dataset.stepmode === 'off'`, 30*time.Second)
	waitJS(t, ctx, "3 web pods Running after Continue", `__flow.runningPods('web-') === 3`, 120*time.Second)
	if n := len(eval[[]any](t, ctx, `__flow.pending()`)); n != 0 {
		t.Errorf("%d writes still shown pending after Continue", n)
	}
}

// TestFlowLongTasks: the diagram stays live while a Deployment of 60 pods
// is created and scheduled; the page's main thread long tasks (a
// PerformanceObserver) are logged as the measurement.
func TestFlowLongTasks(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openFlow(t, ctx)
	_ = eval[bool](t, ctx, flowJS)
	for _, filter := range []string{"path", "all"} {
		_ = eval[bool](t, ctx, fmt.Sprintf(`__flow.set('[data-flow=filter]', %q)`, filter))
		_ = eval[bool](t, ctx, `window.__longTasks = [], window.__lt && __lt.disconnect(), window.__lt = new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))), __lt.observe({type: 'longtask'}), true`)
		name := "many-" + filter
		c := typeLine(t, ctx, "kubectl create deployment "+name+" --image=hello --replicas=60", 60*time.Second)
		if *c.Code != 0 {
			t.Fatalf("create: %q", c.Output)
		}
		waitJS(t, ctx, "60 pods Running", fmt.Sprintf(`__flow.runningPods(%q) === 60`, name+"-"), 300*time.Second)
		waitJS(t, ctx, "the diagram to catch up", `(s => s.visible - 1 - s.cursor <= 30)(kubetab.flow.state())`, 120*time.Second)
		var lt struct {
			Count   int     `json:"count"`
			Longest float64 `json:"longest"`
			Over50  int     `json:"over50"`
		}
		if err := json.Unmarshal([]byte(eval[string](t, ctx, `JSON.stringify({count: __longTasks.length, longest: Math.max(0, ...__longTasks), over50: __longTasks.filter(d => d > 50).length})`)), &lt); err != nil {
			t.Fatal(err)
		}
		st := eval[map[string]any](t, ctx, `kubetab.flow.state()`)
		drawn := eval[int](t, ctx, `document.querySelectorAll('[data-view=flow] svg [data-hop]').length`)
		t.Logf("filter %s, 60 pods: %d long tasks, longest %.0f ms, %d over 50 ms; %v hops kept, %v shown, %d drawn elements",
			filter, lt.Count, lt.Longest, lt.Over50, st["kept"], st["visible"], drawn)
		if drawn > 200 {
			t.Errorf("%d hop elements drawn: the diagram should aggregate", drawn)
		}
		typeLine(t, ctx, "kubectl delete deployment "+name, 60*time.Second)
	}
}

// saveFlowShots saves the page at three sizes to $KUBETAB_SHOTS, the Flow
// view scrolled into sight on a phone.
func saveFlowShots(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lang := eval[string](t, ctx, `document.documentElement.lang`)
	for _, s := range []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
			t.Fatal(err)
		}
		parts := []string{""}
		if s.w < 600 {
			parts = []string{"-a", "-b"}
		}
		for i, part := range parts {
			// chromedp's clicks scroll what holds the element, even an
			// overflow:hidden panel; a learner's do not.
			_ = eval[bool](t, ctx, `document.scrollingElement.scrollTop = 0, document.querySelector('#views').scrollTop = 0, document.querySelector('main').scrollTop = 0, document.querySelector('[data-view=flow]').scrollTop = 0, true`)
			if s.w < 600 {
				sel := []string{".flow-bar", ".flow-step"}[i]
				_ = eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-view=flow] %s').scrollIntoView(), true`, sel))
			}
			waitJS(t, ctx, "two frames", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, 10*time.Second)
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("flow-%s-%s-%dx%d%s.png", name, lang, s.w, s.h, part))
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("saved %s", path)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1360, 860)); err != nil {
		t.Fatal(err)
	}
}

// TestFlowScreenshots saves the Flow view after a Deployment, with a hop's
// detail open and step mode holding writes, in English and Japanese
// ($KUBETAB_SHOTS).
func TestFlowScreenshots(t *testing.T) {
	t.Parallel()
	if os.Getenv("KUBETAB_SHOTS") == "" {
		t.Skip("KUBETAB_SHOTS is not set")
	}
	for _, lang := range []string{"en", "ja"} {
		t.Run(lang, func(t *testing.T) {
			ctx, _ := newBrowser(t)
			openFlow(t, ctx)
			if lang == "ja" {
				click(t, ctx, "#lang")
			}
			_ = eval[bool](t, ctx, flowJS)
			waitJS(t, ctx, "the progress bar to fade out", `document.querySelector('#loader').hidden`, 30*time.Second)
			saveFlowShots(t, ctx, "empty")
			_ = eval[bool](t, ctx, `__flow.set('[data-play=speed]', '4')`)
			typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=3", 60*time.Second)
			waitJS(t, ctx, "3 web pods Running", `__flow.runningPods('web-') === 3`, 120*time.Second)
			waitJS(t, ctx, "the hops drawn", `__flow.missing().length === 0`, 120*time.Second)
			if !eval[bool](t, ctx, `__flow.clickRow('kube-scheduler → kube-apiserver', 'binding')`) {
				t.Fatal("no row of a binding to click")
			}
			waitJS(t, ctx, "the hop's YAML", `(p => p && p.textContent.includes('kind: Pod'))(document.querySelector('[data-view=flow] .flow-detail pre.yaml'))`, 30*time.Second)
			// Replay from the binding, paused two hops on: the binding, its
			// etcd write and the kubelet told are drawn, numbered.
			_ = eval[bool](t, ctx, `document.querySelector('[data-view=flow] [data-flow=replay]').click(), true`)
			_ = eval[bool](t, ctx, `document.querySelector('[data-view=flow] [data-play=toggle]').click(), true`)
			waitJS(t, ctx, "paused", `kubetab.flow.state().mode === 'paused'`, 10*time.Second)
			_ = eval[bool](t, ctx, `document.querySelector('[data-view=flow] [data-play=forward]').click(), document.querySelector('[data-view=flow] [data-play=forward]').click(), true`)
			saveFlowShots(t, ctx, "deployment")
		})
	}
}

// crossingJS lists the drawn arrows that pass over a node other than their
// own (sampled every 2 px along each path).
const crossingJS = `(() => {
  const rects = [...document.querySelectorAll('[data-view=flow] svg g.box.node')].map(g => {
    const r = g.querySelector('rect');
    return { node: g.dataset.node, x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width'), h: +r.getAttribute('height') };
  });
  const bad = new Set();
  for (const g of document.querySelectorAll('[data-view=flow] svg [data-hop]')) {
    const path = g.querySelector('path');
    if (!path) continue;
    const pts = path.getAttribute('d').replace(/^M/, '').split(' L').map(p => p.split(',').map(Number));
    const mine = ((g.dataset.from || '') + ' ' + (g.dataset.to || '') + ' ' + (g.dataset.node || '')).match(/node-\d+/g) || [];
    for (let i = 1; i < pts.length; i++) {
      const [x1, y1] = pts[i - 1], [x2, y2] = pts[i];
      const n = Math.max(1, Math.ceil(Math.hypot(x2 - x1, y2 - y1) / 2));
      for (let k = 0; k <= n; k++) {
        const x = x1 + (x2 - x1) * k / n, y = y1 + (y2 - y1) * k / n;
        for (const r of rects) {
          if (!mine.includes(r.node) && x > r.x + 1 && x < r.x + r.w - 1 && y > r.y + 1 && y < r.y + r.h - 1) bad.add(g.dataset.from + ' → ' + g.dataset.to + ' over ' + r.node);
        }
      }
    }
  }
  return [...bad];
})()`

// With five nodes the diagram has a second row; the arrows to its nodes
// (watches, the kubelets' requests, the scheduler's choice) go around the
// first row's nodes, down the channels between the columns.
func TestFlowDiagramRows(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openFlow(t, ctx)
	for _, n := range []string{"node-4", "node-5"} {
		if c := typeLine(t, ctx, "node add "+n, 60*time.Second); *c.Code != 0 {
			t.Fatalf("node add %s: %s", n, c.Output)
		}
	}
	waitJS(t, ctx, "5 nodes drawn", `document.querySelectorAll('[data-view=flow] svg g.box.node').length === 5`, 60*time.Second)
	_ = eval[bool](t, ctx, flowJS)
	_ = eval[bool](t, ctx, `__flow.set('[data-play=speed]', '4')`)
	typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=6", 60*time.Second)
	waitJS(t, ctx, "arrows to node-4 and node-5", `['node-4', 'node-5'].every(n => [...document.querySelectorAll('[data-view=flow] svg [data-hop]')].some(e => (e.dataset.from + ' ' + e.dataset.to + ' ' + (e.dataset.node || '')).includes(n)))`, 120*time.Second)
	if bad := eval[[]string](t, ctx, crossingJS); len(bad) > 0 {
		t.Errorf("arrows drawn over other nodes:\n%s", strings.Join(bad, "\n"))
	}
	saveFlowShots(t, ctx, "five-nodes")
}
