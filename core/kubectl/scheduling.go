package kubectl

// kubectl scheduling explain: NOT an upstream kubectl command. It is
// kubetab's, for learners: it reads the scheduler's decision record of a pod
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/namespaces/<ns>/schedulingdecisions/<pod>
//
// (a read-only resource the API server gets from the scheduler's memory; see
// core/scheduler/apis/v1alpha1) and prints, for the pod's last attempt, what
// every filter plugin said about every node and what every score plugin gave
// the best nodes. With the real kubectl the same record is at
// `kubectl get --raw <that path>`.

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/lang"
	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

func (s *session) newSchedulingCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scheduling",
		Short: "(kubetab) Show why the scheduler placed a pod where it did",
		Long: `Show the kube-scheduler's decisions (kubetab only; not an upstream kubectl command).

The scheduler keeps the last few scheduling attempts of the pods it tried most
recently, in memory, and the API server serves them read-only at
/apis/scheduling.kubetab.dev/v1alpha1/namespaces/NAMESPACE/schedulingdecisions/POD.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(s.newSchedulingExplainCommand())
	return cmd
}

func (s *session) newSchedulingExplainCommand() *cobra.Command {
	var output string
	var attempt int
	cmd := &cobra.Command{
		Use:   "explain POD",
		Short: "(kubetab) Print each node's filter results and scores for a pod",
		Long: `Print the scheduler's record of a pod's last scheduling attempt (kubetab only):
every filter plugin's verdict on every node, in the order the filters ran
(a node stops at the first filter that rejects it), each score plugin's
score for the best nodes (raw, normalized to 0-100, times the plugin's
weight), the node chosen, and what preemption did when no node fit.

On a big cluster the record is bounded: rejected nodes are grouped by
reason with up to 20 names per group, and only the 10 best-scored nodes
are listed; the counts say what was left out.`,
		Example: `  # Why is web-5d9c7b8f6-x2x8q Pending (or on node-2)?
  kubectl scheduling explain web-5d9c7b8f6-x2x8q

  # Every recorded attempt, or one of them
  kubectl scheduling explain web-5d9c7b8f6-x2x8q --attempt=0
  kubectl scheduling explain web-5d9c7b8f6-x2x8q --attempt=2

  # The record as the API serves it
  kubectl scheduling explain web-5d9c7b8f6-x2x8q -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd, "exactly one POD is required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output, "", "json", "yaml"); err != nil {
				return err
			}
			name := strings.TrimPrefix(strings.TrimPrefix(args[0], "pods/"), "pod/")
			path := "/apis/" + schedv1alpha1.SchemeGroupVersion.String() + "/namespaces/" + s.namespace + "/" + schedv1alpha1.Resource + "/" + name
			if output != "" {
				var obj map[string]any
				if err := s.client.into(s.ctx, request{method: http.MethodGet, path: path}, &obj); err != nil {
					return err
				}
				return printObject(s.out(), output, obj)
			}
			var d schedv1alpha1.SchedulingDecision
			if err := s.client.into(s.ctx, request{method: http.MethodGet, path: path}, &d); err != nil {
				return err
			}
			if len(d.Attempts) == 0 {
				return fmt.Errorf("no scheduling attempts recorded for pod %s/%s", s.namespace, name)
			}
			attempts := d.Attempts[len(d.Attempts)-1:]
			switch {
			case attempt == 0:
				attempts = d.Attempts
			case attempt > 0:
				attempts = nil
				for _, a := range d.Attempts {
					if a.Attempt == attempt {
						attempts = append(attempts, a)
					}
				}
				if len(attempts) == 0 {
					var have []string
					for _, a := range d.Attempts {
						have = append(have, fmt.Sprint(a.Attempt))
					}
					return fmt.Errorf("attempt %d of pod %s/%s is not recorded (recorded: %s)", attempt, s.namespace, name, strings.Join(have, ", "))
				}
			}
			last := d.Attempts[len(d.Attempts)-1].Attempt
			for i, a := range attempts {
				if i > 0 {
					fmt.Fprintln(s.out())
				}
				printAttempt(s.out(), d.Namespace+"/"+d.Name, a, last, lang.Of(s.ctx) == lang.Japanese)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml (the SchedulingDecision object). Default: tables.")
	cmd.Flags().IntVar(&attempt, "attempt", -1, "Which recorded attempt to print: its number, or 0 for all. Default: the last.")
	return cmd
}

// printAttempt draws one attempt: a summary, the filter table (one row per
// node, or per group of nodes with the same result) and the score table.
//
// With ja, the prose is in Japanese (kubetab's own command speaks the page's
// language); the tables' headings and cells, plugin names, codes and the
// scheduler's reasons stay as the scheduler words them (a tabwriter aligns
// characters, not the two columns a Japanese one takes).
func printAttempt(w io.Writer, pod string, a schedv1alpha1.Attempt, lastAttempt int, ja bool) {
	j := func(en, jp string) string {
		if ja {
			return jp
		}
		return en
	}
	fmt.Fprintf(w, j("Pod:       %s\n", "Pod:         %s\n"), pod)
	fmt.Fprintf(w, j("Attempt:   %d of %d, at %s\n", "試行:        %d 回目（全 %d 回）、%s\n"), a.Attempt, lastAttempt, a.Time.UTC().Format("2006-01-02T15:04:05Z"))
	switch a.Result {
	case schedv1alpha1.ResultScheduled:
		fmt.Fprintf(w, j("Result:    Scheduled on %s\n", "結果:        %s にスケジュールされました\n"), a.SelectedNode)
	default:
		fmt.Fprintf(w, j("Result:    %s\n", "結果:        %s\n"), a.Result)
	}
	if a.Message != "" {
		fmt.Fprintf(w, j("Message:   %s\n", "メッセージ:  %s\n"), a.Message)
	}
	fmt.Fprintf(w, j("Nodes:     %d in the cluster, %d evaluated, %d feasible\n", "ノード:      クラスターに %d、評価したもの %d、条件を満たすもの %d\n"), a.Nodes.All, a.Nodes.Evaluated, a.Nodes.Feasible)
	if a.Nodes.Evaluated < a.Nodes.All && a.PreFilter == nil {
		fmt.Fprint(w, j("           (percentageOfNodesToScore: the search stopped once enough nodes fit)\n",
			"             （percentageOfNodesToScore: 十分な数のノードが見つかった時点で探索を止めました）\n"))
	}
	if p := a.PreFilter; p != nil {
		fmt.Fprintf(w, j("PreFilter: %s rejected the pod before any node was looked at: %s: %s\n",
			"PreFilter:   %s が、どのノードも見る前に Pod を拒否しました: %s: %s\n"), p.Plugin, p.Code, strings.Join(p.Reasons, ", "))
	}

	skippedF := map[string]bool{}
	for _, n := range a.SkippedFilters {
		skippedF[n] = true
	}
	if len(a.FilterPlugins) > 0 && a.PreFilter == nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, j("Filters, in the order they run (a node stops at the first that says no):",
			"フィルターを実行順に示します（ノードは最初に「不可」と答えたフィルターで止まります）:"))
		var list []string
		for _, f := range a.FilterPlugins {
			if skippedF[f] {
				f += j(" (skipped: nothing to check for this pod)", "（スキップ: この Pod には確認することがありません）")
			}
			list = append(list, f)
		}
		for i, f := range list {
			fmt.Fprintf(w, "  %d. %s\n", i+1, f)
		}
		fmt.Fprintln(w)
		tw := newTabWriter(w)
		fmt.Fprintln(tw, "NODE\tFILTERS PASSED\tREJECTED BY\tREASON")
		for _, g := range a.Rejected {
			passed := passedBefore(a.FilterPlugins, skippedF, g.Plugin)
			reason := g.Code
			if len(g.Reasons) > 0 {
				reason += ": " + strings.Join(g.Reasons, ", ")
			}
			for i, n := range g.Nodes {
				fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\n", n, passed, ranFilters(a.FilterPlugins, skippedF), g.Plugin, nodeReason(g, i))
			}
			if more := g.Count - len(g.Nodes); more > 0 {
				fmt.Fprintf(tw, "(%d more)\t%d/%d\t%s\t%s\n", more, passed, ranFilters(a.FilterPlugins, skippedF), g.Plugin, reason)
			}
		}
		if a.RejectedOmitted > 0 {
			fmt.Fprintf(tw, "(%d more)\t\t\trejected for other reasons (not recorded)\n", a.RejectedOmitted)
		}
		for _, f := range a.Feasible {
			fmt.Fprintf(tw, "%s\tall\t\tfeasible\n", f.Name)
		}
		if a.FeasibleOmitted > 0 {
			fmt.Fprintf(tw, "(%d more)\tall\t\tfeasible (not listed)\n", a.FeasibleOmitted)
		}
		tw.Flush()
	}

	if hasScores(a) {
		fmt.Fprintln(w)
		fmt.Fprintln(w, j("Scores: each cell is normalized (0-100) × weight, with (raw → normalized). Highest total wins.",
			"スコア: 各欄は 正規化した値（0-100）× 重み で、（生の値 → 正規化した値）を添えています。合計が最も高いノードが選ばれます。"))
		fmt.Fprintln(w)
		var cols []schedv1alpha1.ScorePlugin
		ran := map[string]bool{}
		for _, f := range a.Feasible {
			for _, s := range f.Scores {
				ran[s.Plugin] = true
			}
		}
		var skipped []string
		for _, p := range a.ScorePlugins {
			if ran[p.Name] {
				cols = append(cols, p)
			} else {
				skipped = append(skipped, p.Name)
			}
		}
		tw := newTabWriter(w)
		header := []string{"NODE"}
		for _, c := range cols {
			header = append(header, fmt.Sprintf("%s ×%d", c.Name, c.Weight))
		}
		header = append(header, "TOTAL")
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, f := range a.Feasible {
			row := []string{f.Name}
			if f.Name == a.SelectedNode {
				row[0] += " *"
			}
			for _, c := range cols {
				cell := "-"
				for _, s := range f.Scores {
					if s.Plugin == c.Name {
						cell = fmt.Sprintf("%d (%d → %d)", s.Weighted, s.Raw, s.Normalized)
					}
				}
				row = append(row, cell)
			}
			row = append(row, fmt.Sprint(f.Total))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
		if len(skipped) > 0 {
			fmt.Fprintf(w, j("Not scored (nothing to score for this pod): %s\n", "スコアなし（この Pod には採点することがありません）: %s\n"), strings.Join(skipped, ", "))
		}
		if a.SelectedNode != "" {
			fmt.Fprint(w, j("* selected\n", "* 選ばれたノード\n"))
		}
		if t := a.Tie; t != nil {
			names := strings.Join(t.Nodes, ", ")
			if more := t.Count - len(t.Nodes); more > 0 {
				names += fmt.Sprintf(j(" and %d more", " ほか %d"), more)
			}
			fmt.Fprintf(w, j("Tie: %d nodes had the best total %d (%s); %s was picked %s\n", "同点: %d 台のノードが最高の合計 %d でした（%s）。%s が選ばれました（%s）\n"), t.Count, t.Total, names, a.SelectedNode, t.Rule)
		}
	} else if a.Result == schedv1alpha1.ResultScheduled && len(a.Feasible) == 1 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, j("Only %s passed the filters: nothing to rank, so no node was scored.\n", "フィルターを通過したのは %s だけでした。順位を付ける必要がないため、スコアは計算していません。\n"), a.Feasible[0].Name)
	}

	if p := a.Preemption; p != nil {
		fmt.Fprintln(w)
		switch {
		case p.NominatedNode != "":
			fmt.Fprintf(w, j("Preemption: nominated node %s; deleted %s to make room (the pod is retried once they are gone)\n", "プリエンプション: ノード %s を指名し、場所を空けるために %s を削除しました（それらがなくなったら Pod をもう一度試します）\n"), p.NominatedNode, strings.Join(p.Victims, ", "))
		case p.Message != "":
			fmt.Fprintf(w, j("Preemption: %s\n", "プリエンプション: %s\n"), strings.TrimPrefix(p.Message, "preemption: "))
		}
	}
}

// nodeReason is the REASON cell of the i-th node of a rejected group:
// upstream's code and reasons, and kubetab's numbers where the record has
// them ("Unschedulable: Insufficient cpu: requests 3, 0.5 of 4 free").
func nodeReason(g schedv1alpha1.RejectedNodes, i int) string {
	reason := g.Code
	switch {
	case i < len(g.Details) && g.Details[i] != "":
		reason += ": " + g.Details[i]
	case len(g.Reasons) > 0:
		reason += ": " + strings.Join(g.Reasons, ", ")
	}
	return reason
}

// ranFilters counts the filter plugins that were not skipped.
func ranFilters(filters []string, skipped map[string]bool) int {
	n := 0
	for _, f := range filters {
		if !skipped[f] {
			n++
		}
	}
	return n
}

// passedBefore counts the filters (not skipped) that ran before plugin.
func passedBefore(filters []string, skipped map[string]bool, plugin string) int {
	n := 0
	for _, f := range filters {
		if f == plugin {
			break
		}
		if !skipped[f] {
			n++
		}
	}
	return n
}

func hasScores(a schedv1alpha1.Attempt) bool {
	for _, f := range a.Feasible {
		if len(f.Scores) > 0 {
			return true
		}
	}
	return false
}

// schedulingSummary is the one line `kubectl describe pod` adds (kubetab
// only, not upstream's describe) when the scheduler has a record of the
// pod: the last attempt's outcome, and where the full table is. Nothing is
// printed when there is no record or the server has none to give.
func (d *describer) schedulingSummary(w *prefixWriter, pod *corev1.Pod) {
	var rec schedv1alpha1.SchedulingDecision
	path := "/apis/" + schedv1alpha1.SchemeGroupVersion.String() + "/namespaces/" + pod.Namespace + "/" + schedv1alpha1.Resource + "/" + pod.Name
	if err := d.s.client.into(d.s.ctx, request{method: http.MethodGet, path: path}, &rec); err != nil || len(rec.Attempts) == 0 || rec.UID != pod.UID {
		return
	}
	a := rec.Attempts[len(rec.Attempts)-1]
	var what string
	switch a.Result {
	case schedv1alpha1.ResultScheduled:
		what = fmt.Sprintf("Scheduled on %s: %d of %d nodes feasible", a.SelectedNode, a.Nodes.Feasible, a.Nodes.All)
	default:
		var parts []string
		for _, g := range a.Rejected {
			parts = append(parts, fmt.Sprintf("%d rejected by %s", g.Count, g.Plugin))
		}
		if a.PreFilter != nil {
			parts = append(parts, "rejected by "+a.PreFilter.Plugin)
		}
		what = a.Result
		if len(parts) > 0 {
			what += ": " + strings.Join(parts, ", ")
		}
	}
	w.Write(level0, "Scheduling:\tattempt %d, %s (kubectl scheduling explain %s)\n", a.Attempt, what, pod.Name)
	if a.Result == schedv1alpha1.ResultScheduled {
		return
	}
	// Why each node said no, with the numbers (the explain table has the
	// filters around them).
	for _, g := range a.Rejected {
		for i, n := range g.Nodes {
			w.Write(level1, "%s:\t%s: %s\n", n, g.Plugin, nodeReason(g, i))
		}
		if more := g.Count - len(g.Nodes); more > 0 {
			w.Write(level1, "(%d more):\t%s: %s\n", more, g.Plugin, nodeReason(g, len(g.Nodes)))
		}
	}
}
