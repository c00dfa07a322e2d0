package kubectl_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/kubectl"
	"github.com/kubetab/kubetab/wasm/images"
)

// startCluster starts a whole cluster (default nodes, the built-in images)
// for the test and returns run, which runs a kubectl line against it in
// process: stdout, stderr and the exit code.
func startCluster(t *testing.T) func(line string) (string, string, int) {
	t.Helper()
	c, err := cluster.New(cluster.Config{Images: images.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tr := kubectl.InProcessTransport(c.Handler())
	run := func(line string) (string, string, int) {
		t.Helper()
		args, err := kubectl.SplitWords(line)
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := kubectl.Run(ctx, args, kubectl.IOStreams{Out: &out, ErrOut: &errb}, tr)
		return out.String(), errb.String(), code
	}
	return run
}
