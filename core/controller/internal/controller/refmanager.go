package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/client"
)

// Object is an API object with metadata: *corev1.Pod, *appsv1.ReplicaSet ...
type Object interface {
	runtime.Object
	metav1.Object
}

// RefManager decides which objects belong to one controller object (a
// ReplicaSet claiming pods, a Deployment claiming ReplicaSets), using the
// controller reference: the one ownerReference with controller=true.
//
//	object's controllerRef   selector matches   action
//	─────────────────────    ────────────────   ─────────────────────────────
//	this controller          yes                keep (claimed)
//	this controller          no                 release: remove our ownerRef
//	another controller       any                ignore: never steal
//	none (an orphan)         yes                adopt: add our controllerRef
//	none (an orphan)         no                 ignore
//
// A controller being deleted neither adopts nor releases. Upstream:
// pkg/controller/controller_ref_manager.go (BaseControllerRefManager).
// One RefManager serves one sync.
type RefManager struct {
	Controller     metav1.Object
	ControllerKind schema.GroupVersionKind
	Selector       labels.Selector
	// CanAdopt is called once, before the first adoption, to re-read the
	// controller from the API server: a controller that was just deleted
	// (the cache may not know yet) must not adopt anything (upstream:
	// RecheckDeletionTimestamp). Nil allows adoption.
	CanAdopt func(ctx context.Context) error

	once     sync.Once
	adoptErr error
}

// RecheckDeletionTimestamp returns a CanAdopt that reads the controller
// with get and refuses when it is gone, replaced (another UID) or being
// deleted.
func RecheckDeletionTimestamp(uid types.UID, get func(ctx context.Context) (metav1.Object, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.GetUID() != uid {
			return fmt.Errorf("original %s/%s is gone: got uid %v, wanted %v", fresh.GetNamespace(), fresh.GetName(), fresh.GetUID(), uid)
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s/%s has just been deleted at %v", fresh.GetNamespace(), fresh.GetName(), fresh.GetDeletionTimestamp())
		}
		return nil
	}
}

func (m *RefManager) canAdopt(ctx context.Context) error {
	m.once.Do(func() {
		if m.CanAdopt != nil {
			m.adoptErr = m.CanAdopt(ctx)
		}
	})
	return m.adoptErr
}

// Claim returns the objects of objs that belong to the controller, adopting
// matching orphans and releasing owned objects that no longer match, with
// updates through res. Adoption and release are compare-and-swap updates
// from the cached object: a stale cache is a 409 Conflict, returned so the
// controller retries. The objects that could be claimed are returned even
// when some failed, in the order of objs.
//
// The adoptions and releases are made in the order of the objects' names,
// whatever the order of objs: a controller may pass an informer's list as
// it comes (upstream's do) instead of sorting it at every sync, and the same
// cache still means the same writes in the same order.
func Claim[T Object](ctx context.Context, m *RefManager, res client.Resource[T], objs []T) ([]T, error) {
	actions := make([]claimAction, len(objs))
	var writes []int // indexes of the objects to adopt or release
	for i, obj := range objs {
		actions[i] = m.classify(obj)
		if actions[i] == adoptIt || actions[i] == releaseIt {
			writes = append(writes, i)
		}
	}
	sort.SliceStable(writes, func(a, b int) bool { return objs[writes[a]].GetName() < objs[writes[b]].GetName() })
	var errs []error
	for _, i := range writes {
		obj := objs[i]
		var err error
		if actions[i] == adoptIt {
			if err = adopt(ctx, m, res, obj); err == nil {
				actions[i] = keep
			}
		} else {
			err = release(ctx, m, res, obj)
		}
		if actions[i] != keep {
			actions[i] = ignore
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err) // gone meanwhile: nothing to claim
		}
	}
	var claimed []T
	for i, obj := range objs {
		if actions[i] == keep {
			claimed = append(claimed, obj)
		}
	}
	return claimed, errors.Join(errs...)
}

// claimAction is what Claim does with one object: see RefManager's table.
type claimAction uint8

const (
	ignore claimAction = iota
	keep
	adoptIt
	releaseIt
)

func (m *RefManager) classify(obj metav1.Object) claimAction {
	match := m.Selector.Matches(labels.Set(obj.GetLabels()))
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		switch {
		case ref.UID != m.Controller.GetUID():
			return ignore // owned by someone else
		case match:
			return keep // ours, even while we are being deleted
		case m.Controller.GetDeletionTimestamp() != nil:
			return ignore
		}
		return releaseIt
	}
	// An orphan.
	if m.Controller.GetDeletionTimestamp() != nil || !match || obj.GetDeletionTimestamp() != nil ||
		(m.Controller.GetNamespace() != "" && m.Controller.GetNamespace() != obj.GetNamespace()) {
		return ignore
	}
	return adoptIt
}

func adopt[T Object](ctx context.Context, m *RefManager, res client.Resource[T], obj T) error {
	if err := m.canAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s/%s (%v): %w", obj.GetNamespace(), obj.GetName(), obj.GetUID(), err)
	}
	cp := obj.DeepCopyObject().(T)
	ref := *metav1.NewControllerRef(m.Controller, m.ControllerKind)
	refs := cp.GetOwnerReferences()
	replaced := false
	for i := range refs {
		if refs[i].UID == ref.UID {
			refs[i], replaced = ref, true
		}
	}
	if !replaced {
		refs = append(refs, ref)
	}
	cp.SetOwnerReferences(refs)
	_, err := res.Update(ctx, cp)
	return err
}

func release[T Object](ctx context.Context, m *RefManager, res client.Resource[T], obj T) error {
	cp := obj.DeepCopyObject().(T)
	cp.SetOwnerReferences(RemoveOwnerRefs(cp.GetOwnerReferences(), m.Controller.GetUID()))
	_, err := res.Update(ctx, cp)
	return err
}

// RemoveOwnerRefs returns refs without those pointing at any of uids.
func RemoveOwnerRefs[U ~string](refs []metav1.OwnerReference, uids ...U) []metav1.OwnerReference {
	var out []metav1.OwnerReference
outer:
	for _, r := range refs {
		for _, u := range uids {
			if string(r.UID) == string(u) {
				continue outer
			}
		}
		out = append(out, r)
	}
	return out
}

// ResolveControllerRef returns the object a controller reference names, if
// it is of kind and the informer holds it with the same UID: a reference to
// a deleted and recreated namesake resolves to nothing. Upstream every
// controller has this as its resolveControllerRef.
func ResolveControllerRef[T Object](inf *client.Informer[T], kind, namespace string, ref *metav1.OwnerReference) (T, bool) {
	var zero T
	if ref == nil || ref.Kind != kind {
		return zero, false
	}
	obj, ok := inf.Get(namespace, ref.Name)
	if !ok || obj.GetUID() != ref.UID {
		return zero, false
	}
	return obj, true
}

// Selecting returns the objects of the informer in namespace whose selector
// (read by selector) matches lbls: the controllers that may adopt an orphan
// with those labels. A nil or empty selector matches nothing, not
// everything.
func Selecting[T Object](inf *client.Informer[T], namespace string, lbls map[string]string, selector func(T) *metav1.LabelSelector) []T {
	var out []T
	for _, obj := range inf.ByIndex(NamespaceIndex, namespace) {
		sel, err := metav1.LabelSelectorAsSelector(selector(obj))
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(labels.Set(lbls)) {
			out = append(out, obj)
		}
	}
	return out
}
