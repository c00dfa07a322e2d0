package cri_test

import (
	"context"
	"testing"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// TestWarmUp: the warm-up call runs and answers f(41) = 42, once per cache
// (a second call returns the first one's result at once).
func TestWarmUp(t *testing.T) {
	c := cri.NewCompileCache()
	defer c.Close(context.Background())
	for i := 0; i < 2; i++ {
		if err := c.WarmUp(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
