// Package v1alpha1 is the scheduling.kubetab.dev/v1alpha1 API: the
// scheduler's decision records, as the API server serves them. It is not an
// upstream API; kube-scheduler keeps no such record (it logs at high
// verbosity), and kube-scheduler-simulator writes one into annotations of
// every pod. Here it is a read-only, in-memory resource: nothing is stored
// in the pod or in the store.
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/namespaces/default/schedulingdecisions/web-x
//
//	{"kind":"SchedulingDecision","apiVersion":"scheduling.kubetab.dev/v1alpha1",
//	 "metadata":{"name":"web-x","namespace":"default","uid":"<the pod's uid>"},
//	 "attempts":[{                                    <- oldest first, at most a few
//	   "attempt":1, "time":"...", "result":"Unschedulable",
//	   "message":"0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient memory. preemption: ...",
//	   "nodes":{"all":3,"evaluated":3,"feasible":0},
//	   "filterPlugins":["NodeUnschedulable","NodeName","TaintToleration", ...],
//	   "scorePlugins":[{"name":"TaintToleration","weight":3}, ...],
//	   "rejected":[                                   <- nodes grouped by the filter that said no
//	     {"plugin":"TaintToleration","code":"UnschedulableAndUnresolvable",
//	      "reasons":["node(s) had untolerated taint {dedicated: gpu}"],"count":1,"nodes":["node-1"]},
//	     {"plugin":"NodeResourcesFit","code":"Unschedulable",
//	      "reasons":["Insufficient memory"],"count":2,"nodes":["node-2","node-3"]}],
//	   "feasible":[                                   <- nodes that passed, best total first
//	     {"name":"node-2","total":412,"scores":[{"plugin":"TaintToleration","raw":0,"normalized":100,"weighted":300}, ...]}],
//	   "preemption":{"message":"preemption: 0/3 nodes are available: ..."}}]}
//
// How to read one node's filter results: filters run in filterPlugins order
// and stop at the first rejection, so a node in a rejected group passed every
// filter before that group's plugin, was rejected by it, and was not looked
// at by the ones after it. A node in feasible passed them all. Plugins in
// skippedFilters ran on no node.
//
// # Bounded size
//
// kube-scheduler-simulator stores every node's result for every plugin in
// annotations on the pod; around 800 nodes the annotations outgrow the
// 256 KiB an object's annotations may hold. Here the record is compacted
// when it is made, so its size does not grow with the cluster:
//
//   - rejected nodes are grouped by (plugin, code, reasons); a group lists at
//     most MaxNodesPerGroup node names and counts the rest (count is always
//     the full number), and at most MaxRejectedGroups groups are kept (the
//     nodes of the others are counted in rejectedOmitted);
//   - feasible lists the MaxFeasibleNodes best-scored nodes (always
//     including the selected one) and counts the rest in feasibleOmitted;
//   - a pod keeps its last few attempts, and the scheduler keeps records for
//     the pods it tried most recently only.
//
// So an attempt is at most a few kilobytes whether the cluster has 3 nodes
// or 5,000.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the decision records.
const GroupName = "scheduling.kubetab.dev"

// SchemeGroupVersion is the group and version served.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource is the resource name in URLs; Kind is the kind of the object.
const (
	Resource = "schedulingdecisions"
	Kind     = "SchedulingDecision"
)

// The bounds of an attempt (see "Bounded size" above).
const (
	MaxNodesPerGroup  = 20
	MaxRejectedGroups = 16
	MaxFeasibleNodes  = 10
)

// Results of an attempt.
const (
	// ResultScheduled: a node was chosen and the pod assumed there (the
	// binding follows).
	ResultScheduled = "Scheduled"
	// ResultUnschedulable: no node fit (the FailedScheduling event).
	ResultUnschedulable = "Unschedulable"
	// ResultError: the attempt failed for a reason that is not the pod's
	// (no nodes at all, a plugin error).
	ResultError = "Error"
)

// SchedulingDecision is the record of a pod's last scheduling attempts. Its
// name, namespace and uid are the pod's.
type SchedulingDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Attempts are the last attempts, oldest first.
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one scheduling cycle of the pod.
type Attempt struct {
	// Attempt counts the pod's attempts from 1.
	Attempt int `json:"attempt"`
	// Time is when the cycle started, on the scheduler's clock.
	Time metav1.Time `json:"time"`
	// Result is Scheduled, Unschedulable or Error.
	Result string `json:"result"`
	// SelectedNode is the node chosen (Result Scheduled).
	SelectedNode string `json:"selectedNode,omitempty"`
	// Message is the FailedScheduling message, or the error.
	Message string `json:"message,omitempty"`
	// Nodes counts the nodes.
	Nodes NodeCounts `json:"nodes"`
	// FilterPlugins are the Filter plugins, in the order they run.
	FilterPlugins []string `json:"filterPlugins"`
	// ScorePlugins are the Score plugins with their weights.
	ScorePlugins []ScorePlugin `json:"scorePlugins,omitempty"`
	// SkippedFilters are filter plugins that had nothing to check for this
	// pod (their PreFilter returned Skip: a pod without a nodeSelector, say)
	// and ran on no node; SkippedScores likewise for scoring.
	SkippedFilters []string `json:"skippedFilters,omitempty"`
	SkippedScores  []string `json:"skippedScores,omitempty"`
	// PreFilter is set when a PreFilter plugin rejected the pod before any
	// node was looked at (or narrowed the nodes to none).
	PreFilter *PluginStatus `json:"preFilter,omitempty"`
	// Rejected groups the nodes the filters rejected.
	Rejected []RejectedNodes `json:"rejected,omitempty"`
	// RejectedOmitted counts rejected nodes whose group was not kept.
	RejectedOmitted int `json:"rejectedOmitted,omitempty"`
	// Feasible are the nodes that passed every filter, best total first.
	Feasible []FeasibleNode `json:"feasible,omitempty"`
	// FeasibleOmitted counts feasible nodes not listed.
	FeasibleOmitted int `json:"feasibleOmitted,omitempty"`
	// Tie is set when more than one node had the best total.
	Tie *Tie `json:"tie,omitempty"`
	// Preemption is what PostFilter (DefaultPreemption) did when no node
	// fit.
	Preemption *Preemption `json:"preemption,omitempty"`
}

// NodeCounts counts the nodes of an attempt.
type NodeCounts struct {
	// All is the number of nodes in the scheduler's snapshot.
	All int `json:"all"`
	// Evaluated is how many the filters ran on: fewer than All when
	// percentageOfNodesToScore stopped the search early.
	Evaluated int `json:"evaluated"`
	// Feasible is how many passed every filter.
	Feasible int `json:"feasible"`
}

// ScorePlugin is a score plugin and its weight in the profile.
type ScorePlugin struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
}

// PluginStatus is what a plugin said: its code (Unschedulable,
// UnschedulableAndUnresolvable, Error ...) and upstream's reason strings.
type PluginStatus struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
}

// RejectedNodes are nodes one filter rejected with the same status.
type RejectedNodes struct {
	PluginStatus `json:",inline"`
	// Count is how many nodes; Nodes names at most MaxNodesPerGroup of
	// them, in the order they were evaluated.
	Count int      `json:"count"`
	Nodes []string `json:"nodes"`
	// Details, when present, runs parallel to Nodes: the numbers behind
	// each node's reasons, which differ from node to node while the
	// reasons are the same: each reason with its numbers, "; " between
	// ("Insufficient cpu: requests 3, 0.5 of 4 free"); "" for a node with
	// none to give. Upstream's reasons carry no numbers.
	Details []string `json:"details,omitempty"`
}

// Tie is how the winner was picked among nodes with the same best total.
type Tie struct {
	// Total is the best total; Count how many feasible nodes had it;
	// Nodes names at most MaxFeasibleNodes of them, the winner included.
	Total int64    `json:"total"`
	Count int      `json:"count"`
	Nodes []string `json:"nodes"`
	// Rule is how one was chosen: upstream's selectHost keeps one at
	// random among them (reservoir sampling, each tied node equally likely).
	Rule string `json:"rule"`
}

// FeasibleNode is a node that passed every filter, with its scores.
type FeasibleNode struct {
	Name string `json:"name"`
	// Total is the sum of the weighted scores; the highest total wins.
	Total int64 `json:"total"`
	// Scores has one entry per score plugin that ran; empty when the node
	// was the only feasible one (nothing to rank, so nothing is scored).
	Scores []PluginScore `json:"scores,omitempty"`
}

// PluginScore is one score plugin's score for one node, at each step.
type PluginScore struct {
	Plugin string `json:"plugin"`
	// Raw is what Score returned; Normalized is after NormalizeScore
	// (0..100); Weighted is Normalized × the plugin's weight.
	Raw        int64 `json:"raw"`
	Normalized int64 `json:"normalized"`
	Weighted   int64 `json:"weighted"`
}

// Preemption is the outcome of DefaultPreemption for an attempt.
type Preemption struct {
	// NominatedNode is where the pod will go once the victims are gone
	// (its status.nominatedNodeName).
	NominatedNode string `json:"nominatedNode,omitempty"`
	// Victims are the pods deleted to make room ("namespace/name").
	Victims []string `json:"victims,omitempty"`
	// Message is the preemption part of the FailedScheduling message.
	Message string `json:"message,omitempty"`
}

// The scheduling queue, as the API server serves it:
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/schedulingqueues           (list, watch)
//	GET /apis/scheduling.kubetab.dev/v1alpha1/schedulingqueues/default-scheduler
//
// Upstream keeps the queue in kube-scheduler's memory and shows it only as
// the scheduler_pending_pods metric (one count per queue) and in the dump
// it writes to its log on SIGUSR2. Here it is one read-only object per
// scheduler: the pods waiting for a node, where each waits and why.
const (
	QueueResource = "schedulingqueues"
	QueueKind     = "SchedulingQueue"
	QueueListKind = "SchedulingQueueList"
)

// Where a pod waits (QueuedPod.Queue), in upstream's names.
const (
	// QueueActive: ready to be tried, in the order the QueueSort plugin
	// gives (priority, then the time the pod entered).
	QueueActive = "activeQ"
	// QueueBackoff: waiting for its back-off (1 s after the first failed
	// attempt, doubling up to 10 s) before it goes back to activeQ.
	QueueBackoff = "backoffQ"
	// QueueUnschedulable: no node fit; it waits for a cluster event one of
	// the plugins that rejected it registered (a node added, a pod deleted
	// ...), or 5 minutes.
	QueueUnschedulable = "unschedulablePods"
	// QueueInFlight: popped, in a scheduling or binding cycle now.
	QueueInFlight = "inFlightPods"
)

// SchedulingQueue is a scheduler's queue now. Its name is the scheduler's
// (default-scheduler); its resourceVersion counts the queue's changes.
type SchedulingQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Summary is upstream's one-line count, as kube-scheduler logs it:
	// "activeQ:1; backoffQ:0; unschedulablePods:2".
	Summary string `json:"summary"`
	// Pods are the queued pods: inFlightPods, then activeQ in the order
	// they will be popped, backoffQ by the end of their back-off,
	// unschedulablePods by the time they entered.
	Pods []QueuedPod `json:"pods"`
}

// QueuedPod is one pod in the queue.
type QueuedPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// Queue is activeQ, backoffQ, unschedulablePods or inFlightPods.
	Queue string `json:"queue"`
	// Priority is the pod's spec.priority (the first sort key of activeQ).
	Priority int32 `json:"priority"`
	// Attempts counts the scheduling attempts so far.
	Attempts int `json:"attempts"`
	// Timestamp is when the pod last entered the queue (added, or put back
	// after a failed attempt).
	Timestamp metav1.Time `json:"timestamp"`
	// InitialAttemptTimestamp is when it was first tried.
	InitialAttemptTimestamp *metav1.Time `json:"initialAttemptTimestamp,omitempty"`
	// BackoffExpiration is when its back-off ends: Timestamp +
	// 1 s × 2^(attempts-1), at most 10 s. Set once it has failed.
	BackoffExpiration *metav1.Time `json:"backoffExpiration,omitempty"`
	// UnschedulablePlugins rejected the pod in its last attempt: only
	// events they registered move it out of unschedulablePods.
	UnschedulablePlugins []string `json:"unschedulablePlugins,omitempty"`
	// PendingPlugins returned Pending in the last attempt.
	PendingPlugins []string `json:"pendingPlugins,omitempty"`
	// LastResult and Message are the last attempt's result and message
	// (the FailedScheduling message), from its decision record.
	LastResult string `json:"lastResult,omitempty"`
	Message    string `json:"message,omitempty"`
}
