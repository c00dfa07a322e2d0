package cluster

import (
	"context"
	"testing"

	"github.com/kubetab/kubetab/wasm/images"
)

// TestControllerDescriptors: every controller of the table has a unique
// name, is built, and its goroutine ends with the cluster's context
// (Cluster.Wait returns).
func TestControllerDescriptors(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range controllerDescriptors {
		if d.name == "" || seen[d.name] || d.agent == "" {
			t.Errorf("descriptor %q (agent %q): empty or duplicate", d.name, d.agent)
		}
		seen[d.name] = true
	}
	for _, want := range []string{"daemonset-controller", "statefulset-controller", "replicationcontroller-controller", "deployment-controller"} {
		if !seen[want] {
			t.Errorf("no %s in the table", want)
		}
	}
	c, err := New(Config{Images: images.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	c.Wait()
}
