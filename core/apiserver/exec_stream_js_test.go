//go:build js

package apiserver

import (
	"strings"
	"testing"
)

// TestPodExecStreamRefusedInBrowser: the browser build serves pods/exec as a
// POST only; an upgrade, checked after the pod and container, is a 400.
func TestPodExecStreamRefusedInBrowser(t *testing.T) {
	f := newExecFixture(t)
	for _, upgrade := range []string{"websocket", "SPDY/3.1"} {
		code, body, _ := do(t, "GET", f.base+"one/exec?command=ls", "", "", "Connection", "Upgrade", "Upgrade", upgrade)
		if want := `upgrading to \"` + upgrade + `\" is not supported`; code != 400 || !strings.Contains(body, want) {
			t.Errorf("upgrade to %s = %d %s, want 400 with %s", upgrade, code, body, want)
		}
	}
	if code, body, _ := do(t, "GET", f.base+"one/exec?container=x&command=ls", "", "", "Connection", "Upgrade", "Upgrade", "websocket"); code != 400 ||
		!strings.Contains(body, "container x is not valid for pod one") {
		t.Errorf("bad container = %d %s", code, body)
	}
}
