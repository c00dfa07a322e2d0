package apiextensions

import (
	"context"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

	mu     sync.Mutex // guards served; held through a whole Sync
	served map[string]*serving
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
	return &Controller{reg: reg, crds: st, served: map[string]*serving{}}, nil
}

// Run watches the CRDs and syncs each change until ctx is done. A watch
// that ends (compaction) starts again from a fresh list.
func (c *Controller) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		c.resync(ctx)
		w, err := c.crds.Watch(ctx, "", registry.ListOptions{})
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error || ev.Type == watch.Bookmark {
				continue
			}
			if crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition); ok {
				_ = c.Sync(ctx, crd.Name)
			}
		}
		w.Stop()
	}
	return ctx.Err()
}

// resync stops serving the CRDs that are no longer stored.
func (c *Controller) resync(ctx context.Context) {
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
		c.unserveLocked(name)
		return nil
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return c.finalizeLocked(ctx, crd)
	}
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

// finalizeLocked deletes a CRD being deleted: it stops serving the
// resource, deletes every object of it, and removes the cleanup finalizer,
// which lets the CRD go (upstream: pkg/controller/finalizer).
func (c *Controller) finalizeLocked(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !hasFinalizer(crd) {
		c.unserveLocked(crd.Name)
		return nil
	}
	// The objects are deleted through a store of the storage version, so
	// their watchers see them go.
	var st *registry.Store
	if sv, ok := c.served[crd.Name]; ok && len(sv.stores) > 0 {
		st = sv.stores[0]
	}
	c.unserveLocked(crd.Name)
	if st == nil && crd.Status.AcceptedNames.Kind != "" {
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Storage {
				res := customResource(crd, &crd.Spec.Versions[i])
				st = c.reg.Register(res)
				defer c.reg.Unregister(res.GroupVersionResource())
			}
		}
	}
	upd := crd.DeepCopy()
	setCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
	}, metav1.Now())
	if st != nil {
		list, err := st.List(ctx, "", registry.ListOptions{})
		if err != nil {
			return err
		}
		items, _ := listItems(list)
		for _, it := range items {
			if _, _, err := st.Delete(ctx, it.namespace, it.name, nil); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	var keep []string
	for _, f := range upd.Finalizers {
		if f != CleanupFinalizer {
			keep = append(keep, f)
		}
	}
	upd.Finalizers = keep
	_, err := c.crds.Update(ctx, upd, registry.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
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
