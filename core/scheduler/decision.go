package scheduler

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
)

// Decision records one scheduling attempt of one pod: what each filter said
// about each node it looked at, each score plugin's raw, normalized and
// weighted score, and the node chosen. Upstream keeps none of this (it logs
// at high verbosity); kube-scheduler-simulator records it in annotations.
// Here it is what a learner opens to see *why* a pod went where it went.
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
	// ScorePlugins are the Score plugins with their weights, in the order of
	// NodeDecision.Scores.
	ScorePlugins []runtime.ScorePluginWeight
	// PreFilter is set when a PreFilter plugin rejected the pod outright;
	// then no node was filtered.
	PreFilter *framework.Status
	// Nodes are the nodes the filters ran on, in the order they were looked
	// at. With percentageOfNodesToScore, filtering stops once enough nodes
	// fit, so on a big cluster not every node is here.
	Nodes []NodeDecision
	// SelectedNode is the node the pod was assumed on ("" if none).
	SelectedNode string
	// Message is the FailedScheduling message, or the error ("" on success).
	Message string
}

// NodeDecision is the result of one node in one attempt.
type NodeDecision struct {
	Name string
	// Filter is nil when the node passed every filter. Otherwise it is the
	// status of the plugin that rejected it (Filter.Plugin()); the plugins
	// before that one passed and the ones after it did not run, since
	// filters stop at the first rejection. FilterResults spells that out.
	Filter *framework.Status
	// Scores has one entry per score plugin (Decision.ScorePlugins order);
	// nil when the node was not scored (it failed a filter, or it was the
	// only feasible node: upstream skips scoring then).
	Scores     []framework.PluginScore
	TotalScore int64
}

// FilterResult is one filter plugin's verdict on one node.
type FilterResult struct {
	Plugin string
	// Ran is false for plugins after the one that rejected the node.
	Ran    bool
	Status *framework.Status
}

// FilterResults expands the node's result into one entry per filter plugin.
func (d *Decision) FilterResults(n NodeDecision) []FilterResult {
	out := make([]FilterResult, len(d.FilterPlugins))
	ran := true
	for i, name := range d.FilterPlugins {
		out[i] = FilterResult{Plugin: name, Ran: ran}
		if ran && n.Filter != nil && n.Filter.Plugin() == name {
			out[i].Status = n.Filter
			ran = false
		}
	}
	return out
}

// recordNode notes a node's filter result; d may be nil (recording off).
func (d *Decision) recordNode(name string, s *framework.Status) {
	if d != nil {
		d.Nodes = append(d.Nodes, NodeDecision{Name: name, Filter: s})
	}
}

// recordScores attaches the scores to the nodes that passed the filters,
// which are in the same order as the feasible nodes that were scored.
func (d *Decision) recordScores(scores []framework.NodePluginScores) {
	if d == nil {
		return
	}
	j := 0
	for i := range d.Nodes {
		if d.Nodes[i].Filter == nil && j < len(scores) {
			d.Nodes[i].Scores = scores[j].Scores
			d.Nodes[i].TotalScore = scores[j].TotalScore
			j++
		}
	}
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
