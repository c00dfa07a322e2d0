// Package runtime runs the plugins of one scheduling profile at each
// extension point (upstream: pkg/scheduler/framework/runtime/framework.go,
// frameworkImpl).
//
// Plugins are enabled the way upstream's "multiPoint" configuration does it:
// a profile lists plugin names in order, and each plugin is called at every
// extension point whose interface it implements. Filters therefore run in the
// order of the list, and stop at the first rejection.
package runtime

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
)

// Config configures a Framework.
type Config struct {
	// ProfileName is the schedulerName pods ask for ("default-scheduler").
	ProfileName string
	// Registry holds the factories of the plugins Plugins may name.
	Registry Registry
	// Plugins are enabled in this order.
	Plugins []PluginConfig
	// Client and Recorder are handed to plugins; either may be nil in tests.
	Client   *client.Client
	Recorder *client.Recorder
	// Snapshot is the cluster state of the current cycle; the scheduler
	// refreshes it before each cycle.
	Snapshot framework.SharedLister
	// PercentageOfNodesToScore: 0 is upstream's adaptive default.
	PercentageOfNodesToScore int32
	// Listers are the informer caches plugins read (any field may be nil).
	Listers framework.Listers
	// Clock is handed to plugins; nil is the real clock.
	Clock clock.PassiveClock
}

// ScorePluginWeight is an enabled score plugin and its weight.
type ScorePluginWeight struct {
	Name   string
	Weight int64
}

// Framework is one profile's set of plugins, sorted by extension point.
type Framework struct {
	profileName              string
	client                   *client.Client
	recorder                 *client.Recorder
	snapshot                 framework.SharedLister
	percentageOfNodesToScore int32
	listers                  framework.Listers
	clock                    clock.PassiveClock
	// nominator is the scheduling queue (SetPodNominator); nil in tests
	// that run plugins without a queue. hasNominated, if set, answers
	// "is any pod nominated?" without the lock.
	nominator    framework.PodNominator
	hasNominated func() bool

	queueSort framework.QueueSortPlugin
	preFilter []framework.PreFilterPlugin
	// preFilterExt are the PreFilter plugins with PreFilterExtensions.
	preFilterExt []preFilterWithExtensions
	filter       []framework.FilterPlugin
	postFilter   []framework.PostFilterPlugin
	preScore     []framework.PreScorePlugin
	score        []framework.ScorePlugin
	weights      []int64 // parallel to score
	reserve      []framework.ReservePlugin
	preBind      []framework.PreBindPlugin
	bind         []framework.BindPlugin
	postBind     []framework.PostBindPlugin

	// events maps each plugin that can reject a pod to the cluster events
	// that may make the pod schedulable again.
	events map[string][]framework.ClusterEvent
	// filterNames and scoreWeights are computed once; callers share them.
	filterNames  []string
	scoreWeights []ScorePluginWeight

	// scratch is RunScorePlugins' memory, reused from one call to the next
	// (a scheduling cycle scores hundreds of nodes; allocating it afresh
	// each time would be most of the cycle's garbage).
	scratch struct {
		list    framework.NodeScoreList
		cols    []int64
		backing []framework.PluginScore
		out     []framework.NodePluginScores
	}
}

// setString writes s to *dst unless it is already there: the reused
// buffers hold the same plugin names from one cycle to the next, and
// skipping the write skips its GC write barrier.
func setString(dst *string, s string) {
	if *dst != s {
		*dst = s
	}
}

// grow returns s resized to n, reusing its array when it is big enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

var _ framework.Handle = (*Framework)(nil)

type preFilterWithExtensions struct {
	name string
	ext  framework.PreFilterExtensions
}

// New builds the plugins of cfg.Plugins. It fails on an unknown or duplicate
// plugin, a profile without exactly one QueueSort plugin, or without a Bind
// plugin.
func New(ctx context.Context, cfg Config) (*Framework, error) {
	f := &Framework{
		profileName:              cfg.ProfileName,
		client:                   cfg.Client,
		recorder:                 cfg.Recorder,
		snapshot:                 cfg.Snapshot,
		percentageOfNodesToScore: cfg.PercentageOfNodesToScore,
		listers:                  cfg.Listers,
		clock:                    cfg.Clock,
		events:                   map[string][]framework.ClusterEvent{},
	}
	if f.clock == nil {
		f.clock = clock.RealClock{}
	}
	seen := sets.New[string]()
	for _, pc := range cfg.Plugins {
		if seen.Has(pc.Name) {
			return nil, fmt.Errorf("plugin %q is enabled more than once", pc.Name)
		}
		seen.Insert(pc.Name)
		factory, ok := cfg.Registry[pc.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q does not exist", pc.Name)
		}
		pl, err := factory(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", pc.Name, err)
		}
		if err := f.add(pl, pc); err != nil {
			return nil, err
		}
	}
	if f.queueSort == nil {
		return nil, errors.New("one QueueSort plugin is required")
	}
	if len(f.bind) == 0 {
		return nil, errors.New("at least one Bind plugin is required")
	}
	for _, p := range f.filter {
		f.filterNames = append(f.filterNames, p.Name())
	}
	for i, p := range f.score {
		f.scoreWeights = append(f.scoreWeights, ScorePluginWeight{Name: p.Name(), Weight: f.weights[i]})
	}
	return f, nil
}

func (f *Framework) add(pl framework.Plugin, pc PluginConfig) error {
	canReject := false
	if p, ok := pl.(framework.QueueSortPlugin); ok {
		if f.queueSort != nil {
			return fmt.Errorf("only one QueueSort plugin can be enabled, found %q and %q", f.queueSort.Name(), p.Name())
		}
		f.queueSort = p
	}
	if p, ok := pl.(framework.PreFilterPlugin); ok {
		f.preFilter = append(f.preFilter, p)
		if ext := p.PreFilterExtensions(); ext != nil {
			f.preFilterExt = append(f.preFilterExt, preFilterWithExtensions{name: p.Name(), ext: ext})
		}
		canReject = true
	}
	if p, ok := pl.(framework.FilterPlugin); ok {
		f.filter = append(f.filter, p)
		canReject = true
	}
	if p, ok := pl.(framework.PostFilterPlugin); ok {
		f.postFilter = append(f.postFilter, p)
		canReject = true
	}
	if p, ok := pl.(framework.PreScorePlugin); ok {
		f.preScore = append(f.preScore, p)
	}
	if p, ok := pl.(framework.ScorePlugin); ok {
		w := int64(pc.Weight)
		if w == 0 {
			w = 1
		}
		if w < 0 {
			return fmt.Errorf("score plugin %q has a negative weight %d", pc.Name, w)
		}
		f.score = append(f.score, p)
		f.weights = append(f.weights, w)
	}
	if p, ok := pl.(framework.ReservePlugin); ok {
		f.reserve = append(f.reserve, p)
		canReject = true
	}
	if p, ok := pl.(framework.PreBindPlugin); ok {
		f.preBind = append(f.preBind, p)
		canReject = true
	}
	if p, ok := pl.(framework.BindPlugin); ok {
		f.bind = append(f.bind, p)
	}
	if p, ok := pl.(framework.PostBindPlugin); ok {
		f.postBind = append(f.postBind, p)
	}
	if canReject {
		if ext, ok := pl.(framework.EnqueueExtensions); ok {
			f.events[pl.Name()] = ext.EventsToRegister()
		} else {
			// No EnqueueExtensions: any event may help (upstream does the same).
			f.events[pl.Name()] = []framework.ClusterEvent{{Resource: framework.WildCard, ActionType: framework.All}}
		}
	}
	return nil
}

// Handle.

// SnapshotSharedLister implements framework.Handle.
func (f *Framework) SnapshotSharedLister() framework.SharedLister { return f.snapshot }

// ClientSet implements framework.Handle.
func (f *Framework) ClientSet() *client.Client { return f.client }

// EventRecorder implements framework.Handle.
func (f *Framework) EventRecorder() *client.Recorder { return f.recorder }

// Clock implements framework.Handle.
func (f *Framework) Clock() clock.PassiveClock { return f.clock }

// Listers implements framework.Handle.
func (f *Framework) Listers() framework.Listers { return f.listers }

// SetPodNominator connects the scheduling queue, which knows the nominated
// pods. The queue is built after the framework (it needs QueueSortFunc), so
// this is not a Config field. Call it before scheduling starts.
func (f *Framework) SetPodNominator(n framework.PodNominator) {
	f.nominator = n
	f.hasNominated = nil
	if h, ok := n.(interface{ HasNominatedPods() bool }); ok {
		f.hasNominated = h.HasNominatedPods
	}
}

// HasNominatedPods reports whether any pod is nominated anywhere: the
// common case is none, and then the filters run once per node.
func (f *Framework) HasNominatedPods() bool {
	if f.hasNominated != nil {
		return f.hasNominated()
	}
	return f.nominator != nil
}

// NominatedPodsForNode implements framework.PodNominator.
func (f *Framework) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	if f.nominator == nil {
		return nil
	}
	return f.nominator.NominatedPodsForNode(nodeName)
}

// ProfileName is the schedulerName this framework serves.
func (f *Framework) ProfileName() string { return f.profileName }

// PercentageOfNodesToScore is the profile's setting (0: adaptive).
func (f *Framework) PercentageOfNodesToScore() int32 { return f.percentageOfNodesToScore }

// QueueSortFunc is the ordering of the activeQ.
func (f *Framework) QueueSortFunc() framework.LessFunc { return f.queueSort.Less }

// HasFilterPlugins reports whether any Filter plugin is enabled.
func (f *Framework) HasFilterPlugins() bool { return len(f.filter) > 0 }

// HasScorePlugins reports whether any Score plugin is enabled.
func (f *Framework) HasScorePlugins() bool { return len(f.score) > 0 }

// HasPostFilterPlugins reports whether any PostFilter plugin is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// FilterPlugins names the Filter plugins in the order they run. The slice
// is shared: do not modify it.
func (f *Framework) FilterPlugins() []string { return f.filterNames }

// ScorePlugins names the Score plugins, with their weights, in order. The
// slice is shared: do not modify it.
func (f *Framework) ScorePlugins() []ScorePluginWeight { return f.scoreWeights }

// EventsToRegister maps each plugin that can reject a pod to the events that
// may make the pod schedulable again.
func (f *Framework) EventsToRegister() map[string][]framework.ClusterEvent { return f.events }

// RunPreFilterPlugins runs every PreFilter plugin. It returns the merged
// PreFilterResult and the plugins that narrowed the nodes; on rejection, a
// status with the plugin set and the plugins that rejected. Plugins that
// return Skip are recorded in state.SkipFilterPlugins.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod) (*framework.PreFilterResult, *framework.Status, sets.Set[string]) {
	var result *framework.PreFilterResult
	var narrowing []string
	skip := sets.New[string]()
	for _, pl := range f.preFilter {
		r, s := pl.PreFilter(ctx, state, pod)
		if s.IsSkip() {
			skip.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			s.WithPlugin(pl.Name())
			if s.IsRejected() {
				return nil, s, sets.New(pl.Name())
			}
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			narrowing = append(narrowing, pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", narrowing)
			if len(narrowing) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", narrowing[0])
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg), sets.New(narrowing...)
		}
	}
	state.SkipFilterPlugins = skip
	state.ActiveFilters = make([]framework.FilterPlugin, 0, len(f.filter))
	for _, pl := range f.filter {
		if !skip.Has(pl.Name()) {
			state.ActiveFilters = append(state.ActiveFilters, pl)
		}
	}
	return result, nil, sets.New(narrowing...)
}

// RunFilterPlugins runs the Filter plugins on one node, in order, and returns
// the first non-success status with its plugin set (nil if the node fits).
// A plugin's Error is wrapped so the message names the plugin.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	active := state.ActiveFilters
	if active == nil { // PreFilter did not run (tests, simulators)
		for _, pl := range f.filter {
			if !state.SkipFilterPlugins.Has(pl.Name()) {
				active = append(active, pl)
			}
		}
	}
	for _, pl := range active {
		if s := pl.Filter(ctx, state, pod, nodeInfo); !s.IsSuccess() {
			if !s.IsRejected() {
				s = framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
			}
			return s.WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods runs the filters on a node twice when
// pods are nominated there (upstream: frameworkImpl
// RunFilterPluginsWithNominatedPods):
//
//  1. as if the nominated pods of equal or higher priority were already
//     running: room being made for them by preemption must not be taken by
//     a pod that is not more important;
//  2. if that passes, as the node is now: they may end up elsewhere, and a
//     filter such as pod affinity may only pass without them.
//
// The pod fits only if both pass. Without nominated pods it is one pass.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *v1.Pod, info *framework.NodeInfo) *framework.Status {
	if !f.HasNominatedPods() {
		return f.RunFilterPlugins(ctx, state, pod, info)
	}
	var status *framework.Status
	podsAdded := false
	for i := 0; i < 2; i++ {
		stateToUse, nodeInfoToUse := state, info
		if i == 0 {
			var err error
			podsAdded, stateToUse, nodeInfoToUse, err = f.addGENominatedPods(ctx, pod, state, info)
			if err != nil {
				return framework.AsStatus(err)
			}
		} else if !podsAdded || !status.IsSuccess() {
			break
		}
		status = f.RunFilterPlugins(ctx, stateToUse, pod, nodeInfoToUse)
		if !status.IsSuccess() && !status.IsRejected() {
			return status
		}
	}
	return status
}

// addGENominatedPods returns copies of state and nodeInfo with the pods
// nominated to the node whose priority is greater than or equal to pod's
// added; podsAdded is false (and the originals are returned) if there are
// none.
func (f *Framework) addGENominatedPods(ctx context.Context, pod *v1.Pod, state *framework.CycleState, nodeInfo *framework.NodeInfo) (bool, *framework.CycleState, *framework.NodeInfo, error) {
	if f.nominator == nil || nodeInfo.Node() == nil || !f.HasNominatedPods() {
		return false, state, nodeInfo, nil
	}
	nominated := f.nominator.NominatedPodsForNode(nodeInfo.Node().Name)
	if len(nominated) == 0 {
		return false, state, nodeInfo, nil
	}
	nodeInfoOut := nodeInfo.Snapshot()
	stateOut := state.Clone()
	podsAdded := false
	for _, pi := range nominated {
		if podPriority(pi.Pod) >= podPriority(pod) && pi.Pod.UID != pod.UID {
			nodeInfoOut.AddPodInfo(pi)
			if st := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, nodeInfoOut); !st.IsSuccess() {
				return false, state, nodeInfo, st.AsError()
			}
			podsAdded = true
		}
	}
	return podsAdded, stateOut, nodeInfoOut, nil
}

func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// RunPreFilterExtensionAddPod calls AddPod of every PreFilter plugin with
// extensions whose PreFilter ran (did not Skip) in this cycle.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, podToSchedule *v1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, p := range f.preFilterExt {
		if state.SkipFilterPlugins.Has(p.name) {
			continue
		}
		if st := p.ext.AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !st.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", p.name, st.AsError())).WithPlugin(p.name)
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod calls RemovePod likewise.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, podToSchedule *v1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, p := range f.preFilterExt {
		if state.SkipFilterPlugins.Has(p.name) {
			continue
		}
		if st := p.ext.RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !st.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", p.name, st.AsError())).WithPlugin(p.name)
		}
	}
	return nil
}

// RunPostFilterPlugins runs the PostFilter plugins until one succeeds.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m *framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	var result *framework.PostFilterResult
	var reasons []string
	rejector := ""
	for _, pl := range f.postFilter {
		r, s := pl.PostFilter(ctx, state, pod, m)
		switch {
		case s.IsSuccess():
			return r, s
		case s.Code() == framework.UnschedulableAndUnresolvable:
			return r, s.WithPlugin(pl.Name())
		case !s.IsRejected():
			return nil, framework.AsStatus(s.AsError()).WithPlugin(pl.Name())
		}
		if r != nil {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejector == "" {
			rejector = pl.Name()
		}
	}
	return result, framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin(rejector)
}

// RunPreScorePlugins runs the PreScore plugins; those that return Skip are
// recorded in state.SkipScorePlugins.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	skip := sets.New[string]()
	for _, pl := range f.preScore {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	state.SkipScorePlugins = skip
	return nil
}

// RunScorePlugins scores every node with every Score plugin, normalizes each
// plugin's scores, applies the weights and sums them. The result is parallel
// to nodes; each node's Scores are in plugin order and keep the raw,
// normalized and weighted values.
//
// The result is only valid until the next call: its memory is reused. The
// scheduler calls it from its one scheduling goroutine and copies what it
// keeps.
func (f *Framework) RunScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) ([]framework.NodePluginScores, *framework.Status) {
	type active struct {
		pl     framework.ScorePlugin
		name   string
		weight int64
	}
	var plugins []active
	for i, pl := range f.score {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			plugins = append(plugins, active{pl, pl.Name(), f.weights[i]})
		}
	}
	np, nn := len(plugins), len(nodes)
	// list is what Score fills and NormalizeScore rescales, one plugin at
	// a time; raw and norm keep each plugin's column (plugin-major, so
	// the writes in the hot loop are sequential).
	sc := &f.scratch
	sc.list = grow(sc.list, nn)
	list := sc.list
	for i, n := range nodes {
		list[i] = framework.NodeScore{Name: n.Node().Name}
	}
	sc.cols = grow(sc.cols, 2*np*nn)
	raw, norm := sc.cols[:np*nn], sc.cols[np*nn:]
	for j, a := range plugins {
		col := raw[j*nn : (j+1)*nn]
		for i, n := range nodes {
			s, st := a.pl.Score(ctx, state, pod, n)
			if !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("plugin %q failed with: %w", a.name, st.AsError())).WithPlugin(a.name)
			}
			list[i].Score = s
			col[i] = s
			yield.Maybe(i)
		}
		if ext := a.pl.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", a.name, st.AsError())).WithPlugin(a.name)
			}
		}
		ncol := norm[j*nn : (j+1)*nn]
		for i := range list {
			s := list[i].Score
			if s > framework.MaxNodeScore || s < framework.MinNodeScore {
				return nil, framework.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", a.name, s, framework.MinNodeScore, framework.MaxNodeScore)).WithPlugin(a.name)
			}
			ncol[i] = s
		}
	}
	// One backing array for every node's per-plugin scores.
	sc.backing = grow(sc.backing, nn*np)
	sc.out = grow(sc.out, nn)
	backing, out := sc.backing, sc.out
	for i := range nodes {
		scores := backing[i*np : (i+1)*np : (i+1)*np]
		var total int64
		for j, a := range plugins {
			n := norm[j*nn+i]
			ps := &scores[j]
			setString(&ps.Name, a.name)
			ps.Raw, ps.Normalized, ps.Score = raw[j*nn+i], n, n*a.weight
			total += n * a.weight
		}
		out[i] = framework.NodePluginScores{Name: list[i].Name, Scores: scores, TotalScore: total}
	}
	return out, nil
}

// RunReservePluginsReserve runs Reserve in order; on failure the caller runs
// Unreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	for _, pl := range f.reserve {
		if s := pl.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPreBindPlugins runs PreBind in order.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	for _, pl := range f.preBind {
		if s := pl.PreBind(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunBindPlugins tries the Bind plugins in order until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	for _, pl := range f.bind {
		s := pl.Bind(ctx, state, pod, nodeName)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
		return nil
	}
	return framework.NewStatus(framework.Skip)
}

// RunPostBindPlugins runs PostBind in order.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) {
	for _, pl := range f.postBind {
		pl.PostBind(ctx, state, pod, nodeName)
	}
}
