package interpodaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// topologyPair is one domain: a node label and its value.
type topologyPair struct {
	key   string
	value string
}

// topologyToMatchedTermCount counts matches per domain.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) merge(other topologyToMatchedTermCount) {
	for k, v := range other {
		m[k] += v
	}
}

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	c := make(topologyToMatchedTermCount, len(m))
	c.merge(m)
	return c
}

func (m topologyToMatchedTermCount) update(node *v1.Node, tk string, value int64) {
	if tv, ok := node.Labels[tk]; ok {
		pair := topologyPair{key: tk, value: tv}
		m[pair] += value
		if m[pair] == 0 {
			delete(m, pair)
		}
	}
}

// updateWithAffinityTerms counts targetPod in every term's domain if it
// matches all the terms (required affinity asks for one pod that matches
// every term).
func (m topologyToMatchedTermCount) updateWithAffinityTerms(terms []framework.AffinityTerm, pod *v1.Pod, node *v1.Node, value int64) {
	if podMatchesAllAffinityTerms(terms, pod) {
		for _, t := range terms {
			m.update(node, t.TopologyKey, value)
		}
	}
}

// updateWithAntiAffinityTerms counts pod in the domain of each term it
// matches.
func (m topologyToMatchedTermCount) updateWithAntiAffinityTerms(terms []framework.AffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, value int64) {
	for i := range terms {
		if terms[i].Matches(pod, nsLabels) {
			m.update(node, terms[i].TopologyKey, value)
		}
	}
}

func podMatchesAllAffinityTerms(terms []framework.AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		// Incoming terms have their namespaceSelector resolved already.
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// preFilterState is computed in PreFilter and read by Filter.
type preFilterState struct {
	// existingAntiAffinityCounts: domains where an existing pod's required
	// anti-affinity matches the incoming pod.
	existingAntiAffinityCounts topologyToMatchedTermCount
	// affinityCounts: domains with pods matching all of the incoming pod's
	// required affinity terms.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts: domains with pods matching the incoming pod's
	// required anti-affinity terms.
	antiAffinityCounts topologyToMatchedTermCount
	podInfo            *framework.PodInfo
	namespaceLabels    labels.Set
}

// Clone implements framework.StateData.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	return &preFilterState{
		existingAntiAffinityCounts: s.existingAntiAffinityCounts.clone(),
		affinityCounts:             s.affinityCounts.clone(),
		antiAffinityCounts:         s.antiAffinityCounts.clone(),
		podInfo:                    s.podInfo,
		namespaceLabels:            s.namespaceLabels,
	}
}

func (s *preFilterState) updateWithPod(pi *framework.PodInfo, node *v1.Node, multiplier int64) {
	if s == nil {
		return
	}
	s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, s.podInfo.Pod, s.namespaceLabels, node, multiplier)
	s.affinityCounts.updateWithAffinityTerms(s.podInfo.RequiredAffinityTerms, pi.Pod, node, multiplier)
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.podInfo.RequiredAntiAffinityTerms, pi.Pod, nil, node, multiplier)
}

// PreFilter computes the three counts. A pod without required terms, in a
// cluster where no pod has required anti-affinity, Skips Filter.
func (pl *InterPodAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	withAntiAffinity, err := lister.HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		return nil, framework.AsStatus(fmt.Errorf("failed to list NodeInfos with pods with affinity: %w", err))
	}
	if a := pod.Spec.Affinity; len(withAntiAffinity) == 0 && (a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil)) {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{podInfo: pl.incomingPodInfo(pod)}
	if s.podInfo.ParseError != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", s.podInfo.ParseError))
	}
	s.namespaceLabels = pl.namespaceLabels(pod.Namespace)

	s.existingAntiAffinityCounts = topologyToMatchedTermCount{}
	for i, ni := range withAntiAffinity {
		for _, existing := range ni.PodsWithRequiredAntiAffinity {
			s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(existing.RequiredAntiAffinityTerms, pod, s.namespaceLabels, ni.Node(), 1)
		}
		yield.Maybe(i)
	}

	s.affinityCounts, s.antiAffinityCounts = topologyToMatchedTermCount{}, topologyToMatchedTermCount{}
	if len(s.podInfo.RequiredAffinityTerms) > 0 || len(s.podInfo.RequiredAntiAffinityTerms) > 0 {
		all, err := lister.List()
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		for i, ni := range all {
			for _, existing := range ni.Pods {
				s.affinityCounts.updateWithAffinityTerms(s.podInfo.RequiredAffinityTerms, existing.Pod, ni.Node(), 1)
				s.antiAffinityCounts.updateWithAntiAffinityTerms(s.podInfo.RequiredAntiAffinityTerms, existing.Pod, nil, ni.Node(), 1)
			}
			yield.Maybe(i)
		}
	}
	if len(s.existingAntiAffinityCounts) == 0 && len(s.podInfo.RequiredAffinityTerms) == 0 && len(s.podInfo.RequiredAntiAffinityTerms) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *InterPodAffinity) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod updates the counts as if the pod ran on the node.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *framework.CycleState, _ *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo.Node(), 1)
	return nil
}

// RemovePod updates the counts as if the pod were gone.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *framework.CycleState, _ *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo.Node(), -1)
	return nil
}

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.state error", c)
	}
	return s, nil
}

// satisfyExistingPodsAntiAffinity: no existing pod's anti-affinity covers
// any domain of the node.
func satisfyExistingPodsAntiAffinity(s *preFilterState, nodeInfo *framework.NodeInfo) bool {
	if len(s.existingAntiAffinityCounts) > 0 {
		for k, v := range nodeInfo.Node().Labels {
			if s.existingAntiAffinityCounts[topologyPair{key: k, value: v}] > 0 {
				return false
			}
		}
	}
	return true
}

// satisfyPodAntiAffinity: no pod the incoming pod excludes runs in the
// node's domain of each term.
func satisfyPodAntiAffinity(s *preFilterState, nodeInfo *framework.NodeInfo) bool {
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if tv, ok := nodeInfo.Node().Labels[t.TopologyKey]; ok {
			if s.antiAffinityCounts[topologyPair{key: t.TopologyKey, value: tv}] > 0 {
				return false
			}
		}
	}
	return true
}

// satisfyPodAffinity: a pod matching all the terms runs in the node's domain
// of every term (the node must have every topology key). The first pod of a
// group whose terms select itself may go anywhere with the keys, as long as
// no matching pod runs anywhere yet; otherwise such a group could never
// start.
func satisfyPodAffinity(s *preFilterState, nodeInfo *framework.NodeInfo) bool {
	podsExist := true
	for _, t := range s.podInfo.RequiredAffinityTerms {
		tv, ok := nodeInfo.Node().Labels[t.TopologyKey]
		if !ok {
			return false
		}
		if s.affinityCounts[topologyPair{key: t.TopologyKey, value: tv}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist {
		return len(s.affinityCounts) == 0 && podMatchesAllAffinityTerms(s.podInfo.RequiredAffinityTerms, s.podInfo.Pod)
	}
	return true
}

// Filter implements framework.FilterPlugin. An unmet affinity is
// UnschedulableAndUnresolvable (evicting pods cannot make a wanted pod
// appear); anti-affinity is Unschedulable (evicting the pod in the way can
// help).
func (pl *InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if !satisfyPodAffinity(s, nodeInfo) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !satisfyPodAntiAffinity(s, nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !satisfyExistingPodsAntiAffinity(s, nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}
