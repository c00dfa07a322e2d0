// Package interpodaffinity holds InterPodAffinity: the filter and score for
// "put me near those pods" (affinity) and "keep me away from those pods"
// (anti-affinity) (upstream:
// pkg/scheduler/framework/plugins/interpodaffinity).
//
//	affinity:
//	  podAntiAffinity:
//	    requiredDuringSchedulingIgnoredDuringExecution:
//	    - labelSelector: {matchLabels: {app: web}}
//	      topologyKey: kubernetes.io/hostname     # "near" = the same node
//
// makes each web replica refuse a node that already runs one. The topology
// key decides how far "near" reaches: kubernetes.io/hostname is one node,
// topology.kubernetes.io/zone a whole zone.
//
// Three checks, each against counts computed once per attempt in PreFilter
// (per topology domain, not per node, so a zone-wide rule costs the same as
// a node-wide one):
//
//  1. the pod's required affinity: some pod matching all its terms must run
//     in the node's domain (or, for the first pod of a group that matches its
//     own terms, nowhere yet);
//  2. the pod's required anti-affinity: no matching pod in the node's domain;
//  3. the anti-affinity of the pods already running: none of them may object
//     to this pod in its domain. This one is symmetric on purpose: a rule
//     would mean little if the pod it excludes could still walk in.
//
// Preferred terms add or subtract their weight in Score, and an existing
// pod's required affinity to this pod adds hardPodAffinityWeight (1).
package interpodaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "InterPodAffinity"

// Upstream's reasons.
const (
	// ErrReasonExistingAntiAffinityRulesNotMatch: a pod on the node's
	// domain has anti-affinity to this pod.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch: no pod the affinity asks for runs in
	// the node's domain.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: a pod the anti-affinity excludes
	// runs in the node's domain.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// Args configures the plugin (upstream: InterPodAffinityArgs).
type Args struct {
	// HardPodAffinityWeight is the score an existing pod's required
	// affinity to the incoming pod adds (0..100; upstream's default 1).
	HardPodAffinityWeight int32
	// IgnorePreferredTermsOfExistingPods skips the existing pods'
	// preferred terms when the incoming pod has none.
	IgnorePreferredTermsOfExistingPods bool
}

// InterPodAffinity is the plugin.
type InterPodAffinity struct {
	handle framework.Handle
	args   Args
}

var (
	_ framework.PreFilterPlugin     = (*InterPodAffinity)(nil)
	_ framework.PreFilterExtensions = (*InterPodAffinity)(nil)
	_ framework.FilterPlugin        = (*InterPodAffinity)(nil)
	_ framework.PreScorePlugin      = (*InterPodAffinity)(nil)
	_ framework.ScorePlugin         = (*InterPodAffinity)(nil)
	_ framework.ScoreExtensions     = (*InterPodAffinity)(nil)
	_ framework.EnqueueExtensions   = (*InterPodAffinity)(nil)
)

// New is the plugin's factory, with upstream's default args.
func New(_ context.Context, h framework.Handle) (framework.Plugin, error) {
	return &InterPodAffinity{handle: h, args: Args{HardPodAffinityWeight: 1}}, nil
}

// Name implements framework.Plugin.
func (*InterPodAffinity) Name() string { return Name }

// EventsToRegister: an assigned pod added (it may be the one the affinity
// waits for), relabelled or deleted (it may be the one the anti-affinity
// objects to); a node added or relabelled (a new domain).
func (*InterPodAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
}

// mergeAffinityTermNamespacesIfNotEmpty resolves the term's
// namespaceSelector into namespace names, so matching the incoming pod's
// terms against other pods needs no namespace lookup.
func (pl *InterPodAffinity) mergeAffinityTermNamespacesIfNotEmpty(at *framework.AffinityTerm) {
	if at.NamespaceSelector.Empty() {
		return
	}
	ns := at.Namespaces.Clone()
	if l := pl.listers().Namespaces; l != nil {
		for _, n := range l.List() {
			if at.NamespaceSelector.Matches(labels.Set(n.Labels)) {
				ns.Insert(n.Name)
			}
		}
	}
	at.Namespaces = ns
	at.NamespaceSelector = labels.Nothing()
}

func (pl *InterPodAffinity) listers() framework.Listers {
	if pl.handle == nil {
		return framework.Listers{}
	}
	return pl.handle.Listers()
}

// namespaceLabels returns the labels of the namespace (empty if unknown).
func (pl *InterPodAffinity) namespaceLabels(ns string) labels.Set {
	if l := pl.listers().Namespaces; l != nil {
		if n, ok := l.Get("", ns); ok {
			return labels.Merge(n.Labels, nil)
		}
	}
	return nil
}

// incomingPodInfo parses the pod and resolves the namespace selectors of
// its terms on copies (the PodInfo may be shared).
func (pl *InterPodAffinity) incomingPodInfo(pod *v1.Pod) *framework.PodInfo {
	pi := framework.NewPodInfo(pod)
	for i := range pi.RequiredAffinityTerms {
		pl.mergeAffinityTermNamespacesIfNotEmpty(&pi.RequiredAffinityTerms[i])
	}
	for i := range pi.RequiredAntiAffinityTerms {
		pl.mergeAffinityTermNamespacesIfNotEmpty(&pi.RequiredAntiAffinityTerms[i])
	}
	for i := range pi.PreferredAffinityTerms {
		pl.mergeAffinityTermNamespacesIfNotEmpty(&pi.PreferredAffinityTerms[i].AffinityTerm)
	}
	for i := range pi.PreferredAntiAffinityTerms {
		pl.mergeAffinityTermNamespacesIfNotEmpty(&pi.PreferredAntiAffinityTerms[i].AffinityTerm)
	}
	return pi
}
