package scheduler

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
)

// Decision records one scheduling attempt of one pod: which filter rejected
// which node and why, each score plugin's raw, normalized and weighted
// score for the best nodes, and the node chosen (or what preemption did).
// Upstream keeps none of this (it logs at high verbosity); here it is what a
// learner opens to see *why* a pod went where it went, through
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/namespaces/<ns>/schedulingdecisions/<pod>
//	kubectl scheduling explain <pod>
//
// It is compacted while it is recorded, so its size does not grow with the
// cluster (package v1alpha1 explains the bounds): rejected nodes are grouped
// by the status that rejected them, and only the best-scored feasible nodes
// keep their scores.
//
// A Decision is immutable once recorded; its slices may be shared.
type Decision struct {
	Pod types.NamespacedName
	UID types.UID
	// Attempt is 1 for the pod's first attempt.
	Attempt int
	// Time is when the attempt started, on the scheduler's clock.
	Time time.Time
	// NumAllNodes is the number of nodes in the snapshot.
	NumAllNodes int
	// FilterPlugins are the Filter plugins, in the order they run.
	FilterPlugins []string
	// ScorePlugins are the Score plugins with their weights.
	ScorePlugins []runtime.ScorePluginWeight
	// SkippedFilters are the Filter plugins whose PreFilter said there was
	// nothing to check for this pod (Skip): they did not run on any node.
	// SkippedScores likewise for PreScore and Score.
	SkippedFilters, SkippedScores []string
	// PreFilter is set when a PreFilter plugin rejected the pod outright;
	// then no node was filtered.
	PreFilter *framework.Status
	// EvaluatedNodes counts the nodes the filters ran on (with
	// percentageOfNodesToScore, filtering stops once enough nodes fit);
	// FeasibleNodes counts those that passed.
	EvaluatedNodes, FeasibleNodes int
	// Rejected groups the rejected nodes by the status that rejected them,
	// in the order the groups appeared.
	Rejected []RejectedNodes
	// RejectedOmitted counts rejected nodes whose group was not kept
	// (beyond v1alpha1.MaxRejectedGroups distinct statuses).
	RejectedOmitted int
	// Feasible are nodes that passed every filter, best total first: the
	// v1alpha1.MaxFeasibleNodes best, always with the selected node.
	Feasible []FeasibleNode
	// SelectedNode is the node the pod was assumed on ("" if none).
	SelectedNode string
	// Result is v1alpha1.ResultScheduled, ResultUnschedulable or
	// ResultError.
	Result string
	// Message is the FailedScheduling message, or the error ("" on success).
	Message string
	// Preemption is what DefaultPreemption did, when it ran.
	Preemption *PreemptionRecord
	// Tied are the nodes that had the best total when more than one did
	// (at most v1alpha1.MaxFeasibleNodes names); TiedCount counts them all.
	Tied      []string
	TiedCount int
}

// RejectedNodes are nodes one filter rejected with the same status.
type RejectedNodes struct {
	// Status is the rejection; Status.Plugin() is the filter. The filters
	// before it passed these nodes, the ones after it did not run.
	Status *framework.Status
	// Count is the number of nodes; Nodes names the first
	// v1alpha1.MaxNodesPerGroup.
	Count int
	Nodes []string
	// Details runs parallel to Nodes: the numbers behind each node's
	// reasons ("" for none); nil when no node of the group has any.
	Details []string
}

// FeasibleNode is a node that passed every filter.
type FeasibleNode struct {
	Name string
	// Scores has one entry per score plugin that ran; nil when nothing was
	// scored (the only feasible node: upstream skips scoring then).
	Scores     []framework.PluginScore
	TotalScore int64
}

// PreemptionRecord is DefaultPreemption's outcome.
type PreemptionRecord struct {
	NominatedNode string
	// Victims are "namespace/name" of the pods deleted.
	Victims []string
	// Message is the preemption part of the FailedScheduling message.
	Message string
}

// FilterResult is one filter plugin's verdict on one node.
type FilterResult struct {
	Plugin string
	// Ran is false for plugins after the one that rejected the node, and
	// for plugins skipped for this pod.
	Ran bool
	// Skipped: the plugin's PreFilter returned Skip.
	Skipped bool
	Status  *framework.Status
}

// FilterResults expands a node's result (nil: it passed; else the status
// of its RejectedNodes group) into one entry per filter plugin.
func (d *Decision) FilterResults(rejectedBy *framework.Status) []FilterResult {
	out := make([]FilterResult, len(d.FilterPlugins))
	ran := true
	for i, name := range d.FilterPlugins {
		skipped := contains(d.SkippedFilters, name)
		out[i] = FilterResult{Plugin: name, Ran: ran && !skipped, Skipped: skipped}
		if ran && rejectedBy != nil && rejectedBy.Plugin() == name {
			out[i].Status = rejectedBy
			ran = false
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// skipped lists, in order, the names that are in set.
func skipped(names []string, set sets.Set[string]) []string {
	if len(set) == 0 {
		return nil
	}
	var out []string
	for _, n := range names {
		if _, ok := set[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// NodeResult finds a node in the record: the status that rejected it (nil
// if it passed), its scores if kept, and whether the node is named at all.
func (d *Decision) NodeResult(node string) (rejectedBy *framework.Status, feasible *FeasibleNode, found bool) {
	for i := range d.Rejected {
		for _, n := range d.Rejected[i].Nodes {
			if n == node {
				return d.Rejected[i].Status, nil, true
			}
		}
	}
	for i := range d.Feasible {
		if d.Feasible[i].Name == node {
			return nil, &d.Feasible[i], true
		}
	}
	return nil, nil, false
}

// recordNode notes a node's filter result; d may be nil (recording off).
func (d *Decision) recordNode(name string, s *framework.Status) { d.recordNodeDetail(name, s, "") }

// recordNodeDetail is recordNode with the numbers behind a rejection.
func (d *Decision) recordNodeDetail(name string, s *framework.Status, detail string) {
	if d == nil {
		return
	}
	d.EvaluatedNodes++
	if s == nil {
		d.FeasibleNodes++
		// Names of unscored feasible nodes, until scores replace them.
		if len(d.Feasible) < v1alpha1.MaxFeasibleNodes {
			d.Feasible = append(d.Feasible, FeasibleNode{Name: name})
		}
		return
	}
	for i := range d.Rejected {
		g := &d.Rejected[i]
		if g.Status.Equal(s) {
			g.Count++
			if len(g.Nodes) < v1alpha1.MaxNodesPerGroup {
				g.Nodes = append(g.Nodes, name)
				if detail != "" && g.Details == nil {
					g.Details = make([]string, len(g.Nodes)-1, v1alpha1.MaxNodesPerGroup)
				}
				if g.Details != nil {
					g.Details = append(g.Details, detail)
				}
			}
			return
		}
	}
	if len(d.Rejected) >= v1alpha1.MaxRejectedGroups {
		d.RejectedOmitted++
		return
	}
	g := RejectedNodes{Status: s, Count: 1, Nodes: []string{name}}
	if detail != "" {
		g.Details = []string{detail}
	}
	d.Rejected = append(d.Rejected, g)
}

// recordScores keeps the best-scored nodes (ties in the order they were
// scored) and the selected one, copying their scores out of the cycle's
// shared backing array.
func (d *Decision) recordScores(scores []framework.NodePluginScores, selected string) {
	if d == nil {
		return
	}
	top := make([]int, 0, v1alpha1.MaxFeasibleNodes)
	for i := range scores {
		// Insert i into top, kept sorted by total, best first.
		pos := len(top)
		for pos > 0 && scores[top[pos-1]].TotalScore < scores[i].TotalScore {
			pos--
		}
		if pos >= v1alpha1.MaxFeasibleNodes {
			continue
		}
		if len(top) < v1alpha1.MaxFeasibleNodes {
			top = append(top, 0)
		}
		copy(top[pos+1:], top[pos:len(top)-1])
		top[pos] = i
	}
	hasSelected := false
	for _, i := range top {
		hasSelected = hasSelected || scores[i].Name == selected
	}
	if !hasSelected && selected != "" {
		for i := range scores {
			if scores[i].Name == selected {
				top[len(top)-1] = i
			}
		}
	}
	// Ties at the best total: selectHost picks one of them at random.
	d.Tied, d.TiedCount = nil, 0
	if len(top) > 0 {
		best := scores[top[0]].TotalScore
		for i := range scores {
			if scores[i].TotalScore == best {
				d.TiedCount++
				if len(d.Tied) < v1alpha1.MaxFeasibleNodes {
					d.Tied = append(d.Tied, scores[i].Name)
				}
			}
		}
		if d.TiedCount < 2 {
			d.Tied, d.TiedCount = nil, 0
		}
	}
	d.Feasible = d.Feasible[:0]
	for _, i := range top {
		d.Feasible = append(d.Feasible, FeasibleNode{
			Name:       scores[i].Name,
			Scores:     append([]framework.PluginScore(nil), scores[i].Scores...),
			TotalScore: scores[i].TotalScore,
		})
	}
}

// recordPreemption notes DefaultPreemption's outcome.
func (d *Decision) recordPreemption(r *framework.PostFilterResult, msg string) {
	if d == nil {
		return
	}
	p := &PreemptionRecord{Message: msg}
	if r != nil {
		p.NominatedNode = r.NominatedNodeName
		for _, v := range r.Victims {
			p.Victims = append(p.Victims, v.Namespace+"/"+v.Name)
		}
	}
	d.Preemption = p
}

func statusToAPI(s *framework.Status) v1alpha1.PluginStatus {
	return v1alpha1.PluginStatus{Plugin: s.Plugin(), Code: s.Code().String(), Reasons: s.Reasons()}
}

// toAPI is the attempt as the API serves it.
func (d *Decision) toAPI() v1alpha1.Attempt {
	a := v1alpha1.Attempt{
		Attempt:         d.Attempt,
		Time:            metav1.NewTime(d.Time),
		Result:          d.Result,
		SelectedNode:    d.SelectedNode,
		Message:         d.Message,
		Nodes:           v1alpha1.NodeCounts{All: d.NumAllNodes, Evaluated: d.EvaluatedNodes, Feasible: d.FeasibleNodes},
		FilterPlugins:   d.FilterPlugins,
		SkippedFilters:  d.SkippedFilters,
		SkippedScores:   d.SkippedScores,
		RejectedOmitted: d.RejectedOmitted,
		FeasibleOmitted: d.FeasibleNodes - len(d.Feasible),
	}
	for _, sp := range d.ScorePlugins {
		a.ScorePlugins = append(a.ScorePlugins, v1alpha1.ScorePlugin{Name: sp.Name, Weight: sp.Weight})
	}
	if d.PreFilter != nil {
		s := statusToAPI(d.PreFilter)
		a.PreFilter = &s
	}
	for _, g := range d.Rejected {
		a.Rejected = append(a.Rejected, v1alpha1.RejectedNodes{PluginStatus: statusToAPI(g.Status), Count: g.Count, Nodes: g.Nodes, Details: g.Details})
	}
	for _, f := range d.Feasible {
		fn := v1alpha1.FeasibleNode{Name: f.Name, Total: f.TotalScore}
		for _, s := range f.Scores {
			fn.Scores = append(fn.Scores, v1alpha1.PluginScore{Plugin: s.Name, Raw: s.Raw, Normalized: s.Normalized, Weighted: s.Score})
		}
		a.Feasible = append(a.Feasible, fn)
	}
	if d.TiedCount > 1 {
		a.Tie = &v1alpha1.Tie{Count: d.TiedCount, Nodes: d.Tied, Rule: "at random among the tied nodes (selectHost's reservoir sampling)"}
		if len(d.Feasible) > 0 {
			a.Tie.Total = d.Feasible[0].TotalScore
		}
	}
	if p := d.Preemption; p != nil {
		a.Preemption = &v1alpha1.Preemption{NominatedNode: p.NominatedNode, Victims: p.Victims, Message: p.Message}
	}
	return a
}

// decisionLog keeps the last few Decisions of the most recently attempted
// pods, so its memory stays bounded however many pods go through.
type decisionLog struct {
	perPod, maxPods int

	// mu guards byPod and order.
	mu    sync.Mutex
	byPod map[types.NamespacedName][]*Decision
	// order is the pods in the order they were first recorded, for
	// eviction (at most maxPods entries).
	order []types.NamespacedName
}

func newDecisionLog(perPod, maxPods int) *decisionLog {
	if perPod <= 0 || maxPods <= 0 {
		return nil
	}
	return &decisionLog{perPod: perPod, maxPods: maxPods, byPod: map[types.NamespacedName][]*Decision{}}
}

// start returns a new Decision to fill, or nil when recording is off.
func (l *decisionLog) start(p *framework.QueuedPodInfo, now time.Time, numNodes int, fwk *runtime.Framework) *Decision {
	if l == nil {
		return nil
	}
	return &Decision{
		Pod:           types.NamespacedName{Namespace: p.Pod.Namespace, Name: p.Pod.Name},
		UID:           p.Pod.UID,
		Attempt:       p.Attempts,
		Time:          now,
		NumAllNodes:   numNodes,
		FilterPlugins: fwk.FilterPlugins(),
		ScorePlugins:  fwk.ScorePlugins(),
	}
}

func (l *decisionLog) add(d *Decision) {
	if l == nil || d == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	list, ok := l.byPod[d.Pod]
	if !ok {
		l.order = append(l.order, d.Pod)
		for len(l.byPod) >= l.maxPods && len(l.order) > 0 {
			oldest := l.order[0]
			l.order = l.order[1:]
			delete(l.byPod, oldest)
		}
	}
	if len(list) >= l.perPod {
		list = append(list[:0:0], list[len(list)-l.perPod+1:]...)
	}
	l.byPod[d.Pod] = append(list, d)
}

func (l *decisionLog) get(key types.NamespacedName) []Decision {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.byPod[key]
	out := make([]Decision, len(list))
	for i, d := range list {
		out[i] = *d
	}
	return out
}

// last returns the pod's latest attempt (a copy).
func (l *decisionLog) last(key types.NamespacedName) (Decision, bool) {
	if l == nil {
		return Decision{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.byPod[key]
	if len(list) == 0 {
		return Decision{}, false
	}
	return *list[len(list)-1], true
}

func (l *decisionLog) forget(pod *v1.Pod) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	if _, ok := l.byPod[key]; !ok {
		return
	}
	delete(l.byPod, key)
	for i, k := range l.order {
		if k == key {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}

// SchedulingDecision returns the pod's recorded attempts in the shape the
// API serves (apiserver.DecisionProvider), or false if there are none.
func (s *Scheduler) SchedulingDecision(namespace, name string) (*v1alpha1.SchedulingDecision, bool) {
	ds := s.Decisions(namespace, name)
	if len(ds) == 0 {
		return nil, false
	}
	out := &v1alpha1.SchedulingDecision{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: ds[len(ds)-1].UID},
		Attempts:   make([]v1alpha1.Attempt, 0, len(ds)),
	}
	for i := range ds {
		out.Attempts = append(out.Attempts, ds[i].toAPI())
	}
	return out, true
}
