package browser

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStaticHost serves the static folder (./build.sh site writes it;
// KUBETAB_SITE names it, by default the built site/dist) with a plain Go
// http.FileServer under a sub-path, as a course website would host it at
// https://example.org/course/kubetab/: no kubetab binary, no precompressed
// answers, no special headers. The page loads, kubectl get nodes runs, the
// first lesson's first step passes by its Run buttons, and every request
// stays under the sub-path (relative URLs only).
func TestStaticHost(t *testing.T) {
	t.Parallel()
	if os.Getenv("KUBETAB_BIN") == "" {
		t.Skip("KUBETAB_BIN is not set")
	}
	dir := os.Getenv("KUBETAB_SITE")
	if dir == "" {
		dir = filepath.Join("..", "..", "site", "dist")
	}
	if _, err := os.Stat(filepath.Join(dir, "kubetab.wasm")); err != nil {
		t.Fatalf("no built site in %s: %v", dir, err)
	}
	const prefix = "/course/kubetab"
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, http.FileServer(http.Dir(dir))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + prefix + "/"

	ctx, proxy := newBrowserFor(t, "http://"+ln.Addr().String()+"/")
	openSite(t, ctx, url)
	c := typeLine(t, ctx, "kubectl get nodes", 60*time.Second)
	if *c.Code != 0 || !strings.Contains(c.Output, "node-1") {
		t.Fatalf("kubectl get nodes: code %d, output %q", *c.Code, c.Output)
	}

	var index struct {
		Lessons []struct{ Slug string } `json:"lessons"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "lessons", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &index); err != nil || len(index.Lessons) == 0 {
		t.Fatalf("lessons/index.json: %v, %d lessons", err, len(index.Lessons))
	}
	if err := chromedpNavigate(ctx, url+"#/lessons/"+index.Lessons[0].Slug); err != nil {
		t.Fatal(err)
	}
	waitPrepared(t, ctx)
	playStep(t, ctx, 1)

	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	for p := range proxy.seen {
		if !strings.HasPrefix(p, prefix+"/") {
			t.Errorf("the page asked for %s, outside %s/", p, prefix)
		}
	}
	if len(proxy.foreign) > 0 {
		t.Errorf("requests left the origin: %v", proxy.foreign)
	}
}
