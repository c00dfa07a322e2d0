// Package nodelifecycle is the node lifecycle controller: it watches every
// node's heartbeats and, when a node goes quiet, says so in the node's
// status and taints it, so that the scheduler stops sending it pods and the
// taint eviction controller (package tainteviction) moves its pods away.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/nodelifecycle
// (node_lifecycle_controller.go, scheduler/rate_limited_queue.go) and
// pkg/controller/util/node.
//
// A kubelet proves it is alive twice: it renews its Lease in kube-node-lease
// every 10 s (kubelet/lease.go) and posts the node's status (the Ready
// condition's lastHeartbeatTime). Every nodeMonitorPeriod (5 s) this
// controller looks at both. When neither moved for nodeMonitorGracePeriod
// (50 s), the node's conditions become Unknown:
//
//	t=0      kubelet on node-2 stops (kubetab: Cluster.StopNode)
//	t≈55s    (50 s after the last renewal seen, at the next 5 s pass)
//	         Ready=Unknown  NodeStatusUnknown  "Kubelet stopped posting node status."
//	         event NodeNotReady "Node node-2 status is now: NodeNotReady"
//	         pods on node-2: Ready=False, event NodeNotReady "Node is not ready"
//	         taint node.kubernetes.io/unreachable:NoSchedule  (no new pods)
//	t≈60s    taint node.kubernetes.io/unreachable:NoExecute   (next pass; rate limited per zone)
//	t≈360s   the pods' default toleration (300 s, from the DefaultTolerationSeconds
//	         admission plugin) runs out: the taint eviction controller deletes them
//	         and their ReplicaSets create replacements on other nodes; the evicted
//	         pods stay Terminating, as nothing can stop them on the lost node
//	later    the kubelet comes back: Ready=True, taints removed; it finishes the
//	         deletion of its evicted pods
//
// (core/cluster's TestNodeFailureEvictsAndReschedules runs this on a fake
// clock.)
//
// A node whose kubelet reports Ready=False (it is up but unwell) gets the
// node.kubernetes.io/not-ready taints instead; pressure conditions
// (MemoryPressure=True ...) and spec.unschedulable (`kubectl cordon`) get
// their NoSchedule taints too (TaintNodesByCondition).
//
// # Disruption
//
// If every node of a zone goes quiet at once, the likelier cause is the
// network between the control plane and the zone, not every machine: the
// controller then slows down or stops tainting (NoExecute) in that zone.
// A zone is in FullDisruption with no Ready node, PartialDisruption with at
// least 3 not-Ready nodes that are at least unhealthyZoneThreshold (55%) of
// it, else Normal. When every zone is fully disrupted the controller
// assumes it is the one cut off: it removes the NoExecute taints it set and
// taints nothing until a node reports again.
package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Defaults, kube-controller-manager's.
const (
	// DefaultNodeMonitorPeriod is --node-monitor-period: how often node
	// health is checked.
	DefaultNodeMonitorPeriod = 5 * time.Second
	// DefaultNodeMonitorGracePeriod is --node-monitor-grace-period: how long
	// a running node may be silent before it is Unknown (50 s since
	// Kubernetes 1.32; 40 s before).
	DefaultNodeMonitorGracePeriod = 50 * time.Second
	// DefaultNodeStartupGracePeriod is --node-startup-grace-period: the same
	// for a node that never posted a status.
	DefaultNodeStartupGracePeriod = 60 * time.Second
	// DefaultEvictionLimiterQPS is --node-eviction-rate: nodes tainted
	// NoExecute per second in a healthy zone.
	DefaultEvictionLimiterQPS = 0.1
	// DefaultSecondaryEvictionLimiterQPS is --secondary-node-eviction-rate:
	// the rate in a partially disrupted zone of a large cluster.
	DefaultSecondaryEvictionLimiterQPS = 0.01
	// DefaultLargeClusterThreshold is --large-cluster-size-threshold:
	// smaller clusters stop tainting in a partially disrupted zone.
	DefaultLargeClusterThreshold = 50
	// DefaultUnhealthyZoneThreshold is --unhealthy-zone-threshold.
	DefaultUnhealthyZoneThreshold = 0.55
	// DefaultWorkers is the number of NoSchedule tainting workers
	// (upstream nodeUpdateWorkerSize is 8; a tab needs fewer).
	DefaultWorkers = 2
	// Component is the event source and user agent.
	Component = "node-controller"
)

// Condition reasons and messages the controller writes, upstream's.
const (
	NodeStatusUnknownReason       = "NodeStatusUnknown"
	NodeStatusUnknownMessage      = "Kubelet stopped posting node status."
	NodeStatusNeverUpdatedReason  = "NodeStatusNeverUpdated"
	NodeStatusNeverUpdatedMessage = "Kubelet never posted node status."
)

// LabelNodeExcludeDisruption keeps a node out of the zone health count.
const LabelNodeExcludeDisruption = "node.kubernetes.io/exclude-disruption"

// The beta OS and arch labels, which the controller keeps equal to the
// stable ones (kubelet/pkg/apis).
const (
	LabelOSBeta   = "beta.kubernetes.io/os"
	LabelArchBeta = "beta.kubernetes.io/arch"
)

var (
	// UnreachableTaintTemplate is the NoExecute taint of a node whose
	// Ready condition is Unknown.
	UnreachableTaintTemplate = &corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	// NotReadyTaintTemplate is the NoExecute taint of a node whose Ready
	// condition is False.
	NotReadyTaintTemplate = &corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}

	// nodeConditionToTaintKey maps a condition and status to the key of its
	// NoSchedule taint.
	nodeConditionToTaintKey = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
		corev1.NodeReady:              {corev1.ConditionFalse: corev1.TaintNodeNotReady, corev1.ConditionUnknown: corev1.TaintNodeUnreachable},
		corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
		corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
		corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
		corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
	}
	// conditionTaintKeys are the NoSchedule taint keys the controller owns.
	conditionTaintKeys = map[string]bool{
		corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeNetworkUnavailable: true,
		corev1.TaintNodeMemoryPressure: true, corev1.TaintNodeDiskPressure: true, corev1.TaintNodePIDPressure: true,
	}
)

// ZoneState is the health of a zone.
type ZoneState string

// The zone states.
const (
	StateInitial           = ZoneState("Initial")
	StateNormal            = ZoneState("Normal")
	StateFullDisruption    = ZoneState("FullDisruption")
	StatePartialDisruption = ZoneState("PartialDisruption")
)

// Config configures the controller. Zero durations and rates take the
// defaults above.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times heartbeats, grace periods and rate limits; nil is the
	// real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Workers is the number of nodes whose NoSchedule taints are updated at
	// once (default 2).
	Workers int

	NodeMonitorPeriod           time.Duration
	NodeMonitorGracePeriod      time.Duration
	NodeStartupGracePeriod      time.Duration
	EvictionLimiterQPS          float64
	SecondaryEvictionLimiterQPS float64
	LargeClusterThreshold       int
	UnhealthyZoneThreshold      float64
}

// nodeHealthData is what the controller last saw of a node: when (on its
// own clock, never trusting the kubelet's) the node last showed a sign of
// life, and the status and Lease of that moment.
type nodeHealthData struct {
	probeTimestamp           time.Time
	readyTransitionTimestamp time.Time
	status                   *corev1.NodeStatus
	lease                    *coordinationv1.Lease
}

func (n *nodeHealthData) deepCopy() *nodeHealthData {
	if n == nil {
		return nil
	}
	return &nodeHealthData{
		probeTimestamp:           n.probeTimestamp,
		readyTransitionTimestamp: n.readyTransitionTimestamp,
		status:                   n.status.DeepCopy(),
		lease:                    n.lease.DeepCopy(),
	}
}

// Controller is the node lifecycle controller.
type Controller struct {
	client   *client.Client
	clock    clock.WithTickerAndDelayedExecution
	workers  int
	recorder *client.Recorder

	nodeInformer  *client.Informer[*corev1.Node]
	leaseInformer *client.Informer[*coordinationv1.Lease]
	podInformer   *client.Informer[*corev1.Pod]
	nodeQueue     *client.Queue[string] // NoSchedule taints and labels, by node name
	podQueue      *client.Queue[string] // pods newly bound, by "namespace/name"

	nodeMonitorPeriod           time.Duration
	nodeMonitorGracePeriod      time.Duration
	nodeStartupGracePeriod      time.Duration
	evictionLimiterQPS          float64
	secondaryEvictionLimiterQPS float64
	largeClusterThreshold       int
	unhealthyZoneThreshold      float64

	// healthMu guards nodeHealth (written by the monitor pass, read by the
	// pod workers).
	healthMu   sync.RWMutex
	nodeHealth map[string]*nodeHealthData

	// knownNodes and zoneStates belong to the monitor pass.
	knownNodes map[string]*corev1.Node
	zoneStates map[string]ZoneState
	// statesMu guards publishedStates, a copy of zoneStates after each pass.
	statesMu        sync.Mutex
	publishedStates map[string]ZoneState
	// nodesToRetry: nodes whose pods could not all be marked NotReady.
	nodesToRetry sync.Map

	// evictorMu guards zoneTainters. Lock order: evictorMu before a
	// queue's own mutex.
	evictorMu    sync.Mutex
	zoneTainters map[string]*RateLimitedTimedQueue
	// wakeTainter tells the tainting loop that a queue changed.
	wakeTainter chan struct{}
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("nodelifecycle: Config.Client is required")
	}
	if cfg.Workers < 0 || cfg.NodeMonitorPeriod < 0 || cfg.NodeMonitorGracePeriod < 0 || cfg.NodeStartupGracePeriod < 0 ||
		cfg.EvictionLimiterQPS < 0 || cfg.SecondaryEvictionLimiterQPS < 0 || cfg.LargeClusterThreshold < 0 || cfg.UnhealthyZoneThreshold < 0 {
		return nil, errors.New("nodelifecycle: Config values must not be negative")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.NodeMonitorPeriod, DefaultNodeMonitorPeriod)
	def(&cfg.NodeMonitorGracePeriod, DefaultNodeMonitorGracePeriod)
	def(&cfg.NodeStartupGracePeriod, DefaultNodeStartupGracePeriod)
	if cfg.NodeMonitorGracePeriod <= cfg.NodeMonitorPeriod {
		return nil, fmt.Errorf("nodelifecycle: NodeMonitorGracePeriod (%v) must be longer than NodeMonitorPeriod (%v)", cfg.NodeMonitorGracePeriod, cfg.NodeMonitorPeriod)
	}
	if cfg.EvictionLimiterQPS == 0 {
		cfg.EvictionLimiterQPS = DefaultEvictionLimiterQPS
	}
	if cfg.SecondaryEvictionLimiterQPS == 0 {
		cfg.SecondaryEvictionLimiterQPS = DefaultSecondaryEvictionLimiterQPS
	}
	if cfg.LargeClusterThreshold == 0 {
		cfg.LargeClusterThreshold = DefaultLargeClusterThreshold
	}
	if cfg.UnhealthyZoneThreshold == 0 {
		cfg.UnhealthyZoneThreshold = DefaultUnhealthyZoneThreshold
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	leases := client.For[*coordinationv1.Lease](cfg.Client, coordinationv1.GroupName, "leases")
	nc := &Controller{
		client:                      cfg.Client,
		clock:                       cfg.Clock,
		workers:                     cfg.Workers,
		recorder:                    client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		nodeInformer:                client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{}),
		leaseInformer:               client.NewInformer(leases, corev1.NamespaceNodeLease, client.ListOptions{}),
		podInformer:                 client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		nodeQueue:                   client.NewQueue[string](cfg.Clock),
		podQueue:                    client.NewQueue[string](cfg.Clock),
		nodeMonitorPeriod:           cfg.NodeMonitorPeriod,
		nodeMonitorGracePeriod:      cfg.NodeMonitorGracePeriod,
		nodeStartupGracePeriod:      cfg.NodeStartupGracePeriod,
		evictionLimiterQPS:          cfg.EvictionLimiterQPS,
		secondaryEvictionLimiterQPS: cfg.SecondaryEvictionLimiterQPS,
		largeClusterThreshold:       cfg.LargeClusterThreshold,
		unhealthyZoneThreshold:      cfg.UnhealthyZoneThreshold,
		nodeHealth:                  map[string]*nodeHealthData{},
		knownNodes:                  map[string]*corev1.Node{},
		zoneStates:                  map[string]ZoneState{},
		zoneTainters:                map[string]*RateLimitedTimedQueue{},
		wakeTainter:                 make(chan struct{}, 1),
	}
	nc.podInformer.AddIndex(NodeNameIndex, IndexPodByNodeName)
	nc.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod) { nc.podUpdated(nil, p) },
		OnUpdate: nc.podUpdated,
	})
	nc.nodeInformer.AddHandler(client.Handler[*corev1.Node]{
		OnAdd:    func(n *corev1.Node) { nc.nodeQueue.Add(n.Name) },
		OnUpdate: func(_, n *corev1.Node) { nc.nodeQueue.Add(n.Name) },
	})
	return nc, nil
}

// NodeNameIndex indexes pods by spec.nodeName (unbound pods are not indexed).
const NodeNameIndex = "spec.nodeName"

// IndexPodByNodeName is the NodeNameIndex function.
func IndexPodByNodeName(p *corev1.Pod) []string {
	if p.Spec.NodeName == "" {
		return nil
	}
	return []string{p.Spec.NodeName}
}

// HasSynced reports whether the controller's caches hold their first lists.
func (nc *Controller) HasSynced() bool { return controller.Synced(nc.informers()...) }

func (nc *Controller) informers() []controller.Informer {
	return []controller.Informer{nc.nodeInformer, nc.leaseInformer, nc.podInformer}
}

// Run watches nodes, Leases and pods, and until ctx is done: checks node
// health every NodeMonitorPeriod, taints nodes, and marks the pods of
// failed nodes NotReady.
func (nc *Controller) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer nc.podQueue.ShutDown()

	informers := nc.informers()
	runErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The informers and the NoSchedule workers (doNoScheduleTaintingPass).
		runErr <- controller.Run(ctx, Component, informers,
			controller.Worker[string]{Queue: nc.nodeQueue, Workers: nc.workers, Reconcile: nc.Reconcile})
	}()
	if !client.WaitForCacheSync(ctx, nc.HasSynced) {
		cancel()
		return <-runErr
	}
	wg.Add(3)
	go func() { defer wg.Done(); nc.podWorker(ctx) }()
	go func() { defer wg.Done(); nc.taintingLoop(ctx) }()
	go func() { defer wg.Done(); nc.monitorLoop(ctx) }()
	<-ctx.Done()
	return <-runErr
}

// monitorLoop runs monitorNodeHealth now and every nodeMonitorPeriod.
func (nc *Controller) monitorLoop(ctx context.Context) {
	t := nc.clock.NewTicker(nc.nodeMonitorPeriod)
	defer t.Stop()
	for {
		nc.monitorNodeHealth(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// --- pods ---

// podUpdated queues a pod that was just bound to a node: if the node is
// already known not to be Ready, the pod is marked NotReady too.
func (nc *Controller) podUpdated(old, cur *corev1.Pod) {
	if cur.Spec.NodeName != "" && (old == nil || old.Spec.NodeName != cur.Spec.NodeName) {
		nc.podQueue.Add(client.Key(cur))
	}
}

func (nc *Controller) podWorker(ctx context.Context) {
	for {
		key, ok := nc.podQueue.Get(ctx)
		if !ok {
			return
		}
		if err := nc.processPod(ctx, key); err != nil {
			nc.podQueue.AddRateLimited(key)
		} else {
			nc.podQueue.Forget(key)
		}
		nc.podQueue.Done(key)
	}
}

// processPod marks a pod NotReady if its node is not Ready (upstream:
// processPod).
func (nc *Controller) processPod(ctx context.Context, key string) error {
	ns, name := controller.SplitKey(key)
	pod, ok := nc.podInformer.Get(ns, name)
	if !ok {
		return nil
	}
	nc.healthMu.RLock()
	health := nc.nodeHealth[pod.Spec.NodeName].deepCopy()
	nc.healthMu.RUnlock()
	if health == nil {
		return nil // not seen by a monitor pass yet: the pass will handle it
	}
	if _, ok := nc.nodeInformer.Get("", pod.Spec.NodeName); !ok {
		return fmt.Errorf("node %q of pod %s is not in the cache", pod.Spec.NodeName, key)
	}
	ready := getNodeCondition(health.status, corev1.NodeReady)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return nil
	}
	return nc.markPodsNotReady(ctx, []*corev1.Pod{pod}, pod.Spec.NodeName)
}

// markPodsNotReady sets the Ready condition of the node's pods to False and
// records NodeNotReady on each (upstream: MarkPodsNotReady). Endpoints
// controllers then drop the pods from their Services.
func (nc *Controller) markPodsNotReady(ctx context.Context, pods []*corev1.Pod, nodeName string) error {
	var errs []error
	for _, p := range pods {
		if p.Spec.NodeName != nodeName {
			continue
		}
		pod := p.DeepCopy()
		for i := range pod.Status.Conditions {
			c := &pod.Status.Conditions[i]
			if c.Type != corev1.PodReady {
				continue
			}
			if c.Status == corev1.ConditionFalse {
				break
			}
			c.Status = corev1.ConditionFalse
			c.LastTransitionTime = metav1.NewTime(nc.clock.Now())
			if _, err := nc.client.Pods().UpdateStatus(ctx, pod); err != nil {
				if apierrors.IsNotFound(err) {
					break
				}
				errs = append(errs, err)
				break
			}
			nc.recorder.Event(pod, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready")
			break
		}
	}
	return errors.Join(errs...)
}

// --- NoSchedule taints and labels (one node at a time, from the queue) ---

// Reconcile brings the NoSchedule taints of a node in line with its
// conditions and spec.unschedulable, and its beta OS and arch labels with
// the stable ones (upstream: doNoScheduleTaintingPass, reconcileNodeLabels).
func (nc *Controller) Reconcile(ctx context.Context, name string) error {
	node, ok := nc.nodeInformer.Get("", name)
	if !ok {
		return nil
	}
	var want []corev1.Taint
	for _, c := range node.Status.Conditions {
		if key, ok := nodeConditionToTaintKey[c.Type][c.Status]; ok {
			want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		want = append(want, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	var have []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule && (t.Key == corev1.TaintNodeUnschedulable || conditionTaintKeys[t.Key]) {
			have = append(have, t)
		}
	}
	if toAdd, toRemove := taintSetDiff(want, have); len(toAdd) > 0 || len(toRemove) > 0 {
		if err := swapNodeControllerTaint(ctx, nc.client, nc.clock.Now(), toAdd, toRemove, node); err != nil {
			return err
		}
	}
	return nc.reconcileNodeLabels(ctx, node)
}

func (nc *Controller) reconcileNodeLabels(ctx context.Context, node *corev1.Node) error {
	update := map[string]string{}
	for stable, beta := range map[string]string{corev1.LabelOSStable: LabelOSBeta, corev1.LabelArchStable: LabelArchBeta} {
		if v, ok := node.Labels[stable]; ok && node.Labels[beta] != v {
			update[beta] = v
		}
	}
	if len(update) == 0 {
		return nil
	}
	var err error
	for i := 0; i < updateTaintRetries; i++ {
		var n *corev1.Node
		if n, err = nc.client.Nodes().Get(ctx, "", node.Name); err != nil {
			return err
		}
		n = n.DeepCopy()
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range update {
			n.Labels[k] = v
		}
		if _, err = nc.client.Nodes().Update(ctx, n); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// --- node health ---

// monitorNodeHealth is one pass over every node: it marks silent nodes
// Unknown, queues not-Ready nodes for their NoExecute taint, marks the pods
// of newly failed nodes NotReady, and updates the zones' states.
func (nc *Controller) monitorNodeHealth(ctx context.Context) {
	nodes := nc.nodeInformer.List()
	added, deleted, newZoneRepresentatives := nc.classifyNodes(nodes)
	for _, n := range newZoneRepresentatives {
		nc.addZoneTainter(n)
	}
	for _, n := range added {
		nc.recordNodeEvent(n, corev1.EventTypeNormal, "RegisteredNode", fmt.Sprintf("Registered Node %v in Controller", n.Name))
		nc.knownNodes[n.Name] = n
		nc.addZoneTainter(n)
		_, _ = nc.markNodeAsReachable(ctx, n)
	}
	for _, n := range deleted {
		nc.recordNodeEvent(n, corev1.EventTypeNormal, "RemovingNode", fmt.Sprintf("Removing Node %v from Controller", n.Name))
		delete(nc.knownNodes, n.Name)
		nc.nodesToRetry.Delete(n.Name)
		nc.healthMu.Lock()
		delete(nc.nodeHealth, n.Name)
		nc.healthMu.Unlock()
	}

	zoneConditions := map[string][]*corev1.NodeCondition{}
	for _, cached := range nodes {
		node := cached.DeepCopy()
		var observed corev1.NodeCondition
		var current *corev1.NodeCondition
		var err error
		for i := 0; i < NodeHealthUpdateRetry; i++ {
			if observed, current, err = nc.tryUpdateNodeHealth(ctx, node); err == nil {
				break
			}
			if node, err = nc.client.Nodes().Get(ctx, "", cached.Name); err != nil {
				break // deleted meanwhile
			}
		}
		if err != nil {
			continue // no pods will be evicted from it in this pass
		}
		if _, excluded := node.Labels[LabelNodeExcludeDisruption]; !excluded {
			zone := GetZoneKey(node)
			zoneConditions[zone] = append(zoneConditions[zone], current)
		}
		if current == nil {
			continue
		}
		nc.processTaintBaseEviction(ctx, node, &observed)
		_, needsRetry := nc.nodesToRetry.Load(node.Name)
		failedNow := current.Status != corev1.ConditionTrue && observed.Status == corev1.ConditionTrue
		if failedNow {
			nc.recordNodeStatusChange(node, "NodeNotReady")
		}
		if failedNow || (needsRetry && observed.Status != corev1.ConditionTrue) {
			pods := nc.podInformer.ByIndex(NodeNameIndex, node.Name)
			if err := nc.markPodsNotReady(ctx, pods, node.Name); err != nil {
				nc.nodesToRetry.Store(node.Name, struct{}{})
				continue
			}
		}
		nc.nodesToRetry.Delete(node.Name)
	}
	nc.handleDisruption(ctx, zoneConditions, nodes)
	states := make(map[string]ZoneState, len(nc.zoneStates))
	for k, v := range nc.zoneStates {
		states[k] = v
	}
	nc.statesMu.Lock()
	nc.publishedStates = states
	nc.statesMu.Unlock()
	nc.kickTainter()
}

// tryUpdateNodeHealth decides whether a node is alive and, if it has been
// silent too long, writes its conditions as Unknown. It returns the Ready
// condition as it was (observed) and as it is now (current, nil if none).
func (nc *Controller) tryUpdateNodeHealth(ctx context.Context, node *corev1.Node) (corev1.NodeCondition, *corev1.NodeCondition, error) {
	now := nc.clock.Now()
	nc.healthMu.RLock()
	health := nc.nodeHealth[node.Name].deepCopy()
	nc.healthMu.RUnlock()
	defer func() {
		nc.healthMu.Lock()
		nc.nodeHealth[node.Name] = health
		nc.healthMu.Unlock()
	}()

	var gracePeriod time.Duration
	var observed corev1.NodeCondition
	current := getNodeCondition(&node.Status, corev1.NodeReady)
	if current == nil {
		// The kubelet never posted a status: pretend it did, Unknown, when
		// the node was created, and give it the longer startup grace.
		observed = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: node.CreationTimestamp}
		gracePeriod = nc.nodeStartupGracePeriod
		if health != nil {
			health.status = &node.Status
		} else {
			health = &nodeHealthData{status: &node.Status, probeTimestamp: node.CreationTimestamp.Time,
				readyTransitionTimestamp: node.CreationTimestamp.Time}
		}
	} else {
		observed = *current
		gracePeriod = nc.nodeMonitorGracePeriod
	}

	// A new heartbeat (the Ready condition's lastHeartbeatTime moved) is a
	// sign of life, timed by this controller's clock.
	var saved *corev1.NodeCondition
	var savedLease *coordinationv1.Lease
	if health != nil {
		saved = getNodeCondition(health.status, corev1.NodeReady)
		savedLease = health.lease
	}
	switch {
	case health == nil:
		health = &nodeHealthData{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: now}
	case saved == nil && current != nil, saved != nil && current == nil:
		health = &nodeHealthData{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: now}
	case saved != nil && current != nil && !saved.LastHeartbeatTime.Equal(&current.LastHeartbeatTime):
		transition := health.readyTransitionTimestamp
		if !saved.LastTransitionTime.Equal(&current.LastTransitionTime) {
			transition = now
		}
		health = &nodeHealthData{status: &node.Status, probeTimestamp: now, readyTransitionTimestamp: transition}
	}
	// So is a renewed Lease.
	lease, _ := nc.leaseInformer.Get(corev1.NamespaceNodeLease, node.Name)
	if lease != nil && lease.Spec.RenewTime != nil &&
		(savedLease == nil || savedLease.Spec.RenewTime == nil || savedLease.Spec.RenewTime.Before(lease.Spec.RenewTime)) {
		health.lease = lease
		health.probeTimestamp = now
	}

	if !now.After(health.probeTimestamp.Add(gracePeriod)) {
		return observed, current, nil
	}
	// Silent for longer than the grace period: every condition the kubelet
	// owns becomes Unknown (NetworkUnavailable belongs to the network
	// plugin and is left alone).
	ts := metav1.NewTime(now)
	for _, t := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		c := getNodeCondition(&node.Status, t)
		if c == nil {
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
				Type: t, Status: corev1.ConditionUnknown, Reason: NodeStatusNeverUpdatedReason, Message: NodeStatusNeverUpdatedMessage,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: ts,
			})
		} else if c.Status != corev1.ConditionUnknown {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionUnknown, NodeStatusUnknownReason, NodeStatusUnknownMessage, ts
		}
	}
	current = getNodeCondition(&node.Status, corev1.NodeReady)
	if equality.Semantic.DeepEqual(current, &observed) {
		return observed, current, nil
	}
	updated, err := nc.client.Nodes().UpdateStatus(ctx, node)
	if err != nil {
		return observed, current, err
	}
	health = &nodeHealthData{status: &updated.Status, probeTimestamp: health.probeTimestamp, readyTransitionTimestamp: now, lease: lease}
	return observed, current, nil
}

// processTaintBaseEviction queues a not-Ready node for its NoExecute taint,
// swaps not-ready and unreachable at once when the Ready status changes
// between False and Unknown, and untaints a Ready node.
func (nc *Controller) processTaintBaseEviction(ctx context.Context, node *corev1.Node, observed *corev1.NodeCondition) {
	now := nc.clock.Now()
	switch observed.Status {
	case corev1.ConditionFalse:
		if TaintExists(node.Spec.Taints, UnreachableTaintTemplate) {
			_ = swapNodeControllerTaint(ctx, nc.client, now, []*corev1.Taint{NotReadyTaintTemplate}, []*corev1.Taint{UnreachableTaintTemplate}, node)
		} else {
			nc.markNodeForTainting(node, corev1.ConditionFalse)
		}
	case corev1.ConditionUnknown:
		if TaintExists(node.Spec.Taints, NotReadyTaintTemplate) {
			_ = swapNodeControllerTaint(ctx, nc.client, now, []*corev1.Taint{UnreachableTaintTemplate}, []*corev1.Taint{NotReadyTaintTemplate}, node)
		} else {
			nc.markNodeForTainting(node, corev1.ConditionUnknown)
		}
	case corev1.ConditionTrue:
		_, _ = nc.markNodeAsReachable(ctx, node)
	}
}

// markNodeForTainting queues a node for its NoExecute taint. A node queued
// for the other status (not-ready vs unreachable) is queued afresh.
func (nc *Controller) markNodeForTainting(node *corev1.Node, status corev1.ConditionStatus) bool {
	nc.evictorMu.Lock()
	q := nc.zoneTainters[GetZoneKey(node)]
	nc.evictorMu.Unlock()
	if q == nil {
		return false
	}
	if status == corev1.ConditionFalse && !TaintExists(node.Spec.Taints, NotReadyTaintTemplate) ||
		status == corev1.ConditionUnknown && !TaintExists(node.Spec.Taints, UnreachableTaintTemplate) {
		q.Remove(node.Name)
	}
	// The tainting loop is woken at the end of the pass, once the zones'
	// states (which may stop tainting altogether) are up to date.
	return q.Add(node.Name, string(node.UID), nc.clock.Now())
}

// markNodeAsReachable removes both NoExecute taints and takes the node out
// of its tainting queue.
func (nc *Controller) markNodeAsReachable(ctx context.Context, node *corev1.Node) (bool, error) {
	if err := removeTaints(ctx, nc.client, node.Name, node, UnreachableTaintTemplate, NotReadyTaintTemplate); err != nil {
		return false, err
	}
	nc.evictorMu.Lock()
	q := nc.zoneTainters[GetZoneKey(node)]
	nc.evictorMu.Unlock()
	if q == nil {
		return false, nil
	}
	return q.Remove(node.Name), nil
}

// --- NoExecute tainting, rate limited per zone ---

func (nc *Controller) kickTainter() {
	select {
	case nc.wakeTainter <- struct{}{}:
	default:
	}
}

// taintingLoop taints the queued nodes of every zone as fast as each
// zone's limiter allows, sleeping on the clock until the next one is due
// (upstream polls doNoExecuteTaintingPass every 100 ms).
func (nc *Controller) taintingLoop(ctx context.Context) {
	for {
		next := nc.doNoExecuteTaintingPass(ctx)
		var timer clock.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = nc.clock.NewTimer(next.Sub(nc.clock.Now()))
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-nc.wakeTainter:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// doNoExecuteTaintingPass tries the due nodes of every zone and returns
// when the next one is due (zero: nothing is).
func (nc *Controller) doNoExecuteTaintingPass(ctx context.Context) time.Time {
	nc.evictorMu.Lock()
	queues := make([]*RateLimitedTimedQueue, 0, len(nc.zoneTainters))
	for _, q := range nc.zoneTainters {
		queues = append(queues, q)
	}
	nc.evictorMu.Unlock()
	var next time.Time
	for _, q := range queues {
		n := q.Try(nc.clock.Now, func(v TimedValue) (bool, time.Duration) {
			node, ok := nc.nodeInformer.Get("", v.Value)
			if !ok {
				return true, 0 // gone
			}
			// When the monitor pass has just written Unknown, its own view
			// is fresher than the cache (upstream's 100 ms polling gives the
			// cache time to catch up; a woken loop does not wait). A newer
			// heartbeat in the cache (the kubelet is back) wins.
			ready := getNodeCondition(&node.Status, corev1.NodeReady)
			nc.healthMu.RLock()
			if h := nc.nodeHealth[v.Value]; h != nil && ready != nil {
				if c := getNodeCondition(h.status, corev1.NodeReady); c != nil && c.Status != corev1.ConditionTrue &&
					c.LastHeartbeatTime.Equal(&ready.LastHeartbeatTime) {
					ready = c.DeepCopy()
				}
			}
			nc.healthMu.RUnlock()
			if ready == nil {
				return false, 50 * time.Millisecond
			}
			var add, opposite *corev1.Taint
			switch ready.Status {
			case corev1.ConditionFalse:
				add, opposite = NotReadyTaintTemplate, UnreachableTaintTemplate
			case corev1.ConditionUnknown:
				add, opposite = UnreachableTaintTemplate, NotReadyTaintTemplate
			default:
				return true, 0 // Ready again: nothing to taint
			}
			err := swapNodeControllerTaint(ctx, nc.client, nc.clock.Now(), []*corev1.Taint{add}, []*corev1.Taint{opposite}, node)
			return err == nil, 0
		})
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next
}

// --- zones ---

// GetZoneKey is the zone a node counts in: its region and zone labels
// (topology.kubernetes.io/..., or the old failure-domain.beta ones), or ""
// for a node without them (upstream: k8s.io/component-helpers/node/topology).
func GetZoneKey(node *corev1.Node) string {
	l := node.Labels
	region, zone := l[corev1.LabelTopologyRegion], l[corev1.LabelTopologyZone]
	if region == "" {
		region = l[corev1.LabelFailureDomainBetaRegion]
	}
	if zone == "" {
		zone = l[corev1.LabelFailureDomainBetaZone]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// classifyNodes splits nodes into newly seen ones, known ones that are
// gone, and known ones whose zone is new.
func (nc *Controller) classifyNodes(nodes []*corev1.Node) (added, deleted, newZoneRepresentatives []*corev1.Node) {
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		seen[n.Name] = true
		if _, ok := nc.knownNodes[n.Name]; !ok {
			added = append(added, n)
		} else if _, ok := nc.zoneStates[GetZoneKey(n)]; !ok {
			newZoneRepresentatives = append(newZoneRepresentatives, n)
		}
	}
	for name, n := range nc.knownNodes {
		if !seen[name] {
			deleted = append(deleted, n)
		}
	}
	return added, deleted, newZoneRepresentatives
}

// addZoneTainter starts the tainting queue of a node's zone if it is new.
func (nc *Controller) addZoneTainter(node *corev1.Node) {
	zone := GetZoneKey(node)
	if _, ok := nc.zoneStates[zone]; ok {
		return
	}
	nc.zoneStates[zone] = StateInitial
	nc.evictorMu.Lock()
	nc.zoneTainters[zone] = NewRateLimitedTimedQueue(nc.evictionLimiterQPS)
	nc.evictorMu.Unlock()
}

// ComputeZoneState counts the not-Ready nodes of a zone (nil conditions
// count as not Ready) and names the zone's state.
func (nc *Controller) ComputeZoneState(conditions []*corev1.NodeCondition) (int, ZoneState) {
	ready, notReady := 0, 0
	for _, c := range conditions {
		if c != nil && c.Status == corev1.ConditionTrue {
			ready++
		} else {
			notReady++
		}
	}
	switch {
	case ready == 0 && notReady > 0:
		return notReady, StateFullDisruption
	case notReady > 2 && float64(notReady)/float64(notReady+ready) >= nc.unhealthyZoneThreshold:
		return notReady, StatePartialDisruption
	}
	return notReady, StateNormal
}

// handleDisruption updates the zones' states and their tainting rates:
// Normal taints at evictionLimiterQPS; PartialDisruption at the secondary
// rate in a large cluster and not at all in a small one; FullDisruption at
// the normal rate, unless every zone is fully disrupted: then nothing is
// tainted and the NoExecute taints are removed.
func (nc *Controller) handleDisruption(ctx context.Context, zoneConditions map[string][]*corev1.NodeCondition, nodes []*corev1.Node) {
	newStates := map[string]ZoneState{}
	allAreFullyDisrupted := true
	for zone, conds := range zoneConditions {
		_, state := nc.ComputeZoneState(conds)
		if state != StateFullDisruption {
			allAreFullyDisrupted = false
		}
		newStates[zone] = state
		if _, had := nc.zoneStates[zone]; !had {
			nc.zoneStates[zone] = StateInitial
		}
	}
	allWasFullyDisrupted := true
	for zone, state := range nc.zoneStates {
		if _, ok := zoneConditions[zone]; !ok {
			delete(nc.zoneStates, zone)
			continue
		}
		if state != StateFullDisruption {
			allWasFullyDisrupted = false
			break
		}
	}
	if allAreFullyDisrupted && allWasFullyDisrupted {
		return
	}
	now := nc.clock.Now()
	switch {
	case allAreFullyDisrupted:
		// Entering master disruption mode: we are probably the ones cut off.
		for _, n := range nodes {
			_, _ = nc.markNodeAsReachable(ctx, n)
		}
		for zone := range nc.zoneStates {
			nc.setLimiter(zone, 0, now)
			nc.zoneStates[zone] = StateFullDisruption
		}
	case allWasFullyDisrupted:
		// Leaving it: every node starts a fresh grace period.
		nc.healthMu.Lock()
		for _, n := range nodes {
			if h := nc.nodeHealth[n.Name]; h != nil {
				h.probeTimestamp, h.readyTransitionTimestamp = now, now
			}
		}
		nc.healthMu.Unlock()
		for zone := range nc.zoneStates {
			nc.setLimiter(zone, nc.zoneQPS(len(zoneConditions[zone]), newStates[zone]), now)
			nc.zoneStates[zone] = newStates[zone]
		}
	default:
		for zone, state := range nc.zoneStates {
			if newStates[zone] == state {
				continue
			}
			nc.setLimiter(zone, nc.zoneQPS(len(zoneConditions[zone]), newStates[zone]), now)
			nc.zoneStates[zone] = newStates[zone]
		}
	}
}

// zoneQPS is the tainting rate of a zone of size nodes in state.
func (nc *Controller) zoneQPS(size int, state ZoneState) float64 {
	switch state {
	case StatePartialDisruption:
		if size > nc.largeClusterThreshold {
			return nc.secondaryEvictionLimiterQPS
		}
		return 0
	}
	return nc.evictionLimiterQPS
}

func (nc *Controller) setLimiter(zone string, qps float64, now time.Time) {
	nc.evictorMu.Lock()
	q := nc.zoneTainters[zone]
	nc.evictorMu.Unlock()
	if q != nil {
		q.SwapLimiter(qps, now)
		nc.kickTainter()
	}
}

// ZoneStates returns the zones' states (keyed by GetZoneKey) as of the last
// monitor pass: for tests and for the UI.
func (nc *Controller) ZoneStates() map[string]ZoneState {
	nc.statesMu.Lock()
	defer nc.statesMu.Unlock()
	out := make(map[string]ZoneState, len(nc.publishedStates))
	for k, v := range nc.publishedStates {
		out[k] = v
	}
	return out
}

// --- events and helpers ---

// recordNodeEvent records "Node node-1 event: <message>" about a node.
func (nc *Controller) recordNodeEvent(node *corev1.Node, eventtype, reason, message string) {
	nc.recorder.Eventf(nodeRef(node), eventtype, reason, "Node %s event: %s", node.Name, message)
}

// recordNodeStatusChange records "Node node-1 status is now: NodeNotReady".
func (nc *Controller) recordNodeStatusChange(node *corev1.Node, status string) {
	nc.recorder.Eventf(nodeRef(node), corev1.EventTypeNormal, status, "Node %s status is now: %s", node.Name, status)
}

func nodeRef(node *corev1.Node) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: node.UID}}
}

func getNodeCondition(status *corev1.NodeStatus, t corev1.NodeConditionType) *corev1.NodeCondition {
	if status == nil {
		return nil
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}
