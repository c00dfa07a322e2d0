package controller

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/client"
)

// Event reasons of pod creation and deletion, with upstream's wording.
const (
	FailedCreatePodReason     = "FailedCreate"
	SuccessfulCreatePodReason = "SuccessfulCreate"
	FailedDeletePodReason     = "FailedDelete"
	SuccessfulDeletePodReason = "SuccessfulDelete"
)

// PodDeletionCostAnnotation lets a user say which pods of a ReplicaSet go
// first on scale-down: lower cost first (upstream: core/v1
// PodDeletionCost, beta and on by default).
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// PodKey is the cache key of a pod, the unit of deletion expectations.
func PodKey(pod *corev1.Pod) string { return client.NamespacedKey(pod.Namespace, pod.Name) }

// IsPodActive reports whether a pod counts toward a controller's replicas:
// not finished (Succeeded, Failed) and not being deleted.
func IsPodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed &&
		p.DeletionTimestamp == nil
}

// FilterActivePods returns the active pods of pods.
func FilterActivePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// PodReadyCondition returns the pod's Ready condition, or nil.
func PodReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the kubelet marked the pod Ready.
func IsPodReady(p *corev1.Pod) bool {
	c := PodReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsPodAvailable reports whether a pod has been Ready for at least
// minReadySeconds at now: what "available" means for ReplicaSets and
// Deployments (upstream: podutil.IsPodAvailable).
func IsPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !IsPodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	c := PodReadyCondition(p)
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}

// ActivePodsWithRanks sorts pods in the order a controller deletes them,
// most expendable first (upstream: controller.ActivePodsWithRanks):
//
//  1. not yet scheduled (no nodeName) before scheduled;
//  2. Pending before Unknown before Running;
//  3. not Ready before Ready;
//  4. lower controller.kubernetes.io/pod-deletion-cost first;
//  5. higher Rank first (Rank: how many related pods share the pod's node,
//     so doubled-up nodes are relieved first);
//  6. Ready for a shorter time first;
//  7. more container restarts first;
//  8. newer first.
//
// Steps 6 and 8 compare times on a log₂ scale relative to Now, as upstream's
// LogarithmicScaleDown does: pods created 3 and 3.5 minutes ago count as the
// same age and tie-break by UID, so scale-down does not always hit the very
// newest pods. With a zero Now the plain times are compared.
type ActivePodsWithRanks struct {
	Pods []*corev1.Pod
	Rank []int
	Now  metav1.Time
}

func (s ActivePodsWithRanks) Len() int { return len(s.Pods) }

func (s ActivePodsWithRanks) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
}

var podPhaseToOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

func (s ActivePodsWithRanks) Less(i, j int) bool {
	pi, pj := s.Pods[i], s.Pods[j]
	// 1. Unassigned < assigned.
	if pi.Spec.NodeName != pj.Spec.NodeName && (pi.Spec.NodeName == "" || pj.Spec.NodeName == "") {
		return pi.Spec.NodeName == ""
	}
	// 2. Pending < Unknown < Running.
	if oi, oj := podPhaseToOrdinal[pi.Status.Phase], podPhaseToOrdinal[pj.Status.Phase]; oi != oj {
		return oi < oj
	}
	// 3. Not ready < ready.
	if ri, rj := IsPodReady(pi), IsPodReady(pj); ri != rj {
		return !ri
	}
	// 4. Lower deletion cost < higher deletion cost.
	if ci, cj := deletionCost(pi), deletionCost(pj); ci != cj {
		return ci < cj
	}
	// 5. Doubled up < not doubled up.
	if s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	// 6. Ready for less time < more time.
	if IsPodReady(pi) && IsPodReady(pj) {
		ti, tj := PodReadyCondition(pi).LastTransitionTime, PodReadyCondition(pj).LastTransitionTime
		if !ti.Equal(&tj) {
			return s.newer(pi, pj, ti, tj)
		}
	}
	// 7. More restarts < fewer restarts.
	if ri, rj := maxContainerRestarts(pi), maxContainerRestarts(pj); ri != rj {
		return ri > rj
	}
	// 8. Newer < older.
	if !pi.CreationTimestamp.Equal(&pj.CreationTimestamp) {
		return s.newer(pi, pj, pi.CreationTimestamp, pj.CreationTimestamp)
	}
	return false
}

// newer orders by time, zero first, on upstream's logarithmic scale.
func (s ActivePodsWithRanks) newer(pi, pj *corev1.Pod, ti, tj metav1.Time) bool {
	if s.Now.IsZero() || ti.IsZero() || tj.IsZero() {
		return afterOrZero(ti, tj)
	}
	d := logRank(s.Now.Sub(ti.Time)) - logRank(s.Now.Sub(tj.Time))
	if d == 0 {
		return pi.UID < pj.UID
	}
	return d < 0
}

func logRank(d time.Duration) int64 {
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

// afterOrZero: a zero time counts as the newest.
func afterOrZero(t1, t2 metav1.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2.Time)
}

func deletionCost(p *corev1.Pod) int32 {
	v, ok := p.Annotations[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0 // upstream's validation rejects such values
	}
	return int32(n)
}

func maxContainerRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

// GetPodFromTemplate builds the pod a controller creates from its template:
// the template's labels, annotations, finalizers and spec, generateName
// "<parent>-" (the API server appends five random characters) and the
// controller reference. It leaves spec.nodeName to the scheduler.
func GetPodFromTemplate(template *corev1.PodTemplateSpec, parent metav1.Object, controllerRef *metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Labels:       copyMap(template.Labels),
			Annotations:  copyMap(template.Annotations),
			GenerateName: parent.GetName() + "-",
			Finalizers:   append([]string(nil), template.Finalizers...),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if controllerRef != nil {
		pod.OwnerReferences = append(pod.OwnerReferences, *controllerRef)
	}
	return pod
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// PodControl creates and deletes pods for a controller and records the
// Events a learner sees in `kubectl describe rs` (upstream: RealPodControl).
type PodControl struct {
	Client   *client.Client
	Recorder *client.Recorder
}

// CreatePod creates a pod from template for parent (the object the events
// are about).
func (pc PodControl) CreatePod(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, parent runtime.Object, controllerRef *metav1.OwnerReference) (*corev1.Pod, error) {
	acc, err := meta.Accessor(parent)
	if err != nil {
		return nil, err
	}
	pod := GetPodFromTemplate(template, acc, controllerRef)
	pod.Namespace = namespace
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("unable to create pods, no labels")
	}
	created, err := pc.Client.Pods().Create(ctx, pod)
	if err != nil {
		// A timeout may still have created the pod: upstream records no event then.
		if !apierrors.IsTimeout(err) {
			pc.Recorder.Eventf(parent, corev1.EventTypeWarning, FailedCreatePodReason, "Error creating: %v", err)
		}
		return nil, err
	}
	pc.Recorder.Eventf(parent, corev1.EventTypeNormal, SuccessfulCreatePodReason, "Created pod: %v", created.Name)
	return created, nil
}

// DeletePod deletes a pod of parent. A pod that is already gone is
// NotFound, with no event.
func (pc PodControl) DeletePod(ctx context.Context, namespace, name string, parent runtime.Object) error {
	if err := pc.Client.Pods().Delete(ctx, namespace, name, nil); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		pc.Recorder.Eventf(parent, corev1.EventTypeWarning, FailedDeletePodReason, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %w", err)
	}
	pc.Recorder.Eventf(parent, corev1.EventTypeNormal, SuccessfulDeletePodReason, "Deleted pod: %v", name)
	return nil
}
