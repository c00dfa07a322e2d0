package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

// topologySpreadConstraint is a v1.TopologySpreadConstraint with its
// selector parsed and its defaults applied.
type topologySpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// topologyPair is one domain: a topology key and its value ("zone", "a").
type topologyPair struct {
	key   string
	value string
}

// matchNodeInclusionPolicies reports whether the node counts as a domain
// for the constraint: by default nodes the pod's node affinity excludes do
// not count (nodeAffinityPolicy: Honor), tainted ones do (nodeTaintsPolicy:
// Ignore).
func (c *topologySpreadConstraint) matchNodeInclusionPolicies(pod *v1.Pod, node *v1.Node, required helper.RequiredNodeAffinity) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		if ok, _ := required.Match(node); !ok {
			return false
		}
	}
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if _, untolerated := helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaintsFilterFunc()); untolerated {
			return false
		}
	}
	return true
}

// buildDefaultConstraints applies the default constraints of kind action to
// a pod without constraints, selecting the pods of its Services and
// controller. None when nothing selects the pod.
func (pl *PodTopologySpread) buildDefaultConstraints(p *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	constraints, err := filterTopologySpreadConstraints(pl.defaultConstraints, p.Labels, action)
	if err != nil || len(constraints) == 0 {
		return nil, err
	}
	var l framework.Listers
	if pl.handle != nil {
		l = pl.handle.Listers()
	}
	selector := helper.DefaultSelector(p, l)
	if selector.Empty() {
		return nil, nil
	}
	for i := range constraints {
		constraints[i].Selector = selector
	}
	return constraints, nil
}

// nodeLabelsMatchSpreadConstraints reports whether the node has every
// constraint's topology key.
func nodeLabelsMatchSpreadConstraints(nodeLabels map[string]string, constraints []topologySpreadConstraint) bool {
	for _, c := range constraints {
		if _, ok := nodeLabels[c.TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// filterTopologySpreadConstraints parses the constraints of kind action.
// matchLabelKeys adds the pod's own values of those labels to the selector
// (so each rollout's pod-template-hash spreads on its own).
func filterTopologySpreadConstraints(constraints []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	var out []topologySpreadConstraint
	for _, c := range constraints {
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			set := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					set[k] = v
				}
			}
			if len(set) > 0 {
				merged := labels.SelectorFromSet(set)
				if reqs, ok := selector.Requirements(); ok {
					merged = merged.Add(reqs...)
				}
				selector = merged
			}
		}
		tsc := topologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			tsc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tsc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tsc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, tsc)
	}
	return out, nil
}

// countPodsMatchSelector counts the pods of ns the selector matches,
// leaving out terminating ones (kubernetes#87621).
func countPodsMatchSelector(podInfos []*framework.PodInfo, selector labels.Selector, ns string) int {
	if selector.Empty() {
		return 0
	}
	n := 0
	for _, p := range podInfos {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != ns {
			continue
		}
		if selector.Matches(labels.Set(p.Pod.Labels)) {
			n++
		}
	}
	return n
}
