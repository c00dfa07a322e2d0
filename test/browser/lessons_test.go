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

// The lesson player's tests run against their own `kubetab serve --lessons
// testdata/lessons`, so they do not depend on the course's content: two
// small lessons that use every kind of block (test/browser/testdata/lessons),
// and files an author opens from disk (testdata/open).

// lessonSite starts `kubetab serve --lessons testdata/lessons` and returns
// its URL; it stops with the test.
func lessonSite(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KUBETAB_BIN")
	if bin == "" {
		t.Skip("KUBETAB_BIN is not set")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, url, err := startServe(bin, "--lessons", dir)
	if err != nil {
		t.Fatalf("kubetab serve --lessons: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	return url
}

// openLessons loads the site afresh (a reload, even when only the hash
// differs) at a hash route and waits for the cluster; from then on the
// page's long tasks are recorded (longTasks).
func openLessons(t *testing.T, ctx context.Context, url, hash string) {
	t.Helper()
	if err := chromedpNavigate(ctx, "about:blank"); err != nil {
		t.Fatal(err)
	}
	openSite(t, ctx, url+hash)
	_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
}

// click clicks the element sel matches (a CSS selector), as a mouse does,
// once it is visible.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	waitJS(t, ctx, sel+" to be visible", fmt.Sprintf(`(e => e && e.offsetParent !== null)(document.querySelector(%q))`, sel), 30*time.Second)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(cctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// waitPrepared waits until the open lesson's cluster is prepared.
func waitPrepared(t *testing.T, ctx context.Context) {
	t.Helper()
	const prepared = `document.querySelector('#lesson .step') && !document.querySelector('#lesson .prepared[data-status="preparing"]')`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+prepared+")",
		chromedp.WithPollingTimeout(120*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("the lesson's cluster was not prepared: %v\nlesson panel: %s\nworker stderr: %s", err,
			eval[string](t, ctx, `document.querySelector('#lesson').innerText`), eval[string](t, ctx, `kubetab.cluster.stderr.join('')`))
	}
	if failed := eval[string](t, ctx, `(document.querySelector('#lesson .prepared[data-status="failed"]') || {}).textContent || ''`); failed != "" {
		t.Fatalf("preparing the lesson failed: %s", failed)
	}
}

// playStep does what a learner does on step n: reveal the solutions, press
// every Run button (run and solution, in page order, each to its end), and
// wait for the step's checks to hold.
func playStep(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	step := fmt.Sprintf(`#lesson [data-step="%d"]`, n)
	waitJS(t, ctx, fmt.Sprintf("step %d to show", n), fmt.Sprintf(`document.querySelector('%s') && !document.querySelector('%s').hidden`, step, step), 30*time.Second)
	if got := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s').dataset.check`, step)); got != "pending" {
		t.Fatalf("step %d: data-check=%q before its commands ran, want pending", n, got)
	}
	reveals := eval[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s button[data-reveal]')].map((b, i) => b.dataset.testReveal = i).length`, step))
	for i := 0; i < reveals; i++ {
		click(t, ctx, fmt.Sprintf(`%s button[data-test-reveal="%d"]`, step, i))
	}
	buttons := eval[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s button[data-run], %s button[data-solution]')].map((b, i) => b.dataset.testIndex = i).length`, step, step))
	if buttons == 0 {
		t.Fatalf("step %d has no Run or solution buttons", n)
	}
	for i := 0; i < buttons; i++ {
		sel := fmt.Sprintf(`%s button[data-test-index="%d"]`, step, i)
		click(t, ctx, sel)
		waitJS(t, ctx, fmt.Sprintf("step %d button %d to finish", n, i), fmt.Sprintf(`document.querySelector('%s').dataset.state === 'ran'`, sel), 120*time.Second)
	}
	waitJS(t, ctx, fmt.Sprintf("step %d to pass", n), fmt.Sprintf(`document.querySelector('%s').dataset.check === 'pass'`, step), 60*time.Second)
}

// playLesson plays every step of the open lesson, pressing Next between them.
func playLesson(t *testing.T, ctx context.Context) int {
	t.Helper()
	waitPrepared(t, ctx)
	steps := eval[int](t, ctx, `document.querySelectorAll('#lesson [data-step]').length`)
	for n := 1; n <= steps; n++ {
		playStep(t, ctx, n)
		if n < steps {
			click(t, ctx, fmt.Sprintf(`#lesson [data-step="%d"] a.next`, n))
		}
	}
	return steps
}

func longTasks(t *testing.T, ctx context.Context) (int, float64) {
	long := eval[[]float64](t, ctx, `window.__longTasks || []`)
	max := 0.0
	for _, d := range long {
		if d > max {
			max = d
		}
	}
	return len(long), max
}

// TestLessonPlay plays the first test lesson through the player by its
// buttons until every step passes; a reload keeps the progress; Reset gives
// a fresh cluster with the setup run again and the progress cleared.
func TestLessonPlay(t *testing.T) {
	t.Parallel()
	url := lessonSite(t)
	ctx, _ := newBrowserFor(t, url)
	openLessons(t, ctx, url, "#/lessons")
	waitJS(t, ctx, "the course index", `document.querySelectorAll('#lesson .course a[data-lesson]').length === 2`, 30*time.Second)
	if title := eval[string](t, ctx, `document.querySelector('#lesson a[data-lesson="01-test-deployment"] .title').textContent`); title != "A Deployment, step by step" {
		t.Errorf("index title = %q", title)
	}
	click(t, ctx, `#lesson a[data-lesson="01-test-deployment"]`)
	waitPrepared(t, ctx)
	// "Prepared for you": the setup line and its output.
	if got := eval[string](t, ctx, `document.querySelector('#lesson .prepared').textContent`); !strings.Contains(got, "kubectl create namespace shop") || !strings.Contains(got, "namespace/shop created") {
		t.Errorf("prepared for you shows %q", got)
	}
	// Step 4's check (no Deployment) holds before step 1 is done; it must
	// not count until steps 1-3 are solved.
	waitJS(t, ctx, "the first check results", `window.kubetab.lessonChecks`, 30*time.Second)
	if got := eval[string](t, ctx, `new Promise(r => setTimeout(r, 1000)).then(() => document.querySelector('#lesson [data-step="4"]').dataset.check)`); got == "pass" {
		t.Errorf("the clean-up step passed before the steps before it")
	}
	// The file of step 3 is not in the console yet; hints come one at a time.
	steps := playLesson(t, ctx)
	if steps != 4 {
		t.Fatalf("%d steps, want 4", steps)
	}
	if out := typeLine(t, ctx, "kubectl get svc web -o jsonpath={.spec.selector.app}", 60*time.Second); out.Output != "web" {
		t.Errorf("the Service from the step's file: %q", out.Output)
	}
	waitJS(t, ctx, "the lesson to say it is done", `!document.querySelector('#lesson .lesson-done').hidden`, 10*time.Second)
	n, max := longTasks(t, ctx)
	t.Logf("page long tasks while playing: %d, longest %.0f ms", n, max)

	// A reload: a fresh cluster, the progress kept.
	openLessons(t, ctx, url, "#/lessons")
	waitJS(t, ctx, "the index to mark the lesson solved", `document.querySelector('#lesson a[data-lesson="01-test-deployment"][data-solved="yes"] .mark').textContent === '✓'`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#lesson a[data-lesson="02-test-nodes"]').dataset.solved`); got != "no" {
		t.Errorf("the unplayed lesson shows solved=%q", got)
	}
	// Right after a reload the index is redrawn as the restored cluster and
	// the saved progress arrive; a click whose press and release straddle a
	// redraw is no click, so press again until the lesson opens.
	for try := 0; eval[string](t, ctx, `location.hash`) != "#/lessons/01-test-deployment"; try++ {
		if try == 3 {
			t.Fatalf("three clicks on the lesson did not open it (at %s)", eval[string](t, ctx, `location.hash`))
		}
		click(t, ctx, `#lesson a[data-lesson="01-test-deployment"]`)
		time.Sleep(time.Second)
	}
	waitPrepared(t, ctx)
	if got := eval[string](t, ctx, `[...document.querySelectorAll('#lesson [data-step]')].map(e => e.dataset.check).join(',')`); got != "pass,pass,pass,pass" {
		t.Errorf("after a reload the steps are %s, want pass,pass,pass,pass", got)
	}

	// Reset lesson: progress cleared, a fresh cluster, the setup run again.
	typeLine(t, ctx, "kubectl create deployment leftover --image=hello", 60*time.Second)
	click(t, ctx, `#lesson button[data-reset]`)
	waitJS(t, ctx, "the steps to be pending again", `[...document.querySelectorAll('#lesson [data-step]')].every(e => e.dataset.check === 'pending')`, 30*time.Second)
	waitPrepared(t, ctx)
	if c := typeLine(t, ctx, "kubectl get deployments", 60*time.Second); !strings.Contains(c.Output, "No resources found") {
		t.Errorf("after Reset, kubectl get deployments: %q", c.Output)
	}
	if c := typeLine(t, ctx, "kubectl get ns shop -o name", 60*time.Second); strings.TrimSpace(c.Output) != "namespace/shop" {
		t.Errorf("after Reset, the setup's namespace: %q", c.Output)
	}
	if got := eval[string](t, ctx, `location.hash`); got != "#/lessons/01-test-deployment/1" {
		t.Errorf("after Reset the page is at %q, want step 1", got)
	}
	// The index agrees.
	openLessons(t, ctx, url, "#/lessons")
	waitJS(t, ctx, "the index", `document.querySelector('#lesson a[data-lesson="01-test-deployment"]')`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#lesson a[data-lesson="01-test-deployment"]').dataset.solved`); got != "no" {
		t.Errorf("after Reset the index shows solved=%q", got)
	}
}

// TestLessonNodes plays the second test lesson: its own two nodes, a
// heredoc typed by a Run button, and a solution.
func TestLessonNodes(t *testing.T) {
	t.Parallel()
	url := lessonSite(t)
	ctx, _ := newBrowserFor(t, url)
	openLessons(t, ctx, url, "#/lessons/02-test-nodes")
	waitPrepared(t, ctx)
	if c := typeLine(t, ctx, "kubectl get nodes -o name", 60*time.Second); strings.TrimSpace(c.Output) != "node/fast\nnode/slow" {
		t.Errorf("the lesson's nodes: %q", c.Output)
	}
	playLesson(t, ctx)
	if text := eval[string](t, ctx, `kubetab.consoleText()`); !strings.Contains(text, "> EOF") {
		t.Errorf("the heredoc was not typed on continuation prompts:\n%s", text)
	}
}

// TestLessonOpenFile opens lesson files from disk: a good one plays at
// once, a malformed one shows core/lesson's file:line message.
func TestLessonOpenFile(t *testing.T) {
	t.Parallel()
	url := lessonSite(t)
	ctx, _ := newBrowserFor(t, url)
	openLessons(t, ctx, url, "#/lessons")
	pick := func(name string) {
		t.Helper()
		path, err := filepath.Abs(filepath.Join("testdata", "open", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(`#lesson input[type=file][data-lesson-file]`), []string{path})); err != nil {
			t.Fatalf("pick %s: %v", name, err)
		}
	}
	pick("broken.en.md")
	waitJS(t, ctx, "the errors to show", `document.querySelector('#lesson .lesson-errors pre')`, 30*time.Second)
	errs := eval[string](t, ctx, `document.querySelector('#lesson .lesson-errors pre').textContent`)
	if !strings.HasPrefix(errs, "broken.en.md:9: unknown block type ```chek") {
		t.Errorf("errors shown: %q; want broken.en.md:9: unknown block type ```chek ...", errs)
	}
	if got := eval[string](t, ctx, `location.hash`); got != "#/lessons" {
		t.Errorf("a malformed file moved the page to %q", got)
	}

	pick("en.md")
	waitJS(t, ctx, "the opened lesson to play", `location.hash === '#/lessons/opened' && document.querySelector('#lesson [data-step="1"]')`, 30*time.Second)
	if title := eval[string](t, ctx, `document.querySelector('#lesson .lesson-head h2').textContent`); title != "Opened from disk" {
		t.Errorf("opened lesson title %q", title)
	}
	playLesson(t, ctx)
	openLessons(t, ctx, url, "#/lessons") // a reload forgets the opened file, not the course
	waitJS(t, ctx, "the course index", `document.querySelectorAll('#lesson .course a[data-lesson]').length === 2`, 30*time.Second)
}

// TestLessonJapanese: the Japanese UI shows the lessons' Japanese text, and
// switching language in a lesson keeps its progress and the place.
func TestLessonJapanese(t *testing.T) {
	t.Parallel()
	url := lessonSite(t)
	ctx, _ := newBrowserFor(t, url)
	openLessons(t, ctx, url, "#/lessons/01-test-deployment")
	waitPrepared(t, ctx)
	playStep(t, ctx, 1)
	click(t, ctx, `#lesson [data-step="1"] a.next`)
	waitJS(t, ctx, "step 2", `location.hash === '#/lessons/01-test-deployment/2'`, 10*time.Second)
	click(t, ctx, `#lesson [data-step="2"] button[data-hint]`)

	click(t, ctx, `#lang`)
	waitJS(t, ctx, "the lesson in Japanese", `document.querySelector('#lesson .lesson-head h2').textContent === 'Deployment を一歩ずつ'`, 30*time.Second)
	checks := map[string]string{
		`document.querySelector('#lesson [data-step="2"] h3').textContent`:                  "ステップ 2 / 4スケールする",
		`document.querySelector('#lesson [data-step="2"] .prose').textContent.trim()`:       "レプリカを 2 つから 3 つに増やしてみましょう。",
		`document.querySelector('#lesson [data-step="2"] .hints li').textContent`:           "ヒント: kubectl scale は spec.replicas を書き換えます。",
		`document.querySelector('#lesson [data-step="2"] button[data-reveal]').textContent`: "解答を見る",
		`document.querySelector('#lesson [data-step="1"]').dataset.check`:                   "pass",
		`document.querySelector('#lesson [data-reset]').textContent`:                        "レッスンをやり直す",
		`location.hash`: "#/lessons/01-test-deployment/2",
	}
	for expr, want := range checks {
		if got := eval[string](t, ctx, expr); got != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
	}
	// The course index in Japanese, after a reload (the choice is kept).
	openLessons(t, ctx, url, "#/lessons")
	waitJS(t, ctx, "the Japanese index", `document.querySelector('#lesson a[data-lesson="02-test-nodes"] .title').textContent === '2 つのノードとラベル'`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#lesson a[data-lesson="01-test-deployment"] .meta').textContent`); got != "5 分 · 4 ステップ中 1 完了" {
		t.Errorf("index meta %q", got)
	}
}

// TestLessonScreenshots saves the course index and a lesson in progress at
// three window sizes in both languages to $KUBETAB_SHOTS (a folder), for
// a person to look at. It plays the embedded course's first lesson, or the
// one KUBETAB_SHOTS_LESSON names (18-custom-resources).
func TestLessonScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		t.Skip("KUBETAB_SHOTS is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sizes := []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}}
	for _, lang := range []string{"en", "ja"} {
		t.Run(lang, func(t *testing.T) {
			ctx, _ := newBrowser(t)
			save := func(name string) {
				t.Helper()
				shot(t, ctx, filepath.Join(dir, name+".png"))
			}
			openSite(t, ctx, siteURL+"?lang="+lang+"#/lessons")
			waitJS(t, ctx, "the progress bar to fade out", `document.querySelector('#loader').hidden`, 30*time.Second)
			waitJS(t, ctx, "the course index", `document.querySelectorAll('#lesson .course a[data-lesson]').length > 0`, 30*time.Second)
			first := eval[string](t, ctx, `document.querySelector('#lesson .course a[data-lesson]').dataset.lesson`)
			if l := os.Getenv("KUBETAB_SHOTS_LESSON"); l != "" {
				first = l // another lesson to look at, by its folder's name
			}
			for _, s := range sizes {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
					t.Fatal(err)
				}
				save(fmt.Sprintf("index-%s-%dx%d", lang, s.w, s.h))
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(sizes[0].w, sizes[0].h)); err != nil {
				t.Fatal(err)
			}
			click(t, ctx, fmt.Sprintf(`#lesson a[data-lesson=%q]`, first))
			waitPrepared(t, ctx)
			// Step 1 done by its buttons; step 2 open with a hint shown.
			playStep(t, ctx, 1)
			click(t, ctx, `#lesson [data-step="1"] a.next`)
			waitJS(t, ctx, "step 2", `!document.querySelector('#lesson [data-step="2"]').hidden`, 10*time.Second)
			if eval[bool](t, ctx, `!!document.querySelector('#lesson [data-step="2"] button[data-hint]')`) {
				click(t, ctx, `#lesson [data-step="2"] button[data-hint]`)
			}
			for _, s := range sizes {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
					t.Fatal(err)
				}
				save(fmt.Sprintf("lesson-%s-%dx%d", lang, s.w, s.h))
			}
		})
	}
}
