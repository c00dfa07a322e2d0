package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// viewShots saves the page at the three sizes in English and Japanese when
// KUBETAB_SHOTS names a folder (the language is switched and switched back).
func viewShots(t *testing.T, ctx context.Context, name, focus string) {
	t.Helper()
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sizes := []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}}
	for _, lang := range []string{"en", "ja"} {
		if eval[string](t, ctx, `document.documentElement.lang`) != lang {
			click(t, ctx, "#lang")
		}
		for _, s := range sizes {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
				t.Fatal(err)
			}
			// On a phone the views panel is below the console: scroll it into view.
			// The views panel in sight (on a phone it is below the console),
			// and the open pane scrolled to focus.
			_ = eval[bool](t, ctx, fmt.Sprintf(`(() => {
				const views = document.querySelector('#views');
				window.scrollTo(0, innerWidth <= 860 ? views.getBoundingClientRect().top + scrollY : 0);
				const el = %q && document.querySelector(%q);
				const pane = el && el.closest('.view-pane');
				if (pane) pane.scrollTop += el.getBoundingClientRect().top - pane.getBoundingClientRect().top - 8;
				if (el && innerWidth <= 860) window.scrollTo(0, el.getBoundingClientRect().top + scrollY - 8);
				return true;
			})()`, focus, focus))
			shot(t, ctx, filepath.Join(dir, fmt.Sprintf("%s-%s-%dx%d.png", name, lang, s.w, s.h)))
		}
	}
	if eval[string](t, ctx, `document.documentElement.lang`) != "en" {
		click(t, ctx, "#lang")
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}
}

// The Scheduler view: a pod that asks for more CPU than any node has waits
// in unschedulablePods with the FailedScheduling message; its attempt shows
// every node rejected by NodeResourcesFit with the numbers (what it asked
// for, what was free of what the node has). A pod that fits shows each
// feasible node's scores and the node chosen, the one it was bound to.
func TestSchedulerView(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}
	c := typeLine(t, ctx, `kubectl run big --image=hello --overrides='{"spec":{"containers":[{"name":"big","image":"hello","resources":{"requests":{"cpu":"64"}}}]}}'`, 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("kubectl run big: %q", c.Output)
	}
	click(t, ctx, `[data-view-tab="scheduler"]`)
	pod := `[data-view="scheduler"] .q-unschedulablePods [data-sched-pod="default/big"]`
	waitJS(t, ctx, "big in unschedulablePods", fmt.Sprintf(`document.querySelector(%q)`, pod), 60*time.Second)
	msg := eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).textContent`, pod))
	if !strings.Contains(msg, "Insufficient cpu") {
		t.Errorf("queue entry %q has no reason", msg)
	}
	click(t, ctx, pod)
	nodes := eval[[]string](t, ctx, `kubetab.cluster.fetch('/api/v1/nodes').then(r => r.json()).then(l => l.items.map(n => n.metadata.name))`)
	waitJS(t, ctx, "a filter row per node", fmt.Sprintf(`document.querySelectorAll('[data-view="scheduler"] [data-filter-node]').length === %d`, len(nodes)), 30*time.Second)
	rows := eval[[][]string](t, ctx, `[...document.querySelectorAll('[data-view="scheduler"] [data-filter-node]')].map(r => [r.dataset.filterNode, r.dataset.result, r.textContent])`)
	numbers := regexp.MustCompile(`Insufficient cpu: requests 64, [0-9.]+ of [0-9.]+ free`)
	for _, r := range rows {
		if r[1] != "fail" || !numbers.MatchString(r[2]) || !strings.Contains(r[2], "NodeResourcesFit") {
			t.Errorf("node %s: %s %q, want fail with NodeResourcesFit's numbers", r[0], r[1], r[2])
		}
	}
	viewShots(t, ctx, "scheduler-queue", "")
	viewShots(t, ctx, "scheduler-unschedulable", `[data-view="scheduler"] .sched-detail`)

	c = typeLine(t, ctx, "kubectl run small --image=hello", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("kubectl run small: %q", c.Output)
	}
	small := `[data-view="scheduler"] [data-sched-pod="default/small"]`
	waitJS(t, ctx, "small placed", fmt.Sprintf(`document.querySelector('[data-view="scheduler"] .q-placed %s')`, `[data-sched-pod="default/small"]`), 60*time.Second)
	click(t, ctx, small)
	waitJS(t, ctx, "the scores of small", `document.querySelectorAll('[data-view="scheduler"] [data-score-node]').length > 0 && document.querySelector('[data-view="scheduler"] [data-sched-result]').dataset.schedResult === 'Scheduled'`, 30*time.Second)
	winner := eval[string](t, ctx, `(document.querySelector('[data-view="scheduler"] [data-score-node].winner') || {dataset: {}}).dataset.scoreNode || ''`)
	bound := eval[string](t, ctx, `kubetab.cluster.fetch('/api/v1/namespaces/default/pods/small').then(r => r.json()).then(p => p.spec.nodeName)`)
	if winner == "" || winner != bound {
		t.Errorf("winner %q, pod bound to %q", winner, bound)
	}
	cards := eval[int](t, ctx, `document.querySelectorAll('[data-view="scheduler"] [data-score-node]').length`)
	bars := eval[int](t, ctx, `document.querySelectorAll('[data-view="scheduler"] [data-score-node] .sc-row[data-plugin] .sc-bar').length`)
	passes := eval[int](t, ctx, `document.querySelectorAll('[data-view="scheduler"] [data-filter-node][data-result=pass]').length`)
	if cards != len(nodes) || passes != len(nodes) || bars == 0 {
		t.Errorf("%d score cards with %d bars, %d nodes passing; want %d nodes", cards, bars, passes, len(nodes))
	}
	viewShots(t, ctx, "scheduler-scored", `[data-view="scheduler"] .sched-grid`)
	viewShots(t, ctx, "scheduler-scores", `[data-view="scheduler"] [data-score-node]`)
}
