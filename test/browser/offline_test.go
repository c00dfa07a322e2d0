package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestOffline is the classroom on a train: the first visit caches the app
// (sw.js), then with the server stopped and the browser offline (CDP
// Network.emulateNetworkConditionsByRule, the service worker included) a
// second visit and a reload load the page and run kubectl get nodes. Then a
// new build on the same address (serve --lessons with a changed lesson:
// new lesson JSON, so a new sw.js) replaces the cached one: the old cache is
// deleted and the next load shows the changed lesson.
func TestOffline(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("KUBETAB_BIN")
	if bin == "" {
		t.Skip("KUBETAB_BIN is not set")
	}
	serve, url, err := startServe(bin)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			serve.Process.Signal(os.Interrupt)
			serve.Wait()
			stopped = true
		}
	}
	t.Cleanup(stop)

	ctx, _ := newBrowserFor(t, url)
	openSite(t, ctx, url)
	first := waitCached(t, ctx, "")
	t.Logf("first visit cached build %s", first)

	// No network: the server is gone and the browser is offline.
	stop()
	setOffline(t, ctx, true)
	for _, how := range []string{"second visit", "reload"} {
		if how == "reload" {
			if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
				t.Fatalf("reload: %v", err)
			}
			waitJS(t, ctx, "the cluster to be ready", `window.kubetab && window.kubetab.cluster.isReady`, 90*time.Second)
		} else {
			if err := chromedpNavigate(ctx, "about:blank"); err != nil {
				t.Fatal(err)
			}
			openSite(t, ctx, url)
		}
		if online := eval[bool](t, ctx, `navigator.onLine`); online {
			t.Errorf("%s: navigator.onLine is true; the emulation did not apply", how)
		}
		c := typeLine(t, ctx, "kubectl get nodes", 60*time.Second)
		if *c.Code != 0 || !strings.Contains(c.Output, "node-1") {
			t.Fatalf("%s offline: kubectl get nodes: code %d, output %q", how, *c.Code, c.Output)
		}
	}
	// The lessons come from the cache too.
	if title := eval[string](t, ctx, `fetch('lessons/index.json').then(r => r.json()).then(j => j.lessons[0].languages.en.title)`); title == "" {
		t.Error("lessons/index.json offline: no first lesson")
	}

	// A new build at the same address: the first lesson's English title changes.
	lessons := changedLessons(t)
	setOffline(t, ctx, false)
	// serve the new build where the old one was: a service worker belongs to its origin
	serve, err = startServeAt(bin, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"), "--lessons", lessons)
	if err != nil {
		t.Fatal(err)
	}
	stopped = false
	// This load is still the cached build; the browser finds the new sw.js.
	openSite(t, ctx, url)
	second := waitCached(t, ctx, first)
	t.Logf("the new build %s replaced %s", second, first)
	openSite(t, ctx, url)
	title := eval[string](t, ctx, `fetch('lessons/index.json').then(r => r.json()).then(j => j.lessons[0].languages.en.title)`)
	if !strings.HasSuffix(title, "(changed)") {
		t.Errorf("after the new build, the first lesson is %q; want the changed title", title)
	}
}

// startServeAt runs kubetab serve on addr (host:port).
func startServeAt(bin, addr string, flags ...string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr}, flags...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	buf := make([]byte, 256)
	deadline := time.Now().Add(30 * time.Second)
	var got strings.Builder
	for time.Now().Before(deadline) {
		n, err := out.Read(buf)
		got.Write(buf[:n])
		if strings.Contains(got.String(), "http://") {
			go func() {
				for {
					if _, err := out.Read(buf); err != nil {
						return
					}
				}
			}()
			return cmd, nil
		}
		if err != nil {
			break
		}
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("kubetab serve --addr %s printed %q", addr, got.String())
}

// waitCached waits until the page is controlled by an active service worker
// whose cache (kubetab-<version>) is the only kubetab- cache and holds every
// file of its build, and returns the version; not, when not empty, is the
// version it must differ from (an older build).
func waitCached(t *testing.T, ctx context.Context, not string) string {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	last := ""
	for {
		state := eval[string](t, ctx, fmt.Sprintf(`(async () => {
			if (!window.kubetab || !kubetab.offline) return 'not registered';
			const reg = await kubetab.offline;
			if (!reg || !reg.active || reg.active.state !== 'activated') return 'not active: ' + (reg && reg.installing ? 'installing' : reg && reg.waiting ? 'waiting' : '-');
			if (!navigator.serviceWorker.controller) return 'no controller';
			const names = (await caches.keys()).filter(n => n.startsWith('kubetab-'));
			if (names.length !== 1) return 'caches: ' + names.join(',');
			if (names[0] === 'kubetab-' + %q) return 'still the old build';
			const sw = await (await caches.open(names[0])).keys();
			if (!sw.some(r => r.url.endsWith('/kubetab.wasm'))) return 'no kubetab.wasm in ' + names[0];
			return 'ok ' + names[0].slice('kubetab-'.length);
		})()`, not))
		if strings.HasPrefix(state, "ok ") {
			return strings.TrimPrefix(state, "ok ")
		}
		if state != last {
			t.Logf("service worker: %s", state)
			last = state
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app was never cached: %s", state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setOffline turns the browser's network off (or on) for the page, its
// workers and its service worker.
func setOffline(t *testing.T, ctx context.Context, offline bool) {
	t.Helper()
	var conds []*network.Conditions
	if offline {
		conds = []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	}
	yes := offline
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		EmulateOfflineServiceWorker: &yes, MatchedNetworkConditions: conds,
	}); err != nil {
		t.Fatalf("emulate offline=%v: %v", offline, err)
	}
	if _, err := chromedp.Call(ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{
		Offline: offline, DownloadThroughput: -1, UploadThroughput: -1,
	}); err != nil {
		t.Fatalf("override network state offline=%v: %v", offline, err)
	}
}

// changedLessons copies the course (../../lessons) into a temporary folder
// with the first lesson's English title changed.
func changedLessons(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dst, "*", "en.md"))
	if len(matches) == 0 {
		t.Fatal("no lessons/*/en.md")
	}
	first := matches[0]
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	changed := false
	for i, l := range lines {
		if strings.HasPrefix(l, "title:") {
			lines[i] = strings.TrimRight(l, " ") + " (changed)"
			changed = true
			break
		}
	}
	if !changed {
		t.Fatalf("%s: no title: line", first)
	}
	if err := os.WriteFile(first, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
