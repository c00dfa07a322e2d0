package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/internal/podutil"
)

// evict serves POST pods/{name}/eviction (upstream:
// pkg/registry/core/pod/storage/eviction.go): the polite delete that
// `kubectl drain` uses. Unlike a DELETE it asks the pod's
// PodDisruptionBudget first:
//
//	pod Pending, finished or already being deleted ─▶ delete (no budget asked)
//	more than one budget selects the pod           ─▶ 500, nothing deleted
//	no budget                                      ─▶ delete
//	pod not Ready and the application healthy      ─▶ delete, budget untouched
//	  (currentHealthy >= desiredHealthy > 0, or unhealthyPodEvictionPolicy
//	  AlwaysAllow): an unready pod does not count toward the budget
//	budget's status older than its spec            ─▶ 429, try again later
//	status.disruptionsAllowed == 0                 ─▶ 429 "Cannot evict pod as it
//	                                                  would violate the pod's
//	                                                  disruption budget."
//	otherwise                                      ─▶ disruptionsAllowed-1 and
//	                                                  disruptedPods[pod] = now in
//	                                                  one status write, then delete
//
// The budget's status write is a compare-and-swap: two evictions racing for
// the last allowed disruption cannot both win; the loser re-reads the budget
// and gets the 429. The pod gets the DisruptionTarget condition
// (EvictionByEvictionAPI) just before its graceful delete, so the kubelet
// and the pod's controller can tell an eviction from a crash. The
// disruption controller (core/controller/disruption) later sees the pod
// going and recomputes disruptionsAllowed; disruptedPods bridges the time
// between the two.
func (s *Server) evict(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo, dryRun bool) error {
	ev := &policyv1.Eviction{}
	if err := s.decode(w, r, policyv1.SchemeGroupVersion.WithKind("Eviction"), ev); err != nil {
		return err
	}
	if ev.Name == "" {
		ev.Name = info.Name
	}
	if ev.Name != info.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	var queryDryRun []string
	if dryRun {
		queryDryRun = []string{metav1.DryRunAll}
	}
	opts, err := propagateDryRun(ev, queryDryRun)
	if err != nil {
		return err
	}
	// Admission sees the eviction before anything is read or changed
	// (NodeRestriction: a kubelet evicts only its own node's pods).
	if ev.Namespace == "" {
		ev.Namespace = info.Namespace
	}
	if err := st.Admit(r.Context(), registry.Create, "eviction", ev, nil); err != nil {
		return err
	}
	if err := s.evictPod(r.Context(), st, info.Namespace, ev.Name, opts); err != nil {
		// Well-behaved clients wait before they ask again (upstream's
		// ErrorNegotiated sets the header from the status).
		if as, ok := err.(apierrors.APIStatus); ok {
			if d := as.Status().Details; d != nil && d.RetryAfterSeconds > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
			}
		}
		return err
	}
	return s.writeObject(w, info, http.StatusCreated, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated,
	})
}

// evictionsRetry bounds the conflict retries of one eviction (upstream's
// EvictionsRetry: 20 steps). Upstream waits half a second between steps;
// here the store is in the same process, so a conflict means another write
// has already landed and the next step re-reads at once.
const evictionsRetry = 20

// maxDisruptedPodSize is upstream's MaxDisruptedPodSize: past this many
// evictions the disruption controller has not seen yet, a budget refuses
// more.
const maxDisruptedPodSize = 2000

// evictPod is upstream's EvictionREST.Create after the decoding.
func (s *Server) evictPod(ctx context.Context, pods *registry.Store, namespace, name string, opts *metav1.DeleteOptions) error {
	var pod *corev1.Pod
	deleted := false
	// Conflicts are retried, unless the client pinned a resourceVersion.
	retriable := apierrors.IsConflict
	if !resourceVersionIsUnset(opts) {
		retriable = func(error) bool { return false }
	}
	err := retryOnError(retriable, func() error {
		obj, err := pods.Get(ctx, namespace, name)
		if err != nil {
			return err
		}
		pod = obj.(*corev1.Pod)
		if !canIgnorePDB(pod) {
			return nil // on to the budgets
		}
		// A pod that is Pending, finished or already going has disrupted
		// nothing yet (or nothing more): delete it without asking.
		delOpts := opts
		if shouldEnforceResourceVersion(pod) && resourceVersionIsUnset(opts) {
			// Pinned, so that a pod turning Running meanwhile is not
			// deleted behind its budget's back.
			delOpts = opts.DeepCopy()
			setPreconditionsResourceVersion(delOpts, pod.ResourceVersion)
		}
		if err := s.addConditionAndDeletePod(ctx, pods, namespace, name, delOpts); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil || deleted {
		return err
	}

	pdbs, err := s.podDisruptionBudgets(ctx, pod)
	if err != nil {
		return err
	}
	if len(pdbs) > 1 {
		// Upstream returns this as a Status object, which the request's
		// finisher turns into the error answer.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
		}}
	}
	var pdbName string
	pinPod := false // delete only the pod as read: it must not turn Ready meanwhile
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		pdbName = pdb.Name
		if !isPodReady(pod) {
			// An unready pod does not count toward currentHealthy.
			// IfHealthyBudget (the default) lets it go while the
			// application is healthy; AlwaysAllow always.
			if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
				pinPod = true
			} else if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
				pinPod = true
			}
		}
		if !pinPod {
			dry := len(opts.DryRun) > 0
			refresh := false
			err := retryOnError(apierrors.IsConflict, func() error {
				if refresh {
					obj, err := s.pdbStore().Get(ctx, pod.Namespace, pdbName)
					if err != nil {
						return err
					}
					pdb = obj.(*policyv1.PodDisruptionBudget)
				}
				if err := s.checkAndDecrement(ctx, pod.Name, pdb.DeepCopy(), dry); err != nil {
					refresh = true
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}

	delOpts := opts
	if pinPod {
		delOpts = opts.DeepCopy()
		setPreconditionsResourceVersion(delOpts, pod.ResourceVersion)
	}
	err = s.addConditionAndDeletePod(ctx, pods, namespace, name, delOpts)
	if apierrors.IsConflict(err) && pinPod && resourceVersionIsUnset(opts) {
		// The pod changed since it was judged unhealthy: the client should
		// ask again.
		return tooManyRequests(pdbName)
	}
	return err
}

// checkAndDecrement spends one of the budget's allowed disruptions on
// podName, or refuses with 429 (upstream: EvictionREST.checkAndDecrement).
func (s *Server) checkAndDecrement(ctx context.Context, podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		// The controller has not yet computed the status of this spec.
		return tooManyRequests(pdb.Name)
	}
	gr := schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudget"}
	if pdb.Status.DisruptionsAllowed < 0 {
		return apierrors.NewForbidden(gr, pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPodSize {
		return apierrors.NewForbidden(gr, pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
		})
		return err
	}
	now := s.reg.Clock().Now()
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		registry.UpdateDisruptionAllowedCondition(pdb, now)
	}
	if dryRun {
		return nil
	}
	// Tell the disruption controller this pod is about to go, so it stops
	// counting it as healthy before it sees the deletion. If the pod is not
	// deleted within its DeletionTimeout (2 minutes), the controller drops
	// the entry again.
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.NewTime(now.Truncate(time.Second))
	_, err := s.pdbStore().Update(ctx, pdb, registry.UpdateOptions{Subresource: "status"})
	return err
}

// addConditionAndDeletePod marks the pod with the DisruptionTarget
// condition and deletes it with opts. The condition is written on the pod
// as stored (checked against opts' preconditions), and a pinned
// resourceVersion follows that write.
func (s *Server) addConditionAndDeletePod(ctx context.Context, pods *registry.Store, namespace, name string, opts *metav1.DeleteOptions) error {
	if len(opts.DryRun) == 0 {
		obj, err := pods.Get(ctx, namespace, name)
		if err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if p := opts.Preconditions; p != nil {
			gr := schema.GroupResource{Resource: "Pod"} // sic: upstream names the kind here
			if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
				return apierrors.NewConflict(gr, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
				return apierrors.NewConflict(gr, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
			}
		}
		if podutil.UpdatePodCondition(&pod.Status, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
		}, s.reg.Clock().Now()) {
			updated, err := pods.Update(ctx, pod, registry.UpdateOptions{Subresource: "status"})
			if err != nil {
				return err
			}
			if !resourceVersionIsUnset(opts) {
				opts = opts.DeepCopy()
				setPreconditionsResourceVersion(opts, updated.(*corev1.Pod).ResourceVersion)
			}
		}
	}
	_, _, err := pods.Delete(ctx, namespace, name, opts)
	return err
}

// podDisruptionBudgets returns the budgets that select pod.
func (s *Server) podDisruptionBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	st := s.pdbStore()
	if st == nil {
		return nil, nil
	}
	list, err := st.List(ctx, pod.Namespace, registry.ListOptions{})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var out []*policyv1.PodDisruptionBudget
	for _, it := range items {
		if pdb := it.(*policyv1.PodDisruptionBudget); registry.PodDisruptionBudgetSelects(pdb, pod) {
			out = append(out, pdb)
		}
	}
	return out, nil
}

// pdbStore is the PodDisruptionBudget store, nil if it is not served.
func (s *Server) pdbStore() *registry.Store {
	st, _ := s.reg.Lookup(schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudgets"})
	return st
}

// propagateDryRun merges the request's dryRun parameter into the
// eviction's DeleteOptions; the two may not disagree.
func propagateDryRun(ev *policyv1.Eviction, query []string) (*metav1.DeleteOptions, error) {
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: query}, nil
	}
	if len(ev.DeleteOptions.DryRun) == 0 {
		ev.DeleteOptions.DryRun = query
		return ev.DeleteOptions, nil
	}
	if len(query) == 0 {
		return ev.DeleteOptions, nil
	}
	if !reflect.DeepEqual(query, ev.DeleteOptions.DryRun) {
		return nil, apierrors.NewInternalError(fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", query, ev.DeleteOptions.DryRun))
	}
	return ev.DeleteOptions, nil
}

// canIgnorePDB: a pod that has not started, has finished, or is already
// being deleted may go without asking its budget.
func canIgnorePDB(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// shouldEnforceResourceVersion: a Pending pod is deleted only as read, so
// that it cannot turn Running (and start counting) in between.
func shouldEnforceResourceVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

func resourceVersionIsUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

func setPreconditionsResourceVersion(opts *metav1.DeleteOptions, rv string) {
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.ResourceVersion = &rv
}

// tooManyRequests is the 429 for a budget whose status is not current, with
// a hint to wait ten seconds.
func tooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// retryOnError runs fn until it succeeds, fails with an error retriable
// does not accept, or has run evictionsRetry times; it returns the last
// error (client-go's retry.OnError, without the sleeps).
func retryOnError(retriable func(error) bool, fn func() error) error {
	var err error
	for range evictionsRetry {
		if err = fn(); err == nil || !retriable(err) {
			return err
		}
	}
	return err
}

func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
