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

// TestKiosk: `kubetab serve --kiosk` makes every page a classroom kiosk.
// "New student" (after its confirmation) wipes what the student left (a
// Deployment in the cluster, something in localStorage, a lesson route) and
// reloads into a fresh cluster; an idle kiosk warns, then does the same; a
// link off the machine does nothing.
func TestKiosk(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("KUBETAB_BIN")
	if bin == "" {
		t.Skip("KUBETAB_BIN is not set")
	}
	cmd, url, err := startServe(bin, "--kiosk", "--kiosk-idle", "10m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url = strings.TrimSuffix(url, "/") + "/"

	ctx, _ := newBrowserFor(t, url)
	openSite(t, ctx, url+"#/lessons")
	waitJS(t, ctx, "the New student button", `document.querySelector('[data-kiosk-reset]')`, 10*time.Second)
	if out := typeLine(t, ctx, "kubectl create deployment web --image=hello", 30*time.Second); !strings.Contains(out.Output, "created") {
		t.Fatalf("create: %q", out.Output)
	}
	eval[bool](t, ctx, `(localStorage.setItem('kubetab.test-student', 'was here'), true)`)

	// New student: a confirmation first; Cancel keeps everything.
	click(t, ctx, "[data-kiosk-reset]")
	waitJS(t, ctx, "the confirmation", `document.querySelector('[data-kiosk-dialog]').open && document.querySelector('[data-kiosk-confirm]')`, 5*time.Second)
	if dir := os.Getenv("KUBETAB_SHOTS"); dir != "" {
		for _, lang := range []string{"en", "ja"} {
			if lang == "ja" {
				eval[bool](t, ctx, `(document.querySelector('#lang').click(), true)`)
			}
			for _, sz := range [][2]int64{{1440, 900}, {1280, 720}, {390, 844}} {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(sz[0], sz[1])); err != nil {
					t.Fatal(err)
				}
				shot(t, ctx, filepath.Join(dir, fmt.Sprintf("kiosk-%s-%dx%d.png", lang, sz[0], sz[1])))
			}
		}
		eval[bool](t, ctx, `(document.querySelector('#lang').click(), true)`)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1360, 860)); err != nil {
			t.Fatal(err)
		}
	}
	click(t, ctx, "[data-kiosk-dialog] [data-kiosk-cancel]")
	if eval[bool](t, ctx, `document.querySelector('[data-kiosk-dialog]').open`) || eval[string](t, ctx, `localStorage.getItem('kubetab.test-student')`) != "was here" {
		t.Fatal("Cancel changed something")
	}
	// The reset wipes localStorage before it reloads: a mark on this
	// page's window tells the old page from the new one.
	eval[bool](t, ctx, `(window.__oldPage = true)`)
	click(t, ctx, "[data-kiosk-reset]")
	click(t, ctx, "[data-kiosk-confirm]")
	waitAcrossReload(t, ctx, "the reload into a fresh cluster", `!window.__oldPage && window.kubetab && kubetab.cluster.isReady && kubetab.commands.length === 0 && localStorage.getItem('kubetab.test-student') === null`, 90*time.Second)
	if out := typeLine(t, ctx, "kubectl get deployments", 30*time.Second); !strings.Contains(out.Output, "No resources found in default namespace.") {
		t.Fatalf("after New student, get deployments: %q", out.Output)
	}

	// Idle: a warning 30 s before, which input cancels; then the reset
	// (pretendIdle moves the last input back in time).
	waitJS(t, ctx, "kiosk mode after the reload", `window.kubetab && kubetab.kiosk`, 10*time.Second)
	eval[bool](t, ctx, `(localStorage.setItem('kubetab.test-student', 'idle one'), kubetab.kiosk.pretendIdle(580), true)`)
	waitJS(t, ctx, "the idle warning", `document.querySelector('[data-kiosk-dialog]').open && /\d+/.test(document.querySelector('[data-kiosk-dialog] p').textContent)`, 5*time.Second)
	click(t, ctx, "[data-kiosk-dialog] [data-kiosk-cancel]")
	if eval[float64](t, ctx, `kubetab.kiosk.idleFor()`) > 5 {
		t.Fatal("the warning's button did not count as presence")
	}
	eval[bool](t, ctx, `(window.__oldPage = true, kubetab.kiosk.pretendIdle(601), true)`)
	waitAcrossReload(t, ctx, "the idle reset", `!window.__oldPage && window.kubetab && kubetab.cluster && kubetab.cluster.isReady && localStorage.getItem('kubetab.test-student') === null`, 90*time.Second)

	// A link off the machine does nothing, and says why.
	waitJS(t, ctx, "kiosk mode after the reload", `window.kubetab && kubetab.kiosk`, 30*time.Second)
	eval[bool](t, ctx, `(() => { const a = document.createElement('a'); a.href = 'https://kubernetes.io/docs/'; a.id = 'off'; a.textContent = 'docs'; document.querySelector('footer').append(a); return true; })()`)
	click(t, ctx, "#off")
	waitJS(t, ctx, "the note", `(n => n && !n.hidden && n.textContent.includes('turned off'))(document.querySelector('.kiosk-note'))`, 5*time.Second)
	if got := eval[string](t, ctx, `location.origin + '/'`); got != url {
		t.Errorf("after clicking a link off the machine the page is at %s", got)
	}
}

// waitAcrossReload is waitJS for a condition that holds after the page
// reloads: an evaluation that fails because the page navigated is retried.
func waitAcrossReload(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: timed out (last error %v)", what, last)
}
