// Package replication is the ReplicationController controller: the
// ReplicaSet controller's logic for core/v1 ReplicationControllers, whose
// selector is a plain map (every label must be equal) rather than a label
// selector with expressions.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/replication
// (replication_controller.go), which runs the ReplicaSet controller through
// conversion adapters. Here the shared parts live in
// core/controller/internal/controller (expectations, PodControl, pod
// ranking, claiming) and this package holds the sync of one
// ReplicationController:
//
//	claim pods (selector map) ─▶ expectations satisfied?
//	   ─▶ diff = active − spec.replicas: create (batches 1, 2, 4 …) or delete the most expendable
//	   ─▶ status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration
package replication

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// Component is the event source and user agent.
	Component = "replication-controller"
	// DefaultWorkers is --concurrent-rc-syncs.
	DefaultWorkers = 5
	// BurstReplicas caps the pods created or deleted in one sync.
	BurstReplicas = 500
)

var controllerKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// ReplicationControllers is the typed client of v1 replicationcontrollers.
func ReplicationControllers(c *client.Client) client.Resource[*corev1.ReplicationController] {
	return client.For[*corev1.ReplicationController](c, "", "replicationcontrollers")
}

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times expectations and availability; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of ReplicationControllers synced at once.
	Workers int
}

// Controller is the ReplicationController controller.
type Controller struct {
	client       *client.Client
	clock        clock.WithDelayedExecution
	workers      int
	queue        *client.Queue[string]
	rcInformer   *client.Informer[*corev1.ReplicationController]
	podInformer  *client.Informer[*corev1.Pod]
	expectations *controller.Expectations
	podControl   controller.PodControl
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("replication", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	rm := &Controller{
		client:       cfg.Client,
		clock:        cfg.Clock,
		workers:      cfg.Workers,
		queue:        client.NewQueue[string](cfg.Clock),
		rcInformer:   client.NewInformer(ReplicationControllers(cfg.Client), "", client.ListOptions{}),
		podInformer:  client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		expectations: controller.NewExpectations(cfg.Clock),
		podControl:   controller.PodControl{Client: cfg.Client, Recorder: client.NewRecorder(cfg.Client, Component, "", cfg.Clock)},
	}
	rm.rcInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.ReplicationController])
	rm.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	rm.rcInformer.AddHandler(client.Handler[*corev1.ReplicationController]{
		OnAdd:    rm.enqueue,
		OnUpdate: func(_, cur *corev1.ReplicationController) { rm.enqueue(cur) },
		OnDelete: func(rc *corev1.ReplicationController) { rm.expectations.Delete(client.Key(rc)); rm.enqueue(rc) },
	})
	rm.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod) {
			if rc := rm.owner(p); rc != nil {
				if p.DeletionTimestamp != nil {
					rm.expectations.DeletionObserved(client.Key(rc), controller.PodKey(p))
				} else {
					rm.expectations.CreationObserved(client.Key(rc))
				}
				rm.enqueue(rc)
				return
			}
			rm.enqueueSelecting(p)
		},
		OnUpdate: func(old, cur *corev1.Pod) {
			if old.ResourceVersion == cur.ResourceVersion {
				return
			}
			if rc := rm.owner(old); rc != nil && !reflect.DeepEqual(metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)) {
				rm.enqueue(rc)
			}
			rc := rm.owner(cur)
			if rc == nil {
				rm.enqueueSelecting(cur)
				return
			}
			if cur.DeletionTimestamp != nil {
				rm.expectations.DeletionObserved(client.Key(rc), controller.PodKey(cur))
			}
			rm.enqueue(rc)
			if !controller.IsPodReady(old) && controller.IsPodReady(cur) && rc.Spec.MinReadySeconds > 0 {
				rm.queue.AddAfter(client.Key(rc), time.Duration(rc.Spec.MinReadySeconds)*time.Second+time.Second)
			}
		},
		OnDelete: func(p *corev1.Pod) {
			if rc := rm.owner(p); rc != nil {
				rm.expectations.DeletionObserved(client.Key(rc), controller.PodKey(p))
				rm.enqueue(rc)
			}
		},
	})
	return rm, nil
}

func (rm *Controller) informers() []controller.Informer {
	return []controller.Informer{rm.rcInformer, rm.podInformer}
}

// HasSynced reports whether the controller's caches hold their first lists.
func (rm *Controller) HasSynced() bool { return controller.Synced(rm.informers()...) }

// Run watches ReplicationControllers and pods until ctx is done.
func (rm *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, rm.informers(),
		controller.Worker[string]{Queue: rm.queue, Workers: rm.workers, Reconcile: rm.Reconcile})
}

func (rm *Controller) enqueue(rc *corev1.ReplicationController) { rm.queue.Add(client.Key(rc)) }

func (rm *Controller) owner(p *corev1.Pod) *corev1.ReplicationController {
	rc, _ := controller.ResolveControllerRef(rm.rcInformer, controllerKind.Kind, p.Namespace, metav1.GetControllerOfNoCopy(p))
	return rc
}

func (rm *Controller) enqueueSelecting(p *corev1.Pod) {
	if metav1.GetControllerOfNoCopy(p) != nil {
		return
	}
	for _, rc := range controller.Selecting(rm.rcInformer, p.Namespace, p.Labels, func(rc *corev1.ReplicationController) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}
	}) {
		rm.enqueue(rc)
	}
}

// Reconcile syncs the ReplicationController with key "namespace/name".
func (rm *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	rc, ok := rm.rcInformer.Get(namespace, name)
	if !ok {
		rm.expectations.Delete(key)
		return nil
	}
	if len(rc.Spec.Selector) == 0 || rc.Spec.Template == nil {
		return nil // validation prevents this
	}
	needsSync := rm.expectations.Satisfied(key)
	selector := labels.SelectorFromSet(rc.Spec.Selector)
	all := rm.podInformer.ByIndex(controller.NamespaceIndex, namespace)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	m := &controller.RefManager{
		Controller: rc, ControllerKind: controllerKind, Selector: selector,
		CanAdopt: controller.RecheckDeletionTimestamp(rc.UID, func(ctx context.Context) (metav1.Object, error) {
			return ReplicationControllers(rm.client).Get(ctx, rc.Namespace, rc.Name)
		}),
	}
	active, err := controller.Claim(ctx, m, rm.client.Pods(), controller.FilterActivePods(all))
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rc.DeletionTimestamp == nil {
		manageErr = rm.manageReplicas(ctx, active, rc)
	}
	if err := rm.updateStatus(ctx, rc, active); err != nil {
		return err
	}
	return manageErr
}

// manageReplicas creates or deletes pods toward spec.replicas.
func (rm *Controller) manageReplicas(ctx context.Context, active []*corev1.Pod, rc *corev1.ReplicationController) error {
	key := client.Key(rc)
	diff := len(active) - int(controller.Replicas(rc.Spec.Replicas))
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		rm.expectations.ExpectCreations(key, n)
		ref := metav1.NewControllerRef(rc, controllerKind)
		done := 0
		for batch := 1; done < n; batch = min(2*batch, n-done) {
			batch = min(batch, n-done)
			errs := make(chan error, batch)
			var wg sync.WaitGroup
			for range batch {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := rm.podControl.CreatePod(ctx, rc.Namespace, rc.Spec.Template, rc, ref); err != nil {
						rm.expectations.CreationObserved(key)
						if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
							errs <- err
						}
					}
				}()
			}
			wg.Wait()
			done += batch
			if len(errs) > 0 {
				for range n - done { // never attempted
					rm.expectations.CreationObserved(key)
				}
				return <-errs
			}
		}
	case diff > 0:
		n := min(diff, BurstReplicas)
		ranked := controller.ActivePodsWithRanks{Pods: active, Rank: make([]int, len(active)), Now: metav1.NewTime(rm.clock.Now())}
		onNode := map[string]int{}
		for _, p := range active {
			onNode[p.Spec.NodeName]++
		}
		for i, p := range active {
			ranked.Rank[i] = onNode[p.Spec.NodeName]
		}
		sort.Sort(ranked)
		toDelete := active[:n]
		keys := make([]string, n)
		for i, p := range toDelete {
			keys[i] = controller.PodKey(p)
		}
		rm.expectations.ExpectDeletions(key, keys)
		var mu sync.Mutex
		var errs []error
		var wg sync.WaitGroup
		for _, p := range toDelete {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := rm.podControl.DeletePod(ctx, rc.Namespace, p.Name, rc); err != nil {
					rm.expectations.DeletionObserved(key, controller.PodKey(p))
					if !apierrors.IsNotFound(err) {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return nil
}

// updateStatus writes the counts and observedGeneration when they changed.
func (rm *Controller) updateStatus(ctx context.Context, rc *corev1.ReplicationController, active []*corev1.Pod) error {
	now := rm.clock.Now()
	templateLabels := labels.SelectorFromSet(rc.Spec.Template.Labels)
	st := *rc.Status.DeepCopy()
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = int32(len(active)), 0, 0, 0
	for _, p := range active {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if controller.IsPodReady(p) {
			st.ReadyReplicas++
			if controller.IsPodAvailable(p, rc.Spec.MinReadySeconds, now) {
				st.AvailableReplicas++
			}
		}
	}
	st.ObservedGeneration = rc.Generation
	if reflect.DeepEqual(st, rc.Status) {
		return nil
	}
	cp := rc.DeepCopy()
	cp.Status = st
	_, err := ReplicationControllers(rm.client).UpdateStatus(ctx, cp)
	if err == nil && rc.Spec.MinReadySeconds > 0 && st.ReadyReplicas != st.AvailableReplicas {
		rm.queue.AddAfter(client.Key(rc), time.Duration(rc.Spec.MinReadySeconds)*time.Second)
	}
	return err
}
