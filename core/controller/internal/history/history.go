// Package history keeps the ControllerRevisions of DaemonSets and
// StatefulSets: one apps/v1 ControllerRevision per pod template a
// controller has run, so that `kubectl rollout history` can list them and
// `kubectl rollout undo` can patch an old template back.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/history
// (controller_history.go).
//
// A revision holds, in data, a strategic merge patch that restores the
// template ({"spec":{"template":{...,"$patch":"replace"}}}) and, in
// revision, a number: the highest is the newest. When a user rolls back to
// revision 2 of [1 2 3], the controller finds that the template equals
// revision 2's and renumbers it 4 instead of writing a copy:
//
//	before undo:  web-6b7c9d4f5 (1)  web-58f5c6d9c7 (2)  web-7c6d8f9b4 (3, current)
//	after undo:   web-6b7c9d4f5 (1)  web-7c6d8f9b4 (3)   web-58f5c6d9c7 (4, current)
//
// Names are <owner>-<hash>. A hash that collides with a revision holding
// other data is retried with the owner's status.collisionCount raised.
package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubetab/kubetab/core/client"
)

// ControllerRevisionHashLabel is the label a revision carries with its hash.
const ControllerRevisionHashLabel = "controller.kubernetes.io/hash"

// Revisions is the typed client of apps/v1 controllerrevisions.
func Revisions(c *client.Client) client.Resource[*appsv1.ControllerRevision] {
	return client.For[*appsv1.ControllerRevision](c, "apps", "controllerrevisions")
}

// Name is ControllerRevisionName: prefix-hash, with the prefix cut to 223
// bytes so the name fits 253.
func Name(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return fmt.Sprintf("%s-%s", prefix, hash)
}

// Hash is HashControllerRevision: FNV-32 (not 32a) over data.Raw, then the
// decimal collision count if probe is set, encoded with
// rand.SafeEncodeString.
func Hash(cr *appsv1.ControllerRevision, probe *int32) string {
	hf := fnv.New32()
	hf.Write(cr.Data.Raw)
	if probe != nil {
		hf.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(hf.Sum32()))
}

// New returns an unsaved revision of parent: the template's labels plus the
// hash label, a controller reference, data and revision number, named
// <parent>-<hash>.
func New(parent metav1.Object, kind schema.GroupVersionKind, templateLabels map[string]string, data []byte, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	lbls := map[string]string{}
	for k, v := range templateLabels {
		lbls[k] = v
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       parent.GetNamespace(),
			Labels:          lbls,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, kind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}
	hash := Hash(cr, collisionCount)
	cr.Name = Name(parent.GetName(), hash)
	cr.Labels[ControllerRevisionHashLabel] = hash
	return cr
}

// Sort orders revisions by revision number, then creation time, then name
// (upstream: SortControllerRevisions).
func Sort(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// Equal is EqualRevision: the same hash label (when both have one) and the
// same data.
func Equal(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	ha, oka := a.Labels[ControllerRevisionHashLabel]
	hb, okb := b.Labels[ControllerRevisionHashLabel]
	if oka && okb && ha != hb {
		return false
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// FindEqual returns the revisions of revs equal to needle.
func FindEqual(revs []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, r := range revs {
		if Equal(r, needle) {
			out = append(out, r)
		}
	}
	return out
}

// Next is the number after the highest of sorted revs (1 for none).
func Next(sorted []*appsv1.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}

// Create writes cr, renamed by *collisionCount. A revision of that name
// with the same data is returned as is (an earlier sync made it); one
// with other data is a hash collision: *collisionCount goes up and the
// next name is tried, as upstream's realHistory.CreateControllerRevision.
func Create(ctx context.Context, res client.Resource[*appsv1.ControllerRevision], parent metav1.Object, cr *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, fmt.Errorf("collisionCount should not be nil")
	}
	for {
		clone := cr.DeepCopy()
		hash := Hash(clone, collisionCount)
		clone.Name = Name(parent.GetName(), hash)
		clone.Labels[ControllerRevisionHashLabel] = hash
		created, err := res.Create(ctx, clone)
		if apierrors.IsAlreadyExists(err) {
			exists, gerr := res.Get(ctx, clone.Namespace, clone.Name)
			if gerr != nil {
				return nil, gerr
			}
			if bytes.Equal(exists.Data.Raw, clone.Data.Raw) {
				return exists, nil
			}
			*collisionCount++
			continue
		}
		return created, err
	}
}

// Renumber sets a revision's number, retrying on conflicts with a fresh
// read (upstream: UpdateControllerRevision).
func Renumber(ctx context.Context, res client.Resource[*appsv1.ControllerRevision], cr *appsv1.ControllerRevision, revision int64) (*appsv1.ControllerRevision, error) {
	clone := cr.DeepCopy()
	for i := 0; ; i++ {
		if clone.Revision == revision {
			return clone, nil
		}
		clone.Revision = revision
		updated, err := res.Update(ctx, clone)
		if err == nil {
			return updated, nil
		}
		if !apierrors.IsConflict(err) || i >= 5 {
			return nil, err
		}
		if clone, err = res.Get(ctx, cr.Namespace, cr.Name); err != nil {
			return nil, err
		}
	}
}

// TemplatePatch is the data of a DaemonSet's or StatefulSet's revision: a
// strategic merge patch that replaces spec.template with obj's (upstream:
// getPatch in daemon/update.go and statefulset/stateful_set_utils.go).
// encoding/json sorts map keys, so equal templates give equal bytes.
func TemplatePatch(obj runtime.Object) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		return nil, fmt.Errorf("%T has no spec.template", obj)
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}
