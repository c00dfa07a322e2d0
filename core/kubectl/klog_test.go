package kubectl

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestVerbosity: -v=6..9 print the HTTP requests as upstream's klog and
// round_trippers.go do (the golden file; the clock is fake, so every
// request takes 0 milliseconds). The first command warms the discovery
// cache of nothing: each Run discovers again, so discovery requests show.
func TestVerbosity(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	golden(t, "verbosity", e.transcript(
		"get nodes node-1 -o name -v=6",
		"get nodes node-1 -o name --v=7",
		"get nodes nope -v=8",
		"label node node-1 a=b -v=8",
		"get nodes node-1 -o name -v 9",
		"get nodes node-1 -o name -v=5",
	))
}

// TestBodyTruncation: at 8 a body is cut after 1024 bytes, at 9 after
// 10240, with upstream's " [truncated N chars]"; a body with a newline is
// klog's multi-line block.
func TestBodyTruncation(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		v    int
		body string
		want string
	}{
		{8, strings.Repeat("a", 1030), `"Response Body" body="` + strings.Repeat("a", 1024) + ` [truncated 6 chars]"` + "\n"},
		{9, strings.Repeat("a", 1030), `"Response Body" body="` + strings.Repeat("a", 1030) + `"` + "\n"},
		{9, strings.Repeat("b", 10241), `"Response Body" body="` + strings.Repeat("b", 10240) + ` [truncated 1 chars]"` + "\n"},
		{8, "{}\n", `"Response Body" body=<` + "\n\t{}\n >\n"},
		{7, "{}", ""},
	} {
		var b strings.Builder
		l := &klogger{v: tc.v, w: &b, clock: e.clock}
		l.body("Response Body", []byte(tc.body))
		got := b.String()
		if i := strings.Index(got, "] "); i >= 0 {
			got = got[i+2:]
		}
		if got != tc.want {
			t.Errorf("-v=%d body of %d bytes:\ngot  %.80q...\nwant %.80q...", tc.v, len(tc.body), got, tc.want)
		}
	}
}

// TestRequestTimeout: --request-timeout adds ?timeout= to every request
// and ends a request that takes longer; `get -w` then ends with exit 0, as
// upstream's does. Bad values are refused before anything is sent.
func TestRequestTimeout(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	golden(t, "request-timeout", e.transcript(
		"get nodes node-1 -o name --request-timeout=5 -v=6",
		"get nodes node-1 -o name --request-timeout=1m -v=6",
		"get nodes node-1 -o name --request-timeout=0 -v=6",
		"get nodes --request-timeout=bogus",
		"get nodes --request-timeout=-1s",
	))
	// The watch ends by itself after the timeout (real time: the
	// transport's deadline), long before the test's own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, errs, code := e.runCtx(ctx, "get nodes -w --request-timeout=200ms", "")
	if ctx.Err() != nil {
		t.Fatalf("get -w --request-timeout=200ms still ran after 30s")
	}
	if code != 0 || errs != "" || !strings.Contains(out, "node-1") {
		t.Errorf("get -w --request-timeout: exit %d, stdout %q, stderr %q; want exit 0 with the node listed", code, out, errs)
	}
}
