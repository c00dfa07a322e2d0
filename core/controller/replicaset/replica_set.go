// Package replicaset is the ReplicaSet controller: it keeps the number of
// running pods that match a ReplicaSet's selector equal to spec.replicas,
// creating pods from spec.template when there are too few and deleting the
// most expendable ones when there are too many.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/replicaset
// (replica_set.go and replica_set_utils.go).
//
// One sync of a ReplicaSet ("default/web-5d9c7b8f6"), all from the caches:
//
//	pods in the namespace ──▶ active ones (not finished, not being deleted)
//	   ──▶ claim: keep ours, adopt matching orphans, release ours that stopped matching
//	   ──▶ expectations satisfied? (every create/delete of the last sync seen)
//	        yes: diff = len(claimed) − spec.replicas
//	             diff < 0: create −diff pods in slow-start batches 1, 2, 4, 8 ...
//	             diff > 0: delete the diff most expendable pods (controller.ActivePodsWithRanks)
//	        no:  do nothing; the informer events will bring the key back
//	   ──▶ status: replicas, fullyLabeledReplicas, readyReplicas,
//	               availableReplicas (Ready for minReadySeconds), observedGeneration
//
// Pods are created without spec.nodeName: placing them is the scheduler's
// job, running them the kubelet's.
package replicaset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Defaults, as kube-controller-manager's.
const (
	// DefaultBurstReplicas caps the pods created or deleted in one sync.
	DefaultBurstReplicas = 500
	// DefaultWorkers is --concurrent-replicaset-syncs.
	DefaultWorkers = 5
	// SlowStartInitialBatchSize is the first batch of pod creations; each
	// successful batch doubles the next. A ReplicaSet whose pods all fail
	// (quota, a bad template) fails once, not 500 times.
	SlowStartInitialBatchSize = 1
	// statusUpdateRetries is how often a status write is retried with a
	// fresh read after a conflict before the key is requeued.
	statusUpdateRetries = 1
	// Component is the event source and user agent.
	Component = "replicaset-controller"
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times expectations, minReadySeconds and retries; nil is the
	// real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of ReplicaSets synced at once (default 5).
	Workers int
	// BurstReplicas caps creations or deletions per sync (default 500).
	BurstReplicas int
}

// Controller is the ReplicaSet controller.
type Controller struct {
	client       *client.Client
	clock        clock.WithDelayedExecution
	workers      int
	burst        int
	queue        *client.Queue[string]
	rsInformer   *client.Informer[*appsv1.ReplicaSet]
	podInformer  *client.Informer[*corev1.Pod]
	expectations *controller.Expectations
	podControl   controller.PodControl
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("replicaset: Config.Client is required")
	}
	if cfg.Workers < 0 || cfg.BurstReplicas < 0 {
		return nil, fmt.Errorf("replicaset: Workers (%d) and BurstReplicas (%d) must not be negative", cfg.Workers, cfg.BurstReplicas)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.BurstReplicas == 0 {
		cfg.BurstReplicas = DefaultBurstReplicas
	}
	rsc := &Controller{
		client:       cfg.Client,
		clock:        cfg.Clock,
		workers:      cfg.Workers,
		burst:        cfg.BurstReplicas,
		queue:        client.NewQueue[string](cfg.Clock),
		rsInformer:   client.NewInformer(cfg.Client.ReplicaSets(), "", client.ListOptions{}),
		podInformer:  client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		expectations: controller.NewExpectations(cfg.Clock),
		podControl: controller.PodControl{
			Client:   cfg.Client,
			Recorder: client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		},
	}
	rsc.rsInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.ReplicaSet])
	rsc.rsInformer.AddIndex(controller.ControllerUIDIndex, controller.IndexByControllerUID[*appsv1.ReplicaSet])
	rsc.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	rsc.rsInformer.AddHandler(client.Handler[*appsv1.ReplicaSet]{
		OnAdd:    rsc.enqueue,
		OnUpdate: rsc.updateRS,
		OnDelete: rsc.deleteRS,
	})
	rsc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    rsc.addPod,
		OnUpdate: rsc.updatePod,
		OnDelete: rsc.deletePod,
	})
	return rsc, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (rsc *Controller) HasSynced() bool { return controller.Synced(rsc.informers()...) }

func (rsc *Controller) informers() []controller.Informer {
	return []controller.Informer{rsc.rsInformer, rsc.podInformer}
}

// Run watches ReplicaSets and pods and syncs ReplicaSets until ctx is done.
func (rsc *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, rsc.informers(),
		controller.Worker[string]{Queue: rsc.queue, Workers: rsc.workers, Reconcile: rsc.Reconcile})
}

// --- event handlers: they only enqueue keys ---

func (rsc *Controller) enqueue(rs *appsv1.ReplicaSet) { rsc.queue.Add(client.Key(rs)) }

func (rsc *Controller) updateRS(old, cur *appsv1.ReplicaSet) {
	if old.UID != cur.UID {
		rsc.deleteRS(old) // deleted and re-created under the same name
	}
	rsc.enqueue(cur)
}

func (rsc *Controller) deleteRS(rs *appsv1.ReplicaSet) {
	key := client.Key(rs)
	rsc.expectations.Delete(key)
	rsc.queue.Add(key)
}

// resolveControllerRef returns the ReplicaSet a controller reference names,
// if the cache has it with the same UID.
func (rsc *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	rs, _ := controller.ResolveControllerRef(rsc.rsInformer, controllerKind.Kind, namespace, ref)
	return rs
}

// podReplicaSets returns the ReplicaSets whose selector matches an orphan
// pod: they may want to adopt it.
func (rsc *Controller) podReplicaSets(pod *corev1.Pod) []*appsv1.ReplicaSet {
	return controller.Selecting(rsc.rsInformer, pod.Namespace, pod.Labels, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector })
}

func (rsc *Controller) addPod(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (after a relist).
		rsc.deletePod(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		rs := rsc.resolveControllerRef(pod.Namespace, ref)
		if rs == nil {
			return
		}
		rsc.expectations.CreationObserved(client.Key(rs))
		rsc.enqueue(rs)
		return
	}
	for _, rs := range rsc.podReplicaSets(pod) {
		rsc.enqueue(rs)
	}
}

func (rsc *Controller) updatePod(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	labelChanged := !reflect.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// Graceful deletion: a pod with a deletionTimestamp no longer counts,
		// so treat it as deleted now rather than when the kubelet finishes.
		rsc.deletePod(cur)
		if labelChanged {
			rsc.deletePod(old)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := rsc.resolveControllerRef(old.Namespace, oldRef); rs != nil {
			rsc.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := rsc.resolveControllerRef(cur.Namespace, curRef)
		if rs == nil {
			return
		}
		rsc.enqueue(rs)
		// A pod that just became Ready becomes available minReadySeconds
		// later; no event will say so, so look again then.
		if !controller.IsPodReady(old) && controller.IsPodReady(cur) && rs.Spec.MinReadySeconds > 0 {
			rsc.queue.AddAfter(client.Key(rs), time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, rs := range rsc.podReplicaSets(cur) {
			rsc.enqueue(rs)
		}
	}
}

func (rsc *Controller) deletePod(pod *corev1.Pod) {
	rs := rsc.resolveControllerRef(pod.Namespace, metav1.GetControllerOfNoCopy(pod))
	if rs == nil {
		return
	}
	key := client.Key(rs)
	rsc.expectations.DeletionObserved(key, controller.PodKey(pod))
	rsc.queue.Add(key)
}

// --- sync ---

// Reconcile syncs the ReplicaSet with cache key "namespace/name": it claims
// pods, creates or deletes pods when its expectations are satisfied, and
// writes the status. A returned error requeues the key with back-off.
func (rsc *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	rs, ok := rsc.rsInformer.Get(namespace, name)
	if !ok {
		rsc.expectations.Delete(key)
		return nil
	}
	needsSync := rsc.expectations.Satisfied(key)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil // validation prevents this; retrying would not help
	}
	// The namespace's pods as the cache lists them, unsorted, as
	// upstream's lister gives them: a sync of a ReplicaSet of 300 pods,
	// which every status change of one of them brings, would otherwise sort
	// 300 names. What depends on their order is ordered where it happens:
	// Claim adopts and releases by name, and a scale-down ranks the pods
	// from their order by name (getPodsToDelete).
	allPods := rsc.podInformer.ByIndex(controller.NamespaceIndex, namespace)
	active, err := rsc.claimPods(ctx, rs, selector, controller.FilterActivePods(allPods))
	if err != nil {
		return err
	}
	terminating := filterClaimedPods(rs, selector, filterTerminatingPods(allPods))

	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = rsc.manageReplicas(ctx, active, rs)
	}
	rs = rs.DeepCopy()
	newStatus := calculateStatus(rs, active, terminating, manageErr, rsc.clock.Now())
	updated, err := rsc.updateStatus(ctx, rs, newStatus)
	if err != nil {
		return err
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 &&
		updated.Status.ReadyReplicas == controller.Replicas(updated.Spec.Replicas) &&
		updated.Status.AvailableReplicas != controller.Replicas(updated.Spec.Replicas) {
		rsc.queue.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func sortPodsByName(pods []*corev1.Pod) {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
}

func (rsc *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	m := &controller.RefManager{
		Controller:     rs,
		ControllerKind: controllerKind,
		Selector:       selector,
		CanAdopt: controller.RecheckDeletionTimestamp(rs.UID, func(ctx context.Context) (metav1.Object, error) {
			return rsc.client.ReplicaSets().Get(ctx, rs.Namespace, rs.Name)
		}),
	}
	return controller.Claim(ctx, m, rsc.client.Pods(), pods)
}

// manageReplicas creates or deletes pods so that len(active) moves toward
// spec.replicas, at most burst at a time.
func (rsc *Controller) manageReplicas(ctx context.Context, active []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	diff := len(active) - int(controller.Replicas(rs.Spec.Replicas))
	key := client.Key(rs)
	switch {
	case diff < 0:
		diff = min(-diff, rsc.burst)
		// Expect the creations before making them: their add events may
		// arrive before the creates return.
		rsc.expectations.ExpectCreations(key, diff)
		ref := metav1.NewControllerRef(rs, controllerKind)
		created, err := slowStartBatch(diff, SlowStartInitialBatchSize, func() error {
			_, err := rsc.podControl.CreatePod(ctx, rs.Namespace, &rs.Spec.Template, rs, ref)
			if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // everything will fail: the namespace is going away
			}
			return err
		})
		// Pods never attempted will never be observed.
		for range diff - created {
			rsc.expectations.CreationObserved(key)
		}
		return err
	case diff > 0:
		diff = min(diff, rsc.burst)
		sortPodsByName(active) // pods that rank the same go in the same order whatever the cache's
		toDelete := getPodsToDelete(active, rsc.relatedPods(rs), diff, rsc.clock.Now())
		keys := make([]string, len(toDelete))
		for i, p := range toDelete {
			keys[i] = controller.PodKey(p)
		}
		rsc.expectations.ExpectDeletions(key, keys)
		errs := make(chan error, len(toDelete))
		var wg sync.WaitGroup
		for _, pod := range toDelete {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := rsc.podControl.DeletePod(ctx, rs.Namespace, pod.Name, rs); err != nil {
					// This deletion will never be observed.
					rsc.expectations.DeletionObserved(key, controller.PodKey(pod))
					if !apierrors.IsNotFound(err) {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			return err // the others are likely the same
		default:
		}
	}
	return nil
}

// slowStartBatch calls fn count times, in batches of 1, 2, 4 ... run in
// parallel, and stops after the first batch with an error. It returns how
// many calls succeeded.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}

// relatedPods returns the pods of every ReplicaSet with the same controller
// as rs (the other revisions of one Deployment), used to rank pods by how
// crowded their node is.
func (rsc *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return nil
	}
	var out []*corev1.Pod
	seen := map[types.UID]bool{}
	pods := rsc.podInformer.ByIndex(controller.NamespaceIndex, rs.Namespace)
	for _, related := range rsc.rsInformer.ByIndex(controller.ControllerUIDIndex, string(ref.UID)) {
		sel, err := metav1.LabelSelectorAsSelector(related.Spec.Selector)
		if err != nil {
			continue
		}
		for _, p := range pods {
			if !seen[p.UID] && sel.Matches(labels.Set(p.Labels)) {
				seen[p.UID] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// getPodsToDelete picks the diff most expendable pods of active.
func getPodsToDelete(active, related []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff < len(active) {
		onNode := map[string]int{}
		for _, p := range related {
			if controller.IsPodActive(p) {
				onNode[p.Spec.NodeName]++
			}
		}
		ranked := controller.ActivePodsWithRanks{Pods: active, Rank: make([]int, len(active)), Now: metav1.NewTime(now)}
		for i, p := range active {
			ranked.Rank[i] = onNode[p.Spec.NodeName]
		}
		sort.Sort(ranked)
	}
	return active[:diff]
}

// updateStatus writes newStatus unless nothing changed, retrying once with
// a fresh read after a conflict.
func (rsc *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	if rs.Status.Replicas == newStatus.Replicas &&
		rs.Status.FullyLabeledReplicas == newStatus.FullyLabeledReplicas &&
		rs.Status.ReadyReplicas == newStatus.ReadyReplicas &&
		rs.Status.AvailableReplicas == newStatus.AvailableReplicas &&
		equalPtr(rs.Status.TerminatingReplicas, newStatus.TerminatingReplicas) &&
		rs.Generation == rs.Status.ObservedGeneration &&
		reflect.DeepEqual(rs.Status.Conditions, newStatus.Conditions) {
		return rs, nil
	}
	// Record the generation this status describes.
	newStatus.ObservedGeneration = rs.Generation
	for i := 0; ; i++ {
		rs.Status = newStatus
		updated, err := rsc.client.ReplicaSets().UpdateStatus(ctx, rs)
		if err == nil {
			return updated, nil
		}
		if i >= statusUpdateRetries || !apierrors.IsConflict(err) {
			return nil, err
		}
		if rs, err = rsc.client.ReplicaSets().Get(ctx, rs.Namespace, rs.Name); err != nil {
			return nil, err
		}
	}
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
