// Package browser tests kubetab the way a learner meets it: a real headless
// Chromium opens the site served by `kubetab serve`, types into the console,
// and reads the terminal and the live cluster panel.
//
// The tests need a built binary (the site and the wasm embedded) and
// Chromium, so they run only when KUBETAB_BIN names the binary; `./build.sh
// test` sets it. Plain `go test ./...` skips them.
//
// Every test (but the benchmarks) calls t.Parallel: each has its own
// Chromium profile and so its own cluster in its own worker, and they share
// only the `kubetab serve` started by TestMain. build.sh runs two at once
// (-parallel 2), which halves the step on CI's two cores, where a test
// spends most of its time waiting on the cluster.
//
//	KUBETAB_BIN=$PWD/bin/kubetab go test ./test/browser/
//
// Optional: KUBETAB_CHROMIUM (default /usr/bin/chromium), KUBETAB_SCREENSHOT
// (a path; the deployment test saves a screenshot there).
//
// Every wait is a condition with a deadline, never a sleep.
package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// siteURL is the base URL of the `kubetab serve` started by TestMain.
var siteURL string

func TestMain(m *testing.M) {
	bin := os.Getenv("KUBETAB_BIN")
	if bin == "" {
		fmt.Println("browser tests skipped: set KUBETAB_BIN to a built kubetab binary (./build.sh test does)")
		os.Exit(m.Run()) // every test skips itself
	}
	cmd, url, err := startServe(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start kubetab serve:", err)
		os.Exit(1)
	}
	siteURL = url
	code := m.Run()
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	os.Exit(code)
}

// startServe runs `kubetab serve` on a free loopback port, with any extra
// flags, and returns its URL.
func startServe(bin string, flags ...string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		i := strings.Index(line, "http://")
		if i < 0 {
			cmd.Process.Kill()
			return nil, "", fmt.Errorf("unexpected output %q", line)
		}
		return cmd, strings.TrimSpace(line[i:]), nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, "", fmt.Errorf("no address printed within 30s")
	}
}

func chromiumPath() string {
	if p := os.Getenv("KUBETAB_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// newBrowser starts a fresh headless Chromium (its own profile directory)
// and returns a tab context and the recording proxy that all of the
// browser's traffic goes through. The proxy forwards only to the site (on
// loopback) and refuses everything else, so a test never sends anything off
// this machine, and TestSameOrigin can check what the page asked for.
func newBrowser(t *testing.T) (context.Context, *recordingProxy) {
	t.Helper()
	return newBrowserFor(t, siteURL)
}

// newBrowserFor is newBrowser for the site served at url.
func newBrowserFor(t *testing.T, url string) (context.Context, *recordingProxy) {
	t.Helper()
	if url == "" {
		t.Skip("KUBETAB_BIN is not set")
	}
	proxy := &recordingProxy{origin: strings.TrimPrefix(strings.TrimSuffix(url, "/"), "http://")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t.TempDir(), ln.Addr().String())...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Forward the page's console errors to the test log.
	messages := chromedp.Console(ctx)
	go func() {
		for msg, err := range messages {
			if err != nil {
				return
			}
			if msg.Type == chromedp.ConsoleError || msg.IsException() || msg.Type == chromedp.ConsoleWarning {
				t.Logf("page console %s: %s", msg.Type, msg.Text)
			}
		}
	}()
	return ctx, proxy
}

// chromiumOptions are the flags for a quiet headless Chromium: no first-run
// UI, no background traffic of its own (updates, sync, metrics, time
// queries), a fresh profile, and proxyAddr for every request, loopback
// included.
// deadURL is where the browser's own services are sent: loopback port 1,
// where nothing listens.
const deadURL = "http://127.0.0.1:1/"

func chromiumOptions(profileDir, proxyAddr string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath()),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("disable-features", "NetworkTimeServiceQuerying,AutofillServerCommunication,OptimizationHints,"+
			"OptimizationGuideModelDownloading,OptimizationHintsFetching,MediaRouter,Translate,"+
			"CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,PrivacySandboxSettings4"),
		// The browser's own services (sign-in, Google APIs, component
		// updates) would still call home; point them at a dead loopback port.
		chromedp.Flag("gaia-url", deadURL),
		chromedp.Flag("google-apis-url", deadURL),
		chromedp.Flag("lso-url", deadURL),
		chromedp.Flag("component-updater", "url-source="+deadURL),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("proxy-server", "http://"+proxyAddr),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"), // loopback goes through the proxy too
		chromedp.WindowSize(1360, 860),
		chromedp.UserDataDir(profileDir),
	}
}

// openSite loads the site and waits until the cluster in the worker is ready.
func openSite(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedpNavigate(ctx, url); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	waitJS(t, ctx, "the cluster to be ready", `window.kubetab && window.kubetab.cluster.isReady`, 90*time.Second)
}

func chromedpNavigate(ctx context.Context, url string) error {
	return chromedp.Do(ctx, chromedp.Navigate(url))
}

// waitJS polls a JavaScript expression until it is truthy, or fails the test
// at the deadline (showing the console's text). An expression may give a
// Promise: its value is what counts (chromedp's in-page Poll would take the
// Promise itself as true and return at once).
func waitJS(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	check := "(async () => !!(await (" + expr + ")))()"
	var last error
	for {
		// A Promise that never settles must not outlast the deadline.
		cctx, cancel := context.WithDeadline(ctx, deadline.Add(time.Second))
		ok, err := chromedp.Run(cctx, chromedp.Evaluate[bool](check, chromedp.EvalAwaitPromise))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.kubetab ? kubetab.consoleText().trimEnd() : document.body.innerText`))
	if last == nil {
		last = fmt.Errorf("still false after %v", timeout)
	}
	t.Fatalf("waiting for %s: %v\nconsole:\n%s", what, last, text)
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// command is one line run in the console, as window.kubetab records it.
type command struct {
	Line          string  `json:"line"`
	FirstOutputAt float64 `json:"firstOutputAt"`
	ExitAt        float64 `json:"exitAt"`
	Code          *int    `json:"code"`
	Output        string  `json:"output"`
}

// typeText types text into the focused terminal as text input (what a
// keyboard, an IME or a paste produces). Synthetic keyDown+char pairs would
// reach xterm.js twice.
func typeText(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		t.Fatalf("type %q: %v", text, err)
	}
}

// pressEnter presses and releases Enter. chromedp.KeyEvent("\r") would add a
// char event, which xterm.js reads as a second Enter.
func pressEnter(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		_, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13,
		})
		if err != nil {
			t.Fatalf("press Enter: %v", err)
		}
	}
}

// typeLine types line and Enter into the terminal with real key events, waits
// for the command to finish, and returns what it printed.
func typeLine(t *testing.T, ctx context.Context, line string, timeout time.Duration) command {
	t.Helper()
	n := eval[int](t, ctx, `kubetab.console.focus(), kubetab.commands.length`)
	typeText(t, ctx, line)
	pressEnter(t, ctx)
	waitJS(t, ctx, fmt.Sprintf("%q to finish", line),
		fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), timeout)
	// xterm parses what it is given on later ticks (seconds later on a
	// loaded machine): its write callback runs once everything before it is
	// in the buffer, so the console's text holds the output from here on.
	waitJS(t, ctx, "the terminal to take the output", `new Promise(r => kubetab.console.term.write('', () => r(true)))`, timeout)
	return eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n))
}

// TestBridgeRequests sends 10,000 sequential API requests from the page,
// through the worker and syumai/workers, to the apiserver, in one page load.
// The first long-lived-instance bug of syumai/workers broke the second one.
func TestBridgeRequests(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	const n = 10000
	type result struct {
		OK       int     `json:"ok"`
		Err      string  `json:"err"`
		Millis   float64 `json:"millis"`
		LastKind string  `json:"lastKind"`
	}
	res := eval[result](t, ctx, fmt.Sprintf(`(async () => {
		const t0 = performance.now();
		let ok = 0, lastKind = '';
		try {
			for (let i = 0; i < %d; i++) {
				const res = await kubetab.cluster.fetch('/api/v1/nodes', {headers: {Accept: 'application/json'}});
				if (res.status !== 200) throw new Error('request ' + i + ': status ' + res.status + ': ' + await res.text());
				lastKind = (await res.json()).kind;
				ok++;
			}
		} catch (e) {
			return {ok, err: String(e), millis: performance.now() - t0, lastKind};
		}
		return {ok, err: '', millis: performance.now() - t0, lastKind};
	})()`, n))
	if res.Err != "" || res.OK != n {
		t.Fatalf("%d of %d requests succeeded; error: %s", res.OK, n, res.Err)
	}
	if res.LastKind != "NodeList" {
		t.Errorf("last response kind = %q, want NodeList", res.LastKind)
	}
	t.Logf("%d requests in %.0f ms (%.3f ms each)", n, res.Millis, res.Millis/n)
	// The page is still alive and the worker still answers a watch.
	waitJS(t, ctx, "the live panel to be live", `document.querySelector('.live-state').dataset.state === 'live'`, 30*time.Second)
}

// TestConsole checks the line editor and the shell: an unknown command, the
// history, and Ctrl-C ending a watch.
func TestConsole(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)

	c := typeLine(t, ctx, "vim web.yaml", 30*time.Second)
	if *c.Code != 127 || !strings.Contains(c.Output, "vim: command not found") {
		t.Errorf("vim web.yaml: code %d, output %q", *c.Code, c.Output)
	}

	c = typeLine(t, ctx, "kubectl get nodes", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "NAME") {
		t.Errorf("kubectl get nodes: code %d, output %q", *c.Code, c.Output)
	}

	// ArrowUp brings back the last line; Enter runs it again.
	n := eval[int](t, ctx, `kubetab.commands.length`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowUp)); err != nil {
		t.Fatal(err)
	}
	pressEnter(t, ctx)
	waitJS(t, ctx, "the recalled line to run", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].code !== null`, n, n), 60*time.Second)
	if got := eval[string](t, ctx, fmt.Sprintf(`kubetab.commands[%d].line`, n)); got != "kubectl get nodes" {
		t.Errorf("history recalled %q, want %q", got, "kubectl get nodes")
	}

	// A watch runs until Ctrl-C.
	n = eval[int](t, ctx, `kubetab.commands.length`)
	typeText(t, ctx, "kubectl get nodes -w")
	pressEnter(t, ctx)
	waitJS(t, ctx, "the watch to print", fmt.Sprintf(`kubetab.commands.length > %d && kubetab.commands[%d].firstOutputAt > 0`, n, n), 60*time.Second)
	if running := eval[bool](t, ctx, fmt.Sprintf(`kubetab.commands[%d].code === null`, n)); !running {
		t.Fatalf("kubectl get nodes -w ended by itself: %+v", eval[command](t, ctx, fmt.Sprintf(`kubetab.commands[%d]`, n)))
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("c", chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "Ctrl-C to end the watch", fmt.Sprintf(`kubetab.commands[%d].code !== null`, n), 30*time.Second)
	if !strings.Contains(eval[string](t, ctx, `kubetab.consoleText()`), "^C") {
		t.Error("the terminal does not show ^C")
	}

	// help lists the console's commands.
	c = typeLine(t, ctx, "help", 30*time.Second)
	for _, want := range []string{"kubectl", "etcdctl", "trace", "curl", "ssh", "images"} {
		if *c.Code != 0 || !strings.Contains(c.Output, "  "+want+" ") {
			t.Errorf("help: code %d, no %q in %q", *c.Code, want, c.Output)
		}
	}

	// The store behind the API server, as etcdctl shows it.
	c = typeLine(t, ctx, "etcdctl get /registry/namespaces --prefix --keys-only", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "/registry/namespaces/default") {
		t.Errorf("etcdctl get: code %d, output %q", *c.Code, c.Output)
	}
	// A node's kubelet, stopped and started over "ssh".
	c = typeLine(t, ctx, "ssh node-2 systemctl stop kubelet", 60*time.Second)
	if *c.Code != 0 {
		t.Errorf("ssh stop: code %d, output %q", *c.Code, c.Output)
	}
	c = typeLine(t, ctx, "ssh node-2 systemctl is-active kubelet", 60*time.Second)
	if *c.Code != 3 || !strings.Contains(c.Output, "inactive") {
		t.Errorf("ssh is-active after stop: code %d, output %q", *c.Code, c.Output)
	}
	c = typeLine(t, ctx, "ssh node-2 systemctl start kubelet", 60*time.Second)
	if *c.Code != 0 {
		t.Errorf("ssh start: code %d, output %q", *c.Code, c.Output)
	}
}

// TestDeployment is the first lesson: create a Deployment, watch its pods get
// scheduled and start, and read a container's log.
func TestDeployment(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)

	c := typeLine(t, ctx, "kubectl create deployment web --image=hello --replicas=3", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "deployment.apps/web created") {
		t.Fatalf("create deployment: code %d, output %q", *c.Code, c.Output)
	}

	// kubectl get pods, until three web- pods are Running.
	var pods []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		c = typeLine(t, ctx, "kubectl get pods", 60*time.Second)
		pods = runningPods(c.Output, "web-")
		if len(pods) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl get pods never showed 3 Running web- pods; last output:\n%s", c.Output)
		}
		// The next poll is another typed command; wait for the live panel to
		// change first, so this loop does not spin.
		waitJS(t, ctx, "a pod to change", `new Promise(r => setTimeout(() => r(true), 250))`, 10*time.Second)
	}

	// Its log is the hello image's greeting, which names the pod.
	c = typeLine(t, ctx, "kubectl logs "+pods[0], 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, pods[0]) {
		t.Errorf("kubectl logs %s: code %d, output %q", pods[0], *c.Code, c.Output)
	}

	// The trace shows the path the pod took: the scheduler's decision, then
	// its node's kubelet getting an IP from CNI and starting the container.
	c = typeLine(t, ctx, "trace "+pods[0]+" --kind=decision,call --tail=-1", 60*time.Second)
	for _, want := range []string{"kube-scheduler", "schedule pods default/" + pods[0], "cni", "ADD pods default/" + pods[0], "cri", "StartContainer pods default/" + pods[0]} {
		if *c.Code != 0 || !strings.Contains(c.Output, want) {
			t.Errorf("trace %s: code %d, no %q in\n%s", pods[0], *c.Code, want, c.Output)
		}
	}

	// The live panel shows the same three pods Running.
	waitJS(t, ctx, "the live panel to show 3 Running web- pods",
		`document.querySelectorAll('#pods tr[data-pod^="web-"][data-status="Running"]').length === 3`, 30*time.Second)

	if path := os.Getenv("KUBETAB_SCREENSHOT"); path != "" {
		waitJS(t, ctx, "the progress bar to fade out", `document.querySelector('#loader').hidden`, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot saved to %s", path)
	}
}

// runningPods returns the names in the NAME column of `kubectl get pods`
// output whose STATUS is Running and whose name has prefix.
func runningPods(out, prefix string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[0], prefix) && f[2] == "Running" {
			names = append(names, f[0])
		}
	}
	return names
}

// TestSameOrigin checks that every request the browser made while loading
// the site and running a command (page, worker, and the browser's own) went
// to the site's origin: the recording proxy of newBrowser sees them all.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	ctx, proxy := newBrowser(t)
	openSite(t, ctx, siteURL)
	c := typeLine(t, ctx, "kubectl get nodes", 60*time.Second)
	if *c.Code != 0 {
		t.Errorf("kubectl get nodes: code %d, output %q", *c.Code, c.Output)
	}
	waitJS(t, ctx, "the live panel to be live", `document.querySelector('.live-state').dataset.state === 'live'`, 30*time.Second)

	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if len(proxy.foreign) > 0 {
		t.Errorf("requests left the origin %s:\n%s", proxy.origin, strings.Join(proxy.foreign, "\n"))
	}
	for _, want := range []string{"/", "/main-*.js", "/main-*.css", "/worker.js", "/wasm_exec.js", "/kubetab.wasm"} {
		found := proxy.seen[want]
		for p := range proxy.seen {
			if ok, _ := path.Match(want, p); ok {
				found = true // main.js and main.css have content-hashed names
			}
		}
		if !found {
			t.Errorf("the proxy did not see %s; seen: %v", want, proxy.seen)
		}
	}
}

// recordingProxy is an HTTP proxy that forwards requests for origin and
// refuses (and records) everything else.
type recordingProxy struct {
	origin string
	also   []string // more origins a test serves itself (an embedding page)

	mu      sync.Mutex // guards seen and foreign
	seen    map[string]bool
	foreign []string
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if r.URL.Host != "" {
		host = r.URL.Host
	}
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	ours := r.Method != http.MethodConnect && host == p.origin
	target := p.origin
	for _, o := range p.also {
		if r.Method != http.MethodConnect && host == o {
			ours, target = true, o
		}
	}
	if ours && target == p.origin {
		p.seen[r.URL.Path] = true
	} else if !ours {
		p.foreign = append(p.foreign, r.Method+" "+host+r.URL.RequestURI())
	}
	p.mu.Unlock()
	if !ours {
		http.Error(w, "kubetab test proxy: request outside the site's origin", http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", target
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	for k, vs := range res.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(res.StatusCode)
	io.Copy(w, res.Body)
}

// pageTiming is what the page records about its start (performance.now()
// milliseconds since navigation).
type pageTiming map[string]float64

func (pt pageTiming) String() string {
	b, _ := json.Marshal(pt)
	return string(b)
}

// TestRollout is the rolling-update lesson in the console: a new image tag
// rolls out, `kubectl rollout status` follows it to the end, and `kubectl
// rollout undo` brings the first template back, as the new pods' greetings show.
func TestRollout(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)

	run := func(line, want string) command {
		t.Helper()
		c := typeLine(t, ctx, line, 120*time.Second)
		if *c.Code != 0 || !strings.Contains(c.Output, want) {
			t.Fatalf("%s: code %d, output %q; want %q", line, *c.Code, c.Output, want)
		}
		return c
	}
	// greetings waits until exactly n web- pods are Running (the old ones
	// gone) and returns their first log lines.
	greetings := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(120 * time.Second)
		for {
			c := typeLine(t, ctx, "kubectl get pods -l app=web", 60*time.Second)
			pods := runningPods(c.Output, "web-")
			if len(pods) == n && !strings.Contains(c.Output, "Terminating") {
				var out []string
				for _, p := range pods {
					out = append(out, typeLine(t, ctx, "kubectl logs "+p+" --tail=-1", 60*time.Second).Output)
				}
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("never exactly %d Running web- pods; last output:\n%s", n, c.Output)
			}
			waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 250))`, 10*time.Second)
		}
	}

	run("kubectl create deployment web --image=hello:1.0 --replicas=2", "deployment.apps/web created")
	run("kubectl rollout status deployment/web", "successfully rolled out")
	for _, g := range greetings(2) {
		if !strings.Contains(g, "Hello from") {
			t.Fatalf("hello:1.0 pod greets %q", g)
		}
	}

	run("kubectl set image deployment/web hello=hello:2.0", "deployment.apps/web image updated")
	run("kubectl rollout status deployment/web", "successfully rolled out")
	for _, g := range greetings(2) {
		if !strings.Contains(g, "Hi again from") {
			t.Fatalf("after set image, a pod greets %q; want hello:2.0's greeting", g)
		}
	}

	run("kubectl rollout undo deployment/web", "deployment.apps/web rolled back")
	run("kubectl rollout status deployment/web", "successfully rolled out")
	for _, g := range greetings(2) {
		if !strings.Contains(g, "Hello from") {
			t.Fatalf("after rollout undo, a pod greets %q; want hello:1.0's greeting back", g)
		}
	}
}

// TestBusyGuests: while three `cpu` pods spin flat out in the worker, the
// console still answers, and the page's main thread stays free (its long
// tasks, seen by a PerformanceObserver, are logged as a measurement).
func TestBusyGuests(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	_ = eval[bool](t, ctx, `window.__longTasks = [], new PerformanceObserver(l => l.getEntries().forEach(e => __longTasks.push(e.duration))).observe({type: 'longtask', buffered: true}), true`)

	c := typeLine(t, ctx, "kubectl create deployment spin --image=cpu --replicas=3", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("create: %q", c.Output)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		c = typeLine(t, ctx, "kubectl get pods -l app=spin", 60*time.Second)
		if len(runningPods(c.Output, "spin-")) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("3 cpu pods never Running:\n%s", c.Output)
		}
		waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 250))`, 10*time.Second)
	}
	// The guests spin; the console must still answer, and the guests' own
	// output must keep coming (they report their rate every second).
	start := time.Now()
	c = typeLine(t, ctx, "kubectl get pods -l app=spin", 30*time.Second)
	answered := time.Since(start)
	if *c.Code != 0 || len(runningPods(c.Output, "spin-")) != 3 {
		t.Fatalf("get pods while guests spin: %q", c.Output)
	}
	pod := runningPods(c.Output, "spin-")[0]
	for deadline := time.Now().Add(60 * time.Second); ; {
		c = typeLine(t, ctx, "kubectl logs "+pod+" --tail=1", 30*time.Second)
		if *c.Code == 0 && strings.Contains(c.Output, "iterations/s") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a spinning guest never reported its rate: %q", c.Output)
		}
		waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 500))`, 10*time.Second)
	}
	long := eval[[]float64](t, ctx, `__longTasks`)
	max := 0.0
	for _, d := range long {
		if d > max {
			max = d
		}
	}
	t.Logf("with 3 cpu guests spinning: kubectl get pods answered in %v; page long tasks: %d, longest %.0f ms", answered.Round(time.Millisecond), len(long), max)
	c = typeLine(t, ctx, "kubectl delete deployment spin", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("delete: %q", c.Output)
	}
}

// shot saves the page as drawn after two animation frames to path, a PNG,
// for a person to look at (the screenshot tests, with KUBETAB_SHOTS).
func shot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	waitJS(t, ctx, "two frames", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, 10*time.Second)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s", path)
}
