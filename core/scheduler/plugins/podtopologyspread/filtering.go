package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// preFilterState is computed once per attempt: how many matching pods each
// domain holds, and the two emptiest domains of each topology key.
type preFilterState struct {
	Constraints []topologySpreadConstraint
	// TpKeyToCriticalPaths holds, per topology key, the two domains with
	// the fewest matching pods: [0] is always the global minimum. Two are
	// kept so preemption, which removes pods from one node at a time, can
	// update the minimum cheaply.
	TpKeyToCriticalPaths map[string]*criticalPaths
	// TpKeyToDomainsNum is the number of domains per topology key.
	TpKeyToDomainsNum map[string]int
	// TpPairToMatchNum is the number of matching pods per domain.
	TpPairToMatchNum map[topologyPair]int
}

// minMatchNum is the global minimum the skew is measured against; when
// there are fewer domains than minDomains, the missing ones count as empty,
// so the minimum is 0.
func (s *preFilterState) minMatchNum(tpKey string, minDomains int32) (int, error) {
	paths, ok := s.TpKeyToCriticalPaths[tpKey]
	if !ok {
		return 0, fmt.Errorf("failed to retrieve path by topology key")
	}
	if s.TpKeyToDomainsNum[tpKey] < int(minDomains) {
		return 0, nil
	}
	return paths[0].MatchNum, nil
}

// Clone implements framework.StateData: preemption changes the counts on
// its own copy.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := preFilterState{
		Constraints:          s.Constraints,
		TpKeyToCriticalPaths: make(map[string]*criticalPaths, len(s.TpKeyToCriticalPaths)),
		TpKeyToDomainsNum:    s.TpKeyToDomainsNum,
		TpPairToMatchNum:     make(map[topologyPair]int, len(s.TpPairToMatchNum)),
	}
	for k, p := range s.TpKeyToCriticalPaths {
		cp := *p
		c.TpKeyToCriticalPaths[k] = &cp
	}
	for k, v := range s.TpPairToMatchNum {
		c.TpPairToMatchNum[k] = v
	}
	return &c
}

// criticalPaths are the two domains with the fewest matching pods.
type criticalPaths [2]struct {
	TopologyValue string
	MatchNum      int
}

func newCriticalPaths() *criticalPaths {
	return &criticalPaths{{MatchNum: math.MaxInt32}, {MatchNum: math.MaxInt32}}
}

func (p *criticalPaths) update(tpVal string, num int) {
	i := -1
	if tpVal == p[0].TopologyValue {
		i = 0
	} else if tpVal == p[1].TopologyValue {
		i = 1
	}
	if i >= 0 {
		p[i].MatchNum = num
		if p[0].MatchNum > p[1].MatchNum {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].MatchNum {
		p[1] = p[0]
		p[0].TopologyValue, p[0].MatchNum = tpVal, num
	} else if num < p[1].MatchNum {
		p[1].TopologyValue, p[1].MatchNum = tpVal, num
	}
}

// PreFilter counts the matching pods of every domain. A pod without hard
// (DoNotSchedule) constraints, its own or default ones, Skips Filter.
func (pl *PodTopologySpread) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	s, err := pl.calPreFilterState(pod)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *PodTopologySpread) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod updates the counts as if podInfoToAdd ran on the node
// (preemption and nominated pods).
func (pl *PodTopologySpread) AddPod(_ context.Context, state *framework.CycleState, podToSchedule *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	updateWithPod(s, podInfoToAdd.Pod, podToSchedule, nodeInfo.Node(), 1)
	return nil
}

// RemovePod updates the counts as if podInfoToRemove were gone.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *framework.CycleState, podToSchedule *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	updateWithPod(s, podInfoToRemove.Pod, podToSchedule, nodeInfo.Node(), -1)
	return nil
}

func updateWithPod(s *preFilterState, updatedPod, preemptorPod *v1.Pod, node *v1.Node, delta int) {
	if s == nil || updatedPod.Namespace != preemptorPod.Namespace || node == nil {
		return
	}
	if !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
		return
	}
	required := helper.GetRequiredNodeAffinity(preemptorPod)
	podLabels := labels.Set(updatedPod.Labels)
	for _, c := range s.Constraints {
		if !c.Selector.Matches(podLabels) || !c.matchNodeInclusionPolicies(preemptorPod, node, required) {
			continue
		}
		pair := topologyPair{key: c.TopologyKey, value: node.Labels[c.TopologyKey]}
		s.TpPairToMatchNum[pair] += delta
		s.TpKeyToCriticalPaths[c.TopologyKey].update(pair.value, s.TpPairToMatchNum[pair])
	}
}

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preFilterState error", c)
	}
	return s, nil
}

// calPreFilterState counts, over every node of the snapshot that counts as
// a domain, the pods each hard constraint's selector matches.
func (pl *PodTopologySpread) calPreFilterState(pod *v1.Pod) (*preFilterState, error) {
	var constraints []topologySpreadConstraint
	var err error
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		constraints, err = filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.DoNotSchedule)
		if err != nil {
			return nil, fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err)
		}
	} else {
		constraints, err = pl.buildDefaultConstraints(pod, v1.DoNotSchedule)
		if err != nil {
			return nil, fmt.Errorf("setting default hard topology spread constraints: %w", err)
		}
	}
	if len(constraints) == 0 {
		return &preFilterState{}, nil
	}
	allNodes, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fmt.Errorf("listing NodeInfos: %w", err)
	}
	s := &preFilterState{
		Constraints:          constraints,
		TpKeyToCriticalPaths: make(map[string]*criticalPaths, len(constraints)),
		TpKeyToDomainsNum:    make(map[string]int, len(constraints)),
		TpPairToMatchNum:     make(map[topologyPair]int),
	}
	required := helper.GetRequiredNodeAffinity(pod)
	for i, nodeInfo := range allNodes {
		node := nodeInfo.Node()
		if node == nil || !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			continue
		}
		for _, c := range constraints {
			if !c.matchNodeInclusionPolicies(pod, node, required) {
				continue
			}
			pair := topologyPair{key: c.TopologyKey, value: node.Labels[c.TopologyKey]}
			s.TpPairToMatchNum[pair] += countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace)
		}
		yield.Maybe(i)
	}
	for tp := range s.TpPairToMatchNum {
		s.TpKeyToDomainsNum[tp.key]++
	}
	for _, c := range constraints {
		s.TpKeyToCriticalPaths[c.TopologyKey] = newCriticalPaths()
	}
	for pair, num := range s.TpPairToMatchNum {
		s.TpKeyToCriticalPaths[pair.key].update(pair.value, num)
	}
	return s, nil
}

// Filter rejects a node where the pod would make some hard constraint's
// skew exceed maxSkew. Unschedulable: evicting matching pods could fix it.
// A node without the topology key is UnschedulableAndUnresolvable.
func (pl *PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	podLabels := labels.Set(pod.Labels)
	for _, c := range s.Constraints {
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		minMatchNum, err := s.minMatchNum(c.TopologyKey, c.MinDomains)
		if err != nil {
			continue
		}
		selfMatchNum := 0
		if c.Selector.Matches(podLabels) {
			selfMatchNum = 1
		}
		matchNum := s.TpPairToMatchNum[topologyPair{key: c.TopologyKey, value: tpVal}]
		if skew := matchNum + selfMatchNum - minMatchNum; skew > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}
