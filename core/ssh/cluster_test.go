package ssh_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/ssh"
	"github.com/kubetab/kubetab/wasm/images"
)

// Against a real cluster: stopping node-2's kubelet over ssh stops it, and
// starting it runs it again.
func TestSSHStopsAndStartsARealKubelet(t *testing.T) {
	c, err := cluster.New(cluster.Config{Images: images.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) int {
		var out, errb bytes.Buffer
		return ssh.Run(ctx, c, args, ssh.IOStreams{Out: &out, ErrOut: &errb})
	}
	if code := run("node-2", "systemctl", "stop", "kubelet"); code != 0 || c.NodeRunning("node-2") {
		t.Fatalf("stop: exit %d, running %v", code, c.NodeRunning("node-2"))
	}
	if code := run("node-2", "systemctl", "is-active", "kubelet"); code != 3 {
		t.Fatalf("is-active of a stopped kubelet: exit %d, want 3", code)
	}
	if code := run("node-2", "systemctl", "start", "kubelet"); code != 0 || !c.NodeRunning("node-2") {
		t.Fatalf("start: exit %d, running %v", code, c.NodeRunning("node-2"))
	}
	if code := run("node-7", "systemctl", "stop", "kubelet"); code != 255 {
		t.Fatalf("unknown node: exit %d, want 255", code)
	}
}
