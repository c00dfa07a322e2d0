package browser

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// objectsJS lists, through the page's own API door, the objects a learner
// made: "kind namespace/name uid" lines, sorted, for the given namespace.
const objectsJS = `(async () => {
  const out = [];
  for (const [kind, path] of [['Deployment', '/apis/apps/v1/namespaces/default/deployments'],
      ['ReplicaSet', '/apis/apps/v1/namespaces/default/replicasets'], ['Pod', '/api/v1/namespaces/default/pods'],
      ['Service', '/api/v1/namespaces/default/services'], ['ConfigMap', '/api/v1/namespaces/default/configmaps'],
      ['Namespace', '/api/v1/namespaces']]) {
    const res = await kubetab.cluster.fetch(path);
    const list = await res.json();
    for (const o of list.items || []) out.push(kind + ' ' + (o.metadata.namespace || '') + '/' + o.metadata.name + ' ' + o.metadata.uid);
  }
  return out.sort();
})()`

// runningWebJS counts the Running pods of the Deployment web.
const runningWebJS = `(async () => {
  const res = await kubetab.cluster.fetch('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb');
  const list = await res.json();
  return (list.items || []).filter((p) => p.status.phase === 'Running' && (p.status.containerStatuses || []).every((c) => c.ready)).length;
})()`

// waitSaved waits for a save of the cluster at or after its current
// revision: what a reload will find.
func waitSaved(t *testing.T, ctx context.Context) {
	t.Helper()
	rev := eval[string](t, ctx, `kubetab.cluster.fetch('/api/v1/namespaces').then((r) => r.json()).then((l) => l.metadata.resourceVersion)`)
	waitJS(t, ctx, "a save at revision "+rev, fmt.Sprintf(`kubetab.persist.saved && !kubetab.persist.saved.error && kubetab.persist.saved.revision >= %s`, rev), 60*time.Second)
}

// reload reloads the page in the same profile and waits for the cluster.
func reload(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the cluster to be ready after the reload", `window.kubetab && window.kubetab.cluster && window.kubetab.cluster.isReady`, 90*time.Second)
}

// acceptDialogs answers every confirm() with OK.
func acceptDialogs(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.confirm = () => true;`}); err != nil {
		t.Fatal(err)
	}
}

// The cluster survives a reload, and travels by file and by link into
// fresh profiles; Reset empties it; a corrupt save gives a message and a
// working fresh cluster. Each step names the acceptance item it shows.
func TestPersist(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	acceptDialogs(t, ctx)
	openSite(t, ctx, siteURL)
	if r := eval[float64](t, ctx, `kubetab.persist.restored ? kubetab.persist.restored.bytes : -1`); r != 0 {
		t.Fatalf("a fresh profile restored %v bytes", r)
	}
	firstStart := eval[float64](t, ctx, `kubetab.persist.restored.ms`)
	c := typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=2", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create deployment: %s", c.Output)
	}
	typeLine(t, ctx, "kubectl create configmap settings --from-literal=color=blue", 60*time.Second)
	waitJS(t, ctx, "2 web pods Running", runningWebJS+`.then((n) => n === 2)`, 120*time.Second)
	waitSaved(t, ctx)
	before := eval[[]string](t, ctx, objectsJS)
	if !slices.ContainsFunc(before, func(s string) bool { return strings.HasPrefix(s, "Deployment default/web ") }) {
		t.Fatalf("no Deployment web in %v", before)
	}

	var exported []byte
	var link string
	t.Run("reload keeps the Deployment and its pods run again", func(t *testing.T) {
		_ = eval[bool](t, ctx, `(() => { sessionStorage.setItem('t0', String(Date.now())); return true })()`)
		reload(t, ctx)
		r := eval[map[string]any](t, ctx, `kubetab.persist.restored`)
		if r["error"] != nil && r["error"] != "" || r["bytes"].(float64) == 0 {
			t.Fatalf("restored: %v", r)
		}
		t.Logf("restored %v bytes, revision %v: %v ms of worker time from the saved bytes to a started cluster with its caches filled (a fresh start took %v ms)", r["bytes"], r["revision"], r["ms"], firstStart)
		_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask', buffered: true}), true`)
		waitJS(t, ctx, "2 web pods Running again", runningWebJS+`.then((n) => n === 2)`, 120*time.Second)
		tasks := eval[[]float64](t, ctx, `__longTasks`)
		t.Logf("reload to all Running: %v ms since the reload; %d main-thread long tasks, longest %.0f ms",
			eval[float64](t, ctx, `Date.now() - Number(sessionStorage.getItem('t0'))`), len(tasks), slices.Max(append(tasks, 0)))
		after := eval[[]string](t, ctx, objectsJS)
		if strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Fatalf("objects after the reload:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
		}
		if text := eval[string](t, ctx, `kubetab.consoleText()`); !strings.Contains(text, "your cluster from your last visit is back") {
			t.Errorf("no restore message in the console:\n%s", text)
		}
	})

	t.Run("export and share link", func(t *testing.T) {
		openMenu(t, ctx)
		click(t, ctx, "[data-persist=export]")
		waitJS(t, ctx, "the export", `kubetab.persist.lastExport`, 30*time.Second)
		b64 := eval[string](t, ctx, `(() => { let s = ''; for (const c of kubetab.persist.lastExport.data) s += String.fromCharCode(c); return btoa(s); })()`)
		var err error
		if exported, err = base64.StdEncoding.DecodeString(b64); err != nil || !strings.HasPrefix(string(exported), "kubetab store snapshot\n") {
			t.Fatalf("exported %d bytes: %v", len(exported), err)
		}
		click(t, ctx, "[data-persist=share]")
		waitJS(t, ctx, "the link", `kubetab.persist.lastLink`, 30*time.Second)
		link = eval[string](t, ctx, `kubetab.persist.lastLink`)
		if !strings.Contains(link, "#cluster=1.") || len(link) > 17000 {
			t.Fatalf("link %d characters: %.80s", len(link), link)
		}
		t.Logf("exported %d bytes; share link %d characters", len(exported), len(link))
		shots(t, ctx, "menu")
	})

	t.Run("export then import into a fresh profile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "cluster.snapshot")
		if err := os.WriteFile(file, exported, 0o644); err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "notes.txt")
		os.WriteFile(bad, []byte("not a snapshot"), 0o644)
		ctx2, _ := newBrowser(t)
		acceptDialogs(t, ctx2)
		openSite(t, ctx2, siteURL)
		fresh := eval[[]string](t, ctx2, objectsJS)
		// A bad file: a clear message, nothing changes.
		importFile(t, ctx2, bad)
		waitJS(t, ctx2, "the refusal", `kubetab.persist.messages.some((m) => m.key === 'persist.importFailed')`, 30*time.Second)
		if got := eval[[]string](t, ctx2, objectsJS); strings.Join(got, "\n") != strings.Join(fresh, "\n") {
			t.Fatalf("a bad file changed the cluster:\n%s", strings.Join(got, "\n"))
		}
		if text := eval[string](t, ctx2, `kubetab.consoleText()`); !strings.Contains(text, "notes.txt is not a kubetab cluster snapshot") {
			t.Errorf("no clear message:\n%s", text)
		}
		importFile(t, ctx2, file)
		waitJS(t, ctx2, "the import", `kubetab.persist.messages.some((m) => m.key === 'persist.imported')`, 60*time.Second)
		waitJS(t, ctx2, "the same objects", objectsJS+fmt.Sprintf(`.then((o) => o.join('\n') === %q)`, strings.Join(before, "\n")), 60*time.Second)
		waitJS(t, ctx2, "2 web pods Running", runningWebJS+`.then((n) => n === 2)`, 120*time.Second)
	})

	t.Run("a share link opened in a fresh profile", func(t *testing.T) {
		ctx3, _ := newBrowser(t)
		acceptDialogs(t, ctx3)
		openSite(t, ctx3, link)
		waitJS(t, ctx3, "the link opened", `kubetab.persist.messages.some((m) => m.key === 'persist.opened' || m.key === 'persist.openFailed')`, 60*time.Second)
		if m := eval[string](t, ctx3, `kubetab.persist.messages.map((m) => m.text).join('\n')`); !strings.Contains(m, "opened the shared cluster") {
			t.Fatalf("messages: %s", m)
		}
		waitJS(t, ctx3, "the same objects", objectsJS+fmt.Sprintf(`.then((o) => o.join('\n') === %q)`, strings.Join(before, "\n")), 60*time.Second)
		if h := eval[string](t, ctx3, `location.hash`); h != "" {
			t.Errorf("the link's fragment is still there: %.40s", h)
		}
		// A damaged link: a clear message, nothing changes.
		got := eval[[]string](t, ctx3, objectsJS)
		_ = eval[bool](t, ctx3, fmt.Sprintf(`(location.hash = %q, true)`, "cluster=1."+strings.Repeat("A", 200)))
		waitJS(t, ctx3, "the refusal", `kubetab.persist.messages.some((m) => m.key === 'persist.openFailed')`, 30*time.Second)
		if now := eval[[]string](t, ctx3, objectsJS); strings.Join(now, "\n") != strings.Join(got, "\n") {
			t.Fatal("a bad link changed the cluster")
		}
	})

	t.Run("reset empties the cluster, and stays empty after a reload", func(t *testing.T) {
		openMenu(t, ctx)
		click(t, ctx, "[data-persist=reset]")
		waitJS(t, ctx, "the reset", `kubetab.persist.messages.some((m) => m.key === 'persist.resetDone')`, 60*time.Second)
		waitJS(t, ctx, "no Deployment", `kubetab.cluster.fetch('/apis/apps/v1/namespaces/default/deployments').then((r) => r.json()).then((l) => l.items.length === 0)`, 30*time.Second)
		waitSaved(t, ctx)
		reload(t, ctx)
		if n := eval[int](t, ctx, `kubetab.cluster.fetch('/apis/apps/v1/deployments').then((r) => r.json()).then((l) => l.items.length)`); n != 0 {
			t.Fatalf("%d Deployments after Reset and a reload", n)
		}
		if n := eval[int](t, ctx, `kubetab.cluster.fetch('/api/v1/namespaces/default/configmaps/settings').then((r) => r.status)`); n != 404 {
			t.Fatalf("configmap settings after Reset: %d", n)
		}
	})

	t.Run("a corrupt save gives a message and a working fresh cluster", func(t *testing.T) {
		ctx4, _ := newBrowser(t)
		// Any page of the site's origin can write its IndexedDB.
		if err := chromedpNavigate(ctx4, siteURL+"favicon.svg"); err != nil {
			t.Fatal(err)
		}
		_ = eval[bool](t, ctx4, `new Promise((resolve, reject) => {
  const req = indexedDB.open('kubetab', 1);
  req.onupgradeneeded = () => req.result.createObjectStore('cluster');
  req.onsuccess = () => {
    const tx = req.result.transaction('cluster', 'readwrite');
    const junk = new TextEncoder().encode('kubetab store snapshot\n\x01' + 'garbage'.repeat(50));
    tx.objectStore('cluster').put({format: 1, data: junk, lesson: '', revision: 9, savedAt: Date.now()}, 'page');
    tx.oncomplete = () => { req.result.close(); resolve(true); };
    tx.onerror = () => reject(tx.error);
  };
  req.onerror = () => reject(req.error);
})`)
		openSite(t, ctx4, siteURL)
		r := eval[map[string]any](t, ctx4, `kubetab.persist.restored`)
		if e, _ := r["error"].(string); !strings.Contains(e, "snapshot") {
			t.Fatalf("restored: %v", r)
		}
		waitJS(t, ctx4, "the message", `kubetab.consoleText().includes('could not be restored, so this is a fresh one')`, 30*time.Second)
		c := typeLine(t, ctx4, "kubectl create deployment web --image=hello", 60*time.Second)
		if *c.Code != 0 {
			t.Fatalf("the fresh cluster does not work: %s", c.Output)
		}
		waitJS(t, ctx4, "1 web pod Running", runningWebJS+`.then((n) => n === 1)`, 120*time.Second)
		shots(t, ctx4, "corrupt")
	})
}

// openMenu opens the cluster menu (clicking its summary would toggle it).
func openMenu(t *testing.T, ctx context.Context) {
	t.Helper()
	_ = eval[bool](t, ctx, `(document.querySelector('[data-persist=menu]').open = true, true)`)
}

// importFile picks path in the Import file picker.
func importFile(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(`[data-persist=file]`), []string{path})); err != nil {
		t.Fatal(err)
	}
}

// shots saves the cluster menu open at three sizes in both languages to
// $KUBETAB_SHOTS, when set.
func shots(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	for _, lang := range []string{"en", "ja"} {
		_ = eval[bool](t, ctx, fmt.Sprintf(`(document.documentElement.lang !== %q && document.querySelector('#lang').click(), true)`, lang))
		for _, s := range []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
				t.Fatal(err)
			}
			_ = eval[bool](t, ctx, `(document.querySelector('[data-persist=menu]').open = true, true)`)
			shot(t, ctx, filepath.Join(dir, fmt.Sprintf("persist-%s-%s-%dx%d.png", name, lang, s.w, s.h)))
		}
	}
	_ = eval[bool](t, ctx, `(document.documentElement.lang !== 'en' && document.querySelector('#lang').click(), document.querySelector('[data-persist=menu]').open = false, true)`)
	chromedp.Do(ctx, chromedp.EmulateViewport(1360, 860))
}
