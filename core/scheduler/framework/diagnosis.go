package framework

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NodeToStatus records why each rejected node was rejected. Nodes that were
// never looked at (a PreFilterResult left them out) share AbsentNodesStatus.
// Nodes that passed are not in it.
type NodeToStatus struct {
	nodeToStatus      map[string]*Status
	absentNodesStatus *Status
}

// NewDefaultNodeToStatus returns an empty map whose absent nodes are
// UnschedulableAndUnresolvable with no reason, as upstream.
func NewDefaultNodeToStatus() *NodeToStatus {
	return &NodeToStatus{nodeToStatus: map[string]*Status{}, absentNodesStatus: NewStatus(UnschedulableAndUnresolvable)}
}

// Set records a node's status.
func (m *NodeToStatus) Set(node string, s *Status) { m.nodeToStatus[node] = s }

// NodesForStatusCode returns the nodes of the lister whose status (recorded
// or absent) has the code; preemption asks for the Unschedulable ones, the
// nodes where removing pods could help.
func (m *NodeToStatus) NodesForStatusCode(lister NodeInfoLister, code Code) ([]*NodeInfo, error) {
	all, err := lister.List()
	if err != nil {
		return nil, err
	}
	var out []*NodeInfo
	if m.absentNodesStatus.Code() == code {
		for _, n := range all {
			if m.Get(n.Node().Name).Code() == code {
				out = append(out, n)
			}
		}
		return out, nil
	}
	for name, s := range m.nodeToStatus {
		if s.Code() != code {
			continue
		}
		if n, err := lister.Get(name); err == nil {
			out = append(out, n)
		}
	}
	// Keep the snapshot's order: map order would make preemption's
	// candidate order random beyond its own random offset.
	index := make(map[string]int, len(all))
	for i, n := range all {
		index[n.Node().Name] = i
	}
	sort.Slice(out, func(i, j int) bool { return index[out[i].Node().Name] < index[out[j].Node().Name] })
	return out, nil
}

// Get returns a node's status, or the absent-nodes status.
func (m *NodeToStatus) Get(node string) *Status {
	if s, ok := m.nodeToStatus[node]; ok {
		return s
	}
	return m.absentNodesStatus
}

// Len is the number of nodes recorded explicitly.
func (m *NodeToStatus) Len() int { return len(m.nodeToStatus) }

// AbsentNodesStatus is the status of nodes not recorded.
func (m *NodeToStatus) AbsentNodesStatus() *Status { return m.absentNodesStatus }

// SetAbsentNodesStatus sets the status of nodes not recorded.
func (m *NodeToStatus) SetAbsentNodesStatus(s *Status) { m.absentNodesStatus = s }

// ForEachExplicitNode calls fn for each recorded node, in no order.
func (m *NodeToStatus) ForEachExplicitNode(fn func(node string, s *Status)) {
	for n, s := range m.nodeToStatus {
		fn(n, s)
	}
}

// Diagnosis is why a pod fit no node.
type Diagnosis struct {
	NodeToStatus *NodeToStatus
	// UnschedulablePlugins rejected the pod on some node; the queue wakes the
	// pod only for events these plugins registered.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending.
	PendingPlugins sets.Set[string]
	// PreFilterMsg is the message of a PreFilter plugin that rejected the pod.
	PreFilterMsg string
	// PostFilterMsg is the message of PostFilter (preemption).
	PostFilterMsg string
}

// AddPluginStatus notes the plugin of a rejecting status.
func (d *Diagnosis) AddPluginStatus(s *Status) {
	if s.Plugin() == "" {
		return
	}
	if s.IsRejected() {
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = sets.New[string]()
		}
		d.UnschedulablePlugins.Insert(s.Plugin())
	}
	if s.Code() == Pending {
		if d.PendingPlugins == nil {
			d.PendingPlugins = sets.New[string]()
		}
		d.PendingPlugins.Insert(s.Plugin())
	}
}

// NoNodeAvailableMsg starts every FitError message.
const NoNodeAvailableMsg = "0/%v nodes are available"

// FitError is the error of an attempt in which no node fit the pod. Its
// message is the one a learner sees in `kubectl describe pod`.
type FitError struct {
	Pod         *v1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error counts the nodes per reason and sorts the counts as strings, the way
// upstream does (pkg/scheduler/framework/types.go FitError.Error):
//
//	0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.
//
// Sorting "2 Insufficient cpu" as a string puts a count of 10 before 9; so does
// upstream. A PreFilter rejection replaces the per-node part, and the
// PostFilter (preemption) message follows it.
func (f *FitError) Error() string {
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if pre := f.Diagnosis.PreFilterMsg; pre != "" {
		msg += fmt.Sprintf(" %v.", pre)
	} else {
		counts := map[string]int{}
		nts := f.Diagnosis.NodeToStatus
		if nts != nil {
			nts.ForEachExplicitNode(func(_ string, s *Status) {
				for _, r := range s.Reasons() {
					counts[r]++
				}
			})
			if nts.Len() < f.NumAllNodes {
				for _, r := range nts.AbsentNodesStatus().Reasons() {
					counts[r] += f.NumAllNodes - nts.Len()
				}
			}
		}
		var parts []string
		for r, n := range counts {
			parts = append(parts, fmt.Sprintf("%v %v", n, r))
		}
		sort.Strings(parts)
		if len(parts) > 0 {
			msg += fmt.Sprintf(" %v.", strings.Join(parts, ", "))
		}
	}
	if post := f.Diagnosis.PostFilterMsg; post != "" {
		// Upstream formats every part with " %v." (SeparatorFormat), even
		// the preemption part, whose own message already ends with a
		// period: real clusters print "...incoming pod.." and so does this.
		msg += fmt.Sprintf(" %v.", post)
	}
	return msg
}
