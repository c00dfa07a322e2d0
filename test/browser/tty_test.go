package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// pressCtrl presses Ctrl and a letter key, as xterm.js reads it (Ctrl-C is
// "\x03").
func pressCtrl(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	code := "Key" + strings.ToUpper(key)
	vk := int64(strings.ToUpper(key)[0])
	ctrlChar := string(rune(vk - 64))
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk, Modifiers: 2}
		if typ == input.DispatchKeyEventTypeKeyDown {
			p.Text, p.UnmodifiedText = ctrlChar, key
		}
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			t.Fatalf("press Ctrl-%s: %v", key, err)
		}
	}
}

// typeKeys types text and Enter into the terminal without waiting: the keys
// of a TTY session go to the container's shell.
func typeKeys(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	typeText(t, ctx, text)
	pressEnter(t, ctx)
}

// waitScreenAfter waits until the console's text, after its first from
// characters, contains want, and returns the index after it.
func waitScreenAfter(t *testing.T, ctx context.Context, from int, want string, timeout time.Duration) int {
	t.Helper()
	expr := fmt.Sprintf(`kubetab.consoleText().indexOf(%q, %d)`, want, from)
	waitJS(t, ctx, fmt.Sprintf("%q on the screen", want), expr+` >= 0`, timeout)
	return eval[int](t, ctx, expr) + len(want)
}

// TestConsoleTerminal (issue #13): a TTY session in the page's console.
// kubectl run -it --rm busybox sh is a shell in a pod whose keys go to the
// container's terminal: wget reaches a Service, hostname is the pod's,
// Ctrl-C stops a sleep and the shell prompts again, exit ends the session,
// the console's prompt returns and --rm deletes the pod; kubectl exec -it
// into a web pod lists /etc. With KUBETAB_SHOTS set it saves the session
// at three sizes in English and Japanese.
func TestConsoleTerminal(t *testing.T) {
	t.Parallel()
	shots := os.Getenv("KUBETAB_SHOTS")
	for _, lang := range []string{"en", "ja"} {
		if lang == "ja" && shots == "" {
			continue
		}
		t.Run(lang, func(t *testing.T) {
			ctx, _ := newBrowser(t)
			openSite(t, ctx, siteURL+"?lang="+lang)
			_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask'}), true`)
			for _, line := range []string{
				"kubectl create deployment web --image=web",
				"kubectl expose deployment web --port=80 --target-port=8080",
				"kubectl wait --for=condition=Available deployment/web --timeout=120s",
			} {
				if c := typeLine(t, ctx, line, 150*time.Second); c.Code == nil || *c.Code != 0 {
					t.Fatalf("%s: %+v", line, c)
				}
			}
			n := eval[int](t, ctx, `kubetab.commands.length`)
			typeKeys(t, ctx, "kubectl run -it --rm debug --image=busybox --restart=Never -- sh")
			waitJS(t, ctx, "the console in raw mode", `kubetab.console.mode === 'raw'`, 120*time.Second)
			at := waitScreenAfter(t, ctx, 0, "If you don't see a command prompt, try pressing enter.", 10*time.Second)
			pressEnter(t, ctx)
			at = waitScreenAfter(t, ctx, at, "/ # ", 30*time.Second)
			_ = eval[bool](t, ctx, `window.__longTasks = [], true`)
			// The Service answers once kube-proxy has its endpoints: retry.
			deadline := time.Now().Add(60 * time.Second)
			for {
				typeKeys(t, ctx, "wget -qO- http://web")
				at = waitScreenAfter(t, ctx, at, "wget -qO- http://web", 10*time.Second)
				at = waitScreenAfter(t, ctx, at, "/ # ", 60*time.Second)
				if strings.Contains(eval[string](t, ctx, `kubetab.consoleText()`), "web: hello from web-") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("wget never reached web:\n%s", eval[string](t, ctx, `kubetab.consoleText()`))
				}
				time.Sleep(time.Second)
			}
			typeKeys(t, ctx, "hostname")
			at = waitScreenAfter(t, ctx, at, "hostname\ndebug\n/ # ", 30*time.Second)
			typeKeys(t, ctx, "sleep 100")
			at = waitScreenAfter(t, ctx, at, "sleep 100", 10*time.Second)
			waitJS(t, ctx, "sleep to run", fmt.Sprintf(`kubetab.consoleText().indexOf('sleep 100\n', %d) >= 0`, at-len("sleep 100")), 10*time.Second)
			time.Sleep(500 * time.Millisecond)
			pressCtrl(t, ctx, "c")
			at = waitScreenAfter(t, ctx, at, "^C\n/ # ", 30*time.Second)
			if code := eval[*int](t, ctx, fmt.Sprintf(`kubetab.commands[%d].code`, n)); code != nil {
				t.Fatalf("Ctrl-C ended kubectl (exit %d), not the sleep", *code)
			}
			typeKeys(t, ctx, "ls /etc")
			at = waitScreenAfter(t, ctx, at, "resolv.conf", 30*time.Second)
			at = waitScreenAfter(t, ctx, at, "/ # ", 30*time.Second)
			lt := eval[[]float64](t, ctx, `__longTasks`)
			longest := 0.0
			for _, d := range lt {
				longest = max(longest, d)
			}
			t.Logf("long tasks during the session (wget, hostname, sleep, Ctrl-C, ls): %d, longest %.0f ms", len(lt), longest)
			if shots != "" {
				saveShots(t, ctx, shots, "tty-"+lang)
			}
			typeKeys(t, ctx, "exit")
			waitJS(t, ctx, "kubectl run to end", fmt.Sprintf(`kubetab.commands[%d].code !== null`, n), 60*time.Second)
			c := eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n))
			if *c.Code != 0 || !strings.HasSuffix(c.Output, "pod \"debug\" deleted\n") || strings.Contains(c.Output, "Session ended") {
				t.Errorf("kubectl run -it --rm: exit %d, printed %q", *c.Code, c.Output)
			}
			if mode := eval[string](t, ctx, `kubetab.console.mode`); mode != "" {
				t.Errorf("the console is still in mode %q", mode)
			}
			// The console's prompt is back: lines run as before.
			if c := typeLine(t, ctx, "kubectl wait --for=delete pod/debug --timeout=60s", 90*time.Second); c.Code == nil || *c.Code != 0 {
				t.Errorf("the pod was not deleted: %+v", c)
			}

			// exec -it into a web pod.
			n = eval[int](t, ctx, `kubetab.commands.length`)
			typeKeys(t, ctx, "kubectl exec -it deploy/web -- sh")
			waitJS(t, ctx, "the console in raw mode", `kubetab.console.mode === 'raw'`, 60*time.Second)
			at = waitScreenAfter(t, ctx, eval[int](t, ctx, `kubetab.consoleText().length`)-200, "/ # ", 30*time.Second)
			typeKeys(t, ctx, "ls /etc")
			at = waitScreenAfter(t, ctx, at, "hostname", 30*time.Second)
			at = waitScreenAfter(t, ctx, at, "resolv.conf", 30*time.Second)
			if shots != "" {
				saveShots(t, ctx, shots, "tty-exec-"+lang)
			}
			typeKeys(t, ctx, "exit")
			waitJS(t, ctx, "kubectl exec to end", fmt.Sprintf(`kubetab.commands[%d].code !== null`, n), 60*time.Second)
			if c := eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n)); *c.Code != 0 {
				t.Errorf("kubectl exec -it: exit %d, printed %q", *c.Code, c.Output)
			}
		})
	}
}

// saveShots saves the page at 1440x900, 1280x720 and 390x844 as
// dir/name-WxH.png, then returns to 1440x900.
func saveShots(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the terminal refits (a ResizeObserver)
		_ = eval[bool](t, ctx, `kubetab.console.focus(), new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
		shot(t, ctx, filepath.Join(dir, fmt.Sprintf("%s-%dx%d.png", name, s.w, s.h)))
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}
}
