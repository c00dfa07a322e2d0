// Package clusterroleaggregation fills the rules of aggregated ClusterRoles:
// a ClusterRole with an aggregationRule gets the union of the rules of every
// other ClusterRole its label selectors match.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/clusterroleaggregation
// (clusterroleaggregation_controller.go), a controller of
// kube-controller-manager.
//
// This is how the default "view" role grows when an add-on installs new
// resources: the add-on ships a small ClusterRole labelled
//
//	rbac.authorization.k8s.io/aggregate-to-view: "true"
//
// and, moments later, everyone bound to view can read its resources:
//
//	ClusterRole view            aggregationRule: aggregate-to-view=true
//	  ▲ rules written here        │ matches
//	  └───────── union ───────────┼── system:aggregate-to-view (pods, deployments ...)
//	                              └── crontabs-reader (yours)
//
// Every change to any ClusterRole requeues every aggregated ClusterRole (the
// change may add or remove it from a selection). A sync takes the matching
// roles in name order, appends each rule not already present, and writes the
// result if it differs. The aggregated role's own rules are overwritten: an
// edit by hand does not last.
package clusterroleaggregation

import (
	"context"
	"encoding/binary"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Component is the controller's name and user agent.
const Component = "clusterrole-aggregation-controller"

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times the queue's retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is how many roles sync at once; 0 means 1.
	Workers int
}

// Controller is the clusterrole-aggregation controller.
type Controller struct {
	client   *client.Client
	workers  int
	queue    *client.Queue[string] // names of aggregated ClusterRoles
	informer *client.Informer[*rbacv1.ClusterRole]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("clusterroleaggregation", cfg.Client, &cfg.Workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	c := &Controller{
		client:   cfg.Client,
		workers:  cfg.Workers,
		queue:    client.NewQueue[string](cfg.Clock),
		informer: client.NewInformer(clusterRoles(cfg.Client), "", client.ListOptions{}),
	}
	c.informer.AddHandler(client.Handler[*rbacv1.ClusterRole]{
		OnAdd:    func(*rbacv1.ClusterRole) { c.enqueueAggregated() },
		OnUpdate: func(_, _ *rbacv1.ClusterRole) { c.enqueueAggregated() },
		OnDelete: func(*rbacv1.ClusterRole) { c.enqueueAggregated() },
	})
	return c, nil
}

func clusterRoles(c *client.Client) client.Resource[*rbacv1.ClusterRole] {
	return client.For[*rbacv1.ClusterRole](c, rbacv1.GroupName, "clusterroles")
}

// enqueueAggregated queues every ClusterRole that has an aggregationRule.
func (c *Controller) enqueueAggregated() {
	for _, cr := range c.informer.List() {
		if cr.AggregationRule != nil {
			c.queue.Add(cr.Name)
		}
	}
}

// HasSynced reports whether the cache holds its first list.
func (c *Controller) HasSynced() bool { return controller.Synced(c.informer) }

// Run syncs aggregated roles until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, []controller.Informer{c.informer},
		controller.Worker[string]{Queue: c.queue, Workers: c.workers, Reconcile: c.syncClusterRole})
}

// AggregatedRules returns the rules role's aggregationRule selects from
// roles: the rules of each matching role (role itself excluded), in the
// roles' name order, without duplicates. A selector that does not parse
// selects nothing.
func AggregatedRules(role *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	sorted := append([]*rbacv1.ClusterRole(nil), roles...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var rules []rbacv1.PolicyRule
	seen := map[string]bool{}
	have := map[string]bool{} // ruleKey of each rule in rules
	var key []byte
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue
		}
		for _, other := range sorted {
			if other.Name == role.Name || seen[other.Name] || !sel.Matches(labels.Set(other.Labels)) {
				continue
			}
			seen[other.Name] = true
			for _, r := range other.Rules {
				key = ruleKey(key[:0], r)
				if !have[string(key)] {
					have[string(key)] = true
					rules = append(rules, r)
				}
			}
		}
	}
	return rules
}

// ruleKey appends a PolicyRule's key to b: two rules have the same key when
// they are equal as upstream's equality.Semantic.DeepEqual compares them
// (every list element by element, a nil list equal to an empty one); each
// string goes in with its length first, so no content can fake a boundary.
// The reflection-based comparison made the bootstrap policy's aggregation
// take most of a second of the tab's start.
func ruleKey(b []byte, r rbacv1.PolicyRule) []byte {
	for _, list := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

// sameRules is equality.Semantic.DeepEqual for two lists of rules.
func sameRules(a, b []rbacv1.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i].Verbs, b[i].Verbs) || !slices.Equal(a[i].APIGroups, b[i].APIGroups) ||
			!slices.Equal(a[i].Resources, b[i].Resources) || !slices.Equal(a[i].ResourceNames, b[i].ResourceNames) ||
			!slices.Equal(a[i].NonResourceURLs, b[i].NonResourceURLs) {
			return false
		}
	}
	return true
}

func (c *Controller) syncClusterRole(ctx context.Context, name string) error {
	role, ok := c.informer.Get("", name)
	if !ok || role.AggregationRule == nil {
		return nil
	}
	rules := AggregatedRules(role, c.informer.List())
	if sameRules(rules, role.Rules) {
		return nil
	}
	role = role.DeepCopy()
	role.Rules = rules
	_, err := clusterRoles(c.client).Update(ctx, role)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	return err // a conflict retries from the cache
}
