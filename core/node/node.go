// Package node is the console's `node` command: machines join and leave
// the cluster while it runs.
//
//	$ kubectl get pods                     # big is Pending: Insufficient cpu
//	$ node add node-4 --cpu=8 --memory=16Gi
//	node/node-4 added: kubectl get nodes shows it Ready in a moment
//	$ kubectl get pods -o wide             # ... and big runs on node-4
//
// What happens is what happens when a real machine joins: a new kubelet
// starts (its own container runtime, a podCIDR and an IP of its own) and
// registers its Node object with the API server, with the capacity, labels
// (--node-labels) and taints (--register-with-taints) it was started with;
// the scheduler sees the new Node in its watch and retries the pods that
// did not fit anywhere. `node remove` is the machine going away for good:
// its kubelet stops, its containers die, its Node object is deleted, and
// the pod garbage collector then deletes the pods still bound to it, so
// their controllers make new ones elsewhere.
//
// Upstream counterparts: `minikube node add|delete|list`, `kwokctl scale
// node`, `kind` with a new node container; on the node itself, the
// kubelet's registration (pkg/kubelet/kubelet_node_status.go:
// registerWithAPIServer, initialNode).
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/lang"
)

// Nodes is what the command needs of the cluster (core/cluster.Cluster).
type Nodes interface {
	AddNode(ctx context.Context, spec cluster.NodeSpec) error
	RemoveNode(ctx context.Context, name string) error
	Nodes() []cluster.NodeSpec
	NodeRunning(name string) bool
}

var _ Nodes = (*cluster.Cluster)(nil)

// IOStreams are the command's output streams.
type IOStreams struct {
	Out, ErrOut io.Writer
}

const usage = `Add, remove and list the cluster's nodes (the machines its kubelets run on).

Usage:
  node add NAME [--cpu=4] [--memory=512Mi] [--label KEY=VALUE ...] [--taint KEY=VALUE:EFFECT ...]
  node remove NAME      (or: node delete NAME)
  node list

Examples:
  # A bigger node joins: a Pending pod that fit nowhere can now be scheduled
  node add node-4 --cpu=8 --memory=16Gi

  # A node for one team only: pods need a toleration for dedicated=gpu:NoSchedule
  node add gpu-1 --label accelerator=gpu --taint dedicated=gpu:NoSchedule

  # The machine is gone for good: its pods are deleted and made again elsewhere
  node remove node-2

The upstream counterparts are minikube node add|delete|list and kwokctl scale node.
To stop a node's kubelet for a while instead, use: ssh NODE systemctl stop kubelet`

// usageJA is usage for a learner who reads Japanese.
const usageJA = `クラスターのノード（kubelet が動くマシン）を追加、削除、一覧します。

使い方:
  node add NAME [--cpu=4] [--memory=512Mi] [--label KEY=VALUE ...] [--taint KEY=VALUE:EFFECT ...]
  node remove NAME      （または node delete NAME）
  node list

例:
  # 大きなノードが参加します: どこにも収まらず Pending だった Pod がスケジュールできるようになります
  node add node-4 --cpu=8 --memory=16Gi

  # あるチーム専用のノードです: Pod には dedicated=gpu:NoSchedule への toleration が必要です
  node add gpu-1 --label accelerator=gpu --taint dedicated=gpu:NoSchedule

  # マシンがなくなりました: その Pod は削除され、別のノードで作り直されます
  node remove node-2

本来のコマンドでは minikube node add|delete|list や kwokctl scale node にあたります。
ノードの kubelet をしばらく止めるだけなら ssh NODE systemctl stop kubelet を使います。`

// Run runs `node ARGS...`; args exclude the word "node". It returns 0 on
// success and 1 on an error, printed as "error: ...".
func Run(ctx context.Context, nodes Nodes, args []string, s IOStreams) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		w := s.Out
		code := 0
		if len(args) == 0 {
			w, code = s.ErrOut, 1
		}
		fmt.Fprintln(w, lang.Pick(ctx, usage, usageJA))
		return code
	}
	var err error
	switch args[0] {
	case "add":
		err = add(ctx, nodes, args[1:], s)
	case "remove", "delete", "rm":
		err = remove(ctx, nodes, args[1:], s)
	case "list", "ls":
		if len(args) > 1 {
			err = fmt.Errorf(lang.Pick(ctx, "unexpected arguments: %s", "余分な引数があります: %s"), strings.Join(args[1:], " "))
		} else {
			list(nodes, s.Out)
		}
	default:
		err = fmt.Errorf(lang.Pick(ctx, "unknown command %q for \"node\": use add, remove or list (node --help)", "node に %q というコマンドはありません: add、remove、list のどれかを使います（node --help）"), args[0])
	}
	if err != nil {
		fmt.Fprintf(s.ErrOut, "error: %v\n", err)
		return 1
	}
	return 0
}

func add(ctx context.Context, nodes Nodes, args []string, s IOStreams) error {
	fs := pflag.NewFlagSet("node add", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cpu := fs.String("cpu", "4", "the node's CPUs (a quantity: 4, 500m)")
	memory := fs.String("memory", cluster.DefaultNodeMemory, "the node's memory (a quantity: 8Gi, 512Mi)")
	labels := fs.StringArrayP("label", "l", nil, "a label KEY=VALUE (again for more)")
	taints := fs.StringArray("taint", nil, "a taint KEY=VALUE:EFFECT or KEY:EFFECT (again for more)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf(lang.Pick(ctx, "%v (node --help shows the flags)", "%v（フラグは node --help で確認できます）"), err)
	}
	if fs.NArg() != 1 {
		return errors.New(lang.Pick(ctx, "node add takes one NAME, e.g. node add node-4 --cpu=4", "node add にはノード名を 1 つ指定します（例: node add node-4 --cpu=4）"))
	}
	spec := cluster.NodeSpec{Name: fs.Arg(0), Labels: map[string]string{}}
	var err error
	if spec.CPU, err = quantity("cpu", *cpu); err != nil {
		return err
	}
	if spec.Memory, err = quantity("memory", *memory); err != nil {
		return err
	}
	for _, l := range *labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf(lang.Pick(ctx, "invalid label spec: %s: a label is KEY=VALUE", "ラベルの指定が正しくありません: %s: ラベルは KEY=VALUE の形で書きます"), l)
		}
		spec.Labels[k] = v
	}
	for _, t := range *taints {
		taint, err := parseTaint(t)
		if err != nil {
			return err
		}
		spec.Taints = append(spec.Taints, taint)
	}
	if err := nodes.AddNode(ctx, spec); err != nil {
		return strip(err)
	}
	fmt.Fprintf(s.Out, lang.Pick(ctx, "node/%s added: kubectl get nodes shows it Ready in a moment\n", "node/%s を追加しました: まもなく kubectl get nodes で Ready と表示されます\n"), spec.Name)
	return nil
}

func quantity(flag, text string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return q, fmt.Errorf("invalid --%s %q: %v", flag, text, err)
	}
	if q.Sign() <= 0 {
		return q, fmt.Errorf("invalid --%s %q: must be greater than zero", flag, text)
	}
	return q, nil
}

// parseTaint reads KEY=VALUE:EFFECT or KEY:EFFECT, as kubectl taint does.
func parseTaint(spec string) (corev1.Taint, error) {
	var t corev1.Taint
	kv, effect, ok := strings.Cut(spec, ":")
	if !ok || strings.Contains(effect, ":") {
		return t, fmt.Errorf("invalid taint spec: %s: a taint is KEY=VALUE:EFFECT or KEY:EFFECT, e.g. dedicated=gpu:NoSchedule", spec)
	}
	t.Effect = corev1.TaintEffect(effect)
	t.Key, t.Value, _ = strings.Cut(kv, "=")
	return t, nil
}

func remove(ctx context.Context, nodes Nodes, args []string, s IOStreams) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return errors.New(lang.Pick(ctx, "node remove takes one NAME, e.g. node remove node-2", "node remove にはノード名を 1 つ指定します（例: node remove node-2）"))
	}
	name := args[0]
	if err := nodes.RemoveNode(ctx, name); err != nil {
		if errors.Is(err, cluster.ErrNoSuchNode) {
			return fmt.Errorf(lang.Pick(ctx, "node %q not found (node list shows the nodes)", "ノード %q は見つかりません（node list でノードの一覧を確認できます）"), name)
		}
		return strip(err)
	}
	fmt.Fprintf(s.Out, lang.Pick(ctx, "node/%s removed: its kubelet stopped and its Node is deleted; the pod garbage collector deletes its pods in about a minute and their controllers make new ones (kubectl get pods -o wide -w)\n",
		"node/%s を削除しました: kubelet を止め、Node オブジェクトを削除しました。Pod ガベージコレクターが 1 分ほどでそのノードの Pod を削除し、それぞれのコントローラーが代わりの Pod を作ります（kubectl get pods -o wide -w で確認できます）\n"), name)
	return nil
}

// strip drops the "cluster: " prefix of the cluster's errors: the learner
// typed node, not cluster.
func strip(err error) error {
	msg := strings.TrimPrefix(err.Error(), "cluster: ")
	return errors.New(msg)
}

func list(nodes Nodes, out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tCPU\tMEMORY\tKUBELET\tLABELS\tTAINTS")
	for _, n := range nodes.Nodes() {
		state := "stopped"
		if nodes.NodeRunning(n.Name) {
			state = "running"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.CPU.String(), n.Memory.String(), state, labelText(n.Labels), taintText(n.Taints))
	}
	w.Flush()
}

func labelText(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func taintText(taints []corev1.Taint) string {
	if len(taints) == 0 {
		return "<none>"
	}
	var parts []string
	for _, t := range taints {
		kv := t.Key
		if t.Value != "" {
			kv += "=" + t.Value
		}
		parts = append(parts, kv+":"+string(t.Effect))
	}
	return strings.Join(parts, ",")
}
