// Package disruption is the disruption controller: it keeps the status of
// every PodDisruptionBudget current, which is what the eviction API reads
// when `kubectl drain` asks to evict a pod.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/disruption
// (disruption.go), with k8s.io/component-helpers/apps/poddisruptionbudget
// for the DisruptionAllowed condition.
//
// For each budget it counts:
//
//	expectedPods    how many pods there should be: the pods the selector
//	                picks (minAvailable as a number), or the sum of the scale of
//	                their controllers (a percentage, or any maxUnavailable)
//	desiredHealthy  minAvailable, or expectedPods - maxUnavailable; a
//	                percentage is rounded up: 50% of 3 is 2
//	currentHealthy  the selected pods that are Ready, not being deleted, and
//	                not just evicted (status.disruptedPods)
//	disruptionsAllowed = currentHealthy - desiredHealthy (0 if negative, and 0
//	                while expectedPods is 0)
//
// and writes them with the DisruptionAllowed condition (True SufficientPods,
// or False InsufficientPods). With a Deployment of 3 and minAvailable 2:
//
//	3 Ready                     ─▶ allowed 1
//	evict web-a (API server:    ─▶ allowed 0, disruptedPods {web-a}
//	  allowed-1, disruptedPods)
//	web-a terminating, its      ─▶ currentHealthy 2, allowed 0: the next
//	  replacement not yet Ready     eviction gets 429 and drain retries
//	replacement Ready           ─▶ currentHealthy 3, allowed 1
//
// An entry in disruptedPods whose pod was not deleted within DeletionTimeout
// is dropped again (the pod counts as healthy), and the budget is looked at
// again when the first entry would expire. If the status cannot be computed
// (a percentage over pods whose controller has no scale), the controller
// still writes disruptionsAllowed 0 with the condition False SyncFailed, so
// no eviction slips through: it fails closed.
//
// The controller also clears a pod's DisruptionTarget condition that nobody
// acted on: a pod marked for eviction that is still not terminating after
// two minutes gets the condition set to False.
package disruption

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/internal/podutil"
)

const (
	// Component is the controller's user agent.
	Component = "disruption-controller"
	// eventSource is the source.component of its events, upstream's.
	eventSource = "controllermanager"
	// DefaultWorkers: upstream runs one worker.
	DefaultWorkers = 1

	// DeletionTimeout is how long an evicted pod may stay in a budget's
	// status.disruptedPods (not counted as healthy) before the controller
	// decides it will not be deleted after all.
	DeletionTimeout = 2 * time.Minute
	// StalePodDisruptionTimeout is how long a pod may carry a True
	// DisruptionTarget condition without being deleted before the
	// controller sets it to False.
	StalePodDisruptionTimeout = 2 * time.Minute
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times disruptedPods entries, stale conditions and retries; nil
	// is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of keys synced at once (default 1).
	Workers int
}

// item is a key of the controller's queue: a budget to sync, or a pod
// whose DisruptionTarget condition may be stale (upstream keeps these in a
// second queue, stalePodDisruptionQueue).
type item struct {
	stalePod bool
	key      string // namespace/name
}

// Controller is the disruption controller.
type Controller struct {
	client   *client.Client
	pdbs     client.Resource[*policyv1.PodDisruptionBudget]
	clock    clock.WithDelayedExecution
	workers  int
	queue    *client.Queue[item]
	recorder *client.Recorder

	podInformer *client.Informer[*corev1.Pod]
	pdbInformer *client.Informer[*policyv1.PodDisruptionBudget]
	rsInformer  *client.Informer[*appsv1.ReplicaSet]
	dInformer   *client.Informer[*appsv1.Deployment]
	ssInformer  *client.Informer[*appsv1.StatefulSet]
}

// New returns a controller; call Run to start it. The API server must serve
// policy/v1 PodDisruptionBudgets.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("disruption", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	c := cfg.Client
	pdbs := client.For[*policyv1.PodDisruptionBudget](c, policyv1.GroupName, "poddisruptionbudgets")
	dc := &Controller{
		client:      c,
		pdbs:        pdbs,
		clock:       cfg.Clock,
		workers:     cfg.Workers,
		queue:       client.NewQueue[item](cfg.Clock),
		recorder:    client.NewRecorder(c, eventSource, "", cfg.Clock),
		podInformer: client.NewInformer(c.Pods(), "", client.ListOptions{}),
		pdbInformer: client.NewInformer(pdbs, "", client.ListOptions{}),
		rsInformer:  client.NewInformer(c.ReplicaSets(), "", client.ListOptions{}),
		dInformer:   client.NewInformer(c.Deployments(), "", client.ListOptions{}),
		ssInformer:  client.NewInformer(client.For[*appsv1.StatefulSet](c, "apps", "statefulsets"), "", client.ListOptions{}),
	}
	dc.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	dc.pdbInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*policyv1.PodDisruptionBudget])
	dc.pdbInformer.AddHandler(client.Handler[*policyv1.PodDisruptionBudget]{
		OnAdd:    dc.enqueuePdb,
		OnUpdate: func(_, pdb *policyv1.PodDisruptionBudget) { dc.enqueuePdb(pdb) },
		OnDelete: dc.enqueuePdb,
	})
	dc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    dc.addPod,
		OnUpdate: func(_, pod *corev1.Pod) { dc.addPod(pod) },
		OnDelete: dc.deletePod,
	})
	return dc, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (dc *Controller) HasSynced() bool { return controller.Synced(dc.informers()...) }

func (dc *Controller) informers() []controller.Informer {
	return []controller.Informer{dc.podInformer, dc.pdbInformer, dc.rsInformer, dc.dInformer, dc.ssInformer}
}

// Run watches budgets, pods and the workload controllers and keeps the
// budgets' status until ctx is done.
func (dc *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, dc.informers(),
		controller.Worker[item]{Queue: dc.queue, Workers: dc.workers, Reconcile: dc.Reconcile})
}

func (dc *Controller) enqueuePdb(pdb *policyv1.PodDisruptionBudget) {
	dc.queue.Add(item{key: client.Key(pdb)})
}

// addPod (also for updates): the pod's budget may have changed, and the
// pod may carry a DisruptionTarget condition to clean up later.
func (dc *Controller) addPod(pod *corev1.Pod) {
	if pdb := dc.getPdbForPod(pod); pdb != nil {
		dc.enqueuePdb(pdb)
	}
	if has, cleanAfter := dc.nonTerminatingPodHasStaleDisruptionCondition(pod); has {
		dc.queue.AddAfter(item{stalePod: true, key: client.Key(pod)}, cleanAfter)
	}
}

func (dc *Controller) deletePod(pod *corev1.Pod) {
	if pdb := dc.getPdbForPod(pod); pdb != nil {
		dc.enqueuePdb(pdb)
	}
}

// getPdbForPod returns the budget that selects pod, or nil. A pod selected
// by several gets a warning event and the first of them by name (upstream
// picks arbitrarily).
func (dc *Controller) getPdbForPod(pod *corev1.Pod) *policyv1.PodDisruptionBudget {
	var pdbs []*policyv1.PodDisruptionBudget
	for _, pdb := range dc.pdbInformer.ByIndex(controller.NamespaceIndex, pod.Namespace) {
		if registry.PodDisruptionBudgetSelects(pdb, pod) {
			pdbs = append(pdbs, pdb)
		}
	}
	if len(pdbs) == 0 {
		return nil
	}
	sort.Slice(pdbs, func(i, j int) bool { return pdbs[i].Name < pdbs[j].Name })
	if len(pdbs) > 1 {
		dc.recorder.Event(pod, corev1.EventTypeWarning, "MultiplePodDisruptionBudgets",
			fmt.Sprintf("Pod %q/%q matches multiple PodDisruptionBudgets.  Chose %q arbitrarily.", pod.Namespace, pod.Name, pdbs[0].Name))
	}
	return pdbs[0]
}

// getPodsForPdb returns the pods a budget selects (cache objects: read only).
func (dc *Controller) getPodsForPdb(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, pod := range dc.podInformer.ByIndex(controller.NamespaceIndex, pdb.Namespace) {
		if sel.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// Reconcile syncs one queue item: a budget's status, or a pod's stale
// DisruptionTarget condition.
func (dc *Controller) Reconcile(ctx context.Context, it item) error {
	if it.stalePod {
		return dc.syncStalePodDisruption(ctx, it.key)
	}
	return dc.sync(ctx, it.key)
}

// sync is upstream's sync: a failure other than a conflict still writes the
// fail-safe status (no disruptions allowed).
func (dc *Controller) sync(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	pdb, ok := dc.pdbInformer.Get(namespace, name)
	if !ok {
		return nil // deleted
	}
	err := dc.trySync(ctx, pdb)
	if apierrors.IsConflict(err) {
		return err // requeued; the cache will hold the newer budget
	}
	if err != nil {
		return dc.failSafe(ctx, pdb, err)
	}
	return nil
}

func (dc *Controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	pods, err := dc.getPodsForPdb(pdb)
	if err != nil {
		dc.recorder.Eventf(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		dc.recorder.Eventf(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expectedCount, desiredHealthy, unmanagedPods, err := dc.getExpectedPodCount(ctx, pdb, pods)
	if err != nil {
		dc.recorder.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanagedPods) > 0 {
		dc.recorder.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := dc.clock.Now()
	disruptedPods, recheckTime := dc.buildDisruptedPodMap(pods, pdb, now)
	currentHealthy := countHealthyPods(pods, disruptedPods, now)
	err = dc.updatePdbStatus(ctx, pdb, currentHealthy, desiredHealthy, expectedCount, disruptedPods)
	if err == nil && recheckTime != nil {
		// Look again when the first disruptedPods entry expires.
		dc.queue.AddAfter(item{key: client.Key(pdb)}, recheckTime.Sub(now))
	}
	return err
}

// countHealthyPods counts the Ready pods that are neither being deleted nor
// recently evicted.
func countHealthyPods(pods []*corev1.Pod, disruptedPods map[string]metav1.Time, now time.Time) int32 {
	var healthy int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if t, ok := disruptedPods[pod.Name]; ok && t.Add(DeletionTimeout).After(now) {
			continue // evicted: expected to be deleted soon
		}
		if controller.IsPodReady(pod) {
			healthy++
		}
	}
	return healthy
}

// buildDisruptedPodMap keeps the disruptedPods entries still waiting for
// their pod's deletion: entries of pods already being deleted or gone are
// dropped, and so are entries older than DeletionTimeout (with a NotDeleted
// warning on the pod). It also returns when the oldest kept entry expires.
func (dc *Controller) buildDisruptedPodMap(pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time) (map[string]metav1.Time, *time.Time) {
	result := map[string]metav1.Time{}
	var recheck *time.Time
	if pdb.Status.DisruptedPods == nil {
		return result, nil
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		t, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		expected := t.Add(DeletionTimeout)
		if expected.Before(now) {
			// Upstream prints the budget's namespace twice; so does this.
			dc.recorder.Eventf(pod, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't",
				pdb.Namespace, pdb.Namespace)
			continue
		}
		if recheck == nil || expected.Before(*recheck) {
			recheck = &expected
		}
		result[pod.Name] = t
	}
	return result, recheck
}

// disruptionsAllowed is currentHealthy - desiredHealthy, never negative, and
// 0 while no pods are expected: a budget over pods not yet seen starts safe.
func disruptionsAllowed(currentHealthy, desiredHealthy, expectedCount int32) int32 {
	if expectedCount <= 0 || currentHealthy <= desiredHealthy {
		return 0
	}
	return currentHealthy - desiredHealthy
}

// updatePdbStatus writes the computed status unless it is already there.
func (dc *Controller) updatePdbStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, currentHealthy, desiredHealthy, expectedCount int32, disruptedPods map[string]metav1.Time) error {
	allowed := disruptionsAllowed(currentHealthy, desiredHealthy, expectedCount)
	s := &pdb.Status
	if s.CurrentHealthy == currentHealthy && s.DesiredHealthy == desiredHealthy && s.ExpectedPods == expectedCount &&
		s.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(s.DisruptedPods, disruptedPods) &&
		s.ObservedGeneration == pdb.Generation && registry.DisruptionAllowedConditionUpToDate(pdb) {
		return nil
	}
	newPdb := pdb.DeepCopy()
	newPdb.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy:     currentHealthy,
		DesiredHealthy:     desiredHealthy,
		ExpectedPods:       expectedCount,
		DisruptionsAllowed: allowed,
		DisruptedPods:      disruptedPods,
		ObservedGeneration: pdb.Generation,
		Conditions:         newPdb.Status.Conditions,
	}
	registry.UpdateDisruptionAllowedCondition(newPdb, dc.clock.Now())
	_, err := dc.pdbs.UpdateStatus(ctx, newPdb)
	return err
}

// failSafe sets disruptionsAllowed to 0 when the status could not be
// computed, so the eviction API refuses rather than guesses.
func (dc *Controller) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, syncErr error) error {
	newPdb := pdb.DeepCopy()
	newPdb.Status.DisruptionsAllowed = 0
	if newPdb.Status.Conditions == nil {
		newPdb.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&newPdb.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.SyncFailedReason,
		Message:            syncErr.Error(),
		ObservedGeneration: newPdb.Status.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(dc.clock.Now().Truncate(time.Second)),
	})
	_, err := dc.pdbs.UpdateStatus(ctx, newPdb)
	return err
}

// nonTerminatingPodHasStaleDisruptionCondition reports whether pod carries
// a True DisruptionTarget condition without being deleted, and how long
// until that condition counts as stale. Conditions the kubelet set, and
// those of finished pods, are never stale.
func (dc *Controller) nonTerminatingPodHasStaleDisruptionCondition(pod *corev1.Pod) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil {
		return false, 0
	}
	c := podutil.GetPodCondition(&pod.Status, corev1.DisruptionTarget)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason == corev1.PodReasonTerminationByKubelet || controller.IsPodTerminal(pod) {
		return false, 0
	}
	return true, max(StalePodDisruptionTimeout-dc.clock.Since(c.LastTransitionTime.Time), 0)
}

// syncStalePodDisruption sets a stale DisruptionTarget condition to False.
func (dc *Controller) syncStalePodDisruption(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	pod, ok := dc.podInformer.Get(namespace, name)
	if !ok {
		return nil
	}
	has, cleanAfter := dc.nonTerminatingPodHasStaleDisruptionCondition(pod)
	if !has {
		return nil
	}
	if cleanAfter > 0 {
		dc.queue.AddAfter(item{stalePod: true, key: key}, cleanAfter)
		return nil
	}
	newPod := pod.DeepCopy()
	if !podutil.UpdatePodCondition(&newPod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse}, dc.clock.Now()) {
		return nil
	}
	_, err := dc.client.Pods().UpdateStatus(ctx, newPod)
	return err
}
