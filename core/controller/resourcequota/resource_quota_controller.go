// Package resourcequota is the resource quota controller: it keeps every
// ResourceQuota's status (hard, and used: what its namespace holds now).
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/resourcequota
// (resource_quota_controller.go, with the replenishment of
// resource_quota_monitor.go) and the evaluators of pkg/quota/v1.
//
// The quota is enforced at admission, not here: the API server's
// ResourceQuota plugin refuses a pod that would take status.used past
// status.hard, and adds what it admits to status.used at once. This
// controller is the accountant that recounts from scratch:
//
//	a quota is created or its spec changes ──▶ status.hard = spec.hard,
//	                                           status.used = the sum of what
//	                                           every object of the namespace
//	                                           costs (registry.QuotaEvaluatorFor)
//	a pod finishes or is deleted, a Service ──▶ its quotas are recounted, so
//	is deleted or changes type                 the freed quota can be used again
//	every ResyncPeriod (5 min)             ──▶ every quota is recounted (what
//	                                           the admission charged for an
//	                                           object that was then not
//	                                           stored is given back here)
//
// A quota that the controller has not seen yet has no status.hard, so it
// limits nothing; a resource it tracks that has no status.used makes the
// admission refuse with "status unknown for quota".
package resourcequota

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// Component is the controller's user agent.
	Component = "resourcequota-controller"
	// DefaultResyncPeriod is --resource-quota-sync-period.
	DefaultResyncPeriod = 5 * time.Minute
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times the resyncs and decides when a deleted pod's grace has
	// passed; nil is the real clock.
	Clock clock.WithDelayedExecution
	// ResyncPeriod is how often every quota is recounted; 0 is
	// DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Workers is --concurrent-resource-quota-syncs; 0 is 5.
	Workers int
}

// Controller keeps ResourceQuota status.
type Controller struct {
	client  *client.Client
	clock   clock.WithDelayedExecution
	resync  time.Duration
	workers int
	queue   *client.Queue[string] // quota keys, namespace/name

	quotas   *client.Informer[*corev1.ResourceQuota]
	pods     *client.Informer[*corev1.Pod]
	services *client.Informer[*corev1.Service]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("resourcequota", cfg.Client, &cfg.Workers, 5, &cfg.Clock); err != nil {
		return nil, err
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = DefaultResyncPeriod
	}
	c := &Controller{
		client: cfg.Client, clock: cfg.Clock, resync: cfg.ResyncPeriod, workers: cfg.Workers,
		queue:    client.NewQueue[string](cfg.Clock),
		quotas:   client.NewInformer(client.For[*corev1.ResourceQuota](cfg.Client, "", "resourcequotas"), "", client.ListOptions{}),
		pods:     client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		services: client.NewInformer(client.For[*corev1.Service](cfg.Client, "", "services"), "", client.ListOptions{}),
	}
	c.quotas.AddHandler(client.Handler[*corev1.ResourceQuota]{
		OnAdd: c.addQuota,
		// Status updates are this controller's own, or the admission
		// plugin's charges: only a changed spec.hard asks for a recount
		// (a recount between the plugin's charge and the write of the
		// object charged would undo the charge).
		OnUpdate: func(old, q *corev1.ResourceQuota) {
			if !apiequality.Semantic.DeepEqual(old.Spec.Hard, q.Spec.Hard) {
				c.addQuota(q)
			}
		},
	})
	// Replenishment: what frees quota is a pod that ends or goes, or a
	// Service that goes or stops being a NodePort or LoadBalancer.
	c.pods.AddHandler(client.Handler[*corev1.Pod]{
		OnUpdate: func(old, pod *corev1.Pod) {
			now := c.clock.Now()
			if registry.PodCountsForQuota(old, now) != registry.PodCountsForQuota(pod, now) {
				c.enqueueNamespace(pod.Namespace)
			}
		},
		OnDelete: func(pod *corev1.Pod) { c.enqueueNamespace(pod.Namespace) },
	})
	c.services.AddHandler(client.Handler[*corev1.Service]{
		OnUpdate: func(old, svc *corev1.Service) {
			if old.Spec.Type != svc.Spec.Type || len(old.Spec.Ports) != len(svc.Spec.Ports) {
				c.enqueueNamespace(svc.Namespace)
			}
		},
		OnDelete: func(svc *corev1.Service) { c.enqueueNamespace(svc.Namespace) },
	})
	return c, nil
}

// addQuota queues a quota whose status does not yet reflect its spec: a
// changed hard, or a hard resource with no used value.
func (c *Controller) addQuota(q *corev1.ResourceQuota) {
	if !apiequality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
		c.queue.Add(client.Key(q))
		return
	}
	for k := range q.Status.Hard {
		if _, ok := q.Status.Used[k]; !ok {
			c.queue.Add(client.Key(q))
			return
		}
	}
}

func (c *Controller) enqueueNamespace(ns string) {
	for _, q := range c.quotas.List() {
		if q.Namespace == ns {
			c.queue.Add(client.Key(q))
		}
	}
}

func (c *Controller) informers() []controller.Informer {
	return []controller.Informer{c.quotas, c.pods, c.services}
}

// HasSynced reports whether the caches hold their first lists.
func (c *Controller) HasSynced() bool { return controller.Synced(c.informers()...) }

// resyncKey asks the worker to queue every quota again.
const resyncKey = "\x00resync"

// Run syncs quotas until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	c.queue.AddAfter(resyncKey, c.resync)
	return controller.Run(ctx, Component, c.informers(), controller.Worker[string]{
		Queue: c.queue, Workers: c.workers, Reconcile: func(ctx context.Context, key string) error {
			if key == resyncKey {
				for _, q := range c.quotas.List() {
					c.queue.Add(client.Key(q))
				}
				c.queue.AddAfter(resyncKey, c.resync)
				return nil
			}
			return c.syncQuota(ctx, key)
		},
	})
}

// syncQuota recounts one quota and writes its status if it changed.
func (c *Controller) syncQuota(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	cached, ok := c.quotas.Get(ns, name)
	if !ok {
		return nil
	}
	q := cached.DeepCopy()
	hard := corev1.ResourceList{}
	for k, v := range q.Spec.Hard {
		hard[k] = v.DeepCopy()
	}
	used, err := c.Usage(ctx, q)
	if err != nil {
		return err
	}
	// Keep what no evaluator counts (upstream keeps the old used value),
	// and only the resources that have a hard limit.
	for k, v := range q.Status.Used {
		if _, counted := used[k]; !counted {
			used[k] = v
		}
	}
	for k := range used {
		if _, limited := hard[k]; !limited {
			delete(used, k)
		}
	}
	if apiequality.Semantic.DeepEqual(q.Status.Hard, hard) && apiequality.Semantic.DeepEqual(q.Status.Used, used) {
		return nil
	}
	q.Status.Hard, q.Status.Used = hard, used
	_, err = client.For[*corev1.ResourceQuota](c.client, "", "resourcequotas").UpdateStatus(ctx, q)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Usage is upstream's CalculateUsage: for each resource of q.spec.hard an
// evaluator charges, the total cost of the namespace's objects in the
// quota's scopes (zero when there are none).
func (c *Controller) Usage(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	byResource := map[schema.GroupResource][]corev1.ResourceName{}
	for name := range q.Spec.Hard {
		gr, ok := groupResourceOf(name)
		if !ok {
			continue
		}
		byResource[gr] = append(byResource[gr], name)
	}
	now := c.clock.Now()
	used := corev1.ResourceList{}
	for gr, names := range byResource {
		ev := registry.QuotaEvaluatorFor(gr)
		objs, err := c.objects(ctx, gr, q.Namespace)
		if err != nil {
			return nil, err
		}
		if objs == nil { // not served: nothing to count
			continue
		}
		for _, n := range names {
			used[n] = *resource.NewQuantity(0, resource.DecimalSI)
		}
		probe := &corev1.ResourceQuota{Spec: q.Spec, Status: corev1.ResourceQuotaStatus{Hard: q.Spec.Hard}}
		for _, obj := range objs {
			if !registry.QuotaMatches(probe, ev, obj) {
				continue
			}
			for k, v := range ev.Usage(obj, now) {
				if cur, ok := used[k]; ok && hasName(names, k) {
					cur.Add(v)
					used[k] = cur
				}
			}
		}
	}
	return used, nil
}

func hasName(names []corev1.ResourceName, n corev1.ResourceName) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// objects lists a namespace's objects of one resource: pods and Services
// from the caches, the rest from the API server. nil means the resource is
// not served.
func (c *Controller) objects(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	switch gr {
	case schema.GroupResource{Resource: "pods"}:
		out = []runtime.Object{}
		for _, p := range c.pods.List() {
			if p.Namespace == ns {
				out = append(out, p)
			}
		}
		return out, nil
	case schema.GroupResource{Resource: "services"}:
		out = []runtime.Object{}
		for _, s := range c.services.List() {
			if s.Namespace == ns {
				out = append(out, s)
			}
		}
		return out, nil
	}
	if _, ok := c.client.Registry().Lookup(gr); !ok {
		return nil, nil
	}
	items, _, err := client.For[runtime.Object](c.client, gr.Group, gr.Resource).List(ctx, ns, client.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gr, err)
	}
	return append([]runtime.Object{}, items...), nil
}

// groupResourceOf is the resource a quota name charges: pods for cpu,
// memory, requests.*, limits.*, hugepages-*; services for services.*;
// count/<resource>.<group> for itself; the legacy counts for theirs.
func groupResourceOf(name corev1.ResourceName) (schema.GroupResource, bool) {
	s := string(name)
	switch {
	case strings.HasPrefix(s, "count/"):
		res, group, _ := strings.Cut(strings.TrimPrefix(s, "count/"), ".")
		return schema.GroupResource{Group: group, Resource: res}, true
	case s == "services" || strings.HasPrefix(s, "services."):
		return schema.GroupResource{Resource: "services"}, true
	case s == "configmaps" || s == "secrets" || s == "replicationcontrollers" || s == "resourcequotas" || s == "persistentvolumeclaims":
		return schema.GroupResource{Resource: s}, true
	case s == "pods" || s == "cpu" || s == "memory" || s == "ephemeral-storage" ||
		strings.HasPrefix(s, "requests.") || strings.HasPrefix(s, "limits.") || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix):
		return schema.GroupResource{Resource: "pods"}, true
	}
	return schema.GroupResource{}, false
}
