package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DaemonSets and StatefulSets keep their history in ControllerRevisions
// (apps/v1): one per pod template the controller has run, numbered by
// revision, whose data is a strategic merge patch that puts that template
// back. `rollout history` lists them, `rollout undo` sends a revision's
// patch, as upstream's DaemonSetHistoryViewer / StatefulSetHistoryViewer
// and DaemonSetRollbacker / StatefulSetRollbacker do.

// isRevisioned reports whether a kind's history is ControllerRevisions.
func isRevisioned(kind string) bool { return kind == "DaemonSet" || kind == "StatefulSet" }

// revisionedObject is what history needs of a DaemonSet or StatefulSet.
type revisionedObject struct {
	meta     metav1.ObjectMeta
	selector *metav1.LabelSelector
	template corev1.PodTemplateSpec
}

func toRevisioned(o selected) (*revisionedObject, error) {
	switch o.res.Kind {
	case "DaemonSet":
		ds := &appsv1.DaemonSet{}
		if err := fromMap(o.obj, ds); err != nil {
			return nil, err
		}
		return &revisionedObject{ds.ObjectMeta, ds.Spec.Selector, ds.Spec.Template}, nil
	default:
		ss := &appsv1.StatefulSet{}
		if err := fromMap(o.obj, ss); err != nil {
			return nil, err
		}
		return &revisionedObject{ss.ObjectMeta, ss.Spec.Selector, ss.Spec.Template}, nil
	}
}

// controlledRevisions lists the ControllerRevisions the object controls,
// by revision number (upstream: controlledHistoryV1).
func (s *session) controlledRevisions(obj *revisionedObject) (map[int64]*appsv1.ControllerRevision, error) {
	sel, err := metav1.LabelSelectorAsSelector(obj.selector)
	if err != nil {
		return nil, err
	}
	crRes := apiResource{Group: "apps", Version: "v1", Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true}
	var list appsv1.ControllerRevisionList
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: crRes.path(obj.meta.Namespace, "", ""), query: listQuery(sel.String(), "")}, &list); err != nil {
		return nil, err
	}
	out := map[int64]*appsv1.ControllerRevision{}
	for i := range list.Items {
		cr := &list.Items[i]
		if metav1.IsControlledBy(cr, &obj.meta) {
			out[cr.Revision] = cr
		}
	}
	return out, nil
}

// revisionTemplate is the pod template a revision restores.
func revisionTemplate(cr *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var data struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &data); err != nil {
		return nil, fmt.Errorf("unable to decode revision %d: %v", cr.Revision, err)
	}
	return &data.Spec.Template, nil
}

// revisionHistory is `rollout history` of a DaemonSet or StatefulSet.
func (s *session) revisionHistory(o selected, revision int64) error {
	obj, err := toRevisioned(o)
	if err != nil {
		return err
	}
	revs, err := s.controlledRevisions(obj)
	if err != nil {
		return err
	}
	if revision > 0 {
		cr, ok := revs[revision]
		if !ok {
			return fmt.Errorf("unable to find the specified revision")
		}
		t, err := revisionTemplate(cr)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out(), "%s/%s with revision #%d\n", o.res.kindName(), o.name, revision)
		text, err := tabbedString(func(w io.Writer) error {
			describePodTemplate(&prefixWriter{out: w}, t)
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprint(s.out(), text)
		return nil
	}
	fmt.Fprintf(s.out(), "%s/%s \n", o.res.kindName(), o.name)
	if len(revs) == 0 {
		fmt.Fprintln(s.out(), "No rollout history found.")
		return nil
	}
	causes := make(map[int64]string, len(revs))
	for r, rev := range revs {
		causes[r] = rev.Annotations["kubernetes.io/change-cause"]
	}
	printHistory(s.out(), causes)
	return nil
}

// revisionRollback is `rollout undo` of a DaemonSet or StatefulSet:
// toRevision 0 is the revision before the newest.
func (s *session) revisionRollback(o selected, toRevision int64, dr dryRun) (string, error) {
	if toRevision < 0 {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	obj, err := toRevisioned(o)
	if err != nil {
		return "", err
	}
	revs, err := s.controlledRevisions(obj)
	if err != nil {
		return "", err
	}
	if toRevision == 0 && len(revs) <= 1 {
		return "", fmt.Errorf("no last revision to roll back to")
	}
	var to *appsv1.ControllerRevision
	if toRevision > 0 {
		to = revs[toRevision]
	} else {
		nums := make([]int64, 0, len(revs))
		for r := range revs {
			nums = append(nums, r)
		}
		sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
		to, toRevision = revs[nums[len(nums)-2]], nums[len(nums)-2]
	}
	if to == nil {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	if dr == "client" {
		return "rolled back", nil
	}
	// Skip when the object's template already is the revision's.
	t, err := revisionTemplate(to)
	if err != nil {
		return "", err
	}
	cur, _ := json.Marshal(obj.template)
	want, _ := json.Marshal(t)
	if bytes.Equal(cur, want) {
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", toRevision), nil
	}
	if _, err := s.patchObject(o.res, o.namespace, o.name, "", string(types.StrategicMergePatchType), to.Data.Raw, dr, ""); err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %v", toRevision, err)
	}
	return "rolled back", nil
}

// revisionedStatus is upstream's DaemonSetStatusViewer and
// StatefulSetStatusViewer.
func revisionedStatus(o selected) (string, bool, error) {
	switch o.res.Kind {
	case "DaemonSet":
		ds := &appsv1.DaemonSet{}
		if err := fromMap(o.obj, ds); err != nil {
			return "", false, err
		}
		if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
			return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateDaemonSetStrategyType)
		}
		if ds.Generation > ds.Status.ObservedGeneration {
			return "Waiting for daemon set spec update to be observed...\n", false, nil
		}
		if ds.Status.UpdatedNumberScheduled < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", ds.Name, ds.Status.UpdatedNumberScheduled, ds.Status.DesiredNumberScheduled), false, nil
		}
		if ds.Status.NumberAvailable < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", ds.Name, ds.Status.NumberAvailable, ds.Status.DesiredNumberScheduled), false, nil
		}
		return fmt.Sprintf("daemon set %q successfully rolled out\n", ds.Name), true, nil
	default:
		ss := &appsv1.StatefulSet{}
		if err := fromMap(o.obj, ss); err != nil {
			return "", false, err
		}
		if ss.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
			return "", true, fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)
		}
		if ss.Status.ObservedGeneration == 0 || ss.Generation > ss.Status.ObservedGeneration {
			return "Waiting for statefulset spec update to be observed...\n", false, nil
		}
		if ss.Spec.Replicas != nil && ss.Status.ReadyReplicas < *ss.Spec.Replicas {
			return fmt.Sprintf("Waiting for %d pods to be ready...\n", *ss.Spec.Replicas-ss.Status.ReadyReplicas), false, nil
		}
		if ru := ss.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			if ss.Spec.Replicas != nil && ru.Partition != nil {
				if ss.Status.UpdatedReplicas < *ss.Spec.Replicas-*ru.Partition {
					return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n", ss.Status.UpdatedReplicas, *ss.Spec.Replicas-*ru.Partition), false, nil
				}
			}
			return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", ss.Status.UpdatedReplicas), true, nil
		}
		if ss.Status.UpdateRevision != ss.Status.CurrentRevision {
			return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n", ss.Status.UpdatedReplicas, ss.Status.UpdateRevision), false, nil
		}
		return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", ss.Status.CurrentReplicas, ss.Status.CurrentRevision), true, nil
	}
}
