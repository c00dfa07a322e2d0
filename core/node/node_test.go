package node_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/lang"
	"github.com/kubetab/kubetab/core/node"
	"github.com/kubetab/kubetab/wasm/images"
)

// Against a real cluster, one command after the other.
func TestNodeCommand(t *testing.T) {
	c, err := cluster.New(cluster.Config{Images: images.New(), Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		ja       bool
		line     string
		wantCode int
		wantOut  string // a prefix of the output
		wantErr  string // the whole error output
	}{
		{line: "list", wantOut: "NAME     CPU   MEMORY   KUBELET   LABELS   TAINTS\nnode-1   4     512Mi    running   <none>   <none>\nnode-2   4     512Mi    running   <none>   <none>\n"},
		{line: "add node-3 --cpu=8 --memory=16Gi --label disktype=ssd --label zone=a --taint dedicated=gpu:NoSchedule --taint spot:PreferNoSchedule",
			wantOut: "node/node-3 added: kubectl get nodes shows it Ready in a moment\n"},
		{line: "list", wantOut: "NAME     CPU   MEMORY   KUBELET   LABELS                TAINTS\nnode-1   4     512Mi    running   <none>                <none>\nnode-2   4     512Mi    running   <none>                <none>\nnode-3   8     16Gi     running   disktype=ssd,zone=a   dedicated=gpu:NoSchedule,spot:PreferNoSchedule\n"},
		{line: "add node-3", wantCode: 1, wantErr: "error: node \"node-3\" already exists\n"},
		{line: "add Node_4", wantCode: 1, wantErr: "error: invalid node name \"Node_4\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"},
		{line: "add node-4 --cpu=lots", wantCode: 1, wantErr: "error: invalid --cpu \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"},
		{line: "add node-4 --memory=0", wantCode: 1, wantErr: "error: invalid --memory \"0\": must be greater than zero\n"},
		{line: "add node-4 --label nolabel", wantCode: 1, wantErr: "error: invalid label spec: nolabel: a label is KEY=VALUE\n"},
		{line: "add node-4 --taint k=v", wantCode: 1, wantErr: "error: invalid taint spec: k=v: a taint is KEY=VALUE:EFFECT or KEY:EFFECT, e.g. dedicated=gpu:NoSchedule\n"},
		{line: "add node-4 --taint k=v:Sometimes", wantCode: 1, wantErr: "error: node node-4: invalid taint effect \"Sometimes\" for k: must be NoSchedule, PreferNoSchedule or NoExecute\n"},
		{line: "add node-4 --gpus=1", wantCode: 1, wantErr: "error: unknown flag: --gpus (node --help shows the flags)\n"},
		{line: "add", wantCode: 1, wantErr: "error: node add takes one NAME, e.g. node add node-4 --cpu=4\n"},
		{line: "remove node-9", wantCode: 1, wantErr: "error: node \"node-9\" not found (node list shows the nodes)\n"},
		{line: "delete node-2", wantOut: "node/node-2 removed: "},
		{line: "list", wantOut: "NAME     CPU   MEMORY   KUBELET   LABELS                TAINTS\nnode-1   4     512Mi    running   <none>                <none>\nnode-3   8     16Gi     running   disktype=ssd,zone=a   dedicated=gpu:NoSchedule,spot:PreferNoSchedule\n"},
		{line: "resize node-1", wantCode: 1, wantErr: "error: unknown command \"resize\" for \"node\": use add, remove or list (node --help)\n"},
		{line: "--help", wantOut: "Add, remove and list the cluster's nodes"},
		// In the Japanese console kubetab's own words are Japanese.
		{ja: true, line: "add node-5", wantOut: "node/node-5 を追加しました: まもなく kubectl get nodes で Ready と表示されます\n"},
		{ja: true, line: "add", wantCode: 1, wantErr: "error: node add にはノード名を 1 つ指定します（例: node add node-4 --cpu=4）\n"},
		{ja: true, line: "remove node-9", wantCode: 1, wantErr: "error: ノード \"node-9\" は見つかりません（node list でノードの一覧を確認できます）\n"},
	}
	for _, st := range steps {
		var out, errOut bytes.Buffer
		ctx := ctx
		if st.ja {
			ctx = lang.With(ctx, lang.Japanese)
		}
		code := node.Run(ctx, c, strings.Fields(st.line), node.IOStreams{Out: &out, ErrOut: &errOut})
		if code != st.wantCode || !strings.HasPrefix(out.String(), st.wantOut) || errOut.String() != st.wantErr {
			t.Errorf("node %s = %d\n%s%s\nwant %d\n%s...\n%s", st.line, code, out.String(), errOut.String(), st.wantCode, st.wantOut, st.wantErr)
		}
	}
	if c.NodeRunning("node-2") {
		t.Error("node-2's kubelet runs after node delete")
	}
}
