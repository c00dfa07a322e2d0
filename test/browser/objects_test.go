package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The objects and events views (site/src/views/objects, site/src/views/events).

// graphShape is what the objects view draws for the web Deployment: its
// ReplicaSets (newest first) with their drawn pods, and the pods' nodes.
type graphShape struct {
	ReplicaSets []struct {
		ID      string `json:"id"`
		Edge    bool   `json:"edge"` // Deployment -> ReplicaSet drawn
		Pods    []string
		PodEdge int    `json:"podEdge"`  // ReplicaSet -> Pod edges drawn
		NodeEdg int    `json:"nodeEdge"` // Pod -> Node edges drawn to a drawn node
		Text    string `json:"text"`
	} `json:"replicasets"`
}

const graphShapeJS = `(() => {
  const v = document.querySelector('[data-view=objects]');
  // Top to bottom as drawn (the DOM keeps boxes in the order they came).
  const rs = [...v.querySelectorAll('[data-object^="ReplicaSet/default/web-"]:not(.og-leave)')]
    .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
  return {replicasets: rs.map(b => {
    const id = b.dataset.object;
    const pods = [...v.querySelectorAll('[data-edge^="' + id + '->Pod/"]')].map(e => e.dataset.edge.split('->')[1])
      .filter(p => v.querySelector('[data-object="' + p + '"]:not(.og-leave)'));
    const nodeEdges = pods.filter(p => [...v.querySelectorAll('[data-edge^="' + p + '->Node//"]')]
      .some(e => v.querySelector('[data-object="' + e.dataset.edge.split('->')[1] + '"]')));
    return {id, edge: !!v.querySelector('[data-edge="Deployment/default/web->' + id + '"]'),
      Pods: pods, podEdge: pods.length, nodeEdge: nodeEdges.length, text: b.textContent};
  })};
})()`

// waitShape waits for cond (JavaScript) and shows the graph's shape when it never holds.
func waitShape(t *testing.T, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+cond+")",
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("waiting for %s: %v\nthe graph: %s", what, err, eval[string](t, ctx, "JSON.stringify("+graphShapeJS+")"))
	}
}

func openObjects(t *testing.T, ctx context.Context) {
	t.Helper()
	openSite(t, ctx, siteURL)
	_ = eval[bool](t, ctx, `kubetab.views.show('objects'), true`)
	waitJS(t, ctx, "the objects view", `document.querySelector('[data-view=objects] .og-canvas')`, 10*time.Second)
	waitJS(t, ctx, "the nodes in the graph", `document.querySelectorAll('[data-view=objects] [data-object^="Node//"]').length >= 1`, 30*time.Second)
}

func runOK(t *testing.T, ctx context.Context, line, want string) command {
	t.Helper()
	c := typeLine(t, ctx, line, 120*time.Second)
	if c.Code == nil || *c.Code != 0 || !strings.Contains(c.Output, want) {
		t.Fatalf("%s: code %v, output %q; want %q", line, c.Code, c.Output, want)
	}
	return c
}

// TestObjectsGraph: web -> its ReplicaSet -> 3 pods -> nodes, drawn with
// their edges; a rollout shows two ReplicaSets while the old one shrinks;
// clicking a pod shows its YAML, describe and events; the events view lists
// the pods' Scheduled, Pulled and Started events and filters by one pod.
func TestObjectsGraph(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openObjects(t, ctx)
	if got := eval[string](t, ctx, `document.querySelector('[data-view-tab=objects]').textContent`); got != "Objects" {
		t.Fatalf("tab says %q", got)
	}
	runOK(t, ctx, "kubectl create deployment web --image=hello --replicas=3", "deployment.apps/web created")

	// web -> one ReplicaSet -> 3 pods, each with an edge to a drawn node.
	waitShape(t, ctx, "web -> ReplicaSet -> 3 pods -> nodes", `(s => s.replicasets.length === 1 && s.replicasets[0].edge
	  && s.replicasets[0].podEdge === 3 && s.replicasets[0].nodeEdge === 3)(`+graphShapeJS+`)`, 90*time.Second)
	shape := eval[graphShape](t, ctx, graphShapeJS)
	rs1 := shape.ReplicaSets[0].ID
	hash := eval[string](t, ctx, `kubetab.cache.items('/apis/apps/v1/replicasets').get('default/`+strings.TrimPrefix(rs1, "ReplicaSet/default/")+`').metadata.labels['pod-template-hash']`)
	if !strings.HasSuffix(rs1, "-"+hash) {
		t.Fatalf("ReplicaSet %s does not end in its pod-template-hash %q", rs1, hash)
	}
	waitJS(t, ctx, "the ReplicaSet to say 3/3 ready and rev 1", fmt.Sprintf(`(b => b && /3\/3/.test(b.textContent) && /rev 1/.test(b.textContent))(document.querySelector('[data-object=%q]'))`, rs1), 90*time.Second)
	// Every pod the graph draws is a pod kubectl lists, on the node kubectl says.
	wide := runOK(t, ctx, "kubectl get pods -l app=web -o wide --no-headers", "web-")
	for _, line := range strings.Split(strings.TrimSpace(wide.Output), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 {
			t.Fatalf("kubectl get pods -o wide: %q", line)
		}
		edge := fmt.Sprintf("Pod/default/%s->Node//%s", f[0], f[6])
		if !eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('[data-view=objects] [data-edge=%q]')`, edge)) {
			t.Errorf("no edge %s in the graph", edge)
		}
	}

	// Click a pod: its YAML (a GET rendered as YAML), describe, and its events.
	pod := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-edge^="%s->Pod/"]').dataset.edge.split('->')[1]`, rs1))
	podName := strings.TrimPrefix(pod, "Pod/default/")
	// The events view has not been opened yet: it starts from the object
	// selected before its first opening (ctx.selected).
	click(t, ctx, fmt.Sprintf(`[data-view=objects] [data-object=%q]`, pod))
	waitJS(t, ctx, "the pod's YAML", fmt.Sprintf(`(d => d && !d.hidden && d.dataset.object === %q
	  && d.querySelector('[data-details-pane=yaml]').textContent.includes('name: %s')
	  && d.querySelector('[data-details-pane=yaml]').textContent.includes('kind: Pod'))(document.querySelector('[data-details]'))`, pod, podName), 30*time.Second)
	yaml := eval[string](t, ctx, `document.querySelector('[data-details-pane=yaml]').textContent`)
	for _, want := range []string{"apiVersion: v1\n", "  ownerReferences:\n  - apiVersion: apps/v1\n", "    kind: ReplicaSet\n", "    pod-template-hash: " + hash + "\n", "  nodeName: node-", "  phase: Running\n"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("the pod's YAML lacks %q:\n%s", want, yaml)
		}
	}
	consoleBefore := eval[string](t, ctx, `kubetab.consoleText()`)
	click(t, ctx, `[data-details] [data-details-tab=describe]`)
	waitJS(t, ctx, "kubectl describe's output", fmt.Sprintf(`(p => /^Name:\s+%s$/m.test(p.textContent) && /Controlled By:\s+ReplicaSet\//.test(p.textContent))(document.querySelector('[data-details-pane=describe]'))`, podName), 30*time.Second)
	if after := eval[string](t, ctx, `kubetab.consoleText()`); after != consoleBefore {
		t.Errorf("describe printed in the console:\n%s", after)
	}
	click(t, ctx, `[data-details] [data-details-tab=events]`)
	waitJS(t, ctx, "the pod's Scheduled and Started events", `(r => r.includes('Scheduled') && r.includes('Started') && r.includes('Pulled'))([...document.querySelectorAll('[data-details] [data-object-event]')].map(e => e.dataset.reason))`, 30*time.Second)

	// A rollout: two ReplicaSets, the new one on top growing while the old one shrinks.
	_ = eval[bool](t, ctx, `window.__rs = [], window.__rsTimer = setInterval(() => {
	  const v = document.querySelector('[data-view=objects]');
	  __rs.push([...v.querySelectorAll('[data-object^="ReplicaSet/default/web-"]:not(.og-leave)')]
	    .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top).map(b => b.dataset.object + ' ' + b.querySelector('.og-ready').textContent));
	}, 50), true`)
	runOK(t, ctx, "kubectl set image deployment/web hello=hello:2.0", "image updated")
	waitShape(t, ctx, "two ReplicaSets, the new one with 3 pods and the old one with none", fmt.Sprintf(`(s => s.replicasets.length === 2 && s.replicasets[1].id === %q
	  && s.replicasets[0].podEdge === 3 && s.replicasets[0].nodeEdge === 3 && s.replicasets[1].podEdge === 0
	  && /rev 2/.test(s.replicasets[0].text) && /3\/3/.test(s.replicasets[0].text) && /0\/0/.test(s.replicasets[1].text))(`+graphShapeJS+`)`, rs1), 120*time.Second)
	_ = eval[bool](t, ctx, `clearInterval(__rsTimer), true`)
	// Somewhere in between, both ReplicaSets had ready pods: the old one shrinking as the new one grew.
	samples := eval[[][]string](t, ctx, `__rs`)
	var during []string
	for _, s := range samples {
		if len(s) == 2 && !strings.Contains(s[0], " 0/") && !strings.Contains(s[1], " 0/") {
			during = s
			break
		}
	}
	if during == nil {
		t.Errorf("never saw both ReplicaSets with pods during the rollout; samples: %v", samples)
	} else {
		t.Logf("during the rollout: %v", during)
	}
	// The old pod's details say it is gone (its YAML kept); the new pods are drawn.
	waitJS(t, ctx, "the deleted pod's details to say so", `!document.querySelector('[data-details] .og-note').hidden`, 60*time.Second)

	// The events view: the object selected in the graph filled its filter,
	// so it lists that pod's events only, Scheduled, Pulled and Started among them.
	_ = eval[bool](t, ctx, `kubetab.views.show('events'), true`)
	if got := eval[string](t, ctx, `document.querySelector('[data-view=events] [data-filter=object]').value`); got != pod {
		t.Errorf("the events filter is %q, want the selected %q", got, pod)
	}
	waitJS(t, ctx, "only that pod's events: Scheduled, Pulled, Started", fmt.Sprintf(`(rows => rows.every(e => e.dataset.object === %q)
	  && ['Scheduled', 'Pulled', 'Started'].every(r => rows.some(e => e.dataset.reason === r)))([...document.querySelectorAll('[data-view=events] [data-event]')])`, pod), 10*time.Second)
	// Cleared: every web pod's.
	click(t, ctx, `[data-view=events] .ev-clear`)
	waitJS(t, ctx, "Scheduled, Pulled and Started events of every web pod", `(rows => ['Scheduled', 'Pulled', 'Started'].every(r =>
	  rows.filter(e => e.dataset.reason === r && e.dataset.object.startsWith('Pod/default/web-')).length >= 6))([...document.querySelectorAll('[data-view=events] [data-event]')])`, 60*time.Second)
	// Typing one pod's name.
	_ = eval[bool](t, ctx, fmt.Sprintf(`(i => { i.value = %q; i.dispatchEvent(new Event('input')); return true; })(document.querySelector('[data-view=events] [data-filter=object]'))`, podName))
	waitJS(t, ctx, "one pod's events by name", fmt.Sprintf(`(rows => rows.length >= 3 && rows.every(e => e.dataset.object === %q))([...document.querySelectorAll('[data-view=events] [data-event]')])`, pod), 10*time.Second)
	// A text filter and the type filter.
	_ = eval[bool](t, ctx, `(i => { i.value = 'deployment/web'; i.dispatchEvent(new Event('input')); return true; })(document.querySelector('[data-view=events] [data-filter=object]'))`)
	waitJS(t, ctx, "the Deployment's ScalingReplicaSet events", `(rows => rows.length >= 2 && rows.every(e => e.dataset.object === 'Deployment/default/web' && e.dataset.reason === 'ScalingReplicaSet'))([...document.querySelectorAll('[data-view=events] [data-event]')])`, 10*time.Second)
	_ = eval[bool](t, ctx, `(s => { s.value = 'Warning'; s.dispatchEvent(new Event('change')); return true; })(document.querySelector('[data-view=events] [data-filter=type]'))`)
	waitJS(t, ctx, "no Warning events of the Deployment", `document.querySelectorAll('[data-view=events] [data-event]').length === 0`, 10*time.Second)
	// Oldest first, as kubectl events sorts them.
	_ = eval[bool](t, ctx, `(v => { const i = v.querySelector('[data-filter=object]'); i.value = ''; i.dispatchEvent(new Event('input'));
	  const s = v.querySelector('[data-filter=type]'); s.value = ''; s.dispatchEvent(new Event('change')); return true; })(document.querySelector('[data-view=events]'))`)
	waitJS(t, ctx, "every event", `document.querySelectorAll('[data-view=events] [data-event]').length > 10`, 10*time.Second)
	order := eval[bool](t, ctx, `(() => { const list = kubetab.cache.items('/api/v1/events'); const ts = [...document.querySelectorAll('[data-view=events] [data-event]')]
	  .map(r => { const e = list.get(r.dataset.event); return Date.parse((e.series && e.series.lastObservedTime) || e.lastTimestamp || e.eventTime); });
	  return ts.every((x, i) => i === 0 || ts[i - 1] <= x); })()`)
	if !order {
		t.Errorf("events are not oldest first")
	}

	// A selection from another view (the bus) selects the object in the graph.
	_ = eval[bool](t, ctx, `kubetab.views.show('objects'), true`)
	node := eval[string](t, ctx, `document.querySelector('[data-view=objects] [data-object^="Node//"]').dataset.object`)
	_ = eval[bool](t, ctx, fmt.Sprintf(`kubetab.bus.dispatchEvent(new CustomEvent('select', {detail: {kind: 'Node', name: %q}})), true`, strings.TrimPrefix(node, "Node//")))
	waitJS(t, ctx, "the node selected from the bus", fmt.Sprintf(`(d => d.dataset.object === %q && d.querySelector('[data-details-pane=yaml]').textContent.includes('kind: Node'))(document.querySelector('[data-details]'))`, node), 30*time.Second)
}

// TestObjectsScale: a 100-replica Deployment scales with the graph open;
// the pods are drawn as one box per ReplicaSet with their count, and the
// main thread's long tasks are measured.
func TestObjectsScale(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openObjects(t, ctx)
	runOK(t, ctx, "kubectl create deployment big --image=hello --replicas=3", "created")
	waitJS(t, ctx, "3 pods drawn", `document.querySelectorAll('[data-view=objects] [data-object^="Pod/default/big-"]').length === 3`, 90*time.Second)
	_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
	start := time.Now()
	runOK(t, ctx, "kubectl scale deployment big --replicas=100", "scaled")
	waitJS(t, ctx, "one box of 100 pods", `(g => g && g.dataset.count === '100')(document.querySelector('[data-view=objects] [data-group^="ReplicaSet/default/big-"]'))`, 120*time.Second)
	waitJS(t, ctx, "100 ready", `(b => b && /100\/100/.test(b.textContent))(document.querySelector('[data-view=objects] [data-object="Deployment/default/big"]'))`, 300*time.Second)
	elapsed := time.Since(start)
	n, longest := longTasks(t, ctx)
	boxes := eval[int](t, ctx, `document.querySelectorAll('[data-view=objects] .og-box').length`)
	t.Logf("scale 3 -> 100 with the graph open: %d ready in %v; %d main-thread long tasks, longest %.0f ms; %d boxes drawn", 100, elapsed.Round(time.Second), n, longest, boxes)
	if boxes > 20 {
		t.Errorf("%d boxes drawn for 100 pods; the pods should be one box", boxes)
	}
	// The group's edges carry the counts per node, summing to 100.
	sum := eval[int](t, ctx, `[...document.querySelectorAll('[data-view=objects] [data-edge^="Pods/default/big-"]')].reduce((s, e) => s + Number(e.dataset.count), 0)`)
	if sum != 100 {
		t.Errorf("the group's edges to nodes count %d pods, want 100", sum)
	}
	if dir := os.Getenv("KUBETAB_SHOTS"); dir != "" {
		waitJS(t, ctx, "the graph to stop moving", `!document.querySelector('[data-view=objects] .og-canvas[data-moving]')`, 20*time.Second)
		shot(t, ctx, filepath.Join(dir, "objects-100-pods.png"))
	}
	// Clicking the group draws every pod.
	click(t, ctx, `[data-view=objects] [data-group^="ReplicaSet/default/big-"]`)
	waitJS(t, ctx, "100 pods drawn", `document.querySelectorAll('[data-view=objects] [data-object^="Pod/default/big-"]:not(.og-leave)').length === 100`, 30*time.Second)
}

// TestObjectsScreenshots saves the objects and events views at three sizes in
// both languages to $KUBETAB_SHOTS, for a person to look at.
func TestObjectsScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		t.Skip("KUBETAB_SHOTS is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, _ := newBrowser(t)
	openObjects(t, ctx)
	runOK(t, ctx, "kubectl create deployment web --image=hello --replicas=3", "created")
	runOK(t, ctx, "kubectl expose deployment web --port=80 --target-port=8080", "exposed")
	runOK(t, ctx, "kubectl rollout status deployment/web", "successfully rolled out")
	runOK(t, ctx, "kubectl set image deployment/web hello=hello:2.0", "image updated")
	runOK(t, ctx, "kubectl rollout status deployment/web", "successfully rolled out")
	waitJS(t, ctx, "the old pods to go", `document.querySelectorAll('[data-view=objects] [data-object^="Pod/default/web-"]').length === 3
	  && kubetab.cache.items('/api/v1/pods').size === 3`, 90*time.Second)
	pod := eval[string](t, ctx, `document.querySelector('[data-view=objects] [data-object^="Pod/default/web-"]').dataset.object`)
	save := func(name string) {
		t.Helper()
		waitJS(t, ctx, "the graph to stop moving", `!document.querySelector('[data-view=objects] .og-canvas[data-moving]')`, 20*time.Second)
		waitJS(t, ctx, "two frames", `new Promise(r => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => r(true))), 300))`, 10*time.Second)
		shot(t, ctx, filepath.Join(dir, name+".png"))
	}
	sizes := []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}}
	for _, lang := range []string{"en", "ja"} {
		if lang == "ja" {
			click(t, ctx, "#lang")
		}
		for _, s := range sizes {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
				t.Fatal(err)
			}
			_ = eval[bool](t, ctx, `kubetab.views.show('objects'), document.querySelector('[data-details] .og-close').click(), true`)
			if s.w < 860 {
				_ = eval[bool](t, ctx, `document.querySelector('#views').scrollIntoView(), true`)
			}
			save(fmt.Sprintf("objects-%s-%dx%d", lang, s.w, s.h))
			click(t, ctx, fmt.Sprintf(`[data-view=objects] [data-object=%q]`, pod))
			waitJS(t, ctx, "the YAML", `document.querySelector('[data-details-pane=yaml]').textContent.includes('kind: Pod')`, 30*time.Second)
			if s.w < 860 {
				_ = eval[bool](t, ctx, `document.querySelector('[data-details]').scrollIntoView(), true`)
			}
			save(fmt.Sprintf("objects-pod-%s-%dx%d", lang, s.w, s.h))
			_ = eval[bool](t, ctx, `kubetab.views.show('events'), true`)
			if s.w < 860 {
				_ = eval[bool](t, ctx, `document.querySelector('#views').scrollIntoView(), true`)
			}
			save(fmt.Sprintf("events-%s-%dx%d", lang, s.w, s.h))
		}
	}
}
