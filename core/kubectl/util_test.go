package kubectl

import (
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

func registryUpdate() registry.UpdateOptions { return registry.UpdateOptions{} }

// waitFor waits for cond with a deadline (never a fixed sleep).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(time.Millisecond)
	}
}
