// Package daemon is the DaemonSet controller: it keeps one pod of a
// DaemonSet's template on every node the template may run on, adds one when
// a node joins, removes it when the node stops fitting, and replaces old
// pods with new ones when the template changes.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/daemon
// (daemon_controller.go, update.go, util/daemonset_util.go).
//
// Since Kubernetes 1.12 the controller does not place pods itself: it gives
// each pod a required node affinity naming its node and lets the scheduler
// bind it, so preemption, resources and ports work as for any pod:
//
//	spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution:
//	  nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-2]}]}]
//
// It also adds tolerations, so that a node agent keeps running where other
// pods would be evicted or kept away: node.kubernetes.io/not-ready and
// unreachable (NoExecute), disk-, memory- and pid-pressure and
// unschedulable (NoSchedule).
//
// One sync of a DaemonSet:
//
//	history: the ControllerRevision of the current template (created or
//	         renumbered newest), its hash on new pods as controller-revision-hash
//	manage:  per node, should a daemon pod run here (nodeSelector, node
//	         affinity, taints)?  yes and none: create one; no: delete; failed: delete
//	update:  RollingUpdate: delete old pods within maxUnavailable (or, with
//	         maxSurge, create the new pod first and delete the old once it is
//	         available); OnDelete: only pods the user deletes are replaced
//	cleanup: old revisions beyond revisionHistoryLimit no pod uses
//	status:  desired/current/ready/available/updated/misscheduled, observedGeneration
package daemon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/history"
	"github.com/kubetab/kubetab/core/scheduler/plugins/helper"
)

const (
	// Component is the event source and user agent.
	Component = "daemonset-controller"
	// DefaultWorkers is --concurrent-daemonset-syncs.
	DefaultWorkers = 2
	// BurstReplicas caps the pods created or deleted in one sync.
	BurstReplicas = 250
	// UniqueLabelKey is apps/v1 DefaultDaemonSetUniqueLabelKey: the hash of
	// the revision a pod was made from.
	UniqueLabelKey = appsv1.DefaultDaemonSetUniqueLabelKey
	// TemplateGenerationKey is the older pod-template-generation label.
	TemplateGenerationKey = "pod-template-generation"
	// templateGenerationAnnotation carries the DaemonSet's template
	// generation in apps/v1.
	templateGenerationAnnotation = "deprecated.daemonset.template.generation"
	// FailedDaemonPodReason is the event of a failed pod being replaced.
	FailedDaemonPodReason = "FailedDaemonPod"
)

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times expectations, availability and retries; nil is real.
	Clock clock.WithDelayedExecution
	// Workers is the number of DaemonSets synced at once (default 2).
	Workers int
}

// Controller is the DaemonSet controller.
type Controller struct {
	client       *client.Client
	clock        clock.WithDelayedExecution
	workers      int
	queue        *client.Queue[string]
	dsInformer   *client.Informer[*appsv1.DaemonSet]
	podInformer  *client.Informer[*corev1.Pod]
	nodeInformer *client.Informer[*corev1.Node]
	crInformer   *client.Informer[*appsv1.ControllerRevision]
	expectations *controller.Expectations
	podControl   controller.PodControl
	recorder     *client.Recorder
}

// DaemonSets is the typed client of apps/v1 daemonsets.
func DaemonSets(c *client.Client) client.Resource[*appsv1.DaemonSet] {
	return client.For[*appsv1.DaemonSet](c, "apps", "daemonsets")
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("daemon", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	rec := client.NewRecorder(cfg.Client, Component, "", cfg.Clock)
	dsc := &Controller{
		client:       cfg.Client,
		clock:        cfg.Clock,
		workers:      cfg.Workers,
		queue:        client.NewQueue[string](cfg.Clock),
		dsInformer:   client.NewInformer(DaemonSets(cfg.Client), "", client.ListOptions{}),
		podInformer:  client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		nodeInformer: client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{}),
		crInformer:   client.NewInformer(history.Revisions(cfg.Client), "", client.ListOptions{}),
		expectations: controller.NewExpectations(cfg.Clock),
		podControl:   controller.PodControl{Client: cfg.Client, Recorder: rec},
		recorder:     rec,
	}
	dsc.dsInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.DaemonSet])
	dsc.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	dsc.crInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*appsv1.ControllerRevision])
	dsc.dsInformer.AddHandler(client.Handler[*appsv1.DaemonSet]{
		OnAdd:    dsc.enqueue,
		OnUpdate: func(_, cur *appsv1.DaemonSet) { dsc.enqueue(cur) },
		OnDelete: func(ds *appsv1.DaemonSet) { dsc.expectations.Delete(client.Key(ds)); dsc.enqueue(ds) },
	})
	dsc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod) {
			if ds := dsc.owner(p); ds != nil {
				if p.DeletionTimestamp != nil {
					dsc.expectations.DeletionObserved(client.Key(ds), controller.PodKey(p))
				} else {
					dsc.expectations.CreationObserved(client.Key(ds))
				}
				dsc.enqueue(ds)
				return
			}
			dsc.enqueueSelecting(p)
		},
		OnUpdate: func(old, cur *corev1.Pod) {
			if old.ResourceVersion == cur.ResourceVersion {
				return
			}
			ds := dsc.owner(cur)
			if ds == nil {
				dsc.enqueueSelecting(cur)
				return
			}
			if cur.DeletionTimestamp != nil {
				dsc.expectations.DeletionObserved(client.Key(ds), controller.PodKey(cur))
			}
			dsc.enqueue(ds)
			if !controller.IsPodReady(old) && controller.IsPodReady(cur) && ds.Spec.MinReadySeconds > 0 {
				dsc.queue.AddAfter(client.Key(ds), time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
			}
		},
		OnDelete: func(p *corev1.Pod) {
			if ds := dsc.owner(p); ds != nil {
				dsc.expectations.DeletionObserved(client.Key(ds), controller.PodKey(p))
				dsc.enqueue(ds)
			}
		},
	})
	// Every node change may change where daemon pods belong.
	enqueueAll := func() {
		for _, ds := range dsc.dsInformer.List() {
			dsc.enqueue(ds)
		}
	}
	dsc.nodeInformer.AddHandler(client.Handler[*corev1.Node]{
		OnAdd:    func(*corev1.Node) { enqueueAll() },
		OnUpdate: func(old, cur *corev1.Node) { enqueueAll() },
		OnDelete: func(*corev1.Node) { enqueueAll() },
	})
	dsc.crInformer.AddHandler(client.Handler[*appsv1.ControllerRevision]{
		OnDelete: func(cr *appsv1.ControllerRevision) {
			if ds, ok := controller.ResolveControllerRef(dsc.dsInformer, controllerKind.Kind, cr.Namespace, metav1.GetControllerOfNoCopy(cr)); ok {
				dsc.enqueue(ds)
			}
		},
	})
	return dsc, nil
}

func (dsc *Controller) informers() []controller.Informer {
	return []controller.Informer{dsc.dsInformer, dsc.podInformer, dsc.nodeInformer, dsc.crInformer}
}

// HasSynced reports whether the controller's caches hold their first lists.
func (dsc *Controller) HasSynced() bool { return controller.Synced(dsc.informers()...) }

// Run watches DaemonSets, pods, nodes and revisions and syncs DaemonSets
// until ctx is done.
func (dsc *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, dsc.informers(),
		controller.Worker[string]{Queue: dsc.queue, Workers: dsc.workers, Reconcile: dsc.Reconcile})
}

func (dsc *Controller) enqueue(ds *appsv1.DaemonSet) { dsc.queue.Add(client.Key(ds)) }

func (dsc *Controller) owner(p *corev1.Pod) *appsv1.DaemonSet {
	ds, _ := controller.ResolveControllerRef(dsc.dsInformer, controllerKind.Kind, p.Namespace, metav1.GetControllerOfNoCopy(p))
	return ds
}

func (dsc *Controller) enqueueSelecting(p *corev1.Pod) {
	if metav1.GetControllerOfNoCopy(p) != nil {
		return
	}
	for _, ds := range controller.Selecting(dsc.dsInformer, p.Namespace, p.Labels, func(ds *appsv1.DaemonSet) *metav1.LabelSelector { return ds.Spec.Selector }) {
		dsc.enqueue(ds)
	}
}

// --- sync ---

// Reconcile syncs the DaemonSet with key "namespace/name".
func (dsc *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	ds, ok := dsc.dsInformer.Get(namespace, name)
	if !ok {
		dsc.expectations.Delete(key)
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || selector.Empty() {
		return nil // validation prevents this; upstream does nothing for an empty selector
	}
	nodes := dsc.nodeInformer.List()
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if ds.DeletionTimestamp != nil {
		return nil // the garbage collector removes the pods
	}
	cur, old, err := dsc.constructHistory(ctx, ds, selector)
	if err != nil {
		return fmt.Errorf("failed to construct revisions of DaemonSet: %w", err)
	}
	hash := cur.Labels[UniqueLabelKey]
	nodeToPods, err := dsc.nodesToDaemonPods(ctx, ds, selector)
	if err != nil {
		return err
	}
	var syncErr error
	if dsc.expectations.Satisfied(key) {
		syncErr = dsc.manage(ctx, ds, nodes, nodeToPods, hash)
		if syncErr == nil && dsc.expectations.Satisfied(key) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			syncErr = dsc.rollingUpdate(ctx, ds, nodes, nodeToPods, hash)
		}
		if syncErr == nil {
			syncErr = dsc.cleanupHistory(ctx, ds, nodeToPods, old)
		}
	}
	if err := dsc.updateStatus(ctx, ds, nodes, nodeToPods, hash); err != nil {
		return err
	}
	return syncErr
}

// nodesToDaemonPods claims the DaemonSet's pods and groups them by the node
// they are for (spec.nodeName, or the node their affinity names), skipping
// finished pods that are being deleted.
func (dsc *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, selector labels.Selector) (map[string][]*corev1.Pod, error) {
	all := dsc.podInformer.ByIndex(controller.NamespaceIndex, ds.Namespace)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	m := &controller.RefManager{
		Controller: ds, ControllerKind: controllerKind, Selector: selector,
		CanAdopt: controller.RecheckDeletionTimestamp(ds.UID, func(ctx context.Context) (metav1.Object, error) {
			return DaemonSets(dsc.client).Get(ctx, ds.Namespace, ds.Name)
		}),
	}
	claimed, err := controller.Claim(ctx, m, dsc.client.Pods(), all)
	if err != nil {
		return nil, err
	}
	out := map[string][]*corev1.Pod{}
	for _, p := range claimed {
		if p.DeletionTimestamp != nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			continue
		}
		if node := TargetNodeName(p); node != "" {
			out[node] = append(out[node], p)
		}
	}
	return out, nil
}

// TargetNodeName is the node a daemon pod is for: spec.nodeName once bound,
// before that the metadata.name its required node affinity names
// (upstream: util.GetTargetNodeName).
func TargetNodeName(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}

// NodeShouldRunDaemonPod reports whether a daemon pod should be started on
// the node (nodeName, nodeSelector, node affinity and the taints it does not
// tolerate) and whether one already there may keep running (only an
// untolerated NoExecute taint evicts it). Upstream: NodeShouldRunDaemonPod.
func NodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	pod := newPod(ds, node.Name)
	if ds.Spec.Template.Spec.NodeName != "" && ds.Spec.Template.Spec.NodeName != node.Name {
		return false, false
	}
	ok, err := helper.GetRequiredNodeAffinity(&corev1.Pod{Spec: ds.Spec.Template.Spec}).Match(node)
	if err != nil || !ok {
		return false, false
	}
	if _, untolerated := helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaintsFilterFunc()); untolerated {
		_, evicts := helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute })
		return false, !evicts
	}
	return true, true
}

// newPod is the template with the daemon tolerations, pinned to nodeName.
func newPod(ds *appsv1.DaemonSet, nodeName string) *corev1.Pod {
	p := &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy()}
	p.Spec.NodeName = nodeName
	addDaemonTolerations(&p.Spec)
	return p
}

// daemonTolerations are the tolerations every daemon pod gets (upstream:
// AddOrUpdateDaemonPodTolerations), all with operator Exists.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

func addDaemonTolerations(spec *corev1.PodSpec) {
	add := daemonTolerations
	if spec.HostNetwork {
		add = append(append([]corev1.Toleration(nil), add...), corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	for _, t := range add {
		replaced := false
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&t) {
				spec.Tolerations[i], replaced = t, true
			}
		}
		if !replaced {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}

// nodeNameAffinity replaces the required node affinity with one term
// naming the node (upstream: ReplaceDaemonSetPodNodeNameNodeAffinity). The
// user's required terms were already checked by NodeShouldRunDaemonPod.
func nodeNameAffinity(a *corev1.Affinity, nodeName string) *corev1.Affinity {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}}}
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}
	return a
}

// templateGeneration reads the deprecated.daemonset.template.generation
// annotation; nil when absent or malformed.
func templateGeneration(ds *appsv1.DaemonSet) *int64 {
	v, ok := ds.Annotations[templateGenerationAnnotation]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// isPodUpdated: the pod carries the current revision's hash, or (pods of
// older controllers) the current template generation.
func isPodUpdated(p *corev1.Pod, hash string, gen *int64) bool {
	if gen != nil && p.Labels[TemplateGenerationKey] == strconv.FormatInt(*gen, 10) {
		return true
	}
	return hash != "" && p.Labels[UniqueLabelKey] == hash
}

// manage creates the missing daemon pods and deletes the ones that should
// not run, failed ones, and duplicates (upstream: manage and
// podsShouldBeOnNode).
func (dsc *Controller) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, nodeToPods map[string][]*corev1.Pod, hash string) error {
	var create []string
	var del []*corev1.Pod
	known := map[string]bool{}
	for _, node := range nodes {
		known[node.Name] = true
		shouldRun, shouldContinue := NodeShouldRunDaemonPod(node, ds)
		pods := nodeToPods[node.Name]
		switch {
		case shouldRun && len(pods) == 0:
			create = append(create, node.Name)
		case shouldContinue:
			var running []*corev1.Pod
			for _, p := range pods {
				if p.DeletionTimestamp != nil {
					continue
				}
				if p.Status.Phase == corev1.PodFailed {
					dsc.recorder.Eventf(ds, corev1.EventTypeWarning, FailedDaemonPodReason, "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
					del = append(del, p)
					continue
				}
				running = append(running, p)
			}
			if len(running) == 0 && shouldRun {
				create = append(create, node.Name)
			}
			// More than one: keep the oldest; while surging, the oldest
			// old and the oldest new one (the rolling update deletes the
			// old once the new is available).
			if len(running) > 1 {
				sort.Slice(running, func(i, j int) bool { return olderPod(running[i], running[j]) })
				if maxSurge(ds) == 0 {
					del = append(del, running[1:]...)
				} else {
					gen := templateGeneration(ds)
					var keptNew, keptOld bool
					for _, p := range running {
						if isPodUpdated(p, hash, gen) && !keptNew {
							keptNew = true
						} else if !isPodUpdated(p, hash, gen) && !keptOld {
							keptOld = true
						} else {
							del = append(del, p)
						}
					}
				}
			}
		default:
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					del = append(del, p)
				}
			}
		}
	}
	// Pods for nodes that are gone.
	for node, pods := range nodeToPods {
		if !known[node] {
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					del = append(del, p)
				}
			}
		}
	}
	return dsc.syncNodes(ctx, ds, del, create, hash)
}

func olderPod(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// syncNodes deletes del and creates one pod for each node of create, at
// most BurstReplicas of each, with expectations set first.
func (dsc *Controller) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del []*corev1.Pod, create []string, hash string) error {
	key := client.Key(ds)
	create = create[:min(len(create), BurstReplicas)]
	del = del[:min(len(del), BurstReplicas)]
	if len(create) == 0 && len(del) == 0 {
		return nil
	}
	keys := make([]string, len(del))
	for i, p := range del {
		keys[i] = controller.PodKey(p)
	}
	dsc.expectations.Expect(key, len(create), keys)
	template := *ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&template.Spec)
	template.Labels = copyLabels(template.Labels)
	if gen := templateGeneration(ds); gen != nil {
		template.Labels[TemplateGenerationKey] = strconv.FormatInt(*gen, 10)
	}
	if hash != "" {
		template.Labels[UniqueLabelKey] = hash
	}
	ref := metav1.NewControllerRef(ds, controllerKind)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, node := range create {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := *template.DeepCopy()
			t.Spec.Affinity = nodeNameAffinity(t.Spec.Affinity, node)
			if _, err := dsc.podControl.CreatePod(ctx, ds.Namespace, &t, ds, ref); err != nil {
				dsc.expectations.CreationObserved(key)
				if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range del {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dsc.podControl.DeletePod(ctx, ds.Namespace, p.Name, ds); err != nil {
				dsc.expectations.DeletionObserved(key, controller.PodKey(p))
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

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// --- rolling update (update.go) ---

func maxSurge(ds *appsv1.DaemonSet) int {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return 0
	}
	n, _ := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, 1, true)
	return n
}

// updatedDesiredNodeCounts returns maxSurge and maxUnavailable scaled to
// the number of nodes that should run the pod (rounded up), and that
// number; both zero means maxUnavailable 1.
func updatedDesiredNodeCounts(ds *appsv1.DaemonSet, nodes []*corev1.Node) (surge, unavailable, desired int) {
	for _, n := range nodes {
		if shouldRun, _ := NodeShouldRunDaemonPod(n, ds); shouldRun {
			desired++
		}
	}
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, desired, true)
		}
		if ru.MaxUnavailable != nil {
			unavailable, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true)
		}
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, desired
}

// updatedPodsOnNode splits a node's live pods into the new one and the old
// one; ok is false when there are two of either.
func updatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	gen := templateGeneration(ds)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(p, hash, gen) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// rollingUpdate replaces old pods. Without surge it deletes old pods while
// fewer than maxUnavailable nodes lack an available pod, and manage
// creates the new ones; with surge it creates a new pod beside an old one
// (at most maxSurge at once) and deletes the old once the new is available.
func (dsc *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, nodeToPods map[string][]*corev1.Pod, hash string) error {
	surge, maxUnavailable, _ := updatedDesiredNodeCounts(ds, nodes)
	now := dsc.clock.Now()
	available := func(p *corev1.Pod) bool { return controller.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) }
	names := make([]string, 0, len(nodeToPods))
	for n := range nodeToPods {
		names = append(names, n)
	}
	sort.Strings(names)
	if surge == 0 {
		numUnavailable := 0
		var replace, candidates []*corev1.Pod
		for _, node := range names {
			newPod, oldPod, ok := updatedPodsOnNode(ds, nodeToPods[node], hash)
			switch {
			case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				numUnavailable++ // manage cleans this node up
			case newPod != nil:
				if !available(newPod) {
					numUnavailable++
				}
			case !available(oldPod):
				replace = append(replace, oldPod)
			case numUnavailable < maxUnavailable:
				candidates = append(candidates, oldPod)
			}
		}
		remaining := max(0, min(maxUnavailable-numUnavailable, len(candidates)))
		return dsc.syncNodes(ctx, ds, append(replace, candidates[:remaining]...), nil, hash)
	}
	var del []*corev1.Pod
	var allowed, candidates []string
	numSurge := 0
	for _, node := range names {
		newPod, oldPod, ok := updatedPodsOnNode(ds, nodeToPods[node], hash)
		switch {
		case !ok:
			numSurge++
		case oldPod == nil:
		case newPod == nil:
			if !available(oldPod) {
				allowed = append(allowed, node)
			} else if numSurge < surge {
				candidates = append(candidates, node)
			}
		case !available(newPod):
			numSurge++
		default:
			del = append(del, oldPod)
		}
	}
	remaining := max(0, min(surge-numSurge, len(candidates)))
	return dsc.syncNodes(ctx, ds, del, append(allowed, candidates[:remaining]...), hash)
}

// --- history ---

// constructHistory returns the revision of the current template (made, or
// renumbered to be the newest) and the older ones (upstream:
// constructHistory and snapshot). The revision's name and hash are the
// pod-template-hash of the template: <ds>-<hash>.
func (dsc *Controller) constructHistory(ctx context.Context, ds *appsv1.DaemonSet, selector labels.Selector) (*appsv1.ControllerRevision, []*appsv1.ControllerRevision, error) {
	revs := history.Revisions(dsc.client)
	m := &controller.RefManager{Controller: ds, ControllerKind: controllerKind, Selector: selector}
	owned, err := controller.Claim(ctx, m, revs, dsc.crInformer.ByIndex(controller.NamespaceIndex, ds.Namespace))
	if err != nil {
		return nil, nil, err
	}
	patch, err := history.TemplatePatch(ds)
	if err != nil {
		return nil, nil, err
	}
	var current, old []*appsv1.ControllerRevision
	for _, cr := range owned {
		if string(cr.Data.Raw) == string(patch) {
			current = append(current, cr)
		} else {
			old = append(old, cr)
		}
	}
	history.Sort(old)
	next := history.Next(old)
	var cur *appsv1.ControllerRevision
	if len(current) == 0 {
		if cur, err = dsc.snapshot(ctx, ds, patch, next); err != nil {
			return nil, nil, err
		}
	} else {
		history.Sort(current)
		cur = current[len(current)-1]
		for _, dup := range current[:len(current)-1] { // keep the newest of equal revisions
			if err := revs.Delete(ctx, dup.Namespace, dup.Name, nil); err != nil && !apierrors.IsNotFound(err) {
				return nil, nil, err
			}
		}
		if cur.Revision < next {
			if cur, err = history.Renumber(ctx, revs, cur, next); err != nil {
				return nil, nil, err
			}
		}
	}
	if _, ok := cur.Labels[UniqueLabelKey]; !ok {
		return nil, nil, fmt.Errorf("revision %s has no %s label", cur.Name, UniqueLabelKey)
	}
	return cur, old, nil
}

func (dsc *Controller) snapshot(ctx context.Context, ds *appsv1.DaemonSet, patch []byte, revision int64) (*appsv1.ControllerRevision, error) {
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	lbls := copyLabels(ds.Spec.Template.Labels)
	lbls[UniqueLabelKey] = hash
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: lbls, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, controllerKind)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	revs := history.Revisions(dsc.client)
	created, err := revs.Create(ctx, cr)
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	exists, gerr := revs.Get(ctx, cr.Namespace, cr.Name)
	if gerr != nil {
		return nil, gerr
	}
	if string(exists.Data.Raw) == string(patch) {
		return exists, nil
	}
	// A hash collision: raise status.collisionCount and try again later.
	fresh, gerr := DaemonSets(dsc.client).Get(ctx, ds.Namespace, ds.Name)
	if gerr != nil {
		return nil, gerr
	}
	if !equalCount(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count (%v, expected %v) of DaemonSet %q while processing; will retry until it is updated", ds.Status.CollisionCount, fresh.Status.CollisionCount, ds.Name)
	}
	n := int32(0)
	if fresh.Status.CollisionCount != nil {
		n = *fresh.Status.CollisionCount
	}
	n++
	fresh.Status.CollisionCount = &n
	if _, uerr := DaemonSets(dsc.client).UpdateStatus(ctx, fresh); uerr != nil {
		return nil, uerr
	}
	return nil, err
}

func equalCount(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// cleanupHistory deletes the oldest revisions beyond revisionHistoryLimit
// (default 10) that no live pod was made from.
func (dsc *Controller) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, nodeToPods map[string][]*corev1.Pod, old []*appsv1.ControllerRevision) error {
	limit := 10
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	toKill := len(old) - limit
	if toKill <= 0 {
		return nil
	}
	live := map[string]bool{}
	for _, pods := range nodeToPods {
		for _, p := range pods {
			if h := p.Labels[UniqueLabelKey]; h != "" {
				live[h] = true
			}
		}
	}
	for _, cr := range old { // oldest first
		if toKill <= 0 {
			break
		}
		if live[cr.Labels[UniqueLabelKey]] {
			continue
		}
		if err := history.Revisions(dsc.client).Delete(ctx, cr.Namespace, cr.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		toKill--
	}
	return nil
}

// --- status ---

// updateStatus computes and writes the status (upstream:
// updateDaemonSetStatus), and looks again after minReadySeconds while
// ready pods are not yet available.
func (dsc *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, nodeToPods map[string][]*corev1.Pod, hash string) error {
	now := dsc.clock.Now()
	gen := templateGeneration(ds)
	var desired, current, misscheduled, ready, available, updated int32
	for _, node := range nodes {
		shouldRun, _ := NodeShouldRunDaemonPod(node, ds)
		pods := nodeToPods[node.Name]
		switch {
		case shouldRun:
			desired++
			if len(pods) == 0 {
				continue
			}
			current++
			pods = append([]*corev1.Pod(nil), pods...)
			sort.Slice(pods, func(i, j int) bool { return olderPod(pods[i], pods[j]) })
			p := pods[0]
			if controller.IsPodReady(p) {
				ready++
				if controller.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) {
					available++
				}
			}
			if isPodUpdated(p, hash, gen) {
				updated++
			}
		case len(pods) > 0:
			misscheduled++
		}
	}
	st := ds.Status
	st.DesiredNumberScheduled, st.CurrentNumberScheduled, st.NumberMisscheduled = desired, current, misscheduled
	st.NumberReady, st.NumberAvailable, st.UpdatedNumberScheduled = ready, available, updated
	st.NumberUnavailable = desired - available
	st.ObservedGeneration = ds.Generation
	if !apiequality.Semantic.DeepEqual(st, ds.Status) {
		cp := ds.DeepCopy()
		cp.Status = st
		if _, err := DaemonSets(dsc.client).UpdateStatus(ctx, cp); err != nil {
			return err
		}
	}
	if ds.Spec.MinReadySeconds > 0 && ready != available {
		dsc.queue.AddAfter(client.Key(ds), time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}
