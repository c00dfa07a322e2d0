package kubectl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/store"
)

// decisionCLI is kubectl against an API server whose decision provider
// knows one pod's record.
func decisionCLI(t *testing.T, d *schedv1alpha1.SchedulingDecision) *CLI {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Config{Registry: reg, Decisions: apiserver.DecisionProviderFunc(
		func(ns, name string) (*schedv1alpha1.SchedulingDecision, bool) {
			if ns == d.Namespace && name == d.Name {
				cp := *d
				return &cp, true
			}
			return nil, false
		})})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := New(Config{Transport: InProcessTransport(srv)})
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

func runCLI(t *testing.T, cli *CLI, line string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), SplitWordsOrDie(t, line), IOStreams{Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

func SplitWordsOrDie(t *testing.T, line string) []string {
	t.Helper()
	w, err := SplitWords(line)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var testDecision = &schedv1alpha1.SchedulingDecision{
	ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
	Attempts: []schedv1alpha1.Attempt{
		{
			Attempt: 1, Time: metav1.NewTime(t0), Result: "Unschedulable",
			Message:        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..",
			Nodes:          schedv1alpha1.NodeCounts{All: 3, Evaluated: 3},
			FilterPlugins:  []string{"NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"},
			SkippedFilters: []string{"NodeAffinity"},
			Rejected: []schedv1alpha1.RejectedNodes{
				{PluginStatus: schedv1alpha1.PluginStatus{Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint {dedicated: gpu}"}}, Count: 1, Nodes: []string{"node-1"}},
				{PluginStatus: schedv1alpha1.PluginStatus{Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient memory"}}, Count: 2, Nodes: []string{"node-2", "node-3"},
					Details: []string{"Insufficient memory: requests 6Gi, 3Gi of 8Gi free", "Insufficient memory: requests 6Gi, 5632Mi of 8Gi free"}},
			},
			Preemption: &schedv1alpha1.Preemption{Message: "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."},
		},
		{
			Attempt: 2, Time: metav1.NewTime(t0.Add(10e9)), Result: "Scheduled", SelectedNode: "node-3",
			Nodes:          schedv1alpha1.NodeCounts{All: 3, Evaluated: 3, Feasible: 2},
			FilterPlugins:  []string{"NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit"},
			ScorePlugins:   []schedv1alpha1.ScorePlugin{{Name: "TaintToleration", Weight: 3}, {Name: "NodeAffinity", Weight: 2}, {Name: "NodeResourcesFit", Weight: 1}},
			SkippedFilters: []string{"NodeAffinity"},
			SkippedScores:  []string{"NodeAffinity"},
			Rejected: []schedv1alpha1.RejectedNodes{
				{PluginStatus: schedv1alpha1.PluginStatus{Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint {dedicated: gpu}"}}, Count: 1, Nodes: []string{"node-1"}},
			},
			Feasible: []schedv1alpha1.FeasibleNode{
				{Name: "node-3", Total: 375, Scores: []schedv1alpha1.PluginScore{{Plugin: "TaintToleration", Raw: 0, Normalized: 100, Weighted: 300}, {Plugin: "NodeResourcesFit", Raw: 75, Normalized: 75, Weighted: 75}}},
				{Name: "node-2", Total: 375, Scores: []schedv1alpha1.PluginScore{{Plugin: "TaintToleration", Raw: 0, Normalized: 100, Weighted: 300}, {Plugin: "NodeResourcesFit", Raw: 75, Normalized: 75, Weighted: 75}}},
			},
			Tie: &schedv1alpha1.Tie{Total: 375, Count: 2, Nodes: []string{"node-3", "node-2"}, Rule: "at random among the tied nodes (selectHost's reservoir sampling)"},
		},
	},
}

func TestSchedulingExplain(t *testing.T) {
	cli := decisionCLI(t, testDecision)
	// Every attempt, oldest first: filter reasons with the numbers, each
	// score plugin's raw, normalized and weighted value, the tie.
	out, errOut, code := runCLI(t, cli, "scheduling explain web --attempt=0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "scheduling-explain", out)

	out, _, code = runCLI(t, cli, "scheduling explain pod/web --attempt=1")
	for _, s := range []string{
		"Result:    Unschedulable",
		"Message:   0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient memory.",
		"node-2   2/3              NodeResourcesFit   Unschedulable: Insufficient memory: requests 6Gi, 3Gi of 8Gi free",
		"\nPreemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.\n",
	} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("attempt 1: missing %q in:\n%s", s, out)
		}
	}
	if out, _, _ := runCLI(t, cli, "scheduling explain web --attempt=0"); strings.Count(out, "Pod:       default/web") != 2 {
		t.Errorf("--attempt=0 prints every attempt:\n%s", out)
	}
	out, _, code = runCLI(t, cli, "scheduling explain web -o json")
	if code != 0 || !strings.Contains(out, `"kind": "SchedulingDecision"`) || !strings.Contains(out, `"apiVersion": "scheduling.kubetab.dev/v1alpha1"`) {
		t.Errorf("-o json:\n%s", out)
	}
	_, errOut, code = runCLI(t, cli, "scheduling explain nobody")
	if code != 1 || errOut != "Error from server (NotFound): schedulingdecisions.scheduling.kubetab.dev \"nobody\" not found\n" {
		t.Errorf("unknown pod: %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, cli, "scheduling explain web --attempt=7")
	if code != 1 || !strings.Contains(errOut, "attempt 7 of pod default/web is not recorded (recorded: 1, 2)") {
		t.Errorf("missing attempt: %d %q", code, errOut)
	}
}

func TestDescribePodShowsSchedulingLine(t *testing.T) {
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := reg.MustLookup("", "namespaces").Create(ctx, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := reg.MustLookup("", "pods").Create(ctx, "default", &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello:1.0"}}},
	}, registry.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := *testDecision
	d.UID = obj.(*corev1.Pod).UID
	srv, err := apiserver.New(apiserver.Config{Registry: reg, Decisions: apiserver.DecisionProviderFunc(
		func(ns, name string) (*schedv1alpha1.SchedulingDecision, bool) {
			if ns == "default" && name == "web" {
				cp := d
				return &cp, true
			}
			return nil, false
		})})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := New(Config{Transport: InProcessTransport(srv)})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, cli, "describe pod web")
	want := "attempt 2, Scheduled on node-3: 2 of 3 nodes feasible (kubectl scheduling explain web)\n"
	// An unschedulable attempt adds each node's reason with its numbers.
	unschedulable := d
	unschedulable.Attempts = d.Attempts[:1]
	d = unschedulable
	out1, _, _ := runCLI(t, cli, "describe pod web")
	var block []string
	in := false
	for _, l := range strings.Split(out1, "\n") {
		switch {
		case strings.HasPrefix(l, "Scheduling:"):
			in = true
		case in && !strings.HasPrefix(l, " "):
			in = false
		}
		if in {
			block = append(block, l)
		}
	}
	golden(t, "describe-unschedulable", strings.Join(block, "\n")+"\n")
	d = *testDecision
	d.UID = unschedulable.UID
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Scheduling:") {
			line = l + "\n"
		}
	}
	if code != 0 || !strings.HasSuffix(line, want) {
		t.Errorf("exit %d %s; Scheduling line %q, want one ending %q\n%s", code, errOut, line, want, out)
	}
}
