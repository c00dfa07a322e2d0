package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEmbed loads the example page of site/src/embed-example.html from
// another origin than kubetab's (as a blog embedding kubetab would), with its
// iframe and embed.js pointed at the kubetab under test. The Run buttons wait
// for the embedded cluster, then each types its block into the embedded
// console and shows the exit code: the create succeeds, the same create again
// fails as kubectl does (AlreadyExists), so the blocks really ran against
// the cluster in the iframe.
func TestEmbed(t *testing.T) {
	t.Parallel()
	ctx, proxy := newBrowser(t)
	base := strings.TrimSuffix(siteURL, "/") + "/"
	page, err := os.ReadFile("../../site/src/embed-example.html")
	if err != nil {
		t.Fatal(err)
	}
	host := string(page)
	for old, repl := range map[string]string{
		`src="./?embed=console"`: `src="` + base + `?embed=console"`,
		`src="embed.js"`:         `src="` + base + `embed.js"`,
	} {
		if !strings.Contains(host, old) {
			t.Fatalf("embed-example.html has no %s", old)
		}
		host = strings.ReplaceAll(host, old, repl)
	}
	blog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(host))
	}))
	t.Cleanup(blog.Close)
	proxy.also = []string{strings.TrimPrefix(blog.URL, "http://")}

	// The example page is part of the built site too.
	res, err := http.Get(base + "embed-example.html")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET embed-example.html: %s", res.Status)
	}

	if err := chromedpNavigate(ctx, blog.URL+"/post.html"); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "three Run buttons", `document.querySelectorAll('button[data-kubetab-run]').length === 3`, 10*time.Second)
	if s := eval[string](t, ctx, `document.querySelector('button[data-kubetab-run]').dataset.state`); s != "starting" && s != "ready" {
		t.Fatalf("a button before the cluster is ready: state %q", s)
	}
	waitJS(t, ctx, "the embedded cluster to be ready", `[...document.querySelectorAll('button[data-kubetab-run]')].every((b) => b.dataset.state === 'ready')`, 90*time.Second)

	click := func(i int) {
		t.Helper()
		eval[bool](t, ctx, `(document.querySelectorAll('button[data-kubetab-run]')[`+strconv.Itoa(i)+`].click(), true)`)
	}
	state := func(i int) string {
		return eval[string](t, ctx, `(b => b.dataset.state + ' ' + (b.dataset.code ?? ''))(document.querySelectorAll('button[data-kubetab-run]')[`+strconv.Itoa(i)+`])`)
	}
	click(0)
	waitJS(t, ctx, "the create to finish", `document.querySelectorAll('button[data-kubetab-run]')[0].dataset.state === 'done'`, 30*time.Second)
	if got := state(0); got != "done 0" {
		t.Fatalf("create: %q, want done 0", got)
	}
	click(1)
	waitJS(t, ctx, "the get to finish", `['done','failed'].includes(document.querySelectorAll('button[data-kubetab-run]')[1].dataset.state)`, 30*time.Second)
	if got := state(1); got != "done 0" {
		t.Fatalf("get: %q, want done 0", got)
	}
	click(0)
	waitJS(t, ctx, "the second create to finish", `document.querySelectorAll('button[data-kubetab-run]')[0].dataset.state === 'failed'`, 30*time.Second)
	if got := state(0); got != "failed 1" {
		t.Fatalf("the same create again: %q, want failed 1 (AlreadyExists)", got)
	}
	if dir := os.Getenv("KUBETAB_SHOTS"); dir != "" {
		for _, sz := range []struct{ w, h int64 }{{1440, 900}, {1280, 720}, {390, 844}} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(sz.w, sz.h)); err != nil {
				t.Fatal(err)
			}
			shot(t, ctx, filepath.Join(dir, fmt.Sprintf("embed-%dx%d.png", sz.w, sz.h)))
		}
	}
	if foreign := proxy.foreign; len(foreign) > 0 {
		t.Errorf("requests outside the two origins: %v", foreign)
	}
}
