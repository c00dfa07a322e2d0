package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// podJS reads one pod of default through the page's API door.
const podJS = `(async () => {
  const res = await kubetab.cluster.fetch('/api/v1/namespaces/default/pods/mine');
  return res.ok ? await res.json() : null;
})()`

// TestPersistAddedImage is issue 11's image item and its reboot signs: a
// learner's own image (the Images panel's file input, as in TestAddImage)
// is saved with the cluster, content-addressed, so after a reload the
// registry lists it again and its pod pulls it and runs; the pod shows what
// a node reboot leaves: restartCount 1, lastState terminated 255 Unknown
// (the container that was running), and a SandboxChanged event.
func TestPersistAddedImage(t *testing.T) {
	t.Parallel()
	ctx, _ := newBrowser(t)
	openSite(t, ctx, siteURL)
	waitJS(t, ctx, "the images to be listed", `document.querySelector('#images tr[data-ref="hello:1.0"]')`, 30*time.Second)
	hello, err := os.ReadFile(filepath.Join("..", "..", "wasm", "images", "hello", "hello-1.0.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.wasm")
	if err := os.WriteFile(file, hello, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.ID("image-file"), []string{file})); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the name to default from the file name", `document.querySelector('#image-name').value === 'mine'`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("image-add"), chromedp.NodeEnabled)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "mine:latest to be saved with the cluster",
		`kubetab.persist.imagesSaved.some((m) => m.ref === 'mine:latest' && !m.error && m.digest.startsWith('sha256:'))`, 60*time.Second)
	c := typeLine(t, ctx, "kubectl run mine --image=mine:latest", 60*time.Second)
	if *c.Code != 0 {
		t.Fatalf("kubectl run: %s", c.Output)
	}
	waitJS(t, ctx, "mine Running", podJS+`.then((p) => p && p.status.phase === 'Running' && p.status.containerStatuses[0].ready)`, 90*time.Second)
	before := eval[map[string]any](t, ctx, podJS)
	oldID := before["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)["containerID"].(string)
	waitSaved(t, ctx)

	reload(t, ctx)
	waitJS(t, ctx, "mine:latest listed again", `document.querySelector('#images tr[data-ref="mine:latest"][data-builtin="false"]')`, 30*time.Second)
	waitJS(t, ctx, "mine Running again in a new container", podJS+`.then((p) => p && p.status.phase === 'Running' && p.status.containerStatuses[0].ready && p.status.containerStatuses[0].containerID !== `+"'"+oldID+"'"+`)`, 120*time.Second)
	cs := eval[map[string]any](t, ctx, podJS+`.then((p) => p.status.containerStatuses[0])`)
	last, _ := cs["lastState"].(map[string]any)["terminated"].(map[string]any)
	if cs["restartCount"].(float64) != 1 || last == nil || last["exitCode"].(float64) != 255 || last["reason"] != "Unknown" || last["containerID"] != oldID {
		t.Errorf("after the reload: restartCount %v, lastState %v; want 1 and terminated 255 Unknown of %s", cs["restartCount"], cs["lastState"], oldID)
	}
	c = typeLine(t, ctx, "kubectl get events --field-selector involvedObject.name=mine", 60*time.Second)
	if !strings.Contains(c.Output, "SandboxChanged") || !strings.Contains(c.Output, "Pod sandbox changed, it will be killed and re-created.") {
		t.Errorf("no SandboxChanged event:\n%s", c.Output)
	}
	if !strings.Contains(c.Output, `Successfully pulled image "mine:latest"`) {
		t.Errorf("mine:latest was not pulled again after the reload:\n%s", c.Output)
	}
}
