package browser

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestAddImage is a learner bringing their own container image: a .wasm file
// chosen in the page's Images panel (the real file input, as a person would)
// is listed and runs as a pod; files that are not a WASI command, or that are
// over 8 MiB, or that would replace a built-in image are refused with the Go
// error's text, and nothing is listed for them.
func TestAddImage(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	waitJS(t, ctx, "the images to be listed", `document.querySelector('#images tr[data-ref="hello:1.0"]')`, 30*time.Second)
	builtin := eval[int](t, ctx, `document.querySelectorAll('#images tr[data-ref]').length`)

	hello, err := os.ReadFile(filepath.Join("..", "..", "wasm", "images", "hello", "hello-1.0.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 4096)
	rand.Read(junk)
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// choose puts a file in the input and checks the name and tag it
	// suggests; add submits the form and waits for the outcome.
	choose := func(path, wantName string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("image-file"), []string{path})); err != nil {
			t.Fatalf("choose %s: %v", path, err)
		}
		waitJS(t, ctx, "the name to default from the file name", fmt.Sprintf(`document.querySelector('#image-name').value === %q`, wantName), 10*time.Second)
		if tag := eval[string](t, ctx, `document.querySelector('#image-tag').value`); tag != "latest" {
			t.Errorf("tag defaults to %q, want latest", tag)
		}
	}
	add := func() (state, text string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("image-add"), chromedp.NodeEnabled)); err != nil {
			t.Fatal(err)
		}
		// busy ends once the worker answered and the list was loaded again.
		waitJS(t, ctx, "the add to be answered", `['ok', 'error'].includes(document.querySelector('#image-status').dataset.state) && !kubetab.images.busy`, 60*time.Second)
		return eval[string](t, ctx, `document.querySelector('#image-status').dataset.state`),
			eval[string](t, ctx, `document.querySelector('#image-status').textContent`)
	}
	listed := func() int {
		return eval[int](t, ctx, `document.querySelectorAll('#images tr[data-ref]').length`)
	}

	refusals := []struct {
		file, name, setName, setTag string
		content                     []byte
		want                        string
	}{
		{file: "junk.wasm", name: "junk", content: junk,
			want: "images: add junk:latest: cri: image is not a runnable WASI command: "},
		{file: "big.wasm", name: "big", content: make([]byte, 8<<20+1),
			want: "images: module too large: big:latest is 8388609 bytes, the limit is 8388608 (8 MiB); build with -Os and strip it (wasm-ld --strip-all)"},
		{file: "hello.wasm", name: "hello", setTag: "1.0", content: hello,
			want: "images: built-in images cannot be replaced: hello:1.0 ships with kubetab; pick another name or tag"},
		{file: "app.wasm", name: "app", setName: "My App", content: hello,
			want: `images: add My App:latest: cri: invalid reference format`},
	}
	for _, r := range refusals {
		choose(file(r.file, r.content), r.name)
		if r.setName != "" {
			if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("image-name"), r.setName)); err != nil {
				t.Fatal(err)
			}
		}
		if r.setTag != "" {
			if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("image-tag"), r.setTag)); err != nil {
				t.Fatal(err)
			}
		}
		state, text := add()
		if state != "error" || !strings.HasPrefix(text, r.want) {
			t.Errorf("%s: %s %q; want an error saying %q", r.file, state, text, r.want)
		}
		if n := listed(); n != builtin {
			t.Errorf("%s: %d images listed after a refusal, want %d", r.file, n, builtin)
		}
	}

	// A valid module under its default name, mine:latest.
	choose(file("mine.wasm", hello), "mine")
	state, text := add()
	if state != "ok" || !strings.Contains(text, "mine:latest") {
		t.Fatalf("add mine.wasm: %s %q", state, text)
	}
	waitJS(t, ctx, "mine:latest to be listed", `document.querySelector('#images tr[data-ref="mine:latest"][data-builtin="false"]')`, 10*time.Second)
	if n := listed(); n != builtin+1 {
		t.Errorf("%d images listed, want %d", n, builtin+1)
	}
	c := typeLine(t, ctx, "images", 30*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "added by you") || !strings.Contains(c.Output, "IMAGE ID") {
		t.Errorf("images: code %d, output %q", *c.Code, c.Output)
	}

	// It runs: a pod pulls it from the registry and its log is the module's.
	c = typeLine(t, ctx, "kubectl run mine --image=mine:latest", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "pod/mine created") {
		t.Fatalf("kubectl run: code %d, output %q", *c.Code, c.Output)
	}
	pods := []string{"mine"}
	for deadline := time.Now().Add(90 * time.Second); ; {
		c = typeLine(t, ctx, "kubectl get pods mine", 60*time.Second)
		if len(runningPods(c.Output, "mine")) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod of mine:latest never ran:\n%s", c.Output)
		}
		waitJS(t, ctx, "a moment", `new Promise(r => setTimeout(() => r(true), 250))`, 10*time.Second)
	}
	c = typeLine(t, ctx, "kubectl logs mine", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "Hello from mine") {
		t.Errorf("kubectl logs mine: code %d, output %q", *c.Code, c.Output)
	}
	c = typeLine(t, ctx, "kubectl get events --field-selector involvedObject.name="+pods[0], 60*time.Second)
	if !strings.Contains(c.Output, `"mine:latest"`) {
		t.Errorf("no pull event for mine:latest: %q", c.Output)
	}

	// The panel in Japanese: its labels, a built-in image's line, and yours.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("lang"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Japanese UI", `document.documentElement.lang === 'ja'`, 10*time.Second)
	for sel, want := range map[string]string{
		`#registry h3`: "イメージ",
		`#image-add`:   "イメージを追加",
		`#images tr[data-ref="hello:1.0"] .about`:   "と挨拶し",
		`#images tr[data-ref="mine:latest"] .about`: "あなたが追加",
	} {
		if got := eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).textContent`, sel)); !strings.Contains(got, want) {
			t.Errorf("%s in Japanese: %q, want it to contain %q", sel, got, want)
		}
	}
}
