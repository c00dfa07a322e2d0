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

// openEditor opens the site and its Editor tab, and waits for CodeMirror
// (loaded when the tab first opens).
func openEditor(t *testing.T, ctx context.Context, query ...string) {
	t.Helper()
	openSite(t, ctx, siteURL+strings.Join(query, ""))
	_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
	click(t, ctx, `[data-view-tab="editor"]`)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.kubetab.editor && window.kubetabCM)`, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("the editor did not start: %v\n%s", err, eval[string](t, ctx, `JSON.stringify({editor: !!kubetab.editor, cm: !!window.kubetabCM, current: kubetab.views.current, pane: document.querySelector('[data-view="editor"]').innerText.slice(0, 400), scripts: [...document.scripts].map(s => s.src)})`))
	}
}

// newFromTemplate picks a template in the New file menu and waits for its tab.
func newFromTemplate(t *testing.T, ctx context.Context, kind, file string) {
	t.Helper()
	_ = eval[bool](t, ctx, fmt.Sprintf(`(s => (s.value = %q, s.dispatchEvent(new Event('change')), true))(document.querySelector('[data-editor-new]'))`, kind))
	waitJS(t, ctx, file+" to open", fmt.Sprintf(`kubetab.editor.current() === %q && document.querySelector('.cm-content').textContent.includes('kind: %s')`, file, kind), 10*time.Second)
}

// editText replaces the editor's text with what the JS expression (over
// the current text, s) gives.
func editText(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	_ = eval[bool](t, ctx, fmt.Sprintf(`(s => (kubetab.editor.setText(%s), true))(kubetab.editor.text())`, expr))
}

// statusText is the editor's status area.
func statusText(t *testing.T, ctx context.Context) string {
	return eval[string](t, ctx, `document.querySelector('[data-editor-status]').textContent`)
}

type diagnostic struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// waitMark waits for a lint mark on line whose message has want, and for
// its underline in the text.
func waitMark(t *testing.T, ctx context.Context, line int, want string) {
	t.Helper()
	expr := fmt.Sprintf(`!!(kubetab.editor.diagnostics().some(d => d.line === %d && d.message.includes(%q)) && document.querySelector('.cm-lintRange-error'))`, line, want)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("no mark on line %d with %q: %v\nmarks: %s\nstatus: %s", line, want, err,
			eval[string](t, ctx, `JSON.stringify(kubetab.editor.diagnostics())`), statusText(t, ctx))
	}
}

// TestEditorApply: a Deployment written in the editor from its template,
// Apply, and its pods Running; the file is the console's file too.
func TestEditorApply(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openEditor(t, ctx)
	newFromTemplate(t, ctx, "Deployment", "deployment.yaml")
	n, longest := longTasks(t, ctx)
	t.Logf("long tasks while opening the editor (CodeMirror loaded) and a template: %d, longest %.0f ms", n, longest)
	_ = eval[bool](t, ctx, `(window.__longTasks = [], true)`)
	click(t, ctx, `[data-editor-action="dryrun"]`)
	waitJS(t, ctx, "the dry run", `document.querySelector('[data-editor-status]').textContent.includes('deployment.apps/web created (server dry run)')`, 30*time.Second)
	if c := typeLine(t, ctx, "kubectl get deployments", 30*time.Second); !strings.Contains(c.Output, "No resources found") {
		t.Fatalf("a dry run stored the deployment:\n%s", c.Output)
	}
	click(t, ctx, `[data-editor-action="apply"]`)
	// The dry run's text says "created" too: wait for the apply's own.
	waitJS(t, ctx, "the apply", `(s => s.includes('deployment.apps/web created') && !s.includes('dry run'))(document.querySelector('[data-editor-status]').textContent)`, 30*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('[data-editor-status]').className`); !strings.Contains(got, "ok") {
		t.Errorf("status class %q after a successful apply", got)
	}
	n, longest = longTasks(t, ctx)
	t.Logf("long tasks during Dry-run and Apply: %d, longest %.0f ms", n, longest)
	_ = eval[bool](t, ctx, `(window.__longTasks = [], true)`)
	c := typeLine(t, ctx, "kubectl rollout status deployment/web --timeout=120s", 150*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, `deployment "web" successfully rolled out`) {
		t.Fatalf("rollout status: code %d\n%s", *c.Code, c.Output)
	}
	c = typeLine(t, ctx, "kubectl get pods", 30*time.Second)
	if pods := runningPods(c.Output, "web-"); len(pods) != 2 {
		t.Errorf("want 2 Running web- pods:\n%s", c.Output)
	}
	c = typeLine(t, ctx, "cat deployment.yaml", 30*time.Second)
	if !strings.Contains(c.Output, "kind: Deployment") {
		t.Errorf("the console does not see the editor's file:\n%s", c.Output)
	}
	// A file written in the console gets a tab.
	typeLine(t, ctx, "kubectl get deployment web -o yaml > live.yaml", 30*time.Second)
	waitJS(t, ctx, "live.yaml's tab", `document.querySelector('[data-editor-tab="live.yaml"]')`, 10*time.Second)
	n, longest = longTasks(t, ctx)
	t.Logf("long tasks while the deployment rolled out (console, cache, panels): %d, longest %.0f ms", n, longest)
}

// TestEditorInvalid: an unknown field is marked on its line before
// applying (the API server's OpenAPI schema), and Apply stores nothing (the
// server's strict validation refuses it); a 422's cause is marked on its
// line; a YAML syntax error is marked.
func TestEditorInvalid(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openEditor(t, ctx)
	newFromTemplate(t, ctx, "Deployment", "deployment.yaml")
	// Line 6 of the template is "  replicas: 2".
	editText(t, ctx, `s.replace('  replicas: 2', '  replica: 2')`)
	waitMark(t, ctx, 6, `unknown field "spec.replica"`)
	click(t, ctx, `[data-editor-action="apply"]`)
	waitJS(t, ctx, "the server's refusal", `document.querySelector('[data-editor-status]').textContent.includes('unknown field "spec.replica"')`, 30*time.Second)
	if c := typeLine(t, ctx, "kubectl get deployments", 30*time.Second); !strings.Contains(c.Output, "No resources found") {
		t.Fatalf("an invalid deployment was stored:\n%s", c.Output)
	}
	// A 422: the server's cause on its line.
	editText(t, ctx, `s.replace('  replica: 2', '  replicas: -1')`)
	click(t, ctx, `[data-editor-action="apply"]`)
	waitJS(t, ctx, "the 422", `document.querySelector('[data-editor-status]').textContent.includes('is invalid')`, 30*time.Second)
	waitMark(t, ctx, 6, "spec.replicas: Invalid value: -1")
	if c := typeLine(t, ctx, "kubectl get deployments", 30*time.Second); !strings.Contains(c.Output, "No resources found") {
		t.Fatalf("an invalid deployment was stored:\n%s", c.Output)
	}
	// A syntax error, as the learner types it.
	editText(t, ctx, `s.replace('  replicas: -1', '  replicas: [2')`)
	waitJS(t, ctx, "a syntax mark", `kubetab.editor.diagnostics().some(d => d.source !== 'x' && /syntax|構文/.test(d.message))`, 20*time.Second)
	click(t, ctx, `[data-editor-action="apply"]`)
	waitJS(t, ctx, "kubectl's parse error", `/error|エラー/.test(document.querySelector('[data-editor-status]').textContent) && !document.querySelector('[data-editor-status]').textContent.includes('Running')`, 30*time.Second)
	if c := typeLine(t, ctx, "kubectl get deployments", 30*time.Second); !strings.Contains(c.Output, "No resources found") {
		t.Fatalf("a broken file was stored:\n%s", c.Output)
	}
}

// TestEditorKubectlEdit: kubectl edit deployment/web in the console opens
// the object in the editor; a 422 reopens it with the cause marked; saving
// a fixed file changes replicas.
func TestEditorKubectlEdit(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	c := typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=1", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create: %s", c.Output)
	}
	n := eval[int](t, ctx, `kubetab.console.focus(), kubetab.commands.length`)
	typeText(t, ctx, "kubectl edit deployment/web")
	pressEnter(t, ctx)
	waitJS(t, ctx, "kubectl edit to open the editor", `window.kubetab.editor && /^kubectl-edit-.*\.yaml$/.test(kubetab.editor.current() || '') && document.querySelector('.cm-content').textContent.includes('kind: Deployment')`, 30*time.Second)
	if !eval[bool](t, ctx, `document.querySelector('[data-view="editor"]').hidden === false`) {
		t.Error("the Editor tab did not open")
	}
	first := eval[string](t, ctx, `kubetab.editor.current()`)
	// A 422 first: the file comes back with the cause in its header.
	editText(t, ctx, `s.replace(/^  replicas: 1$/m, '  replicas: -1')`)
	click(t, ctx, `[data-editor-action="finish"]`)
	waitJS(t, ctx, "the file to reopen with the cause", `kubetab.editor.current() && kubetab.editor.text().includes('# * spec.replicas: Invalid value: -1')`, 30*time.Second)
	if got := eval[string](t, ctx, `kubetab.editor.current()`); got != first {
		t.Errorf("the reopened file is %q, want %q", got, first)
	}
	line := eval[int](t, ctx, `kubetab.editor.text().split('\n').findIndex(l => l === '  replicas: -1') + 1`)
	waitMark(t, ctx, line, "spec.replicas: Invalid value: -1")
	editText(t, ctx, `s.replace(/^  replicas: -1$/m, '  replicas: 3')`)
	click(t, ctx, `[data-editor-action="finish"]`)
	waitJS(t, ctx, "kubectl edit to finish", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 30*time.Second)
	c = eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n))
	if *c.Code != 0 || !strings.Contains(c.Output, `error: deployments.apps "web" is invalid`) || !strings.Contains(c.Output, "deployment.apps/web edited") {
		t.Errorf("kubectl edit: code %d\n%s", *c.Code, c.Output)
	}
	c = typeLine(t, ctx, "kubectl get deployment web -o jsonpath={.spec.replicas}", 30*time.Second)
	if strings.TrimSpace(c.Output) != "3" {
		t.Errorf("replicas after kubectl edit: %q", c.Output)
	}
	// Cancel leaves it unchanged, as quitting the editor without saving.
	n = eval[int](t, ctx, `kubetab.console.focus(), kubetab.commands.length`)
	typeText(t, ctx, "kubectl edit deployment web")
	pressEnter(t, ctx)
	waitJS(t, ctx, "the second edit", `/^kubectl-edit-/.test(kubetab.editor.current() || '')`, 30*time.Second)
	click(t, ctx, `[data-editor-action="cancel"]`)
	waitJS(t, ctx, "kubectl edit to finish", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 30*time.Second)
	if c = eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n)); !strings.Contains(c.Output, "Edit cancelled, no changes made.") {
		t.Errorf("cancelled kubectl edit: %q", c.Output)
	}
}

// TestEditorConflict: the object changes on the server (kubetab.cluster.fetch,
// another client) while the editor holds a copy read at an older
// resourceVersion; Apply gets the API server's 409, shown in the status and
// on the resourceVersion line. kubectl edit, whose patch carries only the
// learner's change (upstream's too), keeps the other change instead.
func TestEditorConflict(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openEditor(t, ctx)
	typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=1", 60*time.Second)
	typeLine(t, ctx, "kubectl get deployment web -o yaml > web.yaml", 30*time.Second)
	click(t, ctx, `[data-view-tab="editor"]`)
	waitJS(t, ctx, "web.yaml's tab", `document.querySelector('[data-editor-tab="web.yaml"]')`, 10*time.Second)
	click(t, ctx, `[data-editor-tab="web.yaml"]`)
	waitJS(t, ctx, "web.yaml open", `kubetab.editor.current() === 'web.yaml' && kubetab.editor.text().includes('resourceVersion')`, 10*time.Second)
	editText(t, ctx, `s.replace(/^  replicas: 1$/m, '  replicas: 4')`)
	code := eval[int](t, ctx, `kubetab.cluster.fetch('/apis/apps/v1/namespaces/default/deployments/web', {method: 'PATCH', headers: {'Content-Type': 'application/merge-patch+json'}, body: JSON.stringify({metadata: {labels: {changed: 'elsewhere'}}})}).then(r => r.status)`)
	if code != 200 {
		t.Fatalf("concurrent PATCH: %d", code)
	}
	click(t, ctx, `[data-editor-action="apply"]`)
	waitJS(t, ctx, "the 409", `document.querySelector('[data-editor-status]').textContent.includes('the object has been modified; please apply your changes to the latest version and try again')`, 30*time.Second)
	line := eval[int](t, ctx, `kubetab.editor.text().split('\n').findIndex(l => /^  resourceVersion:/.test(l)) + 1`)
	waitMark(t, ctx, line, "409")
	c := typeLine(t, ctx, "kubectl get deployment web -o jsonpath={.spec.replicas}", 30*time.Second)
	if strings.TrimSpace(c.Output) != "1" {
		t.Errorf("replicas after a refused apply: %q", c.Output)
	}

	// kubectl edit with the same concurrent change: merged, as upstream.
	n := eval[int](t, ctx, `kubetab.console.focus(), kubetab.commands.length`)
	typeText(t, ctx, "kubectl edit deployment/web")
	pressEnter(t, ctx)
	waitJS(t, ctx, "kubectl edit", `/^kubectl-edit-/.test(kubetab.editor.current() || '')`, 30*time.Second)
	editText(t, ctx, `s.replace(/^  replicas: 1$/m, '  replicas: 2')`)
	code = eval[int](t, ctx, `kubetab.cluster.fetch('/apis/apps/v1/namespaces/default/deployments/web', {method: 'PATCH', headers: {'Content-Type': 'application/merge-patch+json'}, body: JSON.stringify({metadata: {labels: {again: 'elsewhere'}}})}).then(r => r.status)`)
	if code != 200 {
		t.Fatalf("concurrent PATCH: %d", code)
	}
	click(t, ctx, `[data-editor-action="finish"]`)
	waitJS(t, ctx, "kubectl edit to finish", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 30*time.Second)
	c = typeLine(t, ctx, "kubectl get deployment web -o jsonpath={.spec.replicas},{.metadata.labels.again}", 30*time.Second)
	if strings.TrimSpace(c.Output) != "2,elsewhere" {
		t.Errorf("after kubectl edit with a concurrent change: %q", c.Output)
	}
}

// TestEditorScreenshots saves the editor with marks and a 422 in the
// status, in English and Japanese, at three sizes (KUBETAB_SHOTS=DIR).
func TestEditorScreenshots(t *testing.T) {
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
			openEditor(t, ctx, "?lang="+lang)
			waitJS(t, ctx, "the progress bar to fade out", `document.querySelector('#loader').hidden`, 30*time.Second)
			newFromTemplate(t, ctx, "Deployment", "deployment.yaml")
			editText(t, ctx, `s.replace('  replicas: 2', '  replicas: -1')`)
			click(t, ctx, `[data-editor-action="apply"]`)
			waitJS(t, ctx, "the 422", `document.querySelector('[data-editor-status]').textContent.includes('is invalid')`, 30*time.Second)
			waitMark(t, ctx, 6, "spec.replicas: Invalid value: -1")
			for _, s := range sizes {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
					t.Fatal(err)
				}
				if s.w < 600 {
					_ = eval[bool](t, ctx, `document.querySelector('[data-view="editor"]').scrollIntoView(), true`)
				}
				shot(t, ctx, filepath.Join(dir, fmt.Sprintf("editor-%s-%dx%d.png", lang, s.w, s.h)))
			}
		})
	}
}
