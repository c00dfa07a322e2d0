package framework

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a v1.PodAffinityTerm with its selectors parsed once, when
// the PodInfo is made (upstream: framework.AffinityTerm).
//
// A term "matches" a pod when the pod is in one of the term's namespaces (or
// in a namespace whose labels match NamespaceSelector) and the pod's labels
// match Selector. The term's TopologyKey then says how far the match
// reaches: kubernetes.io/hostname means "the same node", a zone label "the
// same zone".
type AffinityTerm struct {
	// Namespaces are the namespaces named by the term; when the term names
	// none and has no namespaceSelector, the namespace of the pod that has
	// the term.
	Namespaces sets.Set[string]
	// Selector selects pods by label; a nil labelSelector selects nothing.
	Selector labels.Selector
	// TopologyKey is the node label that defines "together".
	TopologyKey string
	// NamespaceSelector selects more namespaces by their labels: nil in the
	// API selects none, {} selects all.
	NamespaceSelector labels.Selector
}

// Matches reports whether pod matches the term; nsLabels are the labels of
// the pod's namespace (only NamespaceSelector reads them).
func (at *AffinityTerm) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if at.Namespaces.Has(pod.Namespace) || at.NamespaceSelector.Matches(nsLabels) {
		return at.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred (anti-)affinity term with its weight
// (1..100).
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

func newAffinityTerm(pod *v1.Pod, term *v1.PodAffinityTerm) (AffinityTerm, error) {
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	namespaces := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces.Insert(pod.Namespace)
	}
	return AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey, NamespaceSelector: nsSelector}, nil
}

func getAffinityTerms(pod *v1.Pod, terms []v1.PodAffinityTerm) ([]AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]AffinityTerm, 0, len(terms))
	var errs []error
	for i := range terms {
		t, err := newAffinityTerm(pod, &terms[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func getWeightedAffinityTerms(pod *v1.Pod, terms []v1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]WeightedAffinityTerm, 0, len(terms))
	var errs []error
	for i := range terms {
		t, err := newAffinityTerm(pod, &terms[i].PodAffinityTerm)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: terms[i].Weight})
	}
	return out, errors.Join(errs...)
}

// parseAffinity fills the pod's (anti-)affinity terms.
func (pi *PodInfo) parseAffinity() {
	a := pi.Pod.Spec.Affinity
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return
	}
	var errs [4]error
	if pa := a.PodAffinity; pa != nil {
		pi.RequiredAffinityTerms, errs[0] = getAffinityTerms(pi.Pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAffinityTerms, errs[1] = getWeightedAffinityTerms(pi.Pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		pi.RequiredAntiAffinityTerms, errs[2] = getAffinityTerms(pi.Pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAntiAffinityTerms, errs[3] = getWeightedAffinityTerms(pi.Pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	pi.ParseError = errors.Join(errs[:]...)
}

// HasAffinity reports whether the pod has any inter-pod (anti-)affinity
// term: such pods are listed in NodeInfo.PodsWithAffinity.
func (pi *PodInfo) HasAffinity() bool {
	return len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms)+len(pi.PreferredAffinityTerms)+len(pi.PreferredAntiAffinityTerms) > 0
}
