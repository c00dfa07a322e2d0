// Package framework is the scheduling framework: the extension points one
// scheduling attempt runs through, the plugin interfaces, and the types the
// plugins read (NodeInfo, CycleState, Status).
//
// Upstream counterpart: pkg/scheduler/framework (interface.go, types.go,
// cycle_state.go, events.go); since Kubernetes 1.34 the interfaces live in
// staging/src/k8s.io/kube-scheduler/framework. The shapes are kept, so a
// plugin here reads like its upstream original.
//
// A pod goes through the extension points in this order. A plugin is any Go
// type with a Name that implements one or more of the interfaces below; the
// framework (package runtime) calls every enabled plugin at each point it
// implements.
//
//	scheduling queue ── QueueSort: which pod next (priority, then queue time)
//	     │
//	     ▼  scheduling cycle: one pod at a time, against a snapshot of the cache
//	PreFilter ─▶ Filter (every node, until enough fit) ─▶ PostFilter (only if
//	     │        "does this node fit?"                    no node fit: preemption)
//	     ▼
//	PreScore ─▶ Score (each feasible node, 0..100) ─▶ NormalizeScore ─▶ × weight
//	     │
//	     ▼  highest total wins (ties broken at random)
//	assume (the cache counts the pod on the node now) ─▶ Reserve
//	     │
//	     ▼  binding cycle: in the background, so the next pod can start
//	PreBind ─▶ Bind (POST pods/binding: sets spec.nodeName) ─▶ PostBind
//
// A nil *Status means Success everywhere.
package framework

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
)

// Score bounds: every Score plugin returns (after NormalizeScore) a value in
// [MinNodeScore, MaxNodeScore]; the framework then multiplies it by the
// plugin's weight.
const (
	MaxNodeScore  int64 = 100
	MinNodeScore  int64 = 0
	MaxTotalScore int64 = math.MaxInt64
)

// Plugin is the parent of every plugin interface.
type Plugin interface {
	Name() string
}

// LessFunc orders pods in the scheduling queue's activeQ.
type LessFunc func(a, b *QueuedPodInfo) bool

// QueueSortPlugin orders the pods waiting to be scheduled. Exactly one is
// enabled (upstream: PrioritySort).
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// PreFilterExtensions let preemption ask a PreFilter plugin to update its
// CycleState as if a pod were added to or removed from a node.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// PreFilterPlugin runs once per attempt, before any Filter: it computes what
// the filters need (the pod's total requests, for example) into the
// CycleState, and may reject the pod outright or narrow the nodes to look at
// (PreFilterResult). A Skip status skips the plugin's own Filter.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *v1.Pod) (*PreFilterResult, *Status)
	// PreFilterExtensions may be nil.
	PreFilterExtensions() PreFilterExtensions
}

// FilterPlugin answers "can this pod run on this node?" for one node. It
// returns Unschedulable or UnschedulableAndUnresolvable with upstream's
// reason strings ("Insufficient cpu"), which end up counted in the
// FailedScheduling event. Filters run in the configured order and stop at the
// first one that rejects the node.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
}

// PostFilterPlugin runs only when no node passed the filters; preemption
// (DefaultPreemption) is one.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, filteredNodeStatusMap *NodeToStatus) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once per attempt with the feasible nodes, before Score.
// A Skip status skips the plugin's own Score.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) *Status
}

// ScoreExtensions rescale one plugin's scores across all nodes after Score,
// into [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *v1.Pod, scores NodeScoreList) *Status
}

// ScorePlugin ranks a feasible node: higher is better.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions may be nil.
	ScoreExtensions() ScoreExtensions
}

// ReservePlugin is told when a pod is assumed on a node (Reserve) and when
// that is undone because a later step failed (Unreserve).
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// PreBindPlugin runs before binding (upstream: volume binding).
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod to the node. Bind plugins are tried in order until
// one does not return Skip (upstream: DefaultBinder).
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// PostBindPlugin is told after a successful bind.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// EnqueueExtensions is implemented by plugins that can reject pods, to say
// which cluster events may make such a pod schedulable again. The queue moves
// an unschedulable pod back only on an event that one of the plugins that
// rejected it registered. A plugin without it is woken by every event.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister() []ClusterEvent
}

// PreFilterResult narrows the nodes the filters look at; nil means all nodes.
type PreFilterResult struct {
	// NodeNames is the set of nodes to consider; nil means all.
	NodeNames sets.Set[string]
}

// AllNodes reports whether the result does not narrow the nodes.
func (p *PreFilterResult) AllNodes() bool { return p == nil || p.NodeNames == nil }

// Merge intersects two results.
func (p *PreFilterResult) Merge(in *PreFilterResult) *PreFilterResult {
	if p.AllNodes() && in.AllNodes() {
		return nil
	}
	if p.AllNodes() {
		return &PreFilterResult{NodeNames: in.NodeNames.Clone()}
	}
	if in.AllNodes() {
		return &PreFilterResult{NodeNames: p.NodeNames.Clone()}
	}
	return &PreFilterResult{NodeNames: p.NodeNames.Intersection(in.NodeNames)}
}

// PostFilterResult is what a PostFilter plugin (preemption) proposes. A
// nil result leaves the pod's status.nominatedNodeName as it is; a non-nil
// one sets it to NominatedNodeName ("" clears it).
type PostFilterResult struct {
	// NominatedNodeName is the node the pod should go to once the victims
	// are gone; it is written to the pod's status.nominatedNodeName.
	NominatedNodeName string
	// Victims are the pods deleted to make room (for the decision record).
	Victims []*v1.Pod
}

// NodeScore is one node's score from one plugin.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is one plugin's scores for all feasible nodes.
type NodeScoreList []NodeScore

// PluginScore is one plugin's contribution to one node's total. Upstream keeps
// only the weighted Score; Raw and Normalized are kept here so a learner can
// see each step.
type PluginScore struct {
	// Name of the score plugin.
	Name string
	// Raw is what Score returned.
	Raw int64
	// Normalized is the score after NormalizeScore (equal to Raw when the
	// plugin has no ScoreExtensions).
	Normalized int64
	// Score is Normalized × the plugin's weight: what counts in the total.
	Score int64
}

// NodePluginScores is one node's scores from every score plugin.
type NodePluginScores struct {
	// Name is the node.
	Name string
	// Scores are in the order the score plugins run.
	Scores []PluginScore
	// TotalScore is the sum of the weighted scores.
	TotalScore int64
}

// PodNominator knows which pods preemption has nominated to run on which
// node (status.nominatedNodeName): room is being made there for them, so
// other pods must not take it (upstream: framework.PodNominator; the
// scheduling queue implements it).
type PodNominator interface {
	// NominatedPodsForNode returns the pods nominated to run on the node.
	NominatedPodsForNode(nodeName string) []*PodInfo
}

// Handle is what plugins get from the framework: the snapshot of the cluster
// taken at the start of the cycle, the client, the event recorder, the
// informer caches, and the framework's own runners that preemption uses to
// ask "would the pod fit if ...".
type Handle interface {
	// SnapshotSharedLister reads the NodeInfos of this cycle's snapshot.
	SnapshotSharedLister() SharedLister
	// ClientSet talks to the API server (the binder uses it).
	ClientSet() *client.Client
	// EventRecorder writes Events; it may be nil in plugin unit tests.
	EventRecorder() *client.Recorder
	// Listers reads objects other than the snapshot's nodes and pods.
	Listers() Listers
	// Clock is the scheduler's clock (for the times plugins write).
	Clock() clock.PassiveClock
	// PodNominator knows the nominated pods.
	PodNominator
	// RunFilterPluginsWithNominatedPods runs the filters on a node as if the
	// pods nominated there with at least the pod's priority were running.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionAddPod and RunPreFilterExtensionRemovePod update
	// every PreFilter plugin's CycleState as if podInfo were added to or
	// removed from nodeInfo.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}
