// Package deployment is the Deployment controller: it turns a Deployment
// into ReplicaSets, one per version of the pod template, and moves pods
// from the old version to the new one without dropping below the
// availability the user asked for.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/deployment
// (deployment_controller.go, sync.go, rolling.go, recreate.go, progress.go
// and util/deployment_util.go).
//
// The Deployment never touches pods itself; it only sets the size of its
// ReplicaSets, and the ReplicaSet controller creates and deletes pods:
//
//	Deployment web (replicas 3, template v2)
//	 ├─ ReplicaSet web-5d9c7b8f6  template v1, pod-template-hash=5d9c7b8f6  3 → 2 → 1 → 0
//	 └─ ReplicaSet web-7f6c9d4b8  template v2, pod-template-hash=7f6c9d4b8  1 → 2 → 3
//
// The ReplicaSet of a template is named <deployment>-<hash of the
// template>; the hash is also a label on the ReplicaSet, in its selector
// and on its pods, so the two generations never claim each other's pods.
//
// One sync of a Deployment, from the caches:
//
//  1. claim ReplicaSets (adopt matching orphans, release strays);
//  2. being deleted? only update status;
//  3. paused, or spec.replicas changed? scale the ReplicaSets (proportionally
//     when mid-rollout) and stop: no rollout while paused;
//  4. RollingUpdate: create the new ReplicaSet if needed, then scale it up
//     as far as maxSurge allows, and old ones down as far as maxUnavailable
//     allows; Recreate: scale old ones to 0, wait for their pods to go,
//     then scale the new one up;
//  5. status: replicas, updated/ready/available/unavailable counts and the
//     Available and Progressing conditions.
package deployment

import (
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-deployment-syncs.
	DefaultWorkers = 5
	// maxRetries is how many times a failing Deployment is retried before
	// it waits for the next event about it.
	maxRetries = 15
	// Component is the event source and user agent.
	Component = "deployment-controller"
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times conditions, progress deadlines and retries; nil is the
	// real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of Deployments synced at once (default 5).
	Workers int
}

// Controller is the Deployment controller.
type Controller struct {
	client      *client.Client
	clock       clock.WithDelayedExecution
	workers     int
	queue       *client.Queue[string]
	recorder    *client.Recorder
	dInformer   *client.Informer[*appsv1.Deployment]
	rsInformer  *client.Informer[*appsv1.ReplicaSet]
	podInformer *client.Informer[*corev1.Pod]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("deployment", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	dc := &Controller{
		client:      cfg.Client,
		clock:       cfg.Clock,
		workers:     cfg.Workers,
		queue:       client.NewQueue[string](cfg.Clock),
		recorder:    client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		dInformer:   client.NewInformer(cfg.Client.Deployments(), "", client.ListOptions{}),
		rsInformer:  client.NewInformer(cfg.Client.ReplicaSets(), "", client.ListOptions{}),
		podInformer: client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
	}
	dc.dInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.Deployment])
	dc.rsInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.ReplicaSet])
	dc.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	dc.dInformer.AddHandler(client.Handler[*appsv1.Deployment]{
		OnAdd:    dc.enqueue,
		OnUpdate: func(_, cur *appsv1.Deployment) { dc.enqueue(cur) },
		OnDelete: dc.enqueue,
	})
	dc.rsInformer.AddHandler(client.Handler[*appsv1.ReplicaSet]{
		OnAdd:    dc.addReplicaSet,
		OnUpdate: dc.updateReplicaSet,
		OnDelete: dc.deleteReplicaSet,
	})
	dc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnUpdate: dc.updatePod,
		OnDelete: dc.deletePod,
	})
	return dc, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (dc *Controller) HasSynced() bool { return controller.Synced(dc.informers()...) }

func (dc *Controller) informers() []controller.Informer {
	return []controller.Informer{dc.dInformer, dc.rsInformer, dc.podInformer}
}

// Run watches Deployments, ReplicaSets and pods and syncs Deployments until
// ctx is done.
func (dc *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, dc.informers(),
		controller.Worker[string]{Queue: dc.queue, Workers: dc.workers, Reconcile: dc.Reconcile, MaxRetries: maxRetries})
}

// --- event handlers: they only enqueue keys ---

func (dc *Controller) enqueue(d *appsv1.Deployment) { dc.queue.Add(client.Key(d)) }

// resolveControllerRef returns the Deployment a controller reference
// names, if the cache has it with the same UID.
func (dc *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	d, _ := controller.ResolveControllerRef(dc.dInformer, controllerKind.Kind, namespace, ref)
	return d
}

// deploymentsForReplicaSet returns the Deployments whose selector matches
// an orphan ReplicaSet.
func (dc *Controller) deploymentsForReplicaSet(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	return controller.Selecting(dc.dInformer, rs.Namespace, rs.Labels, func(d *appsv1.Deployment) *metav1.LabelSelector { return d.Spec.Selector })
}

func (dc *Controller) addReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.DeletionTimestamp != nil {
		dc.deleteReplicaSet(rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := dc.resolveControllerRef(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
		return
	}
	for _, d := range dc.deploymentsForReplicaSet(rs) {
		dc.enqueue(d)
	}
}

func (dc *Controller) updateReplicaSet(old, cur *appsv1.ReplicaSet) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := dc.resolveControllerRef(old.Namespace, oldRef); d != nil {
			dc.enqueue(d)
		}
	}
	if curRef != nil {
		if d := dc.resolveControllerRef(cur.Namespace, curRef); d != nil {
			dc.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(old.Labels, cur.Labels) {
		for _, d := range dc.deploymentsForReplicaSet(cur) {
			dc.enqueue(d)
		}
	}
}

func (dc *Controller) deleteReplicaSet(rs *appsv1.ReplicaSet) {
	if d := dc.resolveControllerRef(rs.Namespace, metav1.GetControllerOfNoCopy(rs)); d != nil {
		dc.enqueue(d)
	}
}

// deploymentForPod follows pod → ReplicaSet → Deployment controller refs.
func (dc *Controller) deploymentForPod(pod *corev1.Pod) *appsv1.Deployment {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return nil
	}
	rs, ok := dc.rsInformer.Get(pod.Namespace, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil
	}
	return dc.resolveControllerRef(rs.Namespace, metav1.GetControllerOfNoCopy(rs))
}

// A Recreate rollout waits until the old pods are gone (or finished), and
// no ReplicaSet event says when; these pod events do.
func (dc *Controller) deletePod(pod *corev1.Pod) {
	if d := dc.deploymentForPod(pod); d != nil && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		dc.enqueue(d)
	}
}

func (dc *Controller) updatePod(old, cur *corev1.Pod) {
	if old.Status.Phase != cur.Status.Phase {
		dc.deletePod(cur)
	}
}

// --- sync ---

// Reconcile syncs the Deployment with cache key "namespace/name". A
// returned error (a 409 Conflict from a stale cache, for one) requeues the
// key with back-off.
func (dc *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	cached, ok := dc.dInformer.Get(namespace, name)
	if !ok {
		return nil // deleted: the garbage collector removes its ReplicaSets
	}
	d := cached.DeepCopy()
	rsList, err := dc.getReplicaSetsForDeployment(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return dc.syncStatusOnly(ctx, d, rsList)
	}
	// Record pausing and resuming in the Progressing condition, so the time
	// spent paused never counts against progressDeadlineSeconds.
	if err := dc.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return dc.sync(ctx, d, rsList)
	}
	scaling, err := dc.isScalingEvent(ctx, d, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return dc.sync(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return dc.rolloutRecreate(ctx, d, rsList, dc.getPodMapForDeployment(d, rsList))
	case appsv1.RollingUpdateDeploymentStrategyType:
		return dc.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// getReplicaSetsForDeployment claims the ReplicaSets of d's namespace.
func (dc *Controller) getReplicaSetsForDeployment(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %w", d.Namespace, d.Name, err)
	}
	m := &controller.RefManager{
		Controller:     d,
		ControllerKind: controllerKind,
		Selector:       sel,
		CanAdopt: controller.RecheckDeletionTimestamp(d.UID, func(ctx context.Context) (metav1.Object, error) {
			return dc.client.Deployments().Get(ctx, d.Namespace, d.Name)
		}),
	}
	return controller.Claim(ctx, m, dc.client.ReplicaSets(), dc.rsInformer.ByIndex(controller.NamespaceIndex, d.Namespace))
}

// getPodMapForDeployment groups the pods matching d's selector by the UID
// of their ReplicaSet, inactive ones included: Recreate must see every old
// pod that may still be running.
func (dc *Controller) getPodMapForDeployment(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) map[types.UID][]*corev1.Pod {
	podMap := make(map[types.UID][]*corev1.Pod, len(rsList))
	for _, rs := range rsList {
		podMap[rs.UID] = nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return podMap
	}
	for _, pod := range dc.podInformer.ByIndex(controller.NamespaceIndex, d.Namespace) {
		if !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref == nil {
			continue
		}
		if pods, ok := podMap[ref.UID]; ok {
			podMap[ref.UID] = append(pods, pod)
		}
	}
	return podMap
}
