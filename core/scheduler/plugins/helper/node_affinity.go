package helper

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Node selection, as k8s.io/component-helpers/scheduling/corev1/nodeaffinity
// does it (written out here; see the package comment):
//
//	spec.nodeSelector: {disktype: ssd}              every label must be equal
//	     AND
//	spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution:
//	  nodeSelectorTerms:                            the terms are ORed
//	  - matchExpressions: [{key: zone, operator: In, values: [a, b]}]   ANDed
//	    matchFields:      [{key: metadata.name, operator: In, values: [node-1]}]
//
// An empty term matches no node. A term that does not parse (a Gt with a
// value that is not a number, say) matches no node either, and its error is
// returned, but other terms can still match.

// nodeSelectorTerm is a parsed v1.NodeSelectorTerm.
type nodeSelectorTerm struct {
	matchLabels labels.Selector // nil: no matchExpressions
	matchFields fields.Selector // nil: no matchFields
	parseErr    error
}

func isEmptyNodeSelectorTerm(t *v1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

func newNodeSelectorTerm(t *v1.NodeSelectorTerm) nodeSelectorTerm {
	var out nodeSelectorTerm
	var errs []error
	if len(t.MatchExpressions) > 0 {
		sel, err := requirementsAsSelector(t.MatchExpressions)
		out.matchLabels = sel
		errs = append(errs, err)
	}
	if len(t.MatchFields) > 0 {
		sel, err := requirementsAsFieldSelector(t.MatchFields)
		out.matchFields = sel
		errs = append(errs, err)
	}
	out.parseErr = errors.Join(errs...)
	return out
}

func (t *nodeSelectorTerm) match(nodeLabels labels.Set, nodeFields fields.Set) (bool, error) {
	if t.parseErr != nil {
		return false, t.parseErr
	}
	if t.matchLabels != nil && !t.matchLabels.Matches(nodeLabels) {
		return false, nil
	}
	if t.matchFields != nil && len(nodeFields) > 0 && !t.matchFields.Matches(nodeFields) {
		return false, nil
	}
	return true, nil
}

func requirementsAsSelector(reqs []v1.NodeSelectorRequirement) (labels.Selector, error) {
	sel := labels.NewSelector()
	var errs []error
	for _, r := range reqs {
		var op selection.Operator
		switch r.Operator {
		case v1.NodeSelectorOpIn:
			op = selection.In
		case v1.NodeSelectorOpNotIn:
			op = selection.NotIn
		case v1.NodeSelectorOpExists:
			op = selection.Exists
		case v1.NodeSelectorOpDoesNotExist:
			op = selection.DoesNotExist
		case v1.NodeSelectorOpGt:
			op = selection.GreaterThan
		case v1.NodeSelectorOpLt:
			op = selection.LessThan
		default:
			errs = append(errs, fmt.Errorf("%q is not a valid label selector operator", r.Operator))
			continue
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sel = sel.Add(*req)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return sel, nil
}

func requirementsAsFieldSelector(reqs []v1.NodeSelectorRequirement) (fields.Selector, error) {
	var sels []fields.Selector
	var errs []error
	for _, r := range reqs {
		if len(r.Values) != 1 {
			errs = append(errs, fmt.Errorf("matchFields %s: values must have one element", r.Key))
			continue
		}
		switch r.Operator {
		case v1.NodeSelectorOpIn:
			sels = append(sels, fields.OneTermEqualSelector(r.Key, r.Values[0]))
		case v1.NodeSelectorOpNotIn:
			sels = append(sels, fields.OneTermNotEqualSelector(r.Key, r.Values[0]))
		default:
			errs = append(errs, fmt.Errorf("matchFields %s: operator %q is not supported (In, NotIn)", r.Key, r.Operator))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return fields.AndSelectors(sels...), nil
}

func nodeFields(n *v1.Node) fields.Set {
	if n.Name == "" {
		return nil
	}
	return fields.Set{metav1.ObjectNameField: n.Name}
}

// NodeSelector is a parsed v1.NodeSelector: its terms are ORed.
type NodeSelector struct {
	terms []nodeSelectorTerm
}

// NewNodeSelector parses ns; empty terms are dropped (they match nothing).
func NewNodeSelector(ns *v1.NodeSelector) *NodeSelector {
	out := &NodeSelector{terms: make([]nodeSelectorTerm, 0, len(ns.NodeSelectorTerms))}
	for i := range ns.NodeSelectorTerms {
		if isEmptyNodeSelectorTerm(&ns.NodeSelectorTerms[i]) {
			continue
		}
		out.terms = append(out.terms, newNodeSelectorTerm(&ns.NodeSelectorTerms[i]))
	}
	return out
}

// Match reports whether some term matches the node. Parse errors of the
// terms that did not match are returned.
func (ns *NodeSelector) Match(node *v1.Node) (bool, error) {
	if node == nil {
		return false, nil
	}
	nl, nf := labels.Set(node.Labels), nodeFields(node)
	var errs []error
	for i := range ns.terms {
		ok, err := ns.terms[i].match(nl, nf)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

// RequiredNodeAffinity is a pod's spec.nodeSelector and required node
// affinity together: a node must match both.
type RequiredNodeAffinity struct {
	labelSelector labels.Selector // nil: no nodeSelector
	nodeSelector  *NodeSelector   // nil: no required node affinity
}

// GetRequiredNodeAffinity parses the pod's node selection.
func GetRequiredNodeAffinity(pod *v1.Pod) RequiredNodeAffinity {
	var out RequiredNodeAffinity
	if len(pod.Spec.NodeSelector) > 0 {
		out.labelSelector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		out.nodeSelector = NewNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return out
}

// Match reports whether the node matches the nodeSelector and the required
// node affinity.
func (r RequiredNodeAffinity) Match(node *v1.Node) (bool, error) {
	if r.labelSelector != nil && !r.labelSelector.Matches(labels.Set(node.Labels)) {
		return false, nil
	}
	if r.nodeSelector != nil {
		return r.nodeSelector.Match(node)
	}
	return true, nil
}

// PreferredSchedulingTerms are a pod's preferred node affinity terms: a
// node scores the sum of the weights of the terms it matches.
type PreferredSchedulingTerms struct {
	terms   []nodeSelectorTerm
	weights []int64
}

// NewPreferredSchedulingTerms parses the terms; terms with weight 0 or no
// requirements are dropped. Any parse error fails the whole list, as
// upstream.
func NewPreferredSchedulingTerms(terms []v1.PreferredSchedulingTerm) (*PreferredSchedulingTerms, error) {
	out := &PreferredSchedulingTerms{}
	var errs []error
	for i := range terms {
		t := &terms[i]
		if t.Weight == 0 || isEmptyNodeSelectorTerm(&t.Preference) {
			continue
		}
		parsed := newNodeSelectorTerm(&t.Preference)
		if parsed.parseErr != nil {
			errs = append(errs, parsed.parseErr)
			continue
		}
		out.terms = append(out.terms, parsed)
		out.weights = append(out.weights, int64(t.Weight))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Score sums the weights of the terms the node matches.
func (p *PreferredSchedulingTerms) Score(node *v1.Node) int64 {
	var score int64
	nl, nf := labels.Set(node.Labels), nodeFields(node)
	for i := range p.terms {
		if ok, _ := p.terms[i].match(nl, nf); ok {
			score += p.weights[i]
		}
	}
	return score
}
