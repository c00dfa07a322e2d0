package session_test

import (
	"context"
	"testing"

	"github.com/kubetab/kubetab/core/session"
	"github.com/kubetab/kubetab/wasm/images"
)

// BenchmarkSessionStart is what the tab does before "ready": a fresh
// cluster of the three default nodes, its bootstrap objects, every
// component started and its caches synced, and the console registered
// (issue 16's "Go start"). The page's figure adds the runtime's and the
// packages' init, which run once per process and are not in it.
func BenchmarkSessionStart(b *testing.B) {
	catalog := images.New()
	b.ReportAllocs()
	for b.Loop() {
		s, err := session.New(context.Background(), session.Config{Images: catalog, WaitForCaches: true})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
