// Package statefulset is the StatefulSet controller: pods with a stable
// identity. A StatefulSet "web" with 3 replicas owns web-0, web-1 and web-2
// (not web-7d4b9-x2x8q): each keeps its name, its hostname (web-1) and, with
// the governing Service spec.serviceName, its DNS name
// web-1.<serviceName>.<namespace>.svc across restarts and rescheduling.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/statefulset
// (stateful_set.go, stateful_set_control.go, stateful_set_utils.go,
// stateful_pod_control.go).
//
// With podManagementPolicy OrderedReady (the default) the controller moves
// one pod at a time and waits for it:
//
//	scale up 0→3:    create web-0 … Running and Ready … create web-1 … Ready … create web-2
//	scale down 3→1:  delete web-2 … gone … delete web-1
//	rolling update:  delete web-2 … recreated from the new revision, Ready … web-1 … web-0
//
// Parallel creates and deletes without waiting (updates stay ordered).
// RollingUpdate's partition keeps ordinals below it on the current
// revision (a canary: partition 2 of 3 updates only web-2); OnDelete
// replaces a pod with the new template only when the user deletes it.
//
// Each pod carries controller-revision-hash: the name of the
// ControllerRevision it was made from. status.currentRevision is the
// revision of the pods before an update, status.updateRevision the one of
// the current template; when every pod is on updateRevision and Ready, the
// update is complete and currentRevision becomes updateRevision.
//
// volumeClaimTemplates need PersistentVolumeClaims, which kubetab does not
// serve: a StatefulSet with claim templates gets the FailedCreate event
// upstream records when a claim cannot be created, and no pods.
package statefulset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/history"
)

const (
	// Component is the event source and user agent.
	Component = "statefulset-controller"
	// DefaultWorkers is --concurrent-statefulset-syncs.
	DefaultWorkers = 5
	// RevisionLabel is apps/v1 StatefulSetRevisionLabel.
	RevisionLabel = appsv1.StatefulSetRevisionLabel
	// PodNameLabel is apps/v1 StatefulSetPodNameLabel.
	PodNameLabel = appsv1.StatefulSetPodNameLabel
	// PodIndexLabel is apps/v1 PodIndexLabel.
	PodIndexLabel = appsv1.PodIndexLabel
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// StatefulSets is the typed client of apps/v1 statefulsets.
func StatefulSets(c *client.Client) client.Resource[*appsv1.StatefulSet] {
	return client.For[*appsv1.StatefulSet](c, "apps", "statefulsets")
}

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times availability and retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of StatefulSets synced at once (default 5).
	Workers int
}

// Controller is the StatefulSet controller.
type Controller struct {
	client      *client.Client
	clock       clock.WithDelayedExecution
	workers     int
	queue       *client.Queue[string]
	setInformer *client.Informer[*appsv1.StatefulSet]
	podInformer *client.Informer[*corev1.Pod]
	crInformer  *client.Informer[*appsv1.ControllerRevision]
	recorder    *client.Recorder
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("statefulset", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	ssc := &Controller{
		client:      cfg.Client,
		clock:       cfg.Clock,
		workers:     cfg.Workers,
		queue:       client.NewQueue[string](cfg.Clock),
		setInformer: client.NewInformer(StatefulSets(cfg.Client), "", client.ListOptions{}),
		podInformer: client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		crInformer:  client.NewInformer(history.Revisions(cfg.Client), "", client.ListOptions{}),
		recorder:    client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
	}
	ssc.setInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.StatefulSet])
	ssc.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	ssc.crInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.ControllerRevision])
	ssc.setInformer.AddHandler(client.Handler[*appsv1.StatefulSet]{
		OnAdd:    ssc.enqueue,
		OnUpdate: func(_, cur *appsv1.StatefulSet) { ssc.enqueue(cur) },
		OnDelete: ssc.enqueue,
	})
	podChanged := func(p *corev1.Pod) {
		if set, ok := controller.ResolveControllerRef(ssc.setInformer, controllerKind.Kind, p.Namespace, metav1.GetControllerOfNoCopy(p)); ok {
			ssc.enqueue(set)
			if set.Spec.MinReadySeconds > 0 {
				ssc.queue.AddAfter(client.Key(set), time.Duration(set.Spec.MinReadySeconds)*time.Second+time.Second)
			}
			return
		}
		if metav1.GetControllerOfNoCopy(p) == nil {
			for _, set := range controller.Selecting(ssc.setInformer, p.Namespace, p.Labels, func(s *appsv1.StatefulSet) *metav1.LabelSelector { return s.Spec.Selector }) {
				ssc.enqueue(set)
			}
		}
	}
	ssc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd: podChanged,
		OnUpdate: func(old, cur *corev1.Pod) {
			if old.ResourceVersion != cur.ResourceVersion {
				podChanged(cur)
			}
		},
		OnDelete: podChanged,
	})
	return ssc, nil
}

func (ssc *Controller) informers() []controller.Informer {
	return []controller.Informer{ssc.setInformer, ssc.podInformer, ssc.crInformer}
}

// HasSynced reports whether the controller's caches hold their first lists.
func (ssc *Controller) HasSynced() bool { return controller.Synced(ssc.informers()...) }

// Run watches StatefulSets, pods and revisions and syncs StatefulSets until
// ctx is done.
func (ssc *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, ssc.informers(),
		controller.Worker[string]{Queue: ssc.queue, Workers: ssc.workers, Reconcile: ssc.Reconcile})
}

func (ssc *Controller) enqueue(set *appsv1.StatefulSet) { ssc.queue.Add(client.Key(set)) }

// --- pod identity (stateful_set_utils.go) ---

// ordinal is the number at the end of a pod's name, -1 when the name is
// not <set>-<n>.
func ordinal(set *appsv1.StatefulSet, pod *corev1.Pod) int {
	rest, ok := strings.CutPrefix(pod.Name, set.Name+"-")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return -1
	}
	return n
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func podName(set *appsv1.StatefulSet, ord int) string { return fmt.Sprintf("%s-%d", set.Name, ord) }

func podRevision(p *corev1.Pod) string { return p.Labels[RevisionLabel] }

func isCreated(p *corev1.Pod) bool { return p.Status.Phase != "" }

func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func isFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

func isSucceeded(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && controller.IsPodReady(p)
}

func (ssc *Controller) isAvailable(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	return isRunningAndReady(p) && controller.IsPodAvailable(p, set.Spec.MinReadySeconds, ssc.clock.Now())
}

func isHealthy(p *corev1.Pod) bool { return isRunningAndReady(p) && !isTerminating(p) }

// newPod is pod <set>-<ord> from template: the stable name, hostname and
// subdomain (the governing Service), and the labels naming its pod, its
// index and its revision.
func newPod(set *appsv1.StatefulSet, template *corev1.PodTemplateSpec, revision string, ord int) *corev1.Pod {
	pod := controller.GetPodFromTemplate(template, set, metav1.NewControllerRef(set, controllerKind))
	pod.GenerateName = ""
	pod.Name = podName(set, ord)
	pod.Namespace = set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[PodNameLabel] = pod.Name
	pod.Labels[PodIndexLabel] = strconv.Itoa(ord)
	pod.Labels[RevisionLabel] = revision
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	return pod
}

// --- events (stateful_pod_control.go) ---

func (ssc *Controller) podEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, err error) {
	if err == nil {
		ssc.recorder.Eventf(set, corev1.EventTypeNormal, "Successful"+verb, "%s Pod %s in StatefulSet %s successful", strings.ToLower(verb), pod.Name, set.Name)
		return
	}
	ssc.recorder.Eventf(set, corev1.EventTypeWarning, "Failed"+verb, "%s Pod %s in StatefulSet %s failed error: %s", strings.ToLower(verb), pod.Name, set.Name, err)
}

func (ssc *Controller) createPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if len(set.Spec.VolumeClaimTemplates) > 0 {
		// There is no PersistentVolumeClaim API to create the claims in.
		err := apierrors.NewNotFound(corev1.Resource("persistentvolumeclaims"), "")
		for _, t := range set.Spec.VolumeClaimTemplates {
			claim := t.Name + "-" + pod.Name
			ssc.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim, pod.Name, set.Name,
				"the server could not find the requested resource")
		}
		return err
	}
	_, err := ssc.client.Pods().Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	ssc.podEvent("Create", set, pod, err)
	return err
}

func (ssc *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	err := ssc.client.Pods().Delete(ctx, pod.Namespace, pod.Name, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	ssc.podEvent("Delete", set, pod, err)
	return err
}

// --- sync ---

// Reconcile syncs the StatefulSet with key "namespace/name".
func (ssc *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	set, ok := ssc.setInformer.Get(namespace, name)
	if !ok || set.DeletionTimestamp != nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || selector.Empty() {
		return nil
	}
	pods, err := ssc.claimPods(ctx, set, selector)
	if err != nil {
		return err
	}
	revs, err := ssc.claimRevisions(ctx, set, selector)
	if err != nil {
		return err
	}
	current, update, collisionCount, err := ssc.revisions(ctx, set, revs)
	if err != nil {
		return err
	}
	syncErr := ssc.updateStatefulSet(ctx, set, current, update, pods)
	status := ssc.computeStatus(set, current, update, collisionCount, ssc.livePods(ctx, set, selector, pods))
	if err := ssc.updateStatus(ctx, set, status); err != nil {
		return err
	}
	if syncErr == nil {
		syncErr = ssc.truncateHistory(ctx, set, pods, revs, current, update)
	}
	if syncErr == nil && set.Spec.MinReadySeconds > 0 && status.AvailableReplicas != status.ReadyReplicas {
		ssc.queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
	}
	return syncErr
}

// livePods re-reads the claimed pods from the cache after a sync's writes
// (the cache may already show some of them).
func (ssc *Controller) livePods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector, before []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range ssc.podInformer.ByIndex(controller.NamespaceIndex, set.Namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == set.UID && selector.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func (ssc *Controller) claimPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*corev1.Pod, error) {
	all := ssc.podInformer.ByIndex(controller.NamespaceIndex, set.Namespace)
	// Only pods named <set>-<n> may be adopted (upstream: isMemberOf).
	var candidates []*corev1.Pod
	for _, p := range all {
		if ordinal(set, p) >= 0 {
			candidates = append(candidates, p)
		}
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].Name < candidates[j].Name })
	m := &controller.RefManager{
		Controller: set, ControllerKind: controllerKind, Selector: selector,
		CanAdopt: controller.RecheckDeletionTimestamp(set.UID, func(ctx context.Context) (metav1.Object, error) {
			return StatefulSets(ssc.client).Get(ctx, set.Namespace, set.Name)
		}),
	}
	return controller.Claim(ctx, m, ssc.client.Pods(), candidates)
}

func (ssc *Controller) claimRevisions(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	m := &controller.RefManager{Controller: set, ControllerKind: controllerKind, Selector: selector}
	revs, err := controller.Claim(ctx, m, history.Revisions(ssc.client), ssc.crInformer.ByIndex(controller.NamespaceIndex, set.Namespace))
	history.Sort(revs)
	return revs, err
}

// revisions returns the current and update revisions (upstream:
// getStatefulSetRevisions): the update revision is the one of the
// template, created, or renumbered newest when an older one has the same
// data (a rollback); the current one is status.currentRevision, or the
// update revision for a new set.
func (ssc *Controller) revisions(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	patch, err := history.TemplatePatch(set)
	if err != nil {
		return nil, nil, 0, err
	}
	update = history.New(set, controllerKind, set.Spec.Template.Labels, patch, history.Next(revs), &collisionCount)
	if len(set.Annotations) > 0 {
		update.Annotations = map[string]string{}
		for k, v := range set.Annotations {
			update.Annotations[k] = v
		}
	}
	res := history.Revisions(ssc.client)
	equal := history.FindEqual(revs, update)
	switch {
	case len(equal) > 0 && history.Equal(equal[len(equal)-1], revs[len(revs)-1]):
		update = revs[len(revs)-1] // already the newest
	case len(equal) > 0:
		if update, err = history.Renumber(ctx, res, equal[len(equal)-1], update.Revision); err != nil {
			return nil, nil, 0, err
		}
	default:
		if update, err = history.Create(ctx, res, set, update, &collisionCount); err != nil {
			return nil, nil, 0, err
		}
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// templateOf reads the pod template a revision restores: its data is
// {"spec":{"template":{...,"$patch":"replace"}}}.
func templateOf(cr *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var data struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &data); err != nil {
		return nil, fmt.Errorf("revision %s: %w", cr.Name, err)
	}
	return &data.Spec.Template, nil
}

// updateStatefulSet is one step of upstream's updateStatefulSet: replace
// failed pods, create missing ones, delete condemned ones (ordinal ≥
// replicas, highest first), then roll one pod at a time to the update
// revision from the highest ordinal down to the partition.
func (ssc *Controller) updateStatefulSet(ctx context.Context, set *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, pods []*corev1.Pod) error {
	currentTemplate, err := templateOf(current)
	if err != nil {
		return err
	}
	replicaCount := int(controller.Replicas(set.Spec.Replicas))
	start := startOrdinal(set)
	end := start + replicaCount
	replicas := make([]*corev1.Pod, replicaCount)
	var condemned []*corev1.Pod
	for _, p := range pods {
		ord := ordinal(set, p)
		if ord >= start && ord < end {
			replicas[ord-start] = p
		} else if ord >= 0 {
			condemned = append(condemned, p)
		}
	}
	sort.Slice(condemned, func(i, j int) bool { return ordinal(set, condemned[i]) > ordinal(set, condemned[j]) })
	partition := 0
	rolling := set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType
	if ru := set.Spec.UpdateStrategy.RollingUpdate; rolling && ru != nil && ru.Partition != nil {
		partition = int(*ru.Partition)
	}
	// Which revision a missing pod is made from: the current one below the
	// partition (or below the current replicas for OnDelete's sake, as
	// upstream's newVersionedStatefulSetPod), the update one otherwise.
	templateFor := func(ord int) (*corev1.PodTemplateSpec, string) {
		if rolling && ord < start+partition {
			return currentTemplate, current.Name
		}
		return &set.Spec.Template, update.Name
	}
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement

	for i := range replicas {
		ord := start + i
		p := replicas[i]
		if p != nil && (isFailed(p) || isSucceeded(p)) && !isTerminating(p) {
			if err := ssc.deletePod(ctx, set, p); err != nil {
				return err
			}
			replicas[i] = nil
			if monotonic {
				return nil
			}
			continue
		}
		if p == nil {
			t, rev := templateFor(ord)
			if err := ssc.createPod(ctx, set, newPod(set, t, rev, ord)); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			if monotonic {
				return nil // wait for it to be Running and Ready
			}
			continue
		}
		if monotonic && (isTerminating(p) || !ssc.isAvailable(set, p)) {
			return nil // StatefulSet is waiting for the pod to be Running and Ready
		}
	}
	for _, p := range condemned {
		if isTerminating(p) {
			if monotonic {
				return nil // wait for it to go before the next
			}
			continue
		}
		if monotonic {
			// Scale down only when every other pod is healthy.
			for _, r := range replicas {
				if r == nil || !isHealthy(r) {
					return nil
				}
			}
		}
		if err := ssc.deletePod(ctx, set, p); err != nil {
			return err
		}
		if monotonic {
			return nil
		}
	}
	if !rolling {
		return nil // OnDelete: pods change revision only when deleted
	}
	for i := len(replicas) - 1; i >= partition; i-- {
		p := replicas[i]
		if p == nil {
			return nil
		}
		if podRevision(p) != update.Name && !isTerminating(p) {
			return ssc.deletePod(ctx, set, p) // one at a time (maxUnavailable 1)
		}
		if !isHealthy(p) {
			return nil // wait for the updated pod before the next
		}
	}
	return nil
}

// computeStatus counts the pods (upstream: computeReplicaStatus and
// completeRollingUpdate).
func (ssc *Controller) computeStatus(set *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, collisionCount int32, pods []*corev1.Pod) appsv1.StatefulSetStatus {
	st := *set.Status.DeepCopy()
	st.ObservedGeneration = set.Generation
	st.CurrentRevision, st.UpdateRevision = current.Name, update.Name
	st.CollisionCount = &collisionCount
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = 0, 0, 0, 0, 0
	for _, p := range pods {
		if isCreated(p) {
			st.Replicas++
		}
		if isRunningAndReady(p) {
			st.ReadyReplicas++
			if ssc.isAvailable(set, p) {
				st.AvailableReplicas++
			}
		}
		if isCreated(p) && !isTerminating(p) {
			if podRevision(p) == current.Name {
				st.CurrentReplicas++
			}
			if podRevision(p) == update.Name {
				st.UpdatedReplicas++
			}
		}
	}
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas && st.Replicas == controller.Replicas(set.Spec.Replicas) {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
	return st
}

func (ssc *Controller) updateStatus(ctx context.Context, set *appsv1.StatefulSet, st appsv1.StatefulSetStatus) error {
	if apiequality.Semantic.DeepEqual(set.Status, st) {
		return nil
	}
	cp := set.DeepCopy()
	cp.Status = st
	_, err := StatefulSets(ssc.client).UpdateStatus(ctx, cp)
	return err
}

// truncateHistory deletes the oldest revisions beyond revisionHistoryLimit
// (default 10) that are neither current, nor the update one, nor any pod's.
func (ssc *Controller) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revs []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{current.Name: true, update.Name: true}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	var old []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	var errs []error
	for _, r := range old[:max(0, len(old)-limit)] {
		if err := history.Revisions(ssc.client).Delete(ctx, r.Namespace, r.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
