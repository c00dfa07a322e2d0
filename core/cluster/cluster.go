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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/deployment"
	"github.com/kubetab/kubetab/core/controller/disruption"
	"github.com/kubetab/kubetab/core/controller/endpoint"
	"github.com/kubetab/kubetab/core/controller/endpointslice"
	"github.com/kubetab/kubetab/core/controller/garbagecollector"
	"github.com/kubetab/kubetab/core/controller/job"
	"github.com/kubetab/kubetab/core/controller/namespace"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle"
	"github.com/kubetab/kubetab/core/controller/nodelifecycle/tainteviction"
	"github.com/kubetab/kubetab/core/controller/podgc"
	"github.com/kubetab/kubetab/core/controller/replicaset"
	"github.com/kubetab/kubetab/core/kubelet"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/scheduler"
	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/step"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

// Config describes a cluster. The zero value plus Images is a 3-node cluster.
type Config struct {
	// Nodes is how many nodes (kubelets) to run: node-1 ... node-N. Default 3.
	Nodes int
	// NodeCPU and NodeMemory are each node's capacity. Default 4 and 8Gi.
	NodeCPU, NodeMemory resource.Quantity
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
}

// NodeSpec is one node: its name, capacity, and the labels and taints its
// kubelet registers it with (upstream: the kubelet's --node-labels and
// --register-with-taints).
type NodeSpec struct {
	Name string
	// CPU and Memory are the node's capacity; zero means 4 and 8Gi.
	CPU, Memory resource.Quantity
	Labels      map[string]string
	Taints      []corev1.Taint
}

// Cluster is a running (or ready to run) cluster.
type Cluster struct {
	cfg      Config
	Store    *store.Store
	Registry *registry.Registry
	API      *apiserver.Server
	Cache    *cri.CompileCache
	// Trace holds the latest hops of requests through the cluster
	// (core/trace): the console's trace command shows them.
	Trace *trace.Recorder
	// Step is step mode (core/step): it holds the components' writes at the
	// API server and stops the cluster's clock.
	Step *step.Gate

	// mu guards kubelets, running, ctx and sched.
	mu       sync.RWMutex
	sched    *scheduler.Scheduler // set by Start; serves the decision records
	kubelets map[string]*kubelet.Kubelet
	running  map[string]*kubeletRun // the kubelets whose Run is running
	ctx      context.Context        // Start's context; StartNode runs under it
	nodes    []nodeSpec
	synced   []func() bool // the HasSynced of the components Launch started

	net networkState // kube-proxies and cluster DNS (network.go)
}

// kubeletRun is one Run of a node's kubelet: cancel stops it, done closes
// when it has returned.
type kubeletRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

type nodeSpec struct {
	name, podCIDR, ip string
}

// ClusterCIDR is the pod network; node N gets 10.244.N.0/24.
const ClusterCIDR = "10.244.0.0/16"

// New builds the store, the API server and the bootstrap objects (the
// default namespaces). Nothing runs until Start.
func New(cfg Config) (*Cluster, error) {
	if cfg.Images == nil {
		return nil, errors.New("cluster: Config.Images is required")
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Nodes < 0 || cfg.Nodes > 250 {
		return nil, fmt.Errorf("cluster: %d nodes: must be between 1 and 250", cfg.Nodes)
	}
	if cfg.NodeCPU.IsZero() {
		cfg.NodeCPU = resource.MustParse("4")
	}
	if cfg.NodeMemory.IsZero() {
		cfg.NodeMemory = resource.MustParse("8Gi")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	// Every component runs on one pausable clock, which step mode stops.
	stepClock := step.NewClock(cfg.Clock)
	cfg.Clock = stepClock
	c := &Cluster{cfg: cfg, kubelets: map[string]*kubelet.Kubelet{}, running: map[string]*kubeletRun{}}
	c.Store = store.New(cfg.Store)
	c.Trace = trace.New(cfg.TraceSize, cfg.Clock)
	reg, err := registry.Default(registry.Config{Store: c.Store, Clock: cfg.Clock, Metrics: kubeletMetrics{c}, Trace: c.Trace})
	if err != nil {
		return nil, err
	}
	c.Registry = reg
	c.Step = step.NewGate(stepClock)
	reg.SetStepGate(c.Step)
	c.API, err = apiserver.New(apiserver.Config{
		Registry: reg, Clock: cfg.Clock, Logs: apiserver.LogProviderFunc(c.podLogs), Exec: apiserver.ExecProviderFunc(c.podExec),
		PortForward:     apiserver.PortForwardProviderFunc(c.podPortForward),
		PodNetwork:      apiserver.PodNetworkFunc(c.podHTTPHandler),
		Decisions:       apiserver.DecisionProviderFunc(c.schedulingDecision),
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
	for i := 1; i <= cfg.Nodes; i++ {
		c.nodes = append(c.nodes, nodeSpec{
			name:    fmt.Sprintf("node-%d", i),
			podCIDR: fmt.Sprintf("10.244.%d.0/24", i),
			ip:      fmt.Sprintf("172.18.0.%d", i+1),
		})
	}
	c.Cache = cri.NewCompileCache()
	return c, nil
}

// Handler is the API server: what kubectl talks to.
func (c *Cluster) Handler() http.Handler { return c.API }

// Client returns an in-process client that names itself userAgent.
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
	synced := c.synced
	c.mu.RUnlock()
	if !client.WaitForCacheSync(ctx, synced...) {
		return ctx.Err()
	}
	return nil
}

// Launch starts the control plane and the nodes in goroutines until ctx is
// done and returns at once, while the components fill their caches. The
// browser build launches, so that its console answers meanwhile (in a tab
// the lists take half a second of the one thread).
func (c *Cluster) Launch(ctx context.Context) error {
	clk := c.cfg.Clock
	type runner interface{ Run(context.Context) error }
	var runners []runner

	dc, err := deployment.New(deployment.Config{Client: c.Client("deployment-controller"), Clock: clk})
	if err != nil {
		return err
	}
	rsc, err := replicaset.New(replicaset.Config{Client: c.Client("replicaset-controller"), Clock: clk})
	if err != nil {
		return err
	}
	gc, err := garbagecollector.New(garbagecollector.Config{Client: c.Client("generic-garbage-collector"), Clock: clk})
	if err != nil {
		return err
	}
	// The rest of kube-controller-manager: namespace, node lifecycle and
	// taint eviction, Job, Endpoints and EndpointSlice, disruption (the
	// PodDisruptionBudgets' status) and pod GC controllers.
	nsc, err := namespace.New(namespace.Config{Client: c.Client(namespace.Component), Clock: clk})
	if err != nil {
		return err
	}
	nlc, err := nodelifecycle.New(nodelifecycle.Config{Client: c.Client(nodelifecycle.Component), Clock: clk})
	if err != nil {
		return err
	}
	tec, err := tainteviction.New(tainteviction.Config{Client: c.Client(tainteviction.Component), Clock: clk})
	if err != nil {
		return err
	}
	jc, err := job.New(job.Config{Client: c.Client(job.Component), Clock: clk})
	if err != nil {
		return err
	}
	epc, err := endpoint.New(endpoint.Config{Client: c.Client(endpoint.Component), Clock: clk})
	if err != nil {
		return err
	}
	esc, err := endpointslice.New(endpointslice.Config{Client: c.Client(endpointslice.Component), Clock: clk})
	if err != nil {
		return err
	}
	dsc, err := disruption.New(disruption.Config{Client: c.Client(disruption.Component), Clock: clk})
	if err != nil {
		return err
	}
	pgc, err := podgc.New(podgc.Config{Client: c.Client(podgc.Component), Clock: clk})
	if err != nil {
		return err
	}
	runners = append(runners, nsc, nlc, tec, jc, epc, esc, dsc, pgc)
	sched, err := scheduler.New(scheduler.Config{Client: c.Client("kube-scheduler"), Clock: clk})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.sched = sched
	c.mu.Unlock()
	runners = append(runners, dc, rsc, gc, sched)
	for _, n := range c.nodes {
		// The runtime tells the kubelet about container exits (upstream: the
		// evented PLEG); the kubelet exists only after the runtime, hence the
		// variable the closure reads.
		var kl *kubelet.Kubelet
		rt, err := cri.New(cri.Config{Images: c.cfg.Images, Cache: c.Cache, Clock: clk, OnEvent: func(ev cri.ContainerEvent) {
			if kl != nil {
				kl.HandleContainerEvent(ev)
			}
		}})
		if err != nil {
			return err
		}
		kl, err = kubelet.New(kubelet.Config{
			Client: c.Client("kubelet/" + n.name), NodeName: n.name, Runtime: rt, Clock: clk,
			PodCIDR: n.podCIDR, NodeIP: n.ip,
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: c.cfg.NodeCPU, corev1.ResourceMemory: c.cfg.NodeMemory,
				corev1.ResourcePods: resource.MustParse("110"),
			},
		})
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.kubelets[n.name] = kl
		c.mu.Unlock()
	}
	for _, r := range runners {
		go func(r runner) { _ = r.Run(ctx) }(r)
	}
	if err := c.startNetwork(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.ctx = ctx
	c.synced = []func() bool{
		dc.HasSynced, rsc.HasSynced, gc.HasSynced, nsc.HasSynced, nlc.HasSynced, tec.HasSynced,
		jc.HasSynced, epc.HasSynced, esc.HasSynced, dsc.HasSynced, pgc.HasSynced, sched.HasSynced,
	}
	for _, n := range c.nodes {
		c.startKubeletLocked(n.name)
		c.synced = append(c.synced, c.kubelets[n.name].HasSynced)
	}
	c.mu.Unlock()
	go func() {
		<-ctx.Done()
		_ = c.Cache.Close(context.Background())
	}()
	return nil
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

// podLogs routes a log request to the kubelet of the pod's node, as
// kube-apiserver proxies it to that node's kubelet.
func (c *Cluster) podLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error {
	k, ok := c.Kubelet(pod.Spec.NodeName)
	if !ok {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("no kubelet for node %q", pod.Spec.NodeName))
	}
	return k.PodLogs(ctx, pod, opts, w)
}
