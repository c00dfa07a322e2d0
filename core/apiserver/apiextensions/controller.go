package apiextensions

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Controller is apiextensions-apiserver's controllers in one: the naming
// controller (status.acceptedNames, NamesAccepted), the establishing
// controller (Established), the crdHandler's serving of each established
// CRD's versions, and the finalizer controller that deletes a CRD's objects.
// It reads the CRDs through an in-process watch, as upstream's controllers
// read them through informers, and reconciles one CRD at a time, level-based:
// Sync reads the CRD as stored and makes serving match it.
type Controller struct {
	reg  *registry.Registry
	crds *registry.Store

	mu     sync.Mutex // guards served and waiting; held through a whole Sync
	served map[string]*serving
	// waiting names the terminating CRDs whose objects are still going
	// (finalizers of their own): a watch of the objects syncs them again.
	waiting map[string]bool

	// terminating holds the GroupResources of the CRDs being deleted
	// (schema.GroupResource -> true), for the admission check that refuses
	// their creates. Its own map: admission runs inside the deletes a
	// Sync makes while it holds mu.
	terminating sync.Map

	runMu  sync.Mutex
	runCtx context.Context // Run's, while it runs: the watches of waiting CRDs
	resync chan string     // CRD names to Sync again
}

// serving is what one CRD serves now.
type serving struct {
	key    string // what it was built from: changes mean re-register
	gvrs   []schema.GroupVersionResource
	stores []*registry.Store
}

// Install registers customresourcedefinitions in reg and returns the
// controller that serves them; Run it (or call Sync) for CRDs to take
// effect.
func Install(reg *registry.Registry) (*Controller, error) {
	if reg == nil {
		return nil, fmt.Errorf("apiextensions: a registry is required")
	}
	st := reg.Register(CRDResource())
	c := &Controller{reg: reg, crds: st, served: map[string]*serving{}, waiting: map[string]bool{}, resync: make(chan string, 16)}
	reg.AddMutatingAdmission(c.forbidCreateWhileTerminating)
	return c, nil
}

// forbidCreateWhileTerminating refuses new objects of a CRD being deleted
// (upstream: the crdHandler's forbidCreateAdmission): the finalizer is
// deleting them, and a new one would keep the CRD from going.
func (c *Controller) forbidCreateWhileTerminating(ctx context.Context, op registry.Operation, res *registry.Resource, obj, old runtime.Object) error {
	if op != registry.Create {
		return nil
	}
	if _, ok := c.terminating.Load(res.GroupResource()); !ok {
		return nil
	}
	name := ""
	if acc, err := meta.Accessor(obj); err == nil {
		name = acc.GetName()
	}
	return apierrors.NewForbidden(res.GroupResource(), name, errors.New("create not allowed while custom resource definition is terminating"))
}

// Run watches the CRDs and syncs each change until ctx is done. A watch
// that ends (compaction) starts again from a fresh list.
func (c *Controller) Run(ctx context.Context) error {
	c.runMu.Lock()
	c.runCtx = ctx
	c.runMu.Unlock()
	defer func() {
		c.runMu.Lock()
		c.runCtx = nil
		c.runMu.Unlock()
	}()
	for ctx.Err() == nil {
		c.resyncServed(ctx)
		w, err := c.crds.Watch(ctx, "", registry.ListOptions{})
		if err != nil {
			return err
		}
		for open := true; open; {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					open = false
					break
				}
				if ev.Type == watch.Error || ev.Type == watch.Bookmark {
					continue
				}
				if crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition); ok {
					_ = c.Sync(ctx, crd.Name)
				}
			case name := <-c.resync:
				_ = c.Sync(ctx, name)
			}
		}
		w.Stop()
	}
	return ctx.Err()
}

// resyncServed stops serving the CRDs that are no longer stored.
func (c *Controller) resyncServed(ctx context.Context) {
	c.mu.Lock()
	names := make([]string, 0, len(c.served))
	for n := range c.served {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		_ = c.Sync(ctx, n)
	}
}

// Sync reconciles one CRD by name.
func (c *Controller) Sync(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	obj, err := c.crds.Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		if sv, ok := c.served[name]; ok && len(sv.gvrs) > 0 {
			c.terminating.Delete(sv.gvrs[0].GroupResource())
		}
		c.unserveLocked(name)
		delete(c.waiting, name)
		return nil
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return c.finalizeLocked(ctx, crd)
	}
	c.terminating.Delete(schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural})
	upd := crd.DeepCopy()
	now := metav1.Now()
	if conflict, reason := c.nameConflict(ctx, crd); conflict != "" {
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse,
			Reason: reason, Message: conflict,
		}, now)
		if !isEstablished(upd) {
			setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
				Reason: "NotAccepted", Message: "not all names are accepted",
			}, now)
		}
	} else {
		upd.Status.AcceptedNames = crd.Spec.Names
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
			Reason: "NoConflicts", Message: "no conflicts found",
		}, now)
		c.serveLocked(upd)
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		}, now)
	}
	if apiequality.Semantic.DeepEqual(upd.Status, crd.Status) {
		return nil
	}
	_, err = c.crds.Update(ctx, upd, registry.UpdateOptions{Subresource: "status"})
	if apierrors.IsConflict(err) {
		return nil // a newer version will come through the watch
	}
	return err
}

// nameConflict reports a name of crd that another CRD of its group has
// accepted (upstream's naming controller), with the condition's reason.
func (c *Controller) nameConflict(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (msg, reason string) {
	list, err := c.crds.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return "", ""
	}
	n := crd.Spec.Names
	for _, o := range list.(*apiextensionsv1.CustomResourceDefinitionList).Items {
		if o.Name == crd.Name || o.Spec.Group != crd.Spec.Group {
			continue
		}
		a := o.Status.AcceptedNames
		used := append([]string{a.Plural, a.Singular}, a.ShortNames...)
		switch {
		case contains(used, n.Plural):
			return fmt.Sprintf("%q is already in use", n.Plural), "PluralConflict"
		case n.Singular != "" && contains(used, n.Singular):
			return fmt.Sprintf("%q is already in use", n.Singular), "SingularConflict"
		case a.Kind == n.Kind || a.ListKind == n.Kind:
			return fmt.Sprintf("%q is already in use", n.Kind), "KindConflict"
		case n.ListKind != "" && (a.Kind == n.ListKind || a.ListKind == n.ListKind):
			return fmt.Sprintf("%q is already in use", n.ListKind), "ListKindConflict"
		}
		for _, s := range n.ShortNames {
			if contains(used, s) {
				return fmt.Sprintf("%q is already in use", s), "ShortNamesConflict"
			}
		}
	}
	return "", ""
}

// servingKey is what the served stores are built from.
func servingKey(crd *apiextensionsv1.CustomResourceDefinition) string {
	return fmt.Sprintf("%d/%v/%v", crd.Generation, crd.Spec.Scope, crd.Status.AcceptedNames)
}

// serveLocked registers a store for every served version of crd (with its
// accepted names), replacing what an older generation registered.
func (c *Controller) serveLocked(crd *apiextensionsv1.CustomResourceDefinition) {
	key := servingKey(crd)
	if cur, ok := c.served[crd.Name]; ok && cur.key == key {
		return
	}
	c.unserveLocked(crd.Name)
	sv := &serving{key: key}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		res := customResource(crd, v)
		sv.gvrs = append(sv.gvrs, res.GroupVersionResource())
		sv.stores = append(sv.stores, c.reg.Register(res))
	}
	c.served[crd.Name] = sv
}

func (c *Controller) unserveLocked(name string) {
	sv, ok := c.served[name]
	if !ok {
		return
	}
	for _, gvr := range sv.gvrs {
		c.reg.Unregister(gvr)
	}
	delete(c.served, name)
}

// finalizeLocked deletes a CRD being deleted (upstream:
// pkg/controller/finalizer, CRDFinalizer.sync). The resource stays served
// meanwhile, as upstream's: its objects can be read, watched and deleted,
// only creates are refused. In order:
//
//	status: Terminating=True  InstanceDeletionInProgress  "CustomResource deletion is in progress"
//	delete every object (each goes its own way: finalizers, the garbage collector)
//	objects left (finalizers)?  stay InstanceDeletionInProgress; a watch of
//	                            the objects syncs the CRD again as they go
//	none left: status Terminating=False  InstanceDeletionCompleted  "removed all instances",
//	           and the cleanup finalizer removed in the same write: the CRD is gone,
//	           the resource no longer served, its open watches end
//
// A CRD that never became Established had no objects to delete
// (Terminating=False, NeverEstablished).
func (c *Controller) finalizeLocked(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !hasFinalizer(crd) {
		return nil // other finalizers hold it: nothing of ours to do
	}
	gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}
	c.terminating.Store(gr, true)
	if cur := condition(crd, apiextensionsv1.Terminating); cur == nil || cur.Reason != "InstanceDeletionInProgress" {
		upd := crd.DeepCopy()
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		}, metav1.Now())
		obj, err := c.crds.Update(ctx, upd, registry.UpdateOptions{Subresource: "status"})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // a newer version comes through the watch
		}
		if err != nil {
			return err
		}
		crd = obj.(*apiextensionsv1.CustomResourceDefinition)
	}
	upd := crd.DeepCopy()
	if isEstablished(crd) {
		cond, left, err := c.deleteInstancesLocked(ctx, crd)
		if err != nil || left {
			if cond.Reason != condition(crd, apiextensionsv1.Terminating).Reason || cond.Message != condition(crd, apiextensionsv1.Terminating).Message {
				setCondition(upd, cond, metav1.Now())
				_, _ = c.crds.Update(ctx, upd, registry.UpdateOptions{Subresource: "status"})
			}
			return err
		}
		setCondition(upd, cond, metav1.Now())
	} else {
		setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
			Reason: "NeverEstablished", Message: "resource was never established",
		}, metav1.Now())
	}
	var keep []string
	for _, f := range upd.Finalizers {
		if f != CleanupFinalizer {
			keep = append(keep, f)
		}
	}
	upd.Finalizers = keep
	_, err := c.crds.Update(ctx, upd, registry.UpdateOptions{Subresource: "status"})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(keep) == 0 { // gone from the store: stop serving it now
		c.unserveLocked(crd.Name)
		c.terminating.Delete(gr)
		delete(c.waiting, crd.Name)
	}
	return nil
}

// deleteInstancesLocked deletes every object of crd and reports the
// Terminating condition to record and whether objects are left.
func (c *Controller) deleteInstancesLocked(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionCondition, bool, error) {
	failed := func(format string, err error) (apiextensionsv1.CustomResourceDefinitionCondition, bool, error) {
		return apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionFailed", Message: fmt.Sprintf(format, err),
		}, true, err
	}
	st := c.instanceStoreLocked(crd)
	if st == nil {
		return failed("could not list instances: %v", fmt.Errorf("unable to find a custom resource client for %s.%s", crd.Status.AcceptedNames.Plural, crd.Spec.Group))
	}
	list, err := st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return failed("could not list instances: %v", err)
	}
	items, _ := listItems(list)
	var errs []error
	for _, it := range items {
		if _, _, err := st.Delete(ctx, it.namespace, it.name, nil); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return failed("could not issue all deletes: %v", utilerrors.NewAggregate(errs))
	}
	list, err = st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return failed("could not list instances: %v", err)
	}
	if left, _ := listItems(list); len(left) > 0 {
		rv := ""
		if acc, err := meta.ListAccessor(list); err == nil {
			rv = acc.GetResourceVersion()
		}
		c.waitForInstancesLocked(crd.Name, st, rv)
		return apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		}, true, nil
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "InstanceDeletionCompleted", Message: "removed all instances",
	}, false, nil
}

// instanceStoreLocked is a store of crd's objects: a served one, or, if
// none is served (a restart in the middle of a deletion), the storage
// version's, registered again.
func (c *Controller) instanceStoreLocked(crd *apiextensionsv1.CustomResourceDefinition) *registry.Store {
	if sv, ok := c.served[crd.Name]; ok && len(sv.stores) > 0 {
		return sv.stores[0]
	}
	if crd.Status.AcceptedNames.Kind == "" {
		return nil
	}
	c.serveLocked(crd)
	if sv, ok := c.served[crd.Name]; ok && len(sv.stores) > 0 {
		return sv.stores[0]
	}
	return nil
}

// waitForInstancesLocked syncs the CRD again each time one of its objects
// changes, until the CRD is gone; upstream polls every 5 seconds instead.
// Without Run (a test calling Sync) nothing watches: Sync again by hand.
func (c *Controller) waitForInstancesLocked(name string, st *registry.Store, rv string) {
	c.runMu.Lock()
	ctx := c.runCtx
	c.runMu.Unlock()
	if ctx == nil || c.waiting[name] {
		return
	}
	// From the revision of the list that found objects left: no change
	// after it is missed.
	w, err := st.Watch(ctx, "", registry.ListOptions{ResourceVersion: rv})
	if err != nil {
		return
	}
	c.waiting[name] = true
	go func() {
		defer w.Stop()
		for range w.ResultChan() {
			select {
			case c.resync <- name:
			case <-ctx.Done():
				return
			}
		}
		// The watch ended: the resource is no longer served (the CRD is
		// gone), or the watch fell behind. Sync once more, which watches
		// again if objects are still left.
		c.mu.Lock()
		delete(c.waiting, name)
		c.mu.Unlock()
		select {
		case c.resync <- name:
		case <-ctx.Done():
		}
	}()
}

// SyncAll syncs every stored CRD: a cluster restored from a snapshot or a
// data directory serves its custom resources before anything reads them.
func (c *Controller) SyncAll(ctx context.Context) error {
	list, err := c.crds.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	for _, crd := range list.(*apiextensionsv1.CustomResourceDefinitionList).Items {
		if err := c.Sync(ctx, crd.Name); err != nil {
			return fmt.Errorf("apiextensions: %s: %w", crd.Name, err)
		}
	}
	return nil
}
