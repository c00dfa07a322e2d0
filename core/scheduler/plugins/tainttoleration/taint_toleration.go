// Package tainttoleration holds TaintToleration: the filter that keeps pods
// off nodes whose taints they do not tolerate, and the score that prefers
// nodes with fewer untolerated PreferNoSchedule taints (upstream:
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
//
// A taint is the node saying "keep away", a toleration is the pod saying
// "I don't mind":
//
//	kubectl taint node node-1 dedicated=gpu:NoSchedule
//	        node-1 spec.taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
//	pod:    tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
//
// The effects: NoSchedule (the filter rejects the node), PreferNoSchedule
// (the node only scores lower), NoExecute (rejected, and pods already there
// are evicted: that is the node lifecycle controller's job, not the
// scheduler's).
package tainttoleration

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "TaintToleration"

// Upstream's reasons. The filter names the first untolerated taint:
//
//	node(s) had untolerated taint {dedicated: gpu}
//
// (ErrReasonNotMatch is upstream's older, generic wording, kept for
// reference; upstream no longer returns it either.)
const (
	ErrReasonUntoleratedTaint = "node(s) had untolerated taint {%s: %s}"
	ErrReasonNotMatch         = "node(s) had taints that the pod didn't tolerate"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is the plugin.
type TaintToleration struct{}

var (
	_ framework.FilterPlugin      = (*TaintToleration)(nil)
	_ framework.PreScorePlugin    = (*TaintToleration)(nil)
	_ framework.ScorePlugin       = (*TaintToleration)(nil)
	_ framework.ScoreExtensions   = (*TaintToleration)(nil)
	_ framework.EnqueueExtensions = (*TaintToleration)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, _ framework.Handle) (framework.Plugin, error) {
	return &TaintToleration{}, nil
}

// Name implements framework.Plugin.
func (*TaintToleration) Name() string { return Name }

// EventsToRegister: a new node, or a node whose taints changed, may be one
// the pod tolerates. Labels too: upstream registers them for every plugin
// that registers node additions (kubernetes#109437).
func (*TaintToleration) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint | framework.UpdateNodeLabel},
	}
}

// UntoleratedTaintReason is the filter's reason for a taint.
func UntoleratedTaintReason(t v1.Taint) string {
	return fmt.Sprintf(ErrReasonUntoleratedTaint, t.Key, t.Value)
}

// Filter rejects a node with a NoSchedule or NoExecute taint the pod does
// not tolerate. The code is UnschedulableAndUnresolvable: evicting pods does
// not remove a taint, so preemption skips such nodes.
func (*TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.AsStatus(fmt.Errorf("invalid nodeInfo"))
	}
	taint, untolerated := helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaintsFilterFunc())
	if !untolerated {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, UntoleratedTaintReason(taint))
}

// preScoreState is the pod's tolerations that can tolerate a
// PreferNoSchedule taint (no effect means every effect).
type preScoreState struct {
	tolerationsPreferNoSchedule []v1.Toleration
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore picks the tolerations that matter for scoring.
func (*TaintToleration) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var tols []v1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	state.Write(preScoreStateKey, &preScoreState{tolerationsPreferNoSchedule: tols})
	return nil
}

// Score counts the node's PreferNoSchedule taints the pod does not
// tolerate: the raw score is "how bad", and NormalizeScore turns it around.
func (*TaintToleration) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, err))
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("%+v convert to tainttoleration.preScoreState error", c))
	}
	var n int64
	for i := range nodeInfo.Node().Spec.Taints {
		t := &nodeInfo.Node().Spec.Taints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule && !helper.TolerationsTolerateTaint(s.tolerationsPreferNoSchedule, t) {
			n++
		}
	}
	return n, nil
}

// NormalizeScore maps the counts to 0..100, fewest untolerated taints
// highest: a node with none scores 100.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }
