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

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// pressKey presses and releases one key (Tab, Escape ...) with optional
// modifiers (input.ModifierCtrl ...), as a keyboard does.
func pressKey(t *testing.T, ctx context.Context, key, code string, vk int64, text string) {
	t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk}
		if typ == input.DispatchKeyEventTypeKeyDown && text != "" {
			p.Text = text
		}
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			t.Fatalf("press %s: %v", key, err)
		}
	}
}

func pressTab(t *testing.T, ctx context.Context) { t.Helper(); pressKey(t, ctx, "Tab", "Tab", 9, "") }

// ctrl presses Ctrl and a letter.
func ctrl(t *testing.T, ctx context.Context, letter string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(letter, chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatal(err)
	}
}

// logLongTasks reports the main thread's long tasks since window.longTasks
// was emptied.
func logLongTasks(t *testing.T, ctx context.Context, during string) {
	t.Helper()
	tasks := eval[[]float64](t, ctx, `longTasks`)
	longest := 0.0
	for _, d := range tasks {
		longest = max(longest, d)
	}
	t.Logf("long tasks during %s: %d, longest %.0f ms", during, len(tasks), longest)
}

// consoleLine is the line being edited at the prompt.
func consoleLine(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `kubetab.console.line.join('')`)
}

func waitLine(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	waitJS(t, ctx, what, `!kubetab.console.completing && (`+cond+`)`, 20*time.Second)
}

// runQuiet runs a line that must succeed.
func mustType(t *testing.T, ctx context.Context, line string) command {
	t.Helper()
	c := typeLine(t, ctx, line, 60*time.Second)
	if c.Code == nil || *c.Code != 0 {
		t.Fatalf("%s: %+v", line, c)
	}
	return c
}

// TestConsoleKeys: Tab completes as kubectl's bash completion does, a
// second Tab lists the choices; wide tables keep their rows; Ctrl-R finds
// an earlier line; readline's cut keys; a pasted here-document runs;
// "No resources found" is not red but errors are; the history and the
// files survive a reload; the Japanese page prints help in Japanese.
func TestConsoleKeys(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	eval[bool](t, ctx, `(() => {
		window.longTasks = [];
		new PerformanceObserver((l) => { for (const e of l.getEntries()) longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: false });
		return true; })()`)

	mustType(t, ctx, "kubectl create deployment web --image=hello --replicas=2")
	var pods []string
	deadline := time.Now().Add(90 * time.Second)
	for len(pods) < 2 {
		c := typeLine(t, ctx, "kubectl get pods -o name", 30*time.Second)
		pods = nil
		for _, f := range strings.Fields(c.Output) {
			pods = append(pods, strings.TrimPrefix(f, "pod/"))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two pods: %q", c.Output)
		}
	}
	prefix := pods[0]
	for _, p := range pods[1:] {
		for !strings.HasPrefix(p, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}

	// Tab: the common prefix of the two pods' names; a second Tab lists both.
	eval[bool](t, ctx, `kubetab.console.focus(), window.longTasks.length = 0, true`)
	typeText(t, ctx, "kubectl logs web-")
	pressTab(t, ctx)
	waitLine(t, ctx, "Tab to complete the pods' common prefix", fmt.Sprintf(`kubetab.console.line.join('') === %q`, "kubectl logs "+prefix))
	pressTab(t, ctx)
	waitJS(t, ctx, "a second Tab to list both pods", fmt.Sprintf(
		`kubetab.consoleText().split('\n').some(l => l.includes(%q) && l.includes(%q))`, pods[0], pods[1]), 20*time.Second)
	logLongTasks(t, ctx, "two Tabs")
	if got := consoleLine(t, ctx); got != "kubectl logs "+prefix {
		t.Errorf("after listing, the line is %q", got)
	}
	// One more character makes it unique: the whole name and a space.
	typeText(t, ctx, pods[0][len(prefix):len(prefix)+1])
	if len(pods[0]) > len(prefix)+1 && pods[1][len(prefix)] != pods[0][len(prefix)] {
		pressTab(t, ctx)
		waitLine(t, ctx, "Tab to complete the pod's name", fmt.Sprintf(`kubetab.console.line.join('') === %q`, "kubectl logs "+pods[0]+" "))
	}
	ctrl(t, ctx, "u")
	waitLine(t, ctx, "Ctrl-U to clear the line", `kubetab.console.line.length === 0`)

	// Resource types and short names.
	typeText(t, ctx, "kubectl get deployments.ap")
	pressTab(t, ctx)
	waitLine(t, ctx, "Tab to complete the type", `kubetab.console.line.join('') === 'kubectl get deployments.apps '`)
	typeText(t, ctx, "w")
	pressTab(t, ctx)
	waitLine(t, ctx, "Tab to complete the deployment", `kubetab.console.line.join('') === 'kubectl get deployments.apps web '`)

	// Readline's cut keys: Ctrl-W the word before, Ctrl-A then Ctrl-K the rest, Ctrl-Y back.
	ctrl(t, ctx, "w")
	waitLine(t, ctx, "Ctrl-W", `kubetab.console.line.join('') === 'kubectl get deployments.apps '`)
	ctrl(t, ctx, "a")
	ctrl(t, ctx, "k")
	waitLine(t, ctx, "Ctrl-A Ctrl-K", `kubetab.console.line.length === 0`)
	ctrl(t, ctx, "y")
	waitLine(t, ctx, "Ctrl-Y", `kubetab.console.line.join('') === 'kubectl get deployments.apps '`)
	ctrl(t, ctx, "e")
	ctrl(t, ctx, "u")

	// A phone-sized console: -o wide rows stay whole, one buffer line each.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the terminal to fit the phone", `kubetab.console.viewCols < 60`, 10*time.Second)
	eval[bool](t, ctx, `(window.longTasks.length = 0, true)`)
	c := mustType(t, ctx, "kubectl get pods -o wide")
	rows := strings.Split(strings.TrimSpace(c.Output), "\n")
	// xterm parses what it is given on later ticks, and a loaded machine may
	// take seconds: wait until every row is on one terminal line (a pod's name
	// alone would not do, the Tab listing above printed them already).
	trimmed := make([]string, len(rows))
	for i, row := range rows {
		trimmed[i] = strings.TrimRight(row, " ")
	}
	want, _ := json.Marshal(trimmed)
	_, _ = chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`(() => {
		const lines = kubetab.consoleText().split('\n');
		return %s.every(r => lines.some(l => l.includes(r)));
	})()`, want), chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	text := eval[string](t, ctx, `kubetab.consoleText()`)
	for _, row := range rows {
		row = strings.TrimRight(row, " ")
		found := false
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, row) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the row %q is not on one line of the terminal (%d columns, view %d):\n%s", row,
				eval[int](t, ctx, `kubetab.console.term.cols`), eval[int](t, ctx, `kubetab.console.viewCols`), text)
		}
	}
	logLongTasks(t, ctx, "kubectl get pods -o wide widening the terminal")
	if cols := eval[int](t, ctx, `kubetab.console.term.cols`); cols <= eval[int](t, ctx, `kubetab.console.viewCols`) {
		t.Errorf("the terminal did not widen: %d columns", cols)
	}
	// The phone's on-screen keyboard: the visual viewport shrinks to the
	// part above it while the layout stays (pinch zoom shrinks it the same
	// way, so a page scale of 2 stands for a keyboard over the lower half).
	// The prompt's row must stay inside what is visible, after the
	// keyboard comes up and after a line runs.
	cursorVisible := `(() => {
		const t = kubetab.console.term, vv = window.visualViewport;
		const cell = t._core._renderService.dimensions.css.cell.height;
		const top = t.element.querySelector('.xterm-screen').getBoundingClientRect().top;
		const bottom = top + (t.buffer.active.cursorY + 1) * cell;
		return vv.height < innerHeight - 80 && bottom <= vv.offsetTop + vv.height + 1 && bottom - cell >= vv.offsetTop - 1;
	})()`
	mustType(t, ctx, "kubectl get nodes")
	if _, err := chromedp.Call(ctx, emulation.SetPageScaleFactor, emulation.SetPageScaleFactorParams{PageScaleFactor: 2}); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the prompt above the keyboard", cursorVisible, 10*time.Second)
	mustType(t, ctx, "kubectl get pods")
	waitJS(t, ctx, "the prompt above the keyboard after a command", cursorVisible, 10*time.Second)
	if _, err := chromedp.Call(ctx, emulation.SetPageScaleFactor, emulation.SetPageScaleFactorParams{PageScaleFactor: 1}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1360, 860)); err != nil {
		t.Fatal(err)
	}

	// Ctrl-R: type part of an earlier line, Enter runs it.
	mustType(t, ctx, "echo first-marker")
	mustType(t, ctx, "kubectl get nodes")
	n := eval[int](t, ctx, `kubetab.commands.length`)
	ctrl(t, ctx, "r")
	typeText(t, ctx, "first-m")
	waitLine(t, ctx, "Ctrl-R to find the line", `kubetab.console.line.join('') === 'echo first-marker'`)
	waitJS(t, ctx, "the search prompt", `kubetab.consoleText().includes("(reverse-i-search)\u2018first-m\u2019: echo first-marker")`, 10*time.Second)
	pressEnter(t, ctx)
	waitJS(t, ctx, "the found line to run", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 30*time.Second)
	if got := eval[string](t, ctx, fmt.Sprintf(`kubetab.commands[%d].line`, n)); got != "echo first-marker" {
		t.Errorf("Ctrl-R ran %q", got)
	}

	// A pasted here-document (xterm's paste: what Ctrl-V gives) runs as one command.
	n = eval[int](t, ctx, `kubetab.commands.length`)
	eval[bool](t, ctx, "kubetab.console.term.paste('cat <<EOF > pasted.yaml\\nkind: ConfigMap\\n\\tindented: yes\\nEOF\\n'), true")
	waitJS(t, ctx, "the pasted heredoc to run", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 30*time.Second)
	c = mustType(t, ctx, "cat pasted.yaml")
	if c.Output != "kind: ConfigMap\n\tindented: yes\n" {
		t.Errorf("the pasted file holds %q", c.Output)
	}

	// A CronJob on Tokyo time: the tab's Go carries the zone database
	// (time/tzdata), which a browser does not give it.
	mustType(t, ctx, `kubectl create cronjob tokyo --image=hello --schedule="0 9 * * *"`)
	if c := mustType(t, ctx, `kubectl patch cronjob tokyo -p '{"spec":{"timeZone":"Asia/Tokyo"}}'`); c.Output != "cronjob.batch/tokyo patched\n" {
		t.Errorf("timeZone Asia/Tokyo: %q", c.Output)
	}

	// Colours: "No resources found" is plain, an error is red.
	mustType(t, ctx, "kubectl create namespace quiet")
	mustType(t, ctx, "kubectl get pods -n quiet")
	typeLine(t, ctx, "kubectl get podz", 30*time.Second)
	colour := func(prefix string) string {
		return eval[string](t, ctx, fmt.Sprintf(`(() => {
			const b = kubetab.console.term.buffer.active;
			for (let i = b.length - 1; i >= 0; i--) {
				const l = b.getLine(i);
				if (l.translateToString(true).startsWith(%q)) {
					const c = l.getCell(0);
					return c.isFgDefault() ? 'default' : c.isFgPalette() ? 'palette ' + c.getFgColor() : 'rgb ' + c.getFgColor();
				}
			}
			return 'missing';
		})()`, prefix))
	}
	// xterm parses what it is given on later ticks: wait for both lines.
	waitJS(t, ctx, "both lines in the terminal", `(t => t.includes("No resources found in quiet namespace.") && t.includes("error: the server doesn't have a resource type"))(kubetab.consoleText())`, 30*time.Second)
	if got := colour("No resources found in quiet namespace."); got != "default" {
		t.Errorf(`"No resources found" is coloured %s, want the default colour`, got)
	}
	if got := colour("error: the server doesn't have a resource type"); got != "palette 210" {
		t.Errorf("an error is coloured %s, want red (palette 210)", got)
	}

	// A reload keeps the history and the files.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the cluster to be ready again", `window.kubetab && window.kubetab.cluster.isReady`, 90*time.Second)
	eval[bool](t, ctx, `kubetab.console.focus(), true`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowUp)); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ctx, "↑ to bring back the last line after the reload", `kubetab.console.line.join('') === 'kubectl get podz'`)
	ctrl(t, ctx, "u")
	c = mustType(t, ctx, "cat pasted.yaml")
	if c.Output != "kind: ConfigMap\n\tindented: yes\n" {
		t.Errorf("after a reload, pasted.yaml holds %q", c.Output)
	}

	// Japanese: help, a builtin's --help and the welcome speak it.
	click(t, ctx, "#lang")
	c = mustType(t, ctx, "help")
	for _, want := range []string{"このコンソールのコマンドです", "クラスターを操作します", "ファイルを表示します"} {
		if !strings.Contains(c.Output, want) {
			t.Errorf("help in Japanese lacks %q:\n%s", want, c.Output)
		}
	}
	c = mustType(t, ctx, "help cat")
	if !strings.Contains(c.Output, "使い方: cat") {
		t.Errorf("help cat in Japanese: %q", c.Output)
	}
	c = mustType(t, ctx, "node --help")
	if !strings.Contains(c.Output, "ノード") {
		t.Errorf("node --help in Japanese: %q", c.Output)
	}
	// kubectl stays as upstream prints it.
	c = mustType(t, ctx, "kubectl get ns default")
	if !strings.Contains(c.Output, "NAME") {
		t.Errorf("kubectl get ns in Japanese: %q", c.Output)
	}
}

// TestConsoleScreenshots saves the console with a wide table and Tab's
// list, at three window sizes in both languages, to $KUBETAB_SHOTS.
func TestConsoleScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("KUBETAB_SHOTS")
	if dir == "" {
		t.Skip("KUBETAB_SHOTS is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"en", "ja"} {
		t.Run(lang, func(t *testing.T) {
			ctx, _ := newBrowser(t)
			// ?lang=ja gives a Japanese learner's first view (the welcome too).
			openSite(t, ctx, siteURL+"?lang="+lang)
			mustType(t, ctx, "kubectl create deployment web --image=hello --replicas=3")
			waitJS(t, ctx, "three pods running", `(async () => {
				const r = await kubetab.cluster.fetch('/api/v1/namespaces/default/pods');
				const l = await r.json();
				return l.items.filter(p => p.status.phase === 'Running').length === 3; })()`, 90*time.Second)
			for _, s := range []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}} {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
					t.Fatal(err)
				}
				eval[bool](t, ctx, `kubetab.console.focus(), true`)
				ctrl(t, ctx, "l")
				mustType(t, ctx, "help")
				mustType(t, ctx, "kubectl get pods -o wide")
				typeLine(t, ctx, "kubectl get pods -n nowhere", 30*time.Second)
				typeText(t, ctx, "kubectl get de")
				pressTab(t, ctx)
				pressTab(t, ctx)
				waitLine(t, ctx, "the Tab list", `kubetab.consoleText().includes('deployments.apps')`)
				shot(t, ctx, filepath.Join(dir, fmt.Sprintf("console-%s-%dx%d.png", lang, s.w, s.h)))
				ctrl(t, ctx, "u")
			}
		})
	}
}

// TestPhoneOpensAtTop: on a phone the page opens at its top, on the course,
// though the console has the focus (typing works at once) and the views'
// tab strip shows its first tab: neither may scroll the page down to them.
func TestPhoneOpensAtTop(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	openSite(t, ctx, siteURL)
	// The console's focus handler acts 300 ms after the focus.
	got := eval[string](t, ctx, `new Promise(r => setTimeout(r, 600)).then(() => JSON.stringify({y: scrollY, console: document.activeElement === kubetab.console.term.textarea}))`)
	if got != `{"y":0,"console":true}` {
		t.Errorf("after the page opened on a phone: %s, want the page at its top with the console focused", got)
	}
}
