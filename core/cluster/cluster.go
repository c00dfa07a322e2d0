// Package cluster wires a whole Kubernetes control plane and its nodes into
// one process: the store (etcd), the API server, the controller manager, the
// scheduler and one kubelet per node.
//
// Upstream counterpart: there is none in one place. In a real cluster these
// are separate programs (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, a kubelet per machine) started by kubeadm or a cloud; kind
// and kwok come closest to this package. The same Cluster runs natively
// (tests, `kubetab cluster` for the real kubectl) and in the browser's Web
// Worker (wasm/).
//
// Everything talks through the API server, as upstream:
//
//	kubectl ──HTTP──▶ apiserver.Server ──▶ registry ──▶ store
//	                        ▲ in-process client (list + watch)
//	   ┌────────────────────┼─────────────────────┐
//	controllers         scheduler            kubelets (node-1..node-N)
//
// No component holds a pointer to another: the deployment controller does not
// call the replica set controller, it writes a ReplicaSet and the replica set
// controller sees it in its watch.
package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/apiextensions"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/scheduler"
	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/step"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/store/wal"
	"github.com/kubetab/kubetab/core/trace"
)

// Node sizes. The defaults are sized for a browser tab:
//
//   - A tab runs kubetab as one wasm32 instance, whose linear memory is at
//     most 4 GiB (65,536 pages of 64 KiB); Go's heap lives in it. Measured
//     here (Go 1.26, Node 20, the V8 of Chromium): a GOOS=js program held
//     3.6 GiB in 64 MiB slices and then died with "fatal error: out of
//     memory" at 3.94 GiB in use. That error is fatal, not a panic: the
//     tab's whole cluster ends.
//   - Every guest's linear memory is a Go []byte in that heap. wazero grows
//     it by append, which copies it into a slice up to 1.25x larger and
//     leaves the old one as garbage until the next GC: a full guest of M
//     costs up to 1.25 M held, plus M more while it grows.
//   - So three default nodes of 512Mi are 1.5 GiB of guest pages at most
//     (DefaultHostMemoryJS is the same 1.5 GiB for every node together,
//     whatever nodes a learner adds), up to 1.9 GiB held with append's
//     slack, plus 0.64 GiB while the largest one grows, plus the control
//     plane itself (a few hundred MB): about 2.8 GiB, under the 3 GiB
//     soft limit wasm/main.go gives Go's GC (debug.SetMemoryLimit) and
//     the 4 GiB a tab has. Three nodes of 1Gi would already need 4.5 GiB.
//
// Natively nothing limits the host; each node still holds at most its own
// memory (cri.MemoryPool).
const (
	DefaultNodeMemory   = "512Mi"
	DefaultHostMemoryJS = "1536Mi"
)

// Config describes a cluster. The zero value plus Images is a 3-node cluster.
type Config struct {
	// Nodes is how many nodes (kubelets) to run: node-1 ... node-N. Default 3.
	Nodes int
	// NodeCPU and NodeMemory are each node's capacity. Default 4 and
	// DefaultNodeMemory (512Mi).
	NodeCPU, NodeMemory resource.Quantity
	// HostMemory is the memory the guests of every node share together:
	// what the process can hold (cri.Config.HostMemory). Zero means
	// DefaultHostMemoryJS in a browser (GOOS=js) and no limit natively.
	HostMemory resource.Quantity
	// NodeSpecs, when not empty, are the nodes one by one (a lesson's
	// `nodes:`), instead of Nodes, NodeCPU and NodeMemory.
	NodeSpecs []NodeSpec
	// Images is the image registry the kubelets pull from. Required.
	Images cri.ImageSource
	// Clock drives every component; nil is the real clock. A fake clock
	// pauses and steps the whole cluster, guests' sleeps included.
	Clock clock.WithTickerAndDelayedExecution
	// Store configures the store (history kept for watches, ...).
	Store store.Config
	// ExternalAddress is the API server's address as clients see it.
	ExternalAddress string
	// TraceSize is how many hops the trace keeps; 0 is trace.DefaultSize.
	TraceSize int
	// DataDir, when set, keeps the store on disk there (core/store/wal: a
	// write-ahead log synced before each write is acknowledged, and
	// snapshots), so a restarted cluster has every acknowledged write and
	// its controllers reconcile from there. Natively only.
	DataDir string
	// Snapshot, when not nil, is a store snapshot (store.Snapshot's format,
	// core/snapshot) the cluster starts from, as a control plane restored
	// from an etcd backup: every object is there at the snapshot's
	// revision, and the nodes are the snapshot's Nodes (their names,
	// capacity, podCIDRs and addresses; Nodes and NodeSpecs are used only
	// when it has none). Nothing ran during the gap: each kubelet registers
	// again, finds no sandbox for its pods and creates them anew, and the
	// controllers reconcile from what they list. A snapshot that is not
	// one, has another format version, is damaged, or holds a value no
	// resource of the API server can decode is an error (ErrBadSnapshot).
	// Not with DataDir.
	Snapshot []byte
	// HPADownscaleStabilization is kube-controller-manager's
	// --horizontal-pod-autoscaler-downscale-stabilization: how long the
	// HPA controller waits on its highest recent recommendation before it
	// scales down. Zero is upstream's 5 minutes.
	HPADownscaleStabilization time.Duration
}

// ErrBadSnapshot wraps every reason New refuses Config.Snapshot.
var ErrBadSnapshot = errors.New("cluster: bad snapshot")

// NodeSpec is one node: its name, capacity, and the labels and taints its
// kubelet registers it with (upstream: the kubelet's --node-labels and
// --register-with-taints).
type NodeSpec struct {
	// Name is the Node's name and hostname: a DNS-1123 subdomain.
	Name string
	// CPU and Memory are the node's capacity; zero means the Config's
	// NodeCPU and NodeMemory (4 and 512Mi by default).
	CPU, Memory resource.Quantity
	// Labels are added to the kubelet's own (kubernetes.io/hostname,
	// kubernetes.io/os, kubernetes.io/arch).
	Labels map[string]string
	// Taints are the node's taints when it registers.
	Taints []corev1.Taint
}

// Validate checks a NodeSpec as kube-apiserver and the kubelet's flag
// parsing would: the name, the quantities, the labels and the taints.
func (s NodeSpec) Validate() error {
	if s.Name == "" {
		return errors.New("a node needs a name")
	}
	if msgs := validation.IsDNS1123Subdomain(s.Name); len(msgs) > 0 {
		return fmt.Errorf("invalid node name %q: %s", s.Name, msgs[0])
	}
	if s.CPU.Sign() < 0 {
		return fmt.Errorf("node %s: cpu %s must not be negative", s.Name, s.CPU.String())
	}
	if s.Memory.Sign() < 0 {
		return fmt.Errorf("node %s: memory %s must not be negative", s.Name, s.Memory.String())
	}
	for k, v := range s.Labels {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return fmt.Errorf("node %s: invalid label key %q: %s", s.Name, k, msgs[0])
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return fmt.Errorf("node %s: invalid label value %q for %s: %s", s.Name, v, k, msgs[0])
		}
	}
	// The kubelet refuses, at start, the kubernetes.io and k8s.io labels it
	// could not set on its Node past NodeRestriction (upstream's
	// ValidateKubeletFlags).
	var unknown []string
	for k := range s.Labels {
		if registry.IsKubernetesLabel(k) && !registry.KubeletMaySetLabel(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("node %s: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			s.Name, unknown, strings.Join(registry.KubeletLabelNamespaces(), ", "), strings.Join(registry.KubeletLabels(), ", "))
	}
	seen := map[string]bool{}
	for _, t := range s.Taints {
		if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
			return fmt.Errorf("node %s: invalid taint key %q: %s", s.Name, t.Key, msgs[0])
		}
		if t.Value != "" {
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				return fmt.Errorf("node %s: invalid taint value %q for %s: %s", s.Name, t.Value, t.Key, msgs[0])
			}
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("node %s: invalid taint effect %q for %s: must be NoSchedule, PreferNoSchedule or NoExecute", s.Name, t.Effect, t.Key)
		}
		if k := t.Key + ":" + string(t.Effect); seen[k] {
			return fmt.Errorf("node %s: taint %s:%s given twice", s.Name, t.Key, t.Effect)
		} else {
			seen[k] = true
		}
	}
	return nil
}

// Cluster is a running (or ready to run) cluster.
type Cluster struct {
	cfg      Config
	Store    *store.Store
	Registry *registry.Registry
	// CRDs serves CustomResourceDefinitions (core/apiserver/apiextensions).
	CRDs  *apiextensions.Controller
	API   *apiserver.Server
	Cache *cri.CompileCache
	// hostMemory is the guests' memory of every node together
	// (Config.HostMemory); nil: not limited.
	hostMemory *cri.MemoryPool
	// Trace holds the latest hops of requests through the cluster
	// (core/trace): the console's trace command shows them.
	Trace *trace.Recorder
	// Step is step mode (core/step): it holds the components' writes at the
	// API server and stops the cluster's clock.
	Step *step.Gate

	// mu guards kubelets, runtimes, running, ctx, sched, nodes, nextIndex
	// and synced. Lock order: mu, then net.mu.
	mu        sync.RWMutex
	sched     *scheduler.Scheduler // set by Start; serves the decision records
	kubelets  map[string]*kubelet.Kubelet
	runtimes  map[string]*cri.Runtime
	running   map[string]*kubeletRun // the kubelets whose Run is running
	ctx       context.Context        // Start's context; StartNode runs under it
	nodes     []nodeSpec
	nextIndex int // the next node's number: its podCIDR and IP
	// recovered is, for a cluster from a snapshot, what each node's
	// container runtime held when it went down (snapshot.go); its runtime
	// gets it when it is made, once.
	recovered map[string][]cri.RecoveredContainer
	synced    []func() bool // the HasSynced of the control plane's components
	// work is every work queue of the components Launch started
	// (WaitSettled).
	work client.Work
	// components counts the control plane's goroutines (controllers,
	// scheduler, compactor) started by Launch; Wait waits for them.
	components sync.WaitGroup

	net networkState // kube-proxies and cluster DNS (network.go)

	wal *wal.Log // the store's write-ahead log, with Config.DataDir

	adminToken string // the administrator's bearer token (identities.go)
}

// kubeletRun is one Run of a node's kubelet: cancel stops it, done closes
// when it has returned.
type kubeletRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// nodeSpec is a node with its addresses: the Nth node made gets
// 10.244.N.0/24 and 172.18.0.N+1, whatever its name, and a removed node's
// number is not given again (its pods may still hold addresses from it).
type nodeSpec struct {
	NodeSpec
	podCIDR, ip string
}

// ClusterCIDR is the pod network; node N gets 10.244.N.0/24.
const ClusterCIDR = "10.244.0.0/16"

// maxNodeIndex bounds the node numbers: 10.244.250.0/24, 172.18.0.251.
const maxNodeIndex = 250

// newNodeLocked validates spec against the nodes there are, fills in its
// defaults and gives it the next addresses. Called with mu held (or before
// the cluster is shared).
func (c *Cluster) newNodeLocked(spec NodeSpec) (nodeSpec, error) {
	if err := spec.Validate(); err != nil {
		return nodeSpec{}, err
	}
	for _, n := range c.nodes {
		if n.Name == spec.Name {
			return nodeSpec{}, fmt.Errorf("node %q already exists", spec.Name)
		}
	}
	if c.nextIndex > maxNodeIndex {
		return nodeSpec{}, fmt.Errorf("no more node addresses: a cluster makes at most %d nodes", maxNodeIndex)
	}
	if spec.CPU.IsZero() {
		spec.CPU = c.cfg.NodeCPU
	}
	if spec.Memory.IsZero() {
		spec.Memory = c.cfg.NodeMemory
	}
	labels := make(map[string]string, len(spec.Labels))
	for k, v := range spec.Labels {
		labels[k] = v
	}
	spec.Labels = labels
	spec.Taints = append([]corev1.Taint(nil), spec.Taints...)
	i := c.nextIndex
	c.nextIndex++
	return nodeSpec{NodeSpec: spec, podCIDR: fmt.Sprintf("10.244.%d.0/24", i), ip: fmt.Sprintf("172.18.0.%d", i+1)}, nil
}

// New builds the store, the API server and the bootstrap objects (the
// default namespaces). Nothing runs until Start.
func New(cfg Config) (*Cluster, error) {
	if cfg.Images == nil {
		return nil, errors.New("cluster: Config.Images is required")
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Nodes < 0 || cfg.Nodes > maxNodeIndex {
		return nil, fmt.Errorf("cluster: %d nodes: must be between 1 and %d", cfg.Nodes, maxNodeIndex)
	}
	if cfg.NodeCPU.IsZero() {
		cfg.NodeCPU = resource.MustParse("4")
	}
	if cfg.NodeMemory.IsZero() {
		cfg.NodeMemory = resource.MustParse(DefaultNodeMemory)
	}
	if cfg.HostMemory.IsZero() && goruntime.GOOS == "js" {
		cfg.HostMemory = resource.MustParse(DefaultHostMemoryJS)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	// Every component runs on one pausable clock, which step mode stops.
	stepClock := step.NewClock(cfg.Clock)
	cfg.Clock = stepClock
	c := &Cluster{cfg: cfg, kubelets: map[string]*kubelet.Kubelet{}, runtimes: map[string]*cri.Runtime{},
		running: map[string]*kubeletRun{}, nextIndex: 1}
	specs := cfg.NodeSpecs
	if len(specs) == 0 {
		for i := 1; i <= cfg.Nodes; i++ {
			specs = append(specs, NodeSpec{Name: fmt.Sprintf("node-%d", i)})
		}
	}
	if len(specs) > maxNodeIndex {
		return nil, fmt.Errorf("cluster: %d nodes: must be at most %d", len(specs), maxNodeIndex)
	}
	for _, spec := range specs {
		n, err := c.newNodeLocked(spec)
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		c.nodes = append(c.nodes, n)
	}
	switch {
	case cfg.DataDir != "" && cfg.Snapshot != nil:
		return nil, errors.New("cluster: Config.Snapshot and Config.DataDir cannot both be set")
	case cfg.DataDir != "":
		var err error
		if c.Store, c.wal, err = wal.Open(cfg.DataDir, cfg.Store); err != nil {
			return nil, fmt.Errorf("cluster: data directory: %w", err)
		}
	default:
		c.Store = store.New(cfg.Store)
		if cfg.Snapshot != nil {
			if err := c.Store.Restore(bytes.NewReader(cfg.Snapshot)); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
			}
		}
	}
	c.Trace = trace.New(cfg.TraceSize, cfg.Clock)
	reg, err := registry.Default(registry.Config{Store: c.Store, Clock: cfg.Clock, Metrics: kubeletMetrics{c}, Trace: c.Trace})
	if err != nil {
		return nil, err
	}
	c.Registry = reg
	if c.CRDs, err = apiextensions.Install(reg); err != nil {
		return nil, err
	}
	// A restored store's CRDs are served before its keys are checked.
	if err := c.CRDs.SyncAll(context.Background()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	if cfg.Snapshot != nil {
		if err := c.adoptSnapshotNodes(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
	}
	c.Step = step.NewGate(stepClock)
	reg.SetStepGate(c.Step)
	if c.adminToken, err = newAdminToken(); err != nil {
		return nil, fmt.Errorf("cluster: admin token: %w", err)
	}
	c.API, err = apiserver.New(apiserver.Config{
		Tokens:   apiserver.StaticTokens{c.adminToken: apiserver.Admin},
		Registry: reg, Clock: cfg.Clock, Logs: apiserver.LogProviderFunc(c.podLogs), Exec: apiserver.ExecProviderFunc(c.podExec), Attach: apiserver.AttachProviderFunc(c.podAttach),
		PortForward:     apiserver.PortForwardProviderFunc(c.podPortForward),
		PodNetwork:      apiserver.PodNetworkFunc(c.podHTTPHandler),
		Decisions:       apiserver.DecisionProviderFunc(c.schedulingDecision),
		Queue:           schedulingQueue{c},
		ExternalAddress: cfg.ExternalAddress,
	})
	if err != nil {
		return nil, err
	}
	// What kube-apiserver creates at start: the four namespaces (each with its
	// default ServiceAccount), the system PriorityClasses, and the
	// "kubernetes" Service in default.
	if err := reg.Bootstrap(context.Background(), registry.BootstrapConfig{}); err != nil {
		return nil, fmt.Errorf("cluster: bootstrap: %w", err)
	}
	c.Cache = cri.NewCompileCache()
	if !cfg.HostMemory.IsZero() {
		c.hostMemory = cri.NewMemoryPool("the host", cfg.HostMemory.Value())
	}
	return c, nil
}

// Client returns an in-process client that names itself userAgent, with
// no identity: the API server's loopback client, which nothing checks
// (upstream: system:apiserver in system:masters). The components get
// clients with their own identity (identities.go).
func (c *Cluster) Client(userAgent string) *client.Client { return client.New(c.Registry, userAgent) }

// Start runs the control plane and the nodes in goroutines until ctx is
// done. It returns once every component has started and filled its caches
// (ctx's error if ctx ends first): Launch, then WaitForCacheSync.
func (c *Cluster) Start(ctx context.Context) error {
	if err := c.Launch(ctx); err != nil {
		return err
	}
	return c.WaitForCacheSync(ctx)
}

// WaitForCacheSync waits until every controller, the scheduler and the
// running kubelets have listed what they watch: from then on each learns
// of a change by a watch event, so a command shows the whole path
// (kubectl, etcd, the controller's watch) in the trace.
func (c *Cluster) WaitForCacheSync(ctx context.Context) error {
	c.mu.RLock()
	synced := append([]func() bool(nil), c.synced...)
	for _, n := range c.nodes { // the nodes there are now: some may have joined or left
		if kl, ok := c.kubelets[n.Name]; ok {
			synced = append(synced, kl.HasSynced)
		}
	}
	c.mu.RUnlock()
	if !client.WaitForCacheSync(ctx, synced...) {
		return ctx.Err()
	}
	return nil
}

// settleLimit bounds WaitSettled: a component that never stops working
// (or step mode holding the writes) must not hold a start for ever.
const settleLimit = 3 * time.Second

// settlePoll is how often WaitSettled looks, in real time.
const settlePoll = 4 * time.Millisecond

// WaitSettled waits, after WaitForCacheSync, until the work the first lists
// gave the components is done: every work queue idle and the store's
// revision unchanged across two looks settlePoll apart (a write in flight
// reaches the queues through a watch). The clusterrole aggregation
// controller's writes, the ServiceAccount controllers' and the kubelets'
// first reports then come before a learner's first command instead of
// among its hops. It gives up after settleLimit of real time and returns
// nil: a cluster that keeps working is still a ready one. ctx's error if
// ctx ends first.
func (c *Cluster) WaitSettled(ctx context.Context) error {
	deadline := time.Now().Add(settleLimit)
	rev, calm := c.Store.Revision(), 0
	for calm < 2 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
		now := c.Store.Revision()
		if now == rev && c.work.Idle() {
			calm++
		} else {
			calm = 0
		}
		rev = now
	}
	return nil
}

// WarmUp makes the first interpreter call of the cluster's compile cache
// (cri.CompileCache.WarmUp): call it once the cluster is ready, in the
// background, so that neither the start nor the first pod pays for the JS
// engine's compiling of wazero's interpreter. Its error is the first
// pull's too, which reports it to the pod.
func (c *Cluster) WarmUp(ctx context.Context) error { return c.Cache.WarmUp(ctx) }

// Launch starts the control plane and the nodes in goroutines until ctx is
// done and returns at once, while the components fill their caches. The
// browser build launches, so that its console answers meanwhile (in a tab
// the lists take half a second of the one thread).
func (c *Cluster) Launch(ctx context.Context) error {
	ctx = client.WithWork(ctx, &c.work)
	clk := c.cfg.Clock
	type runner interface{ Run(context.Context) error }
	var runners []runner

	// kube-controller-manager: every controller of its table
	// (controllermanager.go), each with its ServiceAccount, their informers
	// shared.
	if err := c.ensureControllerServiceAccounts(ctx); err != nil {
		return fmt.Errorf("kube-controller-manager: %w", err)
	}
	informers := client.NewSharedInformerFactory()
	ctls, err := c.newControllers(clk, informers)
	if err != nil {
		return err
	}
	// The controllers made their informers: run them (each controller's
	// Run waits for them to sync).
	informers.Start(ctx)
	c.components.Add(1)
	go func() {
		defer c.components.Done()
		<-ctx.Done()
		informers.Shutdown()
	}()
	for _, ctl := range ctls {
		runners = append(runners, ctl)
	}
	sched, err := scheduler.New(scheduler.Config{Client: c.clientAs("kube-scheduler", schedulerUser), Clock: clk})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.sched = sched
	c.mu.Unlock()
	runners = append(runners, sched)
	// apiextensions-apiserver's controllers: CRDs become served resources.
	runners = append(runners, c.CRDs)
	// kube-apiserver compacts etcd every 5 minutes (on the cluster's clock).
	runners = append(runners, &registry.Compactor{Store: c.Store, Clock: clk})
	if c.wal != nil {
		runners = append(runners, walCheckpointer{c.Store, c.wal})
	}
	c.mu.Lock()
	for _, n := range c.nodes {
		if err := c.newKubeletLocked(n); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.mu.Unlock()
	for _, r := range runners {
		c.components.Add(1)
		go func(r runner) {
			defer c.components.Done()
			_ = r.Run(ctx)
		}(r)
	}
	if err := c.startNetwork(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.ctx = ctx
	c.synced = []func() bool{sched.HasSynced}
	for _, ctl := range ctls {
		c.synced = append(c.synced, ctl.HasSynced)
	}
	for _, n := range c.nodes {
		c.startKubeletLocked(n.Name)
	}
	c.mu.Unlock()
	go func() {
		<-ctx.Done()
		_ = c.Cache.Close(context.Background())
	}()
	return nil
}

// Wait blocks until the control plane's components started by Launch have
// returned, which they do once Launch's context is done.
func (c *Cluster) Wait() { c.components.Wait() }

// newKubeletLocked makes a node's container runtime and kubelet (not
// running yet). Called with mu held.
func (c *Cluster) newKubeletLocked(n nodeSpec) error {
	// The runtime tells the kubelet about container exits (upstream: the
	// evented PLEG); the kubelet exists only after the runtime, hence the
	// variable the closure reads.
	var (
		klMu sync.Mutex
		kl   *kubelet.Kubelet
	)
	rt, err := cri.New(cri.Config{Images: c.cfg.Images, Cache: c.Cache, Clock: c.cfg.Clock, Network: podNetwork{c, n.Name},
		Memory: cri.NewMemoryPool("node "+n.Name, n.Memory.Value()), HostMemory: c.hostMemory, OnEvent: func(ev cri.ContainerEvent) {
			klMu.Lock()
			k := kl
			klMu.Unlock()
			if k != nil {
				k.HandleContainerEvent(ev)
			}
		}})
	if err != nil {
		return err
	}
	if recs := c.recovered[n.Name]; len(recs) > 0 {
		delete(c.recovered, n.Name)
		if err := rt.Recover(recs); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	k, err := kubelet.New(kubelet.Config{
		Client: c.clientAs("kubelet/"+n.Name, nodeUser(n.Name)), NodeName: n.Name, Runtime: rt, Clock: c.cfg.Clock,
		PodCIDR: n.podCIDR, NodeIP: n.ip,
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: n.CPU, corev1.ResourceMemory: n.Memory,
			corev1.ResourcePods: resource.MustParse("110"),
		},
		Labels:             n.Labels,
		RegisterWithTaints: n.Taints,
	})
	if err != nil {
		return err
	}
	klMu.Lock()
	kl = k
	klMu.Unlock()
	c.kubelets[n.Name] = k
	c.runtimes[n.Name] = rt
	return nil
}

// Nodes lists the cluster's nodes as they were made (their kubelets may
// be stopped), in the order they were added.
func (c *Cluster) Nodes() []NodeSpec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]NodeSpec, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.NodeSpec
	}
	return out
}

// nodeNames is the names of the nodes, under mu.
func (c *Cluster) nodeNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Name
	}
	return out
}

// AddNode makes a node join the running cluster, as `minikube node add`
// or `kwokctl scale node` do: a new kubelet (with its own container
// runtime, podCIDR and IP) starts and registers its Node with spec's
// capacity, labels and taints, and a kube-proxy starts on it (the
// kube-proxy DaemonSet's pod for the node). It returns once the kubelet
// runs, without waiting for the Node to be Ready: the scheduler sees the
// node when its Node object appears in its watch. Before Start, the node
// is added to those Start will run. Bad specs, a name in use and an
// exhausted address range are errors that change nothing.
func (c *Cluster) AddNode(ctx context.Context, spec NodeSpec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.newNodeLocked(spec)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if c.ctx == nil { // not launched: Launch makes it with the others
		c.nodes = append(c.nodes, n)
		return nil
	}
	if err := c.newKubeletLocked(n); err != nil {
		return fmt.Errorf("cluster: node %s: %w", n.Name, err)
	}
	if err := c.addProxier(n); err != nil {
		delete(c.kubelets, n.Name)
		delete(c.runtimes, n.Name)
		return fmt.Errorf("cluster: node %s: %w", n.Name, err)
	}
	c.nodes = append(c.nodes, n)
	c.startKubeletLocked(n.Name)
	return nil
}

// RemoveNode takes a node out of the running cluster, as `minikube node
// delete` does: its kubelet stops, its containers are killed (the machine
// is gone), its kube-proxy stops, and its Node object is deleted. Its pods
// are left to the controllers, as upstream: the pod garbage collector
// deletes the pods bound to a node that no longer exists (after its
// 40 s quarantine), and their ReplicaSets make new ones elsewhere. It
// fails with ErrNoSuchNode for a node the cluster does not have.
func (c *Cluster) RemoveNode(ctx context.Context, name string) error {
	c.mu.Lock()
	idx := -1
	for i, n := range c.nodes {
		if n.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		c.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoSuchNode, name)
	}
	launched := c.ctx != nil
	run := c.running[name]
	rt := c.runtimes[name]
	delete(c.running, name)
	delete(c.kubelets, name)
	delete(c.runtimes, name)
	c.nodes = append(c.nodes[:idx:idx], c.nodes[idx+1:]...)
	c.mu.Unlock()
	if !launched {
		return nil
	}
	if run != nil {
		run.cancel()
		<-run.done
	}
	c.removeProxier(name)
	if rt != nil {
		if err := rt.Close(ctx); err != nil {
			return fmt.Errorf("cluster: node %s: stop its containers: %w", name, err)
		}
	}
	if err := c.Client("node-remove").Nodes().Delete(ctx, "", name, nil); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster: delete node %s: %w", name, err)
	}
	return nil
}

// walCheckpointer snapshots the store when its log has grown, so a restart
// replays little, and once more when the cluster stops (then closes the
// log). It polls on the real clock: disk use is not cluster time.
type walCheckpointer struct {
	s *store.Store
	l *wal.Log
}

// walCheckpointBytes is the log size that triggers a snapshot.
const walCheckpointBytes = 16 << 20

func (w walCheckpointer) Run(ctx context.Context) error {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			err := w.l.Checkpoint(w.s)
			w.l.Close()
			return err
		case <-t.C:
			if w.l.Size() > walCheckpointBytes {
				_ = w.l.Checkpoint(w.s)
			}
		}
	}
}

// Kubelet returns the kubelet of a node.
func (c *Cluster) Kubelet(node string) (*kubelet.Kubelet, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.kubelets[node]
	return k, ok
}

// ErrNoSuchNode is returned by StopNode and StartNode for a node the
// cluster does not have.
var ErrNoSuchNode = errors.New("cluster: no such node")

// StopNode stops the kubelet of a node, as if the machine lost its network
// or its kubelet crashed: its containers keep running, but nothing reports
// for the node any more (no node status, no Lease renewal, no pod status).
// After the grace period the node lifecycle controller marks the node
// Unknown and taints it node.kubernetes.io/unreachable; its pods are
// evicted once their tolerationSeconds (300 s by default) pass, and their
// controllers replace them on other nodes. StopNode returns once the
// kubelet's Run has returned; stopping a stopped node does nothing. It
// fails with ErrNoSuchNode for an unknown node and before Start.
func (c *Cluster) StopNode(name string) error {
	c.mu.Lock()
	if _, ok := c.kubelets[name]; !ok {
		c.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoSuchNode, name)
	}
	run := c.running[name]
	delete(c.running, name)
	c.mu.Unlock()
	if run != nil {
		run.cancel()
		<-run.done
	}
	return nil
}

// StartNode runs a stopped node's kubelet again: it posts the node's status
// (Ready), renews its Lease, finishes the deletions that waited for it and
// syncs its pods. Starting a running node does nothing. It fails with
// ErrNoSuchNode for an unknown node and before Start.
func (c *Cluster) StartNode(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.kubelets[name]; !ok || c.ctx == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchNode, name)
	}
	c.startKubeletLocked(name)
	return nil
}

// NodeRunning reports whether the kubelet of a node is running.
func (c *Cluster) NodeRunning(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.running[name] != nil
}

// startKubeletLocked runs the kubelet of node under Start's context unless it
// is running. Called with mu held.
func (c *Cluster) startKubeletLocked(name string) {
	if c.running[name] != nil || c.ctx.Err() != nil {
		return
	}
	kl := c.kubelets[name]
	ctx, cancel := context.WithCancel(c.ctx)
	run := &kubeletRun{cancel: cancel, done: make(chan struct{})}
	c.running[name] = run
	go func() {
		defer close(run.done)
		_ = kl.Run(ctx)
	}()
}

// schedulingDecision asks the scheduler for a pod's decision record (the
// API server's schedulingdecisions resource).
func (c *Cluster) schedulingDecision(namespace, name string) (*schedv1alpha1.SchedulingDecision, bool) {
	c.mu.RLock()
	s := c.sched
	c.mu.RUnlock()
	if s == nil {
		return nil, false
	}
	return s.SchedulingDecision(namespace, name)
}

// schedulingQueue asks the scheduler for its queue (the API server's
// schedulingqueues resource).
type schedulingQueue struct{ c *Cluster }

func (q schedulingQueue) scheduler() *scheduler.Scheduler {
	q.c.mu.RLock()
	defer q.c.mu.RUnlock()
	return q.c.sched
}

func (q schedulingQueue) SchedulingQueue() (*schedv1alpha1.SchedulingQueue, uint64) {
	s := q.scheduler()
	if s == nil {
		return nil, 0
	}
	return s.SchedulingQueue()
}

func (q schedulingQueue) QueueChanged(seq uint64) <-chan struct{} {
	s := q.scheduler()
	if s == nil {
		return nil // never: no scheduler, no changes
	}
	return s.QueueChanged(seq)
}

// podLogs routes a log request to the kubelet of the pod's node, as
// kube-apiserver proxies it to that node's kubelet.
func (c *Cluster) podLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error {
	k, ok := c.Kubelet(pod.Spec.NodeName)
	if !ok {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("no kubelet for node %q", pod.Spec.NodeName))
	}
	return k.PodLogs(ctx, pod, opts, w)
}
