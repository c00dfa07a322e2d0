// Package tainteviction is the taint eviction controller: it deletes the
// pods of a node tainted NoExecute that do not tolerate the taint, at once,
// or after their toleration's tolerationSeconds.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/tainteviction
// (taint_eviction.go, timed_workers.go), the "taint-eviction-controller" of
// kube-controller-manager (once the NoExecuteTaintManager inside the node
// lifecycle controller).
//
// Every pod gets two tolerations when it is created (the
// DefaultTolerationSeconds admission plugin), unless it has its own:
//
//	tolerations:
//	- key: node.kubernetes.io/not-ready      operator: Exists  effect: NoExecute  tolerationSeconds: 300
//	- key: node.kubernetes.io/unreachable    operator: Exists  effect: NoExecute  tolerationSeconds: 300
//
// so when the node lifecycle controller taints a silent node
// node.kubernetes.io/unreachable:NoExecute, its pods have 5 minutes:
//
//	taints of the node        the pod tolerates            what happens
//	────────────────────────  ───────────────────────────  ─────────────────────────────────
//	none                      -                            nothing (a scheduled eviction is cancelled:
//	                                                       "Cancelling deletion of Pod default/web-x")
//	unreachable:NoExecute     it, for 300 s (the default)  deleted 300 s after the taint appeared
//	unreachable:NoExecute     it, with no tolerationSeconds  stays forever
//	dedicated=x:NoExecute     not it                       deleted at once
//
// Deleting records "TaintManagerEviction: Marking for deletion Pod
// default/web-x" and gives the pod the DisruptionTarget condition. The
// deletion is graceful: on an unreachable node nothing will finish it, so
// the pod stays Terminating until the kubelet comes back (or the node is
// deleted); its ReplicaSet does not wait for that and creates a
// replacement, which the scheduler keeps off the tainted node.
package tainteviction

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is how many workers handle node and pod updates; a
	// node's updates and its pods' always go to the same one (upstream
	// UpdateWorkerSize is 8).
	DefaultWorkers = 2
	// Component is the event source and user agent.
	Component = "taint-eviction-controller"
	// deleteRetries is how often an eviction is tried at once before it is
	// retried with back-off.
	deleteRetries = 5
)

// The DisruptionTarget condition an evicted pod gets.
const (
	DisruptionReason  = "DeletionByTaintManager"
	DisruptionMessage = "Taint manager: deleting due to NoExecute taint"
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times tolerationSeconds; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of workers (default 2).
	Workers int
}

// item is a node update (pod == "") or a pod update, keyed by the node's
// name so that both go to the same worker.
type item struct {
	node string
	pod  string // "namespace/name"
}

// Controller is the taint eviction controller.
type Controller struct {
	client   *client.Client
	clock    clock.WithDelayedExecution
	recorder *client.Recorder

	podInformer  *client.Informer[*corev1.Pod]
	nodeInformer *client.Informer[*corev1.Node]
	queues       []*client.Queue[item] // one per worker
	evictions    *timedWorkQueue

	// taintedMu guards tainted: the NoExecute taints of each tainted node.
	taintedMu sync.Mutex
	tainted   map[string][]corev1.Taint
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("tainteviction: Config.Client is required")
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("tainteviction: Workers (%d) must not be negative", cfg.Workers)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	tc := &Controller{
		client:       cfg.Client,
		clock:        cfg.Clock,
		recorder:     client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		podInformer:  client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		nodeInformer: client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{}),
		evictions:    newTimedWorkQueue(cfg.Clock),
		tainted:      map[string][]corev1.Taint{},
	}
	for range cfg.Workers {
		tc.queues = append(tc.queues, client.NewQueue[item](cfg.Clock))
	}
	tc.podInformer.AddIndex(nodeNameIndex, func(p *corev1.Pod) []string {
		if p.Spec.NodeName == "" {
			return nil
		}
		return []string{p.Spec.NodeName}
	})
	tc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod) { tc.PodUpdated(nil, p) },
		OnUpdate: tc.PodUpdated,
		OnDelete: func(p *corev1.Pod) { tc.PodUpdated(p, nil) },
	})
	tc.nodeInformer.AddHandler(client.Handler[*corev1.Node]{
		OnAdd:    func(n *corev1.Node) { tc.NodeUpdated(nil, n) },
		OnUpdate: tc.NodeUpdated,
		OnDelete: func(n *corev1.Node) { tc.NodeUpdated(n, nil) },
	})
	return tc, nil
}

const nodeNameIndex = "spec.nodeName"

// HasSynced reports whether the controller's caches hold their first lists.
func (tc *Controller) HasSynced() bool { return controller.Synced(tc.informers()...) }

func (tc *Controller) informers() []controller.Informer {
	return []controller.Informer{tc.podInformer, tc.nodeInformer}
}

// Run watches nodes and pods and evicts until ctx is done.
func (tc *Controller) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, inf := range tc.informers() {
		wg.Add(1)
		go func() { defer wg.Done(); inf.Run(ctx) }()
	}
	defer func() {
		for _, q := range tc.queues {
			q.ShutDown()
		}
		tc.evictions.due.ShutDown()
	}()
	if !client.WaitForCacheSync(ctx, tc.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: caches did not sync", Component)
	}
	for _, q := range tc.queues {
		wg.Add(1)
		go func() { defer wg.Done(); tc.worker(ctx, q) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); tc.executor(ctx) }()
	<-ctx.Done()
	return nil
}

func (tc *Controller) queueFor(node string) *client.Queue[item] {
	h := fnv.New32a()
	h.Write([]byte(node))
	return tc.queues[h.Sum32()%uint32(len(tc.queues))]
}

// PodUpdated is the pod handler: a pod matters when it appears, goes, moves
// to a node or changes its tolerations.
func (tc *Controller) PodUpdated(old, cur *corev1.Pod) {
	var key, node string
	var oldTol, curTol []corev1.Toleration
	if old != nil {
		key, node, oldTol = client.Key(old), old.Spec.NodeName, old.Spec.Tolerations
	}
	if cur != nil {
		key, node, curTol = client.Key(cur), cur.Spec.NodeName, cur.Spec.Tolerations
	}
	if old != nil && cur != nil && equality.Semantic.DeepEqual(oldTol, curTol) && old.Spec.NodeName == cur.Spec.NodeName {
		return
	}
	tc.queueFor(node).Add(item{node: node, pod: key})
}

// NodeUpdated is the node handler: a node matters when its NoExecute taints
// change.
func (tc *Controller) NodeUpdated(old, cur *corev1.Node) {
	var name string
	var oldTaints, curTaints []corev1.Taint
	if old != nil {
		name, oldTaints = old.Name, noExecuteTaints(old.Spec.Taints)
	}
	if cur != nil {
		name, curTaints = cur.Name, noExecuteTaints(cur.Spec.Taints)
	}
	if old != nil && cur != nil && equality.Semantic.DeepEqual(oldTaints, curTaints) {
		return
	}
	tc.queueFor(name).Add(item{node: name})
}

func (tc *Controller) worker(ctx context.Context, q *client.Queue[item]) {
	for {
		it, ok := q.Get(ctx)
		if !ok {
			return
		}
		if it.pod == "" {
			tc.handleNodeUpdate(it.node)
		} else {
			tc.handlePodUpdate(it)
		}
		q.Done(it)
	}
}

func (tc *Controller) handlePodUpdate(it item) {
	ns, name := controller.SplitKey(it.pod)
	pod, ok := tc.podInformer.Get(ns, name)
	if !ok {
		tc.cancelWorkWithEvent(it.pod) // deleted
		return
	}
	// Queued under another node than the pod's current one: the update for
	// that node handles it.
	if pod.Spec.NodeName != it.node || pod.Spec.NodeName == "" {
		return
	}
	tc.taintedMu.Lock()
	taints, ok := tc.tainted[pod.Spec.NodeName]
	tc.taintedMu.Unlock()
	if !ok {
		return // untainted (any eviction was cancelled when the taints went)
	}
	tc.processPodOnNode(it.pod, pod.Spec.Tolerations, taints, tc.clock.Now())
}

func (tc *Controller) handleNodeUpdate(name string) {
	node, ok := tc.nodeInformer.Get("", name)
	if !ok {
		tc.taintedMu.Lock()
		delete(tc.tainted, name)
		tc.taintedMu.Unlock()
		return
	}
	taints := noExecuteTaints(node.Spec.Taints)
	// Record the taints before looking at the pods: a pod bound meanwhile is
	// handled by its own update, which reads them.
	tc.taintedMu.Lock()
	if len(taints) == 0 {
		delete(tc.tainted, name)
	} else {
		tc.tainted[name] = taints
	}
	tc.taintedMu.Unlock()
	pods := tc.podInformer.ByIndex(nodeNameIndex, name)
	now := tc.clock.Now()
	for _, p := range pods {
		key := client.Key(p)
		if len(taints) == 0 {
			tc.cancelWorkWithEvent(key)
			continue
		}
		tc.processPodOnNode(key, p.Spec.Tolerations, taints, now)
	}
}

// processPodOnNode schedules, moves or cancels the eviction of one pod
// given its node's NoExecute taints.
func (tc *Controller) processPodOnNode(key string, tolerations []corev1.Toleration, taints []corev1.Taint, now time.Time) {
	if len(taints) == 0 {
		tc.cancelWorkWithEvent(key)
	}
	allTolerated, used := getMatchingTolerations(taints, tolerations)
	if !allTolerated {
		// Evict at once; a later scheduled eviction is replaced.
		tc.cancelWorkWithEvent(key)
		tc.evictions.AddWork(key, now, now)
		return
	}
	minToleration := getMinTolerationTime(used)
	if minToleration < 0 {
		tc.cancelWorkWithEvent(key) // tolerated forever
		return
	}
	start, trigger := now, now.Add(minToleration)
	if w := tc.evictions.GetWork(key); w != nil {
		start = w.createdAt
		if start.Add(minToleration).Before(trigger) {
			return // already scheduled, earlier: keep it
		}
		tc.cancelWorkWithEvent(key)
	}
	tc.evictions.AddWork(key, start, trigger)
}

func (tc *Controller) cancelWorkWithEvent(key string) {
	if tc.evictions.CancelWork(key) {
		tc.recorder.Eventf(podRef(key), corev1.EventTypeNormal, "TaintManagerEviction", "Cancelling deletion of Pod %s", key)
	}
}

// executor runs the evictions whose time has come.
func (tc *Controller) executor(ctx context.Context) {
	q := tc.evictions.due
	for {
		f, ok := q.Get(ctx)
		if !ok {
			return
		}
		if tc.evictions.claim(f) {
			tc.recorder.Eventf(podRef(f.key), corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s", f.key)
			var err error
			for i := 0; i < deleteRetries; i++ {
				if err = tc.addConditionAndDeletePod(ctx, f.key); err == nil {
					break
				}
			}
			if err != nil && ctx.Err() == nil {
				q.AddRateLimited(f)
			} else {
				q.Forget(f)
				tc.evictions.done(f)
			}
		}
		q.Done(f)
	}
}

// addConditionAndDeletePod gives the pod the DisruptionTarget condition and
// deletes it (gracefully). A pod already gone counts as done.
func (tc *Controller) addConditionAndDeletePod(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	pod, err := tc.client.Pods().Get(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if setCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: DisruptionReason, Message: DisruptionMessage}, tc.clock.Now()) {
		if _, err := tc.client.Pods().UpdateStatus(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	uid := pod.UID
	err = tc.client.Pods().Delete(ctx, ns, name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setCondition adds or updates a pod condition; it reports whether
// anything changed (upstream: podutil.UpdatePodCondition).
func setCondition(s *corev1.PodStatus, c corev1.PodCondition, now time.Time) bool {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range s.Conditions {
		old := &s.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return false
		}
		*old = c
		return true
	}
	s.Conditions = append(s.Conditions, c)
	return true
}

func podRef(key string) *corev1.Pod {
	ns, name := controller.SplitKey(key)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func noExecuteTaints(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// getMatchingTolerations reports whether every taint is tolerated, and the
// toleration that matched each (upstream: v1helper.GetMatchingTolerations).
func getMatchingTolerations(taints []corev1.Taint, tolerations []corev1.Toleration) (bool, []corev1.Toleration) {
	var used []corev1.Toleration
	for i := range taints {
		found := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(klog.Background(), &taints[i], false) {
				used = append(used, tolerations[j])
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, used
}

// getMinTolerationTime is the shortest tolerationSeconds among tolerations:
// 0 for none at all or a non-positive one, -1 when every one tolerates
// forever.
func getMinTolerationTime(tolerations []corev1.Toleration) time.Duration {
	if len(tolerations) == 0 {
		return 0
	}
	least := int64(math.MaxInt64)
	for _, t := range tolerations {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return 0
		}
		least = min(least, *t.TolerationSeconds)
	}
	if least == math.MaxInt64 {
		return -1
	}
	return time.Duration(least) * time.Second
}
