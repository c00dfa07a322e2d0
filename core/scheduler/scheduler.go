// Package scheduler is kube-scheduler: it watches pods that have no node yet,
// picks a node for each, and binds the pod there through the API server
// (upstream: pkg/scheduler, scheduler.go and schedule_one.go).
//
// The parts, named like upstream's:
//
//	informers ──▶ eventhandlers.go ──▶ SchedulingQueue (queue.go) ──Pop──▶ scheduleOne
//	    │         new pod: queue it       activeQ / backoffQ /              │
//	    │         bound pod: cache it     unschedulablePods                 │ snapshot of
//	    │         node: cache it, and                                       │ the Cache
//	    ▼         wake pods it may help                                     ▼
//	  Cache (cache.go): nodes, and the pods on them (bound or assumed)  framework
//	                                                                   (plugins/)
//
// scheduleOne takes one pod, runs the framework's filters on the nodes of a
// snapshot, scores the nodes that fit, assumes the pod on the best one in the
// cache, and binds it in the background while the next pod is scheduled. When
// no node fits, preemption (plugins/defaultpreemption) may delete pods of
// lower priority to make room and nominate a node (nominator.go); either way
// the scheduler records a FailedScheduling event, sets the pod's
// PodScheduled condition to False with the same message, and puts the pod
// back in the queue to wait for a change in the cluster.
//
// The default profile (plugins.DefaultPlugins) is upstream's: NodeUnschedulable,
// NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
// PodTopologySpread, InterPodAffinity, DefaultPreemption,
// NodeResourcesBalancedAllocation, ImageLocality, with upstream's weights.
//
// Each attempt also leaves a Decision (decision.go): which filter rejected
// which node and why, and the scores of the best nodes, compacted so its size
// does not grow with the cluster. The API server serves it read-only at
// /apis/scheduling.kubetab.dev/v1alpha1/namespaces/NS/schedulingdecisions/POD
// (Scheduler.SchedulingDecision; see apis/v1alpha1), `kubectl scheduling
// explain POD` prints it, and the cluster view draws it.
//
// In a browser the Go program has one thread and no preemption: the loop
// yields between pods and every few dozen nodes inside a cycle
// (internal/yield), so the page and the API server keep running.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
	"github.com/kubetab/kubetab/core/scheduler/plugins"
)

// Config configures a Scheduler.
type Config struct {
	// Client is the scheduler's connection to the API server. Required.
	Client *client.Client
	// Clock is used for the queue's back-off, event times and conditions.
	// nil is the real clock.
	Clock clock.WithDelayedExecution
	// SchedulerName is the spec.schedulerName of the pods this scheduler
	// takes; others are left alone. Default "default-scheduler".
	SchedulerName string
	// Plugins is the profile, in order; nil is plugins.DefaultPlugins().
	Plugins []runtime.PluginConfig
	// Registry adds out-of-tree plugins to the in-tree ones.
	Registry runtime.Registry
	// PercentageOfNodesToScore caps how many feasible nodes are searched
	// for, in percent of all nodes (1..100); 0 is upstream's adaptive
	// default (see numFeasibleNodesToFind).
	PercentageOfNodesToScore int32
	// PodInitialBackoff and PodMaxBackoff bound the back-off of a pod that
	// failed: 0 means upstream's 1 s and 10 s.
	PodInitialBackoff, PodMaxBackoff time.Duration
	// DecisionsPerPod is how many attempts per pod are kept as Decisions
	// (0 means 3, negative turns recording off); DecisionPods is for how
	// many pods, the most recently attempted (0 means 100).
	DecisionsPerPod, DecisionPods int
}

// Scheduler is a running kube-scheduler with one profile.
type Scheduler struct {
	client        *client.Client
	clock         clock.WithDelayedExecution
	schedulerName string
	recorder      *client.Recorder

	fwk       *runtime.Framework
	queue     *SchedulingQueue
	cache     *Cache
	decisions *decisionLog

	podInformer  *client.Informer[*v1.Pod]
	nodeInformer *client.Informer[*v1.Node]
	// informers are every informer Run starts: the two above and those
	// behind the plugins' Listers.
	informers []informer

	// snapshot, nextStartNodeIndex and feasibleBuf belong to the
	// scheduling loop.
	snapshot           *Snapshot
	nextStartNodeIndex int
	feasibleBuf        []*framework.NodeInfo

	started atomic.Bool
	// binding counts binding cycles queued or in flight; Run waits for
	// them. bindJobs feeds the binders (schedule_one.go).
	binding  sync.WaitGroup
	bindJobs chan bindJob
}

// New validates cfg and builds the scheduler; Run starts it.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Client == nil {
		return nil, errors.New("scheduler: Config.Client is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = v1.DefaultSchedulerName
	}
	if cfg.Plugins == nil {
		cfg.Plugins = plugins.DefaultPlugins()
	}
	if p := cfg.PercentageOfNodesToScore; p < 0 || p > 100 {
		return nil, fmt.Errorf("scheduler: percentageOfNodesToScore: Invalid value: %d: not in valid range [0-100]", p)
	}
	if cfg.PodInitialBackoff < 0 || cfg.PodMaxBackoff < 0 || (cfg.PodMaxBackoff > 0 && cfg.PodMaxBackoff < cfg.PodInitialBackoff) {
		return nil, fmt.Errorf("scheduler: podMaxBackoff (%v) must be at least podInitialBackoff (%v), both non-negative", cfg.PodMaxBackoff, cfg.PodInitialBackoff)
	}
	if cfg.DecisionsPerPod == 0 {
		cfg.DecisionsPerPod = 3
	}
	if cfg.DecisionPods == 0 {
		cfg.DecisionPods = 100
	}
	// One informer for every pod that is not finished: the handlers split
	// them into "assigned" (for the cache) and "ours, unassigned" (for the
	// queue), as upstream's scheduler does with one shared informer.
	podInformer := client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{
		FieldSelector: fields.ParseSelectorOrDie("status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed)),
	})
	nodeInformer := client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{})
	informers := []informer{podInformer, nodeInformer}
	listers := framework.Listers{Pods: podInformer}
	listers.Namespaces = optionalLister[*v1.Namespace](cfg.Client, "", "namespaces", &informers)
	listers.Services = optionalLister[*v1.Service](cfg.Client, "", "services", &informers)
	listers.ReplicationControllers = optionalLister[*v1.ReplicationController](cfg.Client, "", "replicationcontrollers", &informers)
	listers.ReplicaSets = optionalLister[*appsv1.ReplicaSet](cfg.Client, "apps", "replicasets", &informers)
	listers.StatefulSets = optionalLister[*appsv1.StatefulSet](cfg.Client, "apps", "statefulsets", &informers)
	listers.PodDisruptionBudgets = optionalLister[*policyv1.PodDisruptionBudget](cfg.Client, "policy", "poddisruptionbudgets", &informers)

	reg := plugins.NewInTreeRegistry()
	if err := reg.Merge(cfg.Registry); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}

	s := &Scheduler{
		client:        cfg.Client,
		clock:         cfg.Clock,
		schedulerName: cfg.SchedulerName,
		recorder:      client.NewRecorder(cfg.Client, cfg.SchedulerName, "", cfg.Clock),
		cache:         NewCache(),
		snapshot:      NewEmptySnapshot(),
		decisions:     newDecisionLog(cfg.DecisionsPerPod, cfg.DecisionPods),
		bindJobs:      make(chan bindJob, bindQueueLength),
		podInformer:   podInformer,
		nodeInformer:  nodeInformer,
		informers:     informers,
	}
	fwk, err := runtime.New(context.Background(), runtime.Config{
		ProfileName:              cfg.SchedulerName,
		Registry:                 reg,
		Plugins:                  cfg.Plugins,
		Client:                   cfg.Client,
		Recorder:                 s.recorder,
		Snapshot:                 s.snapshot,
		PercentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		Listers:                  listers,
		Clock:                    cfg.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("scheduler: profile %q: %w", cfg.SchedulerName, err)
	}
	s.fwk = fwk
	s.queue = NewSchedulingQueue(QueueConfig{
		Clock:             cfg.Clock,
		Less:              fwk.QueueSortFunc(),
		EventsToRegister:  fwk.EventsToRegister(),
		PodInitialBackoff: cfg.PodInitialBackoff,
		PodMaxBackoff:     cfg.PodMaxBackoff,
		PodLister:         podInformer,
	})
	fwk.SetPodNominator(s.queue)
	s.addEventHandlers()
	return s, nil
}

// informer is what Run needs of a client.Informer.
type informer interface {
	Run(ctx context.Context)
	HasSynced() bool
}

// optionalLister returns an informer over a resource if the API server
// serves it (and adds it to informers), or nil: plugins then see no such
// objects. The registry grows as kubetab learns resources; the scheduler
// does not need to know which it has.
func optionalLister[T kruntime.Object](c *client.Client, group, resource string, informers *[]informer) framework.Lister[T] {
	st, ok := c.Registry().Lookup(schema.GroupResource{Group: group, Resource: resource})
	if !ok {
		return nil
	}
	if _, ok := st.Resource.New().(T); !ok {
		return nil
	}
	inf := client.NewInformer(client.For[T](c, group, resource), "", client.ListOptions{})
	*informers = append(*informers, inf)
	return inf
}

// HasSynced reports whether the scheduler's caches hold their first lists.
func (s *Scheduler) HasSynced() bool {
	for _, inf := range s.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// Run schedules pods until ctx is done. It starts the informers, waits for
// their first list, and then takes pods from the queue one at a time. It
// returns once the binding cycles in flight have ended.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.started.Swap(true) {
		return errors.New("scheduler: Run called twice")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := []func(context.Context){s.queue.Run}
	var synced []func() bool
	for _, inf := range s.informers {
		runs = append(runs, inf.Run)
		synced = append(synced, inf.HasSynced)
	}
	for _, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(ctx)
		}()
	}
	if !client.WaitForCacheSync(ctx, synced...) {
		return nil
	}
	for range bindWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runBinder(ctx)
		}()
	}
	defer close(s.bindJobs) // after s.binding.Wait below: nothing sends then
	for {
		p, ok := s.queue.Pop(ctx)
		if !ok {
			break
		}
		s.scheduleOne(ctx, p)
		// Between pods, let the informers, the API server and (in a
		// browser) the page run.
		yield.Now()
	}
	s.binding.Wait()
	return nil
}

// Decisions returns the recorded attempts of a pod, oldest first (at most
// Config.DecisionsPerPod; none once the pod is deleted).
func (s *Scheduler) Decisions(namespace, name string) []Decision {
	return s.decisions.get(types.NamespacedName{Namespace: namespace, Name: name})
}

// Queue is the scheduling queue (for inspection: PendingPods).
func (s *Scheduler) Queue() *SchedulingQueue { return s.queue }

// Cache is the scheduler's cache (for inspection).
func (s *Scheduler) Cache() *Cache { return s.cache }

// Framework is the profile's framework.
func (s *Scheduler) Framework() *runtime.Framework { return s.fwk }
