package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet/cni"
	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// Defaults, upstream's (KubeletConfiguration and pkg/kubelet/kubelet.go).
const (
	// DefaultNodeStatusUpdateFrequency is how often the kubelet posts the
	// node's status (nodeStatusUpdateFrequency).
	DefaultNodeStatusUpdateFrequency = 10 * time.Second
	// syncFrequency is how often every pod is synced even without news, so a
	// missed event heals (syncFrequency, 1 min).
	syncFrequency = time.Minute
	// podWorkers is how many pods are synced at once. Upstream runs one
	// goroutine per pod; a bounded pool is kinder to a browser tab, where
	// pulls compile on the one thread anyway.
	podWorkers = 4
	// nodeStatusUpdateRetry is how many times a status write is retried on a
	// conflict before waiting for the next period.
	nodeStatusUpdateRetry = 5
	// pullRetryDelay is how soon a pod whose image pull failed is synced
	// again, to show ImagePullBackOff. Upstream the next sync comes from the
	// sandbox's own events within about a second.
	pullRetryDelay = time.Second
	// sandboxRetryDelay is how soon a pod whose network could not be set up is
	// tried again (the pod worker's back-off period).
	sandboxRetryDelay = 10 * time.Second
)

// Version is the kubelet version reported in node.status.nodeInfo, the same
// Kubernetes release the API server reports (`kubectl get nodes` VERSION).
const Version = "v1.37.2-kubetab"

// Config configures one node's kubelet.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// NodeName is the name of the Node object (and the node's hostname).
	// Required; a DNS subdomain.
	NodeName string
	// Runtime is the node's container runtime. Required.
	//
	// The kubelet learns that a container exited from the runtime's events:
	// create the runtime with cri.Config.OnEvent calling this kubelet's
	// HandleContainerEvent (a closure over a variable set once New returns).
	// Without that wiring an exit is noticed only at the next periodic sync
	// (once a minute).
	Runtime *cri.Runtime
	// Clock drives heartbeats, back-offs and timestamps. Nil means the real
	// clock. Use the runtime's clock.
	Clock clock.WithTickerAndDelayedExecution
	// PodCIDR is the range pod IPs come from ("10.244.1.0/24"), written to
	// node.spec.podCIDR when the node is registered. Empty means "use the
	// Node's spec.podCIDR", as set by whoever allocates ranges (upstream the
	// controller-manager's nodeipam controller); until it is set, pods cannot
	// start.
	PodCIDR string
	// NodeIP is the node's InternalIP address, also every pod's hostIP.
	// Required; IPv4.
	NodeIP string
	// Capacity is what the node offers. Missing entries get the defaults:
	// cpu 4, memory 8Gi, pods 110. Allocatable equals capacity (no system
	// reservations).
	Capacity corev1.ResourceList
	// Labels are added to the node's well-known labels (kubernetes.io/hostname,
	// kubernetes.io/os, kubernetes.io/arch) when it is registered, and may
	// override them.
	Labels map[string]string
	// RegisterWithTaints are the taints the node starts with (upstream
	// --register-with-taints): set when the kubelet creates its Node, and
	// not touched again, so `kubectl taint` changes stay. Each must be
	// valid (a qualified key, a label value, an effect of NoSchedule,
	// PreferNoSchedule or NoExecute).
	RegisterWithTaints []corev1.Taint
	// NodeStatusUpdateFrequency is the heartbeat period; 0 means
	// DefaultNodeStatusUpdateFrequency.
	NodeStatusUpdateFrequency time.Duration
	// EvictionHard is the eviction manager's hard threshold for
	// memory.available (eviction.go); zero means DefaultEvictionHard
	// (upstream --eviction-hard memory.available<100Mi).
	EvictionHard resource.Quantity
}

// Kubelet is the node agent of one node. Create it with New and start it with
// Run; Run can be cancelled and called again (a stopped kubelet leaves its
// containers running, as on a real node).
type Kubelet struct {
	client          *client.Client
	nodeName        string
	runtime         *cri.Runtime
	clock           clock.WithTickerAndDelayedExecution
	recorder        *client.Recorder
	nodeIP          string
	capacity        corev1.ResourceList
	labels          map[string]string
	taints          []corev1.Taint // registered with
	statusFrequency time.Duration
	bootID          string

	images        *imageManager
	crashBackOff  *backOff // restart back-off per container, keyed "<pod UID>/<container name>"
	volumeBackOff *backOff // set up retries per volume, keyed "<pod UID>/<volume name>"
	probes        *proberManager
	stats         statsCache
	eviction      evictionManager // eviction.go
	running       atomic.Bool
	heartbeats    atomic.Int64 // node status updates done, for tests

	// mu guards the fields below. It is never held across a CRI call, an API
	// call or an event. Lock order: mu before backOff.mu and imageManager.mu
	// (in practice they are never held together).
	mu       sync.Mutex
	podCIDR  string
	network  *cni.Network // nil until the podCIDR is known
	pods     map[types.UID]*podRecord
	queue    *client.Queue[types.UID]      // nil while Run is not running
	informer *client.Informer[*corev1.Pod] // nil while Run is not running
	// The watch caches of what pods refer to (config_objects.go, env.go);
	// nil while Run is not running.
	serviceInformer *client.Informer[*corev1.Service]
}

// podRecord is what the kubelet remembers about one of its pods between
// syncs, the small part of upstream's pod worker and status manager state
// that the runtime cannot tell: everything else is read back from the
// runtime on each sync.
type podRecord struct {
	pod       *corev1.Pod // last seen API object; read-only
	startTime time.Time   // when the kubelet first saw the pod: status.startTime
	// reasons is upstream's ReasonCache: why a container is waiting
	// (ErrImagePull, CrashLoopBackOff ...), by container name. Cleared when
	// the container starts.
	reasons map[string]waitingReason
	// restartForChange names containers stopped because their spec changed:
	// they start again whatever the restartPolicy.
	restartForChange map[string]bool
	// status is the last status the kubelet generated, what `kubectl logs`
	// checks the container against.
	status *corev1.PodStatus
	// volumes are the pod's volumes that were set up, by name.
	volumes map[string]*mountedVolume
	// written is the pod as the kubelet's last status write returned it;
	// writtenFrom the resourceVersion that write replaced.
	written     *corev1.Pod
	writtenFrom string
	// termMessages caches exited containers' termination messages, by
	// container ID: they are read from a file or the log once.
	termMessages map[string]string
	// oldSandbox holds the IDs of the containers of a sandbox the pod lost
	// (pod_workers.go: the machine rebooted), once a new one was made.
	oldSandbox map[string]bool
	// evicted is the eviction manager's message once it evicted the pod
	// (eviction.go); "" while it was not.
	evicted string
}

type waitingReason struct {
	Reason, Message string
}

// New validates cfg and returns a kubelet that is not running yet.
func New(cfg Config) (*Kubelet, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("kubelet: Config.Client is required")
	case cfg.Runtime == nil:
		return nil, errors.New("kubelet: Config.Runtime is required")
	case cfg.NodeName == "":
		return nil, errors.New("kubelet: Config.NodeName is required")
	case cfg.NodeStatusUpdateFrequency < 0:
		return nil, errors.New("kubelet: Config.NodeStatusUpdateFrequency must not be negative")
	}
	if msgs := validation.IsDNS1123Subdomain(cfg.NodeName); len(msgs) > 0 {
		return nil, fmt.Errorf("kubelet: Config.NodeName %q: %s", cfg.NodeName, msgs[0])
	}
	ip, err := netip.ParseAddr(cfg.NodeIP)
	if err != nil || !ip.Is4() {
		return nil, fmt.Errorf("kubelet: Config.NodeIP %q must be an IPv4 address", cfg.NodeIP)
	}
	var network *cni.Network
	if cfg.PodCIDR != "" {
		if network, err = cni.New(cfg.PodCIDR); err != nil {
			return nil, fmt.Errorf("kubelet: Config.PodCIDR: %w", err)
		}
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range cfg.Capacity {
		capacity[k] = v.DeepCopy()
	}
	freq := cfg.NodeStatusUpdateFrequency
	if freq == 0 {
		freq = DefaultNodeStatusUpdateFrequency
	}
	labels := map[string]string{}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	kl := &Kubelet{
		client:          cfg.Client,
		nodeName:        cfg.NodeName,
		runtime:         cfg.Runtime,
		clock:           clk,
		recorder:        client.NewRecorder(cfg.Client, "kubelet", cfg.NodeName, &eventClock{PassiveClock: clk}),
		nodeIP:          ip.String(),
		capacity:        capacity,
		labels:          labels,
		taints:          append([]corev1.Taint(nil), cfg.RegisterWithTaints...),
		statusFrequency: freq,
		bootID:          string(uuid.NewUUID()),
		crashBackOff:    newBackOff(clk, backOffPeriod, maxContainerBackOff),
		volumeBackOff:   newBackOff(clk, volumeRetryInitial, volumeRetryMax),
		podCIDR:         cfg.PodCIDR,
		network:         network,
		pods:            map[types.UID]*podRecord{},
	}
	if network != nil {
		kl.podCIDR = network.Subnet().String()
	}
	kl.eviction.threshold = DefaultEvictionHard.DeepCopy()
	if !cfg.EvictionHard.IsZero() {
		kl.eviction.threshold = cfg.EvictionHard.DeepCopy()
	}
	kl.images = newImageManager(cfg.Runtime, kl.recorder, clk)
	kl.images.trace = func(pod *corev1.Pod, image string, took time.Duration) {
		kl.traceCall(traceCRI, "PullImage", pod.Namespace, pod.Name, image+" in "+took.String())
	}
	kl.probes = newProberManager(kl)
	return kl, nil
}

// NodeName is the name of the node this kubelet runs.
func (kl *Kubelet) NodeName() string { return kl.nodeName }

// HasSynced reports whether the running kubelet's caches (its pods, and
// the ConfigMaps, Secrets and Services they use) hold their first lists;
// false while the kubelet is stopped.
func (kl *Kubelet) HasSynced() bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	return kl.informer != nil && kl.informer.HasSynced() && kl.serviceInformer.HasSynced()
}

// Run registers the node, then runs the node's pods until ctx is done: it
// watches the pods bound to this node, syncs each one (pull, start, restart,
// stop) and posts the node's and the pods' status. It returns nil when ctx is
// done, after its goroutines have ended; containers keep running. Run may be
// called again afterwards, but not twice at once.
func (kl *Kubelet) Run(ctx context.Context) error {
	if !kl.running.CompareAndSwap(false, true) {
		return errors.New("kubelet: already running")
	}
	defer kl.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The periods start now, so the first heartbeat is one period after the
	// node registered.
	heartbeat := kl.clock.NewTicker(kl.statusFrequency)
	defer heartbeat.Stop()
	resync := kl.clock.NewTicker(syncFrequency)
	defer resync.Stop()

	kl.recorder.Eventf(kl.nodeRef(), corev1.EventTypeNormal, EventStartingKubelet, "Starting kubelet.")
	if !kl.registerWithRetry(ctx) {
		return nil
	}

	// The pods of this node: the kubelet's "API source" (pkg/kubelet/config/apiserver.go
	// lists and watches pods with spec.nodeName=<this node>).
	inf := client.NewInformer(kl.client.Pods(), "", client.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", kl.nodeName),
	})
	inf.AddIndex(uidIndex, func(p *corev1.Pod) []string { return []string{string(p.UID)} })
	q := client.NewQueue[types.UID](kl.clock)
	inf.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod) { q.Add(p.UID) },
		OnUpdate: func(old, p *corev1.Pod) {
			// The kubelet's own status writes come back as updates; like
			// upstream's pod config, only a change of spec or metadata (a
			// deletionTimestamp, a new image) is news.
			switch {
			case old.UID != p.UID: // deleted and created again under the same name
				q.Add(old.UID)
				q.Add(p.UID)
			case kl.ownStatusWrite(old, p): // nothing else changed: no need to compare
			case specOrMetaChanged(old, p):
				q.Add(p.UID)
			}
		},
		OnDelete: func(p *corev1.Pod) { q.Add(p.UID) },
	})
	// What pods refer to: Services (the Service environment variables).
	// ConfigMaps and Secrets are read when a pod syncs (config_objects.go).
	services := client.NewInformer(client.For[*corev1.Service](kl.client, "", "services"), "", client.ListOptions{})
	kl.mu.Lock()
	kl.queue, kl.informer = q, inf
	kl.serviceInformer = services
	kl.mu.Unlock()
	var wg sync.WaitGroup
	kl.probes.start(ctx, &wg)
	defer func() {
		kl.probes.stop()
		kl.mu.Lock()
		kl.queue, kl.informer = nil, nil
		kl.serviceInformer = nil
		kl.mu.Unlock()
	}()

	wg.Add(2)
	go func() { defer wg.Done(); inf.Run(ctx) }()
	go func() { defer wg.Done(); services.Run(ctx) }()
	if !client.WaitForCacheSync(ctx, inf.HasSynced, services.HasSynced) {
		q.ShutDown()
		wg.Wait()
		return nil
	}
	// Housekeeping: containers of pods the API no longer has (deleted while
	// this kubelet was stopped) are cleaned up too.
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{}) {
		q.Add(types.UID(c.PodUID))
	}
	for i := 0; i < podWorkers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); kl.worker(ctx, q) }()
	}
	wg.Add(5)
	go func() { defer wg.Done(); kl.evictionLoop(ctx) }() // eviction.go
	go func() { defer wg.Done(); kl.heartbeatLoop(ctx, heartbeat) }()
	go func() { defer wg.Done(); kl.leaseLoop(ctx) }() // lease.go
	go func() { defer wg.Done(); kl.resyncLoop(ctx, resync, q, inf) }()
	go func() { defer wg.Done(); kl.statsLoop(ctx) }() // metrics.go

	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	return nil
}

const uidIndex = "uid"

// ownStatusWrite reports whether an update from old to p is the kubelet's
// own last status write. That write replaced old's resourceVersion (it was
// conditional on it) through the status subresource, which keeps the spec,
// with old's metadata: it changed the status alone. It spares the informer's
// handler specOrMetaChanged's deep comparison on every one of its writes.
func (kl *Kubelet) ownStatusWrite(old, p *corev1.Pod) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[p.UID]
	return rec != nil && rec.written != nil && rec.writtenFrom != "" &&
		rec.written.ResourceVersion == p.ResourceVersion && rec.writtenFrom == old.ResourceVersion
}

// specOrMetaChanged reports whether an update is more than a status change.
func specOrMetaChanged(old, p *corev1.Pod) bool {
	om, nm := old.ObjectMeta, p.ObjectMeta
	om.ResourceVersion, nm.ResourceVersion = "", ""
	om.ManagedFields, nm.ManagedFields = nil, nil
	return !equality.Semantic.DeepEqual(om, nm) || !equality.Semantic.DeepEqual(old.Spec, p.Spec)
}

// worker syncs pods from the queue until it shuts down: upstream's pod
// workers (pkg/kubelet/pod_workers.go), one pod at a time per worker and never
// one pod in two workers.
func (kl *Kubelet) worker(ctx context.Context, q *client.Queue[types.UID]) {
	for {
		uid, ok := q.Get(ctx)
		if !ok {
			return
		}
		requeue, err := kl.syncPod(ctx, uid)
		switch {
		case err != nil && ctx.Err() == nil:
			q.AddRateLimited(uid)
		default:
			q.Forget(uid)
			if requeue > 0 {
				q.AddAfter(uid, requeue)
			}
		}
		q.Done(uid)
	}
}

// resyncLoop queues every pod of the node once per syncFrequency.
func (kl *Kubelet) resyncLoop(ctx context.Context, t clock.Ticker, q *client.Queue[types.UID], inf *client.Informer[*corev1.Pod]) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, p := range inf.List() {
				q.Add(p.UID)
			}
			// Housekeeping (upstream: HandlePodCleanups): containers whose
			// pod is gone are queued too, and cleaned up.
			for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{}) {
				q.Add(types.UID(c.PodUID))
			}
		}
	}
}

// HandleContainerEvent tells the kubelet about a container event of its
// runtime (upstream: the evented PLEG, fed by the CRI's GetContainerEvents).
// Wire it as the runtime's cri.Config.OnEvent. It does not block: an exited
// container's pod is queued for a sync. Events that arrive while the kubelet
// is stopped are dropped; the next Run syncs every pod anyway.
func (kl *Kubelet) HandleContainerEvent(e cri.ContainerEvent) {
	if e.Type != cri.ContainerStoppedEvent || e.Status.PodUID == "" {
		return
	}
	kl.enqueue(types.UID(e.Status.PodUID))
}

// enqueueAfter queues a pod for a sync after d on the kubelet's clock
// (nothing for d <= 0).
func (kl *Kubelet) enqueueAfter(uid types.UID, d time.Duration) {
	if d <= 0 {
		return
	}
	kl.mu.Lock()
	q := kl.queue
	kl.mu.Unlock()
	if q != nil {
		q.AddAfter(uid, d)
	}
}

func (kl *Kubelet) enqueue(uid types.UID) {
	kl.mu.Lock()
	q := kl.queue
	kl.mu.Unlock()
	if q != nil {
		q.Add(uid)
	}
}

// eventClock is the recorder's clock: it never returns the same instant
// twice. The recorder names an event after its object and the time in
// nanoseconds, so two events of one pod in the same clock tick (a fake clock
// in tests, a browser's millisecond clock) would get the same name and the
// second would be lost.
type eventClock struct {
	clock.PassiveClock
	mu   sync.Mutex
	last time.Time
}

func (c *eventClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.PassiveClock.Now()
	if !now.After(c.last) {
		now = c.last.Add(time.Nanosecond)
	}
	c.last = now
	return now
}
