package interpodaffinity

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap is topology key -> value -> score.
type scoreMap map[string]map[string]int64

func (m scoreMap) processTerm(term *framework.AffinityTerm, weight int32, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	if term.Matches(pod, nsLabels) {
		if tv, ok := node.Labels[term.TopologyKey]; ok {
			if m[term.TopologyKey] == nil {
				m[term.TopologyKey] = map[string]int64{}
			}
			m[term.TopologyKey][tv] += int64(weight * multiplier)
		}
	}
}

func (m scoreMap) processTerms(terms []framework.WeightedAffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	for i := range terms {
		m.processTerm(&terms[i].AffinityTerm, terms[i].Weight, pod, nsLabels, node, multiplier)
	}
}

// preScoreState is the score of every domain.
type preScoreState struct {
	topologyScore   scoreMap
	podInfo         *framework.PodInfo
	namespaceLabels labels.Set
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

// processExistingPod adds an existing pod's contribution to the domains of
// its node: the incoming pod's preferred terms that match it (+/- weight),
// its required affinity terms that match the incoming pod
// (+hardPodAffinityWeight), and its preferred terms that match the incoming
// pod (+/- weight).
func (pl *InterPodAffinity) processExistingPod(s *preScoreState, existing *framework.PodInfo, node *v1.Node, incoming *v1.Pod, m scoreMap) {
	if len(node.Labels) == 0 {
		return
	}
	m.processTerms(s.podInfo.PreferredAffinityTerms, existing.Pod, nil, node, 1)
	m.processTerms(s.podInfo.PreferredAntiAffinityTerms, existing.Pod, nil, node, -1)
	if pl.args.HardPodAffinityWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			m.processTerm(&existing.RequiredAffinityTerms[i], pl.args.HardPodAffinityWeight, incoming, s.namespaceLabels, node, 1)
		}
	}
	m.processTerms(existing.PreferredAffinityTerms, incoming, s.namespaceLabels, node, 1)
	m.processTerms(existing.PreferredAntiAffinityTerms, incoming, s.namespaceLabels, node, -1)
}

// PreScore sums the scores per domain. Without preferred terms of its own,
// only the nodes with pods that have affinity terms need looking at. When
// nothing scores anywhere, Score is skipped.
func (pl *InterPodAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Spec.Affinity
	hasPreferred := a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0))
	if pl.args.IgnorePreferredTermsOfExistingPods && !hasPreferred {
		return framework.NewStatus(framework.Skip)
	}
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	var nodes []*framework.NodeInfo
	var err error
	if hasPreferred {
		nodes, err = lister.List()
	} else {
		nodes, err = lister.HavePodsWithAffinityList()
	}
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &preScoreState{topologyScore: scoreMap{}, podInfo: pl.incomingPodInfo(pod), namespaceLabels: pl.namespaceLabels(pod.Namespace)}
	if s.podInfo.ParseError != nil {
		return framework.AsStatus(fmt.Errorf("failed to parse pod: %w", s.podInfo.ParseError))
	}
	for i, ni := range nodes {
		pods := ni.PodsWithAffinity
		if hasPreferred {
			pods = ni.Pods
		}
		for _, existing := range pods {
			pl.processExistingPod(s, existing, ni.Node(), pod, s.topologyScore)
		}
		yield.Maybe(i)
	}
	if len(s.topologyScore) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

func getPreScoreState(state *framework.CycleState) (*preScoreState, error) {
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.preScoreState error", c)
	}
	return s, nil
}

// Score sums the scores of the node's domains.
func (pl *InterPodAffinity) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(state)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var score int64
	for tk, values := range s.topologyScore {
		if v, ok := nodeInfo.Node().Labels[tk]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// NormalizeScore maps the scores, which may be negative, linearly onto
// 0..100: the lowest gets 0, the highest 100.
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for i := range scores {
		minCount = min(minCount, scores[i].Score)
		maxCount = max(maxCount, scores[i].Score)
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }
