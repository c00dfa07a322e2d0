// Package garbagecollector deletes objects whose owners are gone, and
// carries out the two deletion modes that wait for dependents:
// foreground (delete the dependents first) and orphan (cut them loose).
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/garbagecollector
// (garbagecollector.go, graph_builder.go, operations.go).
//
// Ownership is written on the dependent: a pod's metadata.ownerReferences
// names its ReplicaSet (kind, name, uid), the ReplicaSet's names its
// Deployment. Deleting a Deployment therefore deletes nothing by itself;
// the collector notices that the owner of the ReplicaSet is gone:
//
//	kubectl delete deployment web           (propagationPolicy Background)
//	  Deployment web         deleted at once
//	  ReplicaSet web-5d9c..  owner uid gone ─▶ deleted by the collector
//	  Pod web-5d9c..-x2x8q   owner uid gone ─▶ deleted by the collector
//
//	--cascade=foreground   the Deployment stays, with deletionTimestamp and the
//	                       finalizer foregroundDeletion, until every dependent
//	                       with blockOwnerDeletion=true is gone; then the
//	                       collector removes the finalizer and it goes.
//	--cascade=orphan       the finalizer orphan: the collector removes the
//	                       owner's entry from each dependent's ownerReferences,
//	                       then the finalizer; the dependents stay.
//
// Upstream keeps a graph of every object (uidToNode) fed by one informer
// per resource. kubetab keeps the same informers ("monitors") with two
// indexes, by UID and by owner UID, which answer the graph's questions
// ("who depends on X?", "does X exist?"). Every resource the registry
// serves is watched unless Config.Resources says otherwise, so a new
// resource needs no change here.
//
// A decision to delete is never taken from a cache alone: before acting,
// the collector reads the object and each owner from the API server
// (upstream's attemptToDeleteItem does the same), and deletes with a UID
// precondition, so an object re-created under the same name is safe.
package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-gc-syncs.
	DefaultWorkers = 20
	// Component is the user agent.
	Component = "generic-garbage-collector"

	uidIndex      = "uid"
	ownerUIDIndex = "owner-uid"
)

// Config configures the collector.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of objects processed at once (default 20).
	Workers int
	// Resources lists the resources to watch; nil watches every resource
	// the registry serves except events (which upstream ignores too).
	Resources []schema.GroupResource
}

// GarbageCollector is the garbage collector.
type GarbageCollector struct {
	client   *client.Client
	workers  int
	queue    *client.Queue[string]
	monitors map[schema.GroupResource]*monitor
}

// monitor watches one resource.
type monitor struct {
	gr       schema.GroupResource
	resource *registry.Resource
	api      client.Resource[runtime.Object]
	informer *client.Informer[runtime.Object]
}

// New returns a collector; call Run to start it.
func New(cfg Config) (*GarbageCollector, error) {
	if err := controller.CheckConfig("garbagecollector", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	gc := &GarbageCollector{
		client:   cfg.Client,
		workers:  cfg.Workers,
		queue:    client.NewQueue[string](cfg.Clock),
		monitors: map[schema.GroupResource]*monitor{},
	}
	resources := cfg.Resources
	if resources == nil {
		seen := map[schema.GroupResource]bool{}
		for _, s := range cfg.Client.Registry().Resources() {
			// One monitor per resource, whatever the versions it is
			// served in (autoscaling/v2 and v1 HPAs are one storage).
			if gr := s.Resource.GroupResource(); gr.Resource != "events" && !seen[gr] {
				seen[gr] = true
				resources = append(resources, gr)
			}
		}
	}
	for _, gr := range resources {
		s, ok := cfg.Client.Registry().Lookup(gr)
		if !ok {
			return nil, fmt.Errorf("garbagecollector: resource %s is not served", gr)
		}
		gc.addMonitor(s.Resource)
	}
	return gc, nil
}

func (gc *GarbageCollector) addMonitor(res *registry.Resource) {
	api := client.For[runtime.Object](gc.client, res.Group, res.Resource)
	m := &monitor{gr: res.GroupResource(), resource: res, api: api,
		informer: client.NewInformer(api, "", client.ListOptions{})}
	m.informer.AddIndex(uidIndex, func(obj runtime.Object) []string {
		return []string{string(accessor(obj).GetUID())}
	})
	m.informer.AddIndex(ownerUIDIndex, func(obj runtime.Object) []string {
		var uids []string
		for _, ref := range accessor(obj).GetOwnerReferences() {
			uids = append(uids, string(ref.UID))
		}
		return uids
	})
	m.informer.AddHandler(client.Handler[runtime.Object]{
		OnAdd:    func(obj runtime.Object) { gc.onChange(m, nil, obj) },
		OnUpdate: func(old, obj runtime.Object) { gc.onChange(m, old, obj) },
		OnDelete: func(obj runtime.Object) { gc.onDelete(m, obj) },
	})
	gc.monitors[m.gr] = m
}

// HasSynced reports whether the collector's caches (one per resource it
// watches) hold their first lists.
func (gc *GarbageCollector) HasSynced() bool { return controller.Synced(gc.informers()...) }

func (gc *GarbageCollector) informers() []controller.Informer {
	informers := make([]controller.Informer, 0, len(gc.monitors))
	for _, m := range gc.monitors {
		informers = append(informers, m.informer)
	}
	return informers
}

// Run watches every monitored resource and collects garbage until ctx is
// done.
func (gc *GarbageCollector) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, gc.informers(),
		controller.Worker[string]{Queue: gc.queue, Workers: gc.workers, Reconcile: gc.Reconcile})
}

func accessor(obj runtime.Object) metav1.Object {
	acc, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("garbagecollector: %T has no metadata", obj)) // every served type has
	}
	return acc
}

// Key is the work queue key of an object: "<resource>[.<group>]/[<namespace>/]<name>",
// for example "replicasets.apps/default/web-5d9c7b8f6" or "nodes/node-1".
func Key(gr schema.GroupResource, namespace, name string) string {
	return gr.String() + "/" + client.NamespacedKey(namespace, name)
}

func (gc *GarbageCollector) parseKey(key string) (*monitor, string, string, bool) {
	grs, rest, ok := strings.Cut(key, "/")
	if !ok {
		return nil, "", "", false
	}
	m, ok := gc.monitors[schema.ParseGroupResource(grs)]
	if !ok {
		return nil, "", "", false
	}
	ns, name := controller.SplitKey(rest)
	return m, ns, name, true
}

func (gc *GarbageCollector) enqueue(m *monitor, obj metav1.Object) {
	gc.queue.Add(Key(m.gr, obj.GetNamespace(), obj.GetName()))
}

// --- event handlers: they only enqueue keys ---

// onChange: an object appeared or changed. It needs a look if one of its
// owners may be gone or waiting for it, or if it is being deleted with a
// finalizer the collector handles; and its owners need a look if it
// stopped blocking them.
func (gc *GarbageCollector) onChange(m *monitor, oldObj, obj runtime.Object) {
	acc := accessor(obj)
	if len(acc.GetOwnerReferences()) > 0 || hasGCFinalizer(acc) {
		gc.enqueue(m, acc)
	}
	if oldObj == nil {
		return
	}
	old := accessor(oldObj)
	if (old.GetDeletionTimestamp() == nil && acc.GetDeletionTimestamp() != nil) ||
		!equalOwnerRefs(old.GetOwnerReferences(), acc.GetOwnerReferences()) {
		gc.enqueueOwners(acc, old.GetOwnerReferences())
	}
}

// onDelete: an object is gone. Its dependents may now be garbage, and its
// owners may have been waiting for it.
func (gc *GarbageCollector) onDelete(_ *monitor, obj runtime.Object) {
	acc := accessor(obj)
	for _, d := range gc.dependents(acc.GetUID()) {
		gc.enqueue(d.monitor, d.obj)
	}
	gc.enqueueOwners(acc, acc.GetOwnerReferences())
}

func (gc *GarbageCollector) enqueueOwners(dependent metav1.Object, refs []metav1.OwnerReference) {
	for _, ref := range refs {
		if m, ns, ok := gc.ownerMonitor(ref, dependent.GetNamespace()); ok {
			gc.queue.Add(Key(m.gr, ns, ref.Name))
		}
	}
}

func equalOwnerRefs(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || !boolEq(a[i].BlockOwnerDeletion, b[i].BlockOwnerDeletion) {
			return false
		}
	}
	return true
}

func boolEq(a, b *bool) bool { return (a != nil && *a) == (b != nil && *b) }

// --- the graph, answered by the caches ---

type cached struct {
	monitor *monitor
	obj     metav1.Object
}

// dependents returns the cached objects with an owner reference to uid.
func (gc *GarbageCollector) dependents(uid types.UID) []cached {
	var out []cached
	for _, m := range gc.monitors {
		for _, obj := range m.informer.ByIndex(ownerUIDIndex, string(uid)) {
			out = append(out, cached{m, accessor(obj)})
		}
	}
	return out
}

// cachedObject returns the cached object with uid, if any.
func (gc *GarbageCollector) cachedObject(uid types.UID) metav1.Object {
	for _, m := range gc.monitors {
		if objs := m.informer.ByIndex(uidIndex, string(uid)); len(objs) > 0 {
			return accessor(objs[0])
		}
	}
	return nil
}

// ownerMonitor finds the monitor of an owner reference's kind, and the
// namespace the owner lives in (owners share their dependent's namespace,
// or are cluster-scoped).
func (gc *GarbageCollector) ownerMonitor(ref metav1.OwnerReference, namespace string) (*monitor, string, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, "", false
	}
	s, ok := gc.client.Registry().ForKind(gv.WithKind(ref.Kind))
	if !ok {
		return nil, "", false
	}
	m, ok := gc.monitors[s.Resource.GroupResource()]
	if !ok {
		return nil, "", false
	}
	if !m.resource.Namespaced {
		namespace = ""
	}
	return m, namespace, true
}

func hasFinalizer(obj metav1.Object, f string) bool {
	for _, x := range obj.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

// hasGCFinalizer: the object is being deleted and waits for the collector.
func hasGCFinalizer(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil &&
		(hasFinalizer(obj, metav1.FinalizerOrphanDependents) || hasFinalizer(obj, metav1.FinalizerDeleteDependents))
}

// deletingDependents: the object is in foreground deletion.
func deletingDependents(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil && hasFinalizer(obj, metav1.FinalizerDeleteDependents)
}

// --- reconcile ---

// Reconcile looks at the object with key (see Key) and does what the
// collector owes it:
//
//   - being deleted with the orphan finalizer: orphan its dependents, then
//     remove the finalizer;
//   - being deleted with foregroundDeletion: delete its dependents; remove
//     the finalizer once none that blocks owner deletion is left;
//   - with owner references: delete it when every owner is gone, or remove
//     the references to the gone owners when some remain.
func (gc *GarbageCollector) Reconcile(ctx context.Context, key string) error {
	m, ns, name, ok := gc.parseKey(key)
	if !ok {
		return nil
	}
	obj, ok := m.informer.Get(ns, name)
	if !ok {
		return nil // gone: its delete event took care of its dependents
	}
	if !gc.needsAttention(accessor(obj)) {
		return nil
	}
	// Act only on the API server's current state.
	fresh, err := m.api.Get(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	acc := accessor(fresh)
	switch {
	case acc.GetDeletionTimestamp() != nil && hasFinalizer(acc, metav1.FinalizerOrphanDependents):
		return gc.orphanDependents(ctx, m, fresh)
	case deletingDependents(acc):
		return gc.processDeletingDependents(ctx, m, fresh)
	case acc.GetDeletionTimestamp() != nil:
		return nil // on its way out; its dependents are handled when it is gone
	}
	return gc.attemptToDelete(ctx, m, fresh)
}

// needsAttention answers from the caches alone whether Reconcile has work:
// most objects have all their owners and need no API call.
func (gc *GarbageCollector) needsAttention(obj metav1.Object) bool {
	if hasGCFinalizer(obj) {
		return true
	}
	if obj.GetDeletionTimestamp() != nil {
		return false
	}
	for _, ref := range obj.GetOwnerReferences() {
		owner := gc.cachedObject(ref.UID)
		if owner == nil || deletingDependents(owner) {
			return true
		}
	}
	return false
}

// attemptToDelete deletes an object all of whose owners are gone, or
// removes the references to the gone ones.
func (gc *GarbageCollector) attemptToDelete(ctx context.Context, m *monitor, obj runtime.Object) error {
	acc := accessor(obj)
	refs := acc.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	var solid, dangling, waiting []metav1.OwnerReference
	for _, ref := range refs {
		owner, err := gc.getOwner(ctx, ref, acc.GetNamespace())
		switch {
		case errors.Is(err, errUnknownKind):
			solid = append(solid, ref) // cannot be checked: keep it
		case err != nil:
			return err
		case owner == nil:
			dangling = append(dangling, ref)
		case deletingDependents(owner):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	switch {
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		// Drop the references to gone owners, and to owners waiting for
		// their dependents: those would wait for this one forever.
		var uids []types.UID
		for _, r := range append(dangling, waiting...) {
			uids = append(uids, r.UID)
		}
		cp := obj.DeepCopyObject()
		accessor(cp).SetOwnerReferences(controller.RemoveOwnerRefs(refs, uids...))
		_, err := m.api.Update(ctx, cp)
		return ignoreNotFound(err)
	case len(waiting) > 0:
		// An owner deletes in the foreground: so does this object, so that
		// its own dependents go first. (Upstream does so only when its graph
		// shows dependents; a cache that has not seen them yet would let
		// this object go before them. With none, the finalizer is removed
		// at once.)
		return gc.delete(ctx, m, acc, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(acc, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(acc, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return gc.delete(ctx, m, acc, policy)
	}
}

var errUnknownKind = errors.New("garbagecollector: owner kind is not served")

// getOwner reads an owner from the API server: nil when it does not exist
// or has another UID (deleted and re-created).
func (gc *GarbageCollector) getOwner(ctx context.Context, ref metav1.OwnerReference, namespace string) (metav1.Object, error) {
	m, ns, ok := gc.ownerMonitor(ref, namespace)
	if !ok {
		return nil, errUnknownKind
	}
	if namespace == "" && m.resource.Namespaced {
		return nil, nil // a cluster-scoped object cannot have a namespaced owner
	}
	obj, err := m.api.Get(ctx, ns, ref.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if acc := accessor(obj); acc.GetUID() == ref.UID {
		return acc, nil
	}
	return nil, nil
}

func (gc *GarbageCollector) delete(ctx context.Context, m *monitor, obj metav1.Object, policy metav1.DeletionPropagation) error {
	uid := obj.GetUID()
	err := m.api.Delete(ctx, obj.GetNamespace(), obj.GetName(), &metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy,
	})
	return ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// liveDependents lists, from the API server, the objects with an owner
// reference to owner. The caches could miss a dependent created a moment
// ago, and the two decisions made from this list cannot be taken back:
// removing the orphan finalizer (a missed dependent would later be
// collected, against the user's wish) and removing foregroundDeletion (the
// owner would go before its dependents). Both are rare, explicit user
// requests, so reading every object of the namespace once is affordable.
func (gc *GarbageCollector) liveDependents(ctx context.Context, owner metav1.Object) ([]cached, error) {
	var out []cached
	for _, m := range gc.monitors {
		if owner.GetNamespace() != "" && !m.resource.Namespaced {
			continue // a cluster-scoped object cannot depend on a namespaced one
		}
		objs, _, err := m.api.List(ctx, owner.GetNamespace(), client.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			acc := accessor(obj)
			for _, ref := range acc.GetOwnerReferences() {
				if ref.UID == owner.GetUID() {
					out = append(out, cached{m, acc})
					break
				}
			}
		}
	}
	return out, nil
}

// orphanDependents removes owner from its dependents' ownerReferences,
// then removes the orphan finalizer, which lets the owner go.
func (gc *GarbageCollector) orphanDependents(ctx context.Context, m *monitor, owner runtime.Object) error {
	acc := accessor(owner)
	deps, err := gc.liveDependents(ctx, acc)
	if err != nil {
		return err
	}
	for _, d := range deps {
		d.obj.SetOwnerReferences(controller.RemoveOwnerRefs(d.obj.GetOwnerReferences(), acc.GetUID()))
		// A conflict means the dependent changed: the retry reads it again.
		if _, err := d.monitor.api.Update(ctx, d.obj.(runtime.Object)); ignoreNotFound(err) != nil {
			return err
		}
	}
	return gc.removeFinalizer(ctx, m, owner, metav1.FinalizerOrphanDependents)
}

// processDeletingDependents deletes the dependents of an owner in
// foreground deletion, and removes its finalizer when no dependent that
// blocks owner deletion is left.
func (gc *GarbageCollector) processDeletingDependents(ctx context.Context, m *monitor, owner runtime.Object) error {
	acc := accessor(owner)
	deps, err := gc.liveDependents(ctx, acc)
	if err != nil {
		return err
	}
	blocking := 0
	for _, d := range deps {
		for _, ref := range d.obj.GetOwnerReferences() {
			if ref.UID == acc.GetUID() && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				blocking++
				if !deletingDependents(d.obj) {
					// Its Reconcile sees an owner waiting for it and deletes it.
					gc.enqueue(d.monitor, d.obj)
				}
			}
		}
	}
	if blocking > 0 {
		return nil // their deletion events bring this owner back
	}
	return gc.removeFinalizer(ctx, m, owner, metav1.FinalizerDeleteDependents)
}

// removeFinalizer removes finalizer f from obj (read fresh): when it is the
// last one, the API server deletes the object.
func (gc *GarbageCollector) removeFinalizer(ctx context.Context, m *monitor, obj runtime.Object, f string) error {
	cp := obj.DeepCopyObject()
	acc := accessor(cp)
	var kept []string
	for _, x := range acc.GetFinalizers() {
		if x != f {
			kept = append(kept, x)
		}
	}
	acc.SetFinalizers(kept)
	_, err := m.api.Update(ctx, cp)
	return ignoreNotFound(err)
}
