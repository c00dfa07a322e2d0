package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

const (
	preScoreStateKey framework.StateKey = "PreScore" + Name
	invalidScore                        = -1
)

// preScoreState is computed once per attempt for the soft
// (ScheduleAnyway) constraints.
type preScoreState struct {
	Constraints []topologySpreadConstraint
	// IgnoredNodes lack a topology key and score 0.
	IgnoredNodes sets.Set[string]
	// TopologyValueToPodCounts: per constraint, matching pods per domain
	// (hostname domains are counted in Score, per node).
	TopologyValueToPodCounts []map[string]*int64
	// TopologyNormalizingWeight: per constraint, log(domains + 2), so a
	// constraint over many small domains (nodes) weighs more than one over
	// a few big ones (zones).
	TopologyNormalizingWeight []float64
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

func (pl *PodTopologySpread) initPreScoreState(s *preScoreState, pod *v1.Pod, filteredNodes []*framework.NodeInfo, requireAllTopologies bool) error {
	var err error
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		s.Constraints, err = filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.ScheduleAnyway)
		if err != nil {
			return fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err)
		}
	} else {
		s.Constraints, err = pl.buildDefaultConstraints(pod, v1.ScheduleAnyway)
		if err != nil {
			return fmt.Errorf("setting default soft topology spread constraints: %w", err)
		}
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	s.TopologyValueToPodCounts = make([]map[string]*int64, len(s.Constraints))
	for i := range s.Constraints {
		s.TopologyValueToPodCounts[i] = map[string]*int64{}
	}
	topoSize := make([]int, len(s.Constraints))
	for _, n := range filteredNodes {
		node := n.Node()
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			s.IgnoredNodes.Insert(node.Name)
			continue
		}
		for i, c := range s.Constraints {
			if c.TopologyKey == v1.LabelHostname {
				continue
			}
			value := node.Labels[c.TopologyKey]
			if s.TopologyValueToPodCounts[i][value] == nil {
				s.TopologyValueToPodCounts[i][value] = new(int64)
				topoSize[i]++
			}
		}
	}
	s.TopologyNormalizingWeight = make([]float64, len(s.Constraints))
	for i, c := range s.Constraints {
		sz := topoSize[i]
		if c.TopologyKey == v1.LabelHostname {
			sz = len(filteredNodes) - len(s.IgnoredNodes)
		}
		s.TopologyNormalizingWeight[i] = topologyNormalizingWeight(sz)
	}
	return nil
}

// PreScore counts the matching pods per domain over all nodes (not only
// the feasible ones: a full node still holds pods that count). A pod
// without soft constraints Skips Score.
func (pl *PodTopologySpread) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, filteredNodes []*framework.NodeInfo) *framework.Status {
	allNodes, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return framework.AsStatus(fmt.Errorf("getting all nodes: %w", err))
	}
	if len(allNodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &preScoreState{IgnoredNodes: sets.New[string]()}
	// With the system defaults, a node without a zone label still takes
	// part in hostname spreading.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	if err := pl.initPreScoreState(s, pod, filteredNodes, requireAllTopologies); err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.Constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	required := helper.GetRequiredNodeAffinity(pod)
	for n, nodeInfo := range allNodes {
		node := nodeInfo.Node()
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			continue
		}
		for i, c := range s.Constraints {
			if !c.matchNodeInclusionPolicies(pod, node, required) {
				continue
			}
			tpCount := s.TopologyValueToPodCounts[i][node.Labels[c.TopologyKey]]
			if tpCount == nil {
				continue
			}
			*tpCount += int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
		}
		yield.Maybe(n)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

func getPreScoreState(state *framework.CycleState) (*preScoreState, error) {
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preScoreState error", c)
	}
	return s, nil
}

// Score is how crowded the node's domains already are: per constraint,
// matching pods × the topology weight + maxSkew - 1. Higher is worse;
// NormalizeScore turns it around.
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	node := nodeInfo.Node()
	s, err := getPreScoreState(state)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	if s.IgnoredNodes.Has(node.Name) {
		return 0, nil
	}
	var score float64
	for i, c := range s.Constraints {
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == v1.LabelHostname {
			cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
		} else if p := s.TopologyValueToPodCounts[i][tpVal]; p != nil {
			cnt = *p
		}
		score += scoreForCount(cnt, c.MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore maps the least crowded node to 100:
//
//	100 × (max + min - score) / max
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s == nil {
		return nil
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i, sc := range scores {
		if s.IgnoredNodes.Has(sc.Name) {
			scores[i].Score = invalidScore
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		if scores[i].Score == invalidScore {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

// topologyNormalizingWeight is log(size + 2): 1.1 for one domain, 8.5 for
// 5,000.
func topologyNormalizingWeight(size int) float64 {
	return math.Log(float64(size + 2))
}

// scoreForCount adds maxSkew - 1 so small differences between domains are
// watered down: the larger the tolerated skew, the gentler the push.
func scoreForCount(cnt int64, maxSkew int32, tpWeight float64) float64 {
	return float64(cnt)*tpWeight + float64(maxSkew-1)
}
