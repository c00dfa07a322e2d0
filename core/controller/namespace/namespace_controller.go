// Package namespace is the namespace controller: it empties a namespace that
// is being deleted, then lets the API server remove it.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/namespace
// (namespace_controller.go, deletion/namespaced_resources_deleter.go,
// deletion/status_condition_utils.go).
//
// `kubectl delete namespace demo` does not delete anything at first: the
// API server sets the namespace's deletionTimestamp and phase Terminating
// (after which nothing new may be created in it), and the namespace stays
// because its spec.finalizers holds "kubernetes". This controller sees it
// and:
//
//  1. deletes every object of every namespaced resource in it, in the
//     background (pods gracefully: their kubelets stop them first);
//  2. lists again; while something is left (a pod still terminating, an
//     object held by a finalizer), it writes why into the namespace's
//     conditions and looks again later:
//     NamespaceContentRemaining  True SomeResourcesRemain  "Some resources are remaining: pods. has 2 resource instances"
//     NamespaceFinalizersRemaining True SomeFinalizerRemain "Some finalizers are remaining: example.com/hold in 1 resource instances"
//     NamespaceDeletionContentFailure True ContentDeletionFailed "Failed to delete all resource types, 1 remaining: ..."
//  3. once the namespace is empty, removes "kubernetes" from spec.finalizers
//     through the namespaces/{name}/finalize subresource; with no finalizer
//     left the API server deletes the namespace.
//
// The controller does not watch the content: it looks again after half its
// estimate of how long the rest takes (the longest terminationGracePeriod
// of the pods still running, or 15 s for objects held by finalizers).
package namespace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-namespace-syncs (upstream 10).
	DefaultWorkers = 2
	// Component is the event source and user agent.
	Component = "namespace-controller"
	// DeletionGracePeriod is how long after a namespace's deletion the
	// controller starts, so that last-moment creations are seen (upstream
	// namespaceDeletionGracePeriod).
	DeletionGracePeriod = 5 * time.Second
	// finalizerEstimateSeconds is the estimate for objects waiting on
	// finalizers.
	finalizerEstimateSeconds = int64(15)
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times the waits; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of namespaces emptied at once (default 2).
	Workers int
}

// Controller is the namespace controller.
type Controller struct {
	client   *client.Client
	clock    clock.WithDelayedExecution
	workers  int
	queue    *client.Queue[string]
	informer *client.Informer[*corev1.Namespace]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("namespace", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	nm := &Controller{
		client:   cfg.Client,
		clock:    cfg.Clock,
		workers:  cfg.Workers,
		queue:    client.NewQueue[string](cfg.Clock),
		informer: client.NewInformer(cfg.Client.Namespaces(), "", client.ListOptions{}),
	}
	nm.informer.AddHandler(client.Handler[*corev1.Namespace]{
		OnAdd:    nm.enqueue,
		OnUpdate: func(_, ns *corev1.Namespace) { nm.enqueue(ns) },
	})
	return nm, nil
}

// HasSynced reports whether the controller's cache holds its first list.
func (nm *Controller) HasSynced() bool { return nm.informer.HasSynced() }

// Run watches namespaces and empties the ones being deleted until ctx is
// done.
func (nm *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, []controller.Informer{nm.informer},
		controller.Worker[string]{Queue: nm.queue, Workers: nm.workers, Reconcile: nm.Reconcile})
}

// enqueue queues a namespace being deleted, DeletionGracePeriod later.
func (nm *Controller) enqueue(ns *corev1.Namespace) {
	if ns.DeletionTimestamp == nil {
		return
	}
	nm.queue.AddAfter(ns.Name, DeletionGracePeriod)
}

// ResourcesRemainingError says the namespace is not empty yet, and how
// many seconds the rest is expected to take.
type ResourcesRemainingError struct {
	Estimate int64
}

func (e *ResourcesRemainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.Estimate)
}

// Reconcile empties and finalizes the namespace name if it is being
// deleted. When content remains it looks again after half the estimate.
func (nm *Controller) Reconcile(ctx context.Context, name string) error {
	err := nm.delete(ctx, name)
	var remaining *ResourcesRemainingError
	if errors.As(err, &remaining) {
		nm.queue.AddAfter(name, time.Duration(remaining.Estimate/2+1)*time.Second)
		return nil
	}
	return err
}

// delete is upstream's namespacedResourcesDeleter.Delete.
func (nm *Controller) delete(ctx context.Context, name string) error {
	ns, err := nm.client.Namespaces().Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		ns = ns.DeepCopy()
		ns.Status.Phase = corev1.NamespaceTerminating
		if ns, err = nm.client.Namespaces().UpdateStatus(ctx, ns); err != nil {
			return ignoreNotFound(err)
		}
	}
	if len(ns.Spec.Finalizers) == 0 {
		return nil // finalized already
	}
	estimate, err := nm.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &ResourcesRemainingError{estimate}
	}
	return nm.finalize(ctx, name)
}

// finalize removes "kubernetes" from spec.finalizers through
// namespaces/{name}/finalize, re-reading the namespace on conflicts.
func (nm *Controller) finalize(ctx context.Context, name string) error {
	for {
		ns, err := nm.client.Namespaces().Get(ctx, "", name)
		if err != nil {
			return ignoreNotFound(err)
		}
		cp := ns.DeepCopy()
		cp.Spec.Finalizers = nil
		for _, f := range ns.Spec.Finalizers {
			if f != corev1.FinalizerKubernetes {
				cp.Spec.Finalizers = append(cp.Spec.Finalizers, f)
			}
		}
		_, err = nm.client.Namespaces().UpdateSubresource(ctx, cp, "finalize")
		if !apierrors.IsConflict(err) {
			return ignoreNotFound(err)
		}
	}
}

// gvrResult is what is left of one resource in the namespace.
type gvrResult struct {
	estimate   int64
	remaining  int
	finalizers map[string]int
}

// deleteAllContent deletes the objects of every namespaced resource and
// returns an estimate (seconds) of how long the remaining ones take; 0
// means the namespace is empty. It writes the deletion conditions.
func (nm *Controller) deleteAllContent(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	var errs []error
	var estimate int64
	remaining := map[schema.GroupVersionResource]int{}
	finalizers := map[string]int{}
	for _, s := range nm.client.Registry().Resources() {
		res := s.Resource
		if !res.Namespaced {
			continue
		}
		r, err := nm.deleteAllContentFor(ctx, res, ns)
		if err != nil {
			errs = append(errs, err)
		}
		estimate = max(estimate, r.estimate)
		if r.remaining > 0 {
			remaining[res.GroupVersionResource()] = r.remaining
			for f, n := range r.finalizers {
				finalizers[f] += n
			}
		}
	}
	if updateConditions(&ns.Status, deletionConditions(errs, remaining, finalizers, nm.clock.Now()), nm.clock.Now()) {
		if _, err := nm.client.Namespaces().UpdateStatus(ctx, ns); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("couldn't update status condition for namespace %q: %w", ns.Name, err))
		}
	}
	return estimate, errors.Join(errs...)
}

// deleteAllContentFor deletes every object of one resource in ns, in the
// background (the garbage collector deletes their dependents), and lists
// what is left.
func (nm *Controller) deleteAllContentFor(ctx context.Context, res *registry.Resource, ns *corev1.Namespace) (gvrResult, error) {
	api := client.For[runtime.Object](nm.client, res.Group, res.Resource)
	estimate, err := nm.estimateGracefulTermination(ctx, res, ns)
	if err != nil {
		return gvrResult{}, err
	}
	objs, _, err := api.List(ctx, ns.Name, client.ListOptions{})
	if err != nil {
		return gvrResult{estimate: estimate}, err
	}
	background := metav1.DeletePropagationBackground
	for _, obj := range objs {
		acc, err := meta.Accessor(obj)
		if err != nil {
			continue
		}
		if acc.GetDeletionTimestamp() != nil && len(acc.GetFinalizers()) > 0 {
			continue // being deleted already, waiting for its finalizers
		}
		err = api.Delete(ctx, ns.Name, acc.GetName(), &metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return gvrResult{estimate: estimate}, err
		}
	}
	// What is left?
	objs, _, err = api.List(ctx, ns.Name, client.ListOptions{})
	if err != nil {
		return gvrResult{estimate: estimate}, err
	}
	if len(objs) == 0 {
		return gvrResult{}, nil
	}
	r := gvrResult{estimate: estimate, remaining: len(objs), finalizers: map[string]int{}}
	for _, obj := range objs {
		if acc, err := meta.Accessor(obj); err == nil {
			for _, f := range acc.GetFinalizers() {
				r.finalizers[f]++
			}
		}
	}
	switch {
	case estimate > 0:
		return r, nil
	case len(r.finalizers) > 0:
		// Finalizers are normal: give their controllers some time.
		r.estimate = finalizerEstimateSeconds
		return r, nil
	}
	return r, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, res.GroupVersionResource())
}

// estimateGracefulTermination is, for pods, the longest
// terminationGracePeriodSeconds of those still running, unless that long
// has passed since the namespace was deleted; 0 for other resources.
func (nm *Controller) estimateGracefulTermination(ctx context.Context, res *registry.Resource, ns *corev1.Namespace) (int64, error) {
	if res.Group != "" || res.Resource != "pods" {
		return 0, nil
	}
	pods, _, err := nm.client.Pods().List(ctx, ns.Name, client.ListOptions{})
	if err != nil {
		return 0, err
	}
	var estimate int64
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g > estimate {
			estimate = *g
		}
	}
	if nm.clock.Since(ns.DeletionTimestamp.Time) >= time.Duration(estimate)*time.Second {
		return 0, nil
	}
	return estimate, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// --- conditions (upstream deletion/status_condition_utils.go) ---

// conditionTypes are the namespace conditions the controller maintains.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// The reasons and messages of the conditions when all is well.
var (
	okReasons = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
		corev1.NamespaceDeletionGVParsingFailure: "ParsedGroupVersions",
		corev1.NamespaceDeletionContentFailure:   "ContentDeleted",
		corev1.NamespaceContentRemaining:         "ContentRemoved",
		corev1.NamespaceFinalizersRemaining:      "ContentRemoved",
	}
	okMessages = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "All content successfully removed",
		corev1.NamespaceFinalizersRemaining:      "All content successfully removed",
	}
)

// deletionConditions are the failing conditions of one pass (the others
// get their "ok" variant in updateConditions).
func deletionConditions(errs []error, remaining map[schema.GroupVersionResource]int, finalizers map[string]int, now time.Time) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	ts := metav1.NewTime(now)
	if len(remaining) > 0 {
		var parts []string
		for gvr, n := range remaining {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: ts, Reason: "SomeResourcesRemain",
			Message: "Some resources are remaining: " + strings.Join(parts, ", ")})
	}
	if len(finalizers) > 0 {
		var parts []string
		for f, n := range finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: ts, Reason: "SomeFinalizerRemain",
			Message: "Some finalizers are remaining: " + strings.Join(parts, ", ")})
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		sort.Strings(msgs)
		out = append(out, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: ts, Reason: "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(errs), strings.Join(msgs, ", "))})
	}
	return out
}

// updateConditions sets every maintained condition to its failing variant
// from failing, or to its "ok" variant; it reports whether anything changed.
func updateConditions(status *corev1.NamespaceStatus, failing []corev1.NamespaceCondition, now time.Time) bool {
	changed := false
	for _, t := range conditionTypes {
		want := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now),
			Reason: okReasons[t], Message: okMessages[t]}
		for _, c := range failing {
			if c.Type == t {
				want = c
			}
		}
		var cur *corev1.NamespaceCondition
		for i := range status.Conditions {
			if status.Conditions[i].Type == t {
				cur = &status.Conditions[i]
			}
		}
		switch {
		case cur == nil:
			status.Conditions = append(status.Conditions, want)
			changed = true
		case cur.Status != want.Status || cur.Reason != want.Reason || cur.Message != want.Message:
			if cur.Status != want.Status {
				cur.LastTransitionTime = metav1.NewTime(now)
			}
			cur.Status, cur.Reason, cur.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	return changed
}
