// Package nodeaffinity holds NodeAffinity: the filter for a pod's
// spec.nodeSelector and required node affinity, and the score for its
// preferred node affinity (upstream:
// pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go).
//
//	spec:
//	  nodeSelector: {disktype: ssd}                 # filter: must match
//	  affinity:
//	    nodeAffinity:
//	      requiredDuringSchedulingIgnoredDuringExecution:    # filter
//	        nodeSelectorTerms:
//	        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
//	      preferredDuringSchedulingIgnoredDuringExecution:   # score
//	      - weight: 80
//	        preference:
//	          matchExpressions: [{key: gpu, operator: Exists}]
//
// "IgnoredDuringExecution": the rules are checked when the pod is placed; a
// node whose labels change later keeps its pods.
package nodeaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "NodeAffinity"

// Upstream's reasons.
const (
	// ErrReasonPod: the node does not match the pod's nodeSelector or
	// required node affinity.
	ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"
	// ErrReasonConflict: the terms name nodes (metadata.name) that cannot
	// all be satisfied, so no node can match.
	ErrReasonConflict = "pod affinity terms conflict"
)

const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// NodeAffinity is the plugin.
type NodeAffinity struct{}

var (
	_ framework.PreFilterPlugin   = (*NodeAffinity)(nil)
	_ framework.FilterPlugin      = (*NodeAffinity)(nil)
	_ framework.PreScorePlugin    = (*NodeAffinity)(nil)
	_ framework.ScorePlugin       = (*NodeAffinity)(nil)
	_ framework.ScoreExtensions   = (*NodeAffinity)(nil)
	_ framework.EnqueueExtensions = (*NodeAffinity)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &NodeAffinity{}, nil
}

// Name implements framework.Plugin.
func (*NodeAffinity) Name() string { return Name }

// EventsToRegister: a new node, or a node whose labels changed, may match.
// Taint changes are registered too, as upstream (kubernetes#109437).
func (*NodeAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
}

type preFilterState struct {
	required helper.RequiredNodeAffinity
}

// Clone implements framework.StateData: the state does not depend on other
// pods.
func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter parses the pod's node selection once. A pod without any Skips
// the filter. When every term names nodes by metadata.name, only those nodes
// are looked at (a PreFilterResult), which is how DaemonSet pods go
// straight to their node.
func (*NodeAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	a := pod.Spec.Affinity
	noNodeAffinity := a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pod.Spec.NodeSelector == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &preFilterState{required: helper.GetRequiredNodeAffinity(pod)})
	if noNodeAffinity {
		return nil, nil
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil, nil
	}
	var nodeNames sets.Set[string]
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			// A term without a node name can match any node.
			return nil, nil
		}
		nodeNames = nodeNames.Union(termNames)
	}
	if len(nodeNames) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
	}
	return &framework.PreFilterResult{NodeNames: nodeNames}, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin: nothing depends
// on other pods.
func (*NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node that does not match. UnschedulableAndUnresolvable:
// evicting pods does not change a node's labels.
func (*NodeAffinity) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	var required helper.RequiredNodeAffinity
	if c, err := state.Read(preFilterStateKey); err == nil {
		required = c.(*preFilterState).required
	} else {
		required = helper.GetRequiredNodeAffinity(pod)
	}
	// Parse errors count as "no match", as upstream.
	if ok, _ := required.Match(nodeInfo.Node()); !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

type preScoreState struct {
	preferred *helper.PreferredSchedulingTerms
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

func preferredTerms(pod *v1.Pod) (*helper.PreferredSchedulingTerms, error) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, nil
	}
	return helper.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
}

// PreScore parses the preferred terms; a pod without any Skips Score.
func (*NodeAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	terms, err := preferredTerms(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	if terms == nil {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, &preScoreState{preferred: terms})
	return nil
}

// Score is the sum of the weights of the preferred terms the node matches.
func (*NodeAffinity) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var terms *helper.PreferredSchedulingTerms
	if c, err := state.Read(preScoreStateKey); err == nil {
		terms = c.(*preScoreState).preferred
	} else {
		var perr error
		if terms, perr = preferredTerms(pod); perr != nil {
			return 0, framework.AsStatus(fmt.Errorf("parsing preferred node affinity: %w", perr))
		}
	}
	if terms == nil {
		return 0, nil
	}
	return terms.Score(nodeInfo.Node()), nil
}

// NormalizeScore scales the sums so the best node gets 100.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }
