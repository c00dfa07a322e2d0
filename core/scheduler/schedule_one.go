package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/internal/podutil"
	"github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
	"github.com/kubetab/kubetab/core/scheduler/plugins/noderesources"
	"github.com/kubetab/kubetab/core/trace"
)

// ErrNoNodesAvailable is the error of an attempt in a cluster with no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

var errEmptyPriorityList = errors.New("empty priorityList")

// Upstream's bounds for percentageOfNodesToScore (pkg/scheduler/schedule_one.go).
const (
	// minFeasibleNodesToFind: below this many nodes, every node is looked at.
	minFeasibleNodesToFind = 100
	// minFeasibleNodesPercentageToFind: the adaptive percentage never goes
	// below this.
	minFeasibleNodesPercentageToFind = 5
	// maxEventMessage: longer FailedScheduling messages are cut.
	maxEventMessage = 1024
)

// ScheduleResult is the outcome of a successful scheduling cycle.
type ScheduleResult struct {
	// SuggestedHost is the node chosen.
	SuggestedHost string
	// EvaluatedNodes counts the nodes filtered; FeasibleNodes those that fit.
	EvaluatedNodes, FeasibleNodes int
}

// scheduleOne is one scheduling cycle for one pod, then the start of its
// binding cycle (upstream: pkg/scheduler/schedule_one.go ScheduleOne).
func (s *Scheduler) scheduleOne(ctx context.Context, p *framework.QueuedPodInfo) {
	pod := p.Pod
	if s.skipPodSchedule(pod) {
		return
	}
	podSchedulingCycle := s.queue.SchedulingCycle()
	state := framework.NewCycleState()
	s.cache.UpdateSnapshot(s.snapshot)
	rec := s.decisions.start(p, s.clock.Now(), s.snapshot.NumNodes(), s.fwk)

	result, err := s.schedulePod(ctx, state, pod, rec)
	if err != nil {
		reason := v1.PodReasonUnschedulable
		// nominating is what to do with status.nominatedNodeName: nil
		// leaves it, otherwise it is set to *nominating ("" clears it).
		var nominating *string
		result := v1alpha1.ResultUnschedulable
		var fitErr *framework.FitError
		switch {
		case errors.As(err, &fitErr):
			p.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
			p.PendingPlugins = fitErr.Diagnosis.PendingPlugins
			if s.fwk.HasPostFilterPlugins() {
				// No node fits: PostFilter (preemption) may make room. Its
				// message becomes the "preemption: ..." part of the event.
				r, st := s.fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
				msg := st.Message()
				if msg != "" {
					fitErr.Diagnosis.PostFilterMsg = msg
				}
				if r != nil {
					nominating = &r.NominatedNodeName
				}
				rec.recordPreemption(r, msg)
			}
		case errors.Is(err, ErrNoNodesAvailable):
			p.UnschedulablePlugins, p.PendingPlugins = nil, nil
			result = v1alpha1.ResultError
		default:
			reason = v1.PodReasonSchedulerError
			result = v1alpha1.ResultError
			p.UnschedulablePlugins, p.PendingPlugins = nil, nil
		}
		if rec != nil {
			rec.Result = result
			rec.Message = err.Error()
			s.decisions.add(rec)
		}
		s.traceDecision(pod, ScheduleResult{}, err)
		s.handleSchedulingFailure(ctx, p, err, reason, nominating, podSchedulingCycle)
		return
	}

	// Assume: count the pod on the node in the cache now, so the next cycle
	// sees the room taken even though the binding has not happened yet.
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = result.SuggestedHost
	if err := s.cache.AssumePod(assumed); err != nil {
		s.handleSchedulingFailure(ctx, p, err, v1.PodReasonSchedulerError, nil, podSchedulingCycle)
		return
	}
	// It is placed: a nomination (from preemption) has done its job.
	s.queue.DeleteNominatedPodIfExists(assumed)
	if st := s.fwk.RunReservePluginsReserve(ctx, state, assumed, result.SuggestedHost); !st.IsSuccess() {
		s.fwk.RunReservePluginsUnreserve(ctx, state, assumed, result.SuggestedHost)
		_ = s.cache.ForgetPod(assumed)
		reason := v1.PodReasonSchedulerError
		if st.IsRejected() {
			reason = v1.PodReasonUnschedulable
			p.UnschedulablePlugins = sets.New(st.Plugin())
		}
		s.handleSchedulingFailure(ctx, p, st.AsError(), reason, nil, podSchedulingCycle)
		return
	}
	if rec != nil {
		rec.SelectedNode = result.SuggestedHost
		rec.Result = v1alpha1.ResultScheduled
		s.decisions.add(rec)
	}
	s.traceDecision(pod, result, nil)

	// The binding cycle runs in the background: the API calls take time,
	// and the next pod can be scheduled against the assumed state meanwhile.
	s.binding.Add(1)
	select {
	case s.bindJobs <- bindJob{state: state, p: p, assumed: assumed, host: result.SuggestedHost, cycle: podSchedulingCycle}:
	case <-ctx.Done():
		s.binding.Done()
	}
}

// bindJob is a binding cycle waiting for a binder.
type bindJob struct {
	state   *framework.CycleState
	p       *framework.QueuedPodInfo
	assumed *v1.Pod
	host    string
	cycle   int64
}

// Binding runs on a few binder goroutines fed by a queue, where upstream
// starts one goroutine per pod. Upstream's binding goroutines mostly wait on
// the network; here the API server is in the same process and its work is
// CPU work, so hundreds of runnable binding goroutines would take turns
// with the scheduling loop on the processor and slow it down (and in a
// browser every one of them is a goroutine switch on the one thread).
const (
	bindWorkers     = 4
	bindQueueLength = 256
)

// runBinder binds queued pods until the queue is closed.
func (s *Scheduler) runBinder(ctx context.Context) {
	for j := range s.bindJobs {
		s.bindingCycle(ctx, j.state, j.p, j.assumed, j.host, j.cycle)
		s.binding.Done()
		yield.Now()
	}
}

// skipPodSchedule: a pod being deleted, or already assumed (an update
// re-queued it while it was being bound), is not scheduled again.
func (s *Scheduler) skipPodSchedule(pod *v1.Pod) bool {
	return pod.DeletionTimestamp != nil || s.cache.IsAssumedPod(pod)
}

// bindingCycle binds an assumed pod (upstream: bindingCycle).
func (s *Scheduler) bindingCycle(ctx context.Context, state *framework.CycleState, p *framework.QueuedPodInfo, assumed *v1.Pod, host string, cycle int64) {
	if st := s.fwk.RunPreBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		s.handleBindingCycleError(ctx, state, p, assumed, host, st, cycle)
		return
	}
	if st := s.fwk.RunBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		s.handleBindingCycleError(ctx, state, p, assumed, host, st, cycle)
		return
	}
	s.cache.FinishBinding(assumed)
	s.recorder.Eventf(assumed, v1.EventTypeNormal, "Scheduled", "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, host)
	s.fwk.RunPostBindPlugins(ctx, state, assumed, host)
}

// handleBindingCycleError undoes the assumption. The room it held is free
// again, so pods waiting for room are woken as if a pod had been deleted.
func (s *Scheduler) handleBindingCycleError(ctx context.Context, state *framework.CycleState, p *framework.QueuedPodInfo, assumed *v1.Pod, host string, st *framework.Status, cycle int64) {
	s.fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
	_ = s.cache.ForgetPod(assumed)
	s.queue.MoveAllToActiveOrBackoffQueue(framework.AssignedPodDelete)
	reason := v1.PodReasonSchedulerError
	if st.IsRejected() {
		reason = v1.PodReasonUnschedulable
		p.UnschedulablePlugins = sets.New(st.Plugin())
	} else {
		p.UnschedulablePlugins = nil
	}
	if ctx.Err() != nil {
		return
	}
	s.handleSchedulingFailure(ctx, p, fmt.Errorf("binding rejected: %w", st.AsError()), reason, nil, cycle)
}

// schedulePod finds the node for a pod: filter, then score (upstream:
// schedulePod).
func (s *Scheduler) schedulePod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, rec *Decision) (ScheduleResult, error) {
	if s.snapshot.NumNodes() == 0 {
		return ScheduleResult{}, ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(ctx, state, pod, rec)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasible) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumNodes(), Diagnosis: diagnosis}
	}
	evaluated := len(feasible) + diagnosis.NodeToStatus.Len()
	// With one feasible node there is nothing to rank.
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].Node().Name, EvaluatedNodes: evaluated, FeasibleNodes: 1}, nil
	}
	scores, err := s.prioritizeNodes(ctx, state, pod, feasible)
	if err != nil {
		return ScheduleResult{}, err
	}
	host, err := selectHost(scores)
	if rec != nil {
		names := make([]string, len(s.fwk.ScorePlugins()))
		for i, sp := range s.fwk.ScorePlugins() {
			names[i] = sp.Name
		}
		rec.SkippedScores = skipped(names, state.SkipScorePlugins)
	}
	rec.recordScores(scores, host)
	return ScheduleResult{SuggestedHost: host, EvaluatedNodes: evaluated, FeasibleNodes: len(feasible)}, err
}

// findNodesThatFitPod runs PreFilter, then the filters on the nodes.
func (s *Scheduler) findNodesThatFitPod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, rec *Decision) ([]*framework.NodeInfo, framework.Diagnosis, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	allNodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		return nil, diagnosis, err
	}
	preRes, st, plugins := s.fwk.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, st.AsError()
		}
		// A PreFilter rejection applies to every node; its message
		// replaces the per-node counts in the FitError.
		diagnosis.UnschedulablePlugins = plugins
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		if rec != nil {
			rec.PreFilter = st
		}
		return nil, diagnosis, nil
	}
	if rec != nil {
		rec.SkippedFilters = skipped(s.fwk.FilterPlugins(), state.SkipFilterPlugins)
	}
	nodes := allNodes
	if !preRes.AllNodes() {
		nodes = make([]*framework.NodeInfo, 0, len(preRes.NodeNames))
		for _, n := range allNodes {
			if preRes.NodeNames.Has(n.Node().Name) {
				nodes = append(nodes, n)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(plugins))))
		diagnosis.UnschedulablePlugins = plugins
	}
	// A pod that preemption made room for tries its nominated node first:
	// it is most likely the one node that fits.
	if nnn := pod.Status.NominatedNodeName; nnn != "" && (preRes.AllNodes() || preRes.NodeNames.Has(nnn)) {
		if ni, err := s.snapshot.Get(nnn); err == nil {
			feasible, err := s.findNodesThatPassFilters(ctx, state, pod, &diagnosis, []*framework.NodeInfo{ni}, nil)
			if err == nil && len(feasible) > 0 {
				rec.recordNode(nnn, nil)
				return feasible, diagnosis, nil
			}
		}
	}
	feasible, err := s.findNodesThatPassFilters(ctx, state, pod, &diagnosis, nodes, rec)
	if err != nil {
		return nil, diagnosis, err
	}
	if len(nodes) > 0 {
		processed := len(feasible) + diagnosis.NodeToStatus.Len()
		s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % len(nodes)
	}
	return feasible, diagnosis, nil
}

// findNodesThatPassFilters runs the filters on nodes, starting where the
// previous pod stopped (so every node gets its turn), until enough nodes fit
// (numFeasibleNodesToFind) or every node was tried. Upstream runs the filters
// on 16 goroutines; here they run in order, yielding every few nodes.
func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, state *framework.CycleState, pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []*framework.NodeInfo, rec *Decision) ([]*framework.NodeInfo, error) {
	numAll := len(nodes)
	if numAll == 0 {
		return nil, nil
	}
	numToFind := numFeasibleNodesToFind(s.fwk.PercentageOfNodesToScore(), numAll)
	// The list lives until the next cycle: reuse its array.
	if cap(s.feasibleBuf) < numToFind {
		s.feasibleBuf = make([]*framework.NodeInfo, 0, numToFind)
	}
	feasible := s.feasibleBuf[:0]
	start := s.nextStartNodeIndex % numAll
	if !s.fwk.HasFilterPlugins() {
		for i := 0; i < numToFind; i++ {
			n := nodes[(start+i)%numAll]
			feasible = append(feasible, n)
			rec.recordNode(n.Node().Name, nil)
		}
		return feasible, nil
	}
	for i := 0; i < numAll && len(feasible) < numToFind; i++ {
		n := nodes[(start+i)%numAll]
		st := s.fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, n)
		if st.Code() == framework.Error {
			return nil, st.AsError()
		}
		if rec != nil && !st.IsSuccess() && st.Plugin() == noderesources.Name {
			rec.recordNodeDetail(n.Node().Name, st, resourceDetail(pod, n))
		} else {
			rec.recordNode(n.Node().Name, st)
		}
		if st.IsSuccess() {
			feasible = append(feasible, n)
		} else {
			diagnosis.NodeToStatus.Set(n.Node().Name, st)
			diagnosis.AddPluginStatus(st)
		}
		yield.Maybe(i)
	}
	return feasible, nil
}

// numFeasibleNodesToFind is upstream's percentageOfNodesToScore: on a big
// cluster the scheduler stops filtering once this many nodes fit, because
// the best of 500 good nodes is about as good as the best of 5,000 and costs
// a tenth. Adaptive default: 50% minus 1% per 125 nodes, at least 5%, and
// never fewer than 100 nodes.
//
//	nodes:      100   1,000   5,000   6,000+
//	percent:    all     42%     10%      5%
//	nodes kept: 100     420     500    5%…
func numFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = int32(50 - numAllNodes/125)
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * int(percentage) / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// prioritizeNodes runs PreScore and Score on the feasible nodes. Without
// score plugins every node scores 1.
func (s *Scheduler) prioritizeNodes(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) ([]framework.NodePluginScores, error) {
	if !s.fwk.HasScorePlugins() {
		out := make([]framework.NodePluginScores, len(nodes))
		for i, n := range nodes {
			out[i] = framework.NodePluginScores{Name: n.Node().Name, TotalScore: 1}
		}
		return out, nil
	}
	if st := s.fwk.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	scores, st := s.fwk.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	return scores, nil
}

// selectHost picks the highest total score; among equal scores each node is
// equally likely (reservoir sampling), as upstream.
func selectHost(scores []framework.NodePluginScores) (string, error) {
	if len(scores) == 0 {
		return "", errEmptyPriorityList
	}
	best := scores[0]
	ties := 1
	for _, ns := range scores[1:] {
		switch {
		case ns.TotalScore > best.TotalScore:
			best, ties = ns, 1
		case ns.TotalScore == best.TotalScore:
			ties++
			if rand.IntN(ties) == 0 {
				best = ns
			}
		}
	}
	return best.Name, nil
}

// handleSchedulingFailure reports a failed attempt and puts the pod back
// (upstream: handleSchedulingFailure): a Warning FailedScheduling event, the
// PodScheduled=False condition with the same message, and the queue.
func (s *Scheduler) handleSchedulingFailure(ctx context.Context, p *framework.QueuedPodInfo, err error, reason string, nominating *string, cycle int64) {
	pod := p.Pod
	msg := err.Error()
	// Requeue the informer's latest version, unless the pod is gone or
	// was bound meanwhile.
	if cached, ok := s.podInformer.Get(pod.Namespace, pod.Name); ok && cached.UID == pod.UID && cached.Spec.NodeName == "" {
		p.PodInfo = framework.NewPodInfo(cached)
		_ = s.queue.AddUnschedulableIfNotPresent(p, cycle)
		pod = cached
		// Record the nomination now: the next cycle must see it even
		// before the status update below comes back through the informer.
		if nominating != nil {
			s.queue.AddNominatedPod(p.PodInfo, *nominating)
		} else {
			s.queue.nominator.add(p.PodInfo, "", false)
		}
	} else if ok && cached.Spec.NodeName != "" {
		return
	}
	s.recorder.Event(pod, v1.EventTypeWarning, "FailedScheduling", truncateMessage(msg))
	s.updatePodScheduledCondition(ctx, pod, &v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: pod.Generation,
		Status:             v1.ConditionFalse,
		Reason:             reason,
		Message:            msg,
	}, nominating)
}

func truncateMessage(msg string) string {
	const suffix = " ..."
	if len(msg) <= maxEventMessage {
		return msg
	}
	return msg[:maxEventMessage-len(suffix)] + suffix
}

// updatePodScheduledCondition writes the condition (and, when nominating
// is set, nominatedNodeName) to the pod's status, unless nothing changed. A
// conflict re-reads the pod.
func (s *Scheduler) updatePodScheduledCondition(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, nominating *string) {
	for range 3 {
		cp := pod.DeepCopy()
		changed := podutil.UpdatePodCondition(&cp.Status, *cond, s.clock.Now())
		if nominating != nil && cp.Status.NominatedNodeName != *nominating {
			cp.Status.NominatedNodeName = *nominating
			changed = true
		}
		if !changed {
			return
		}
		_, err := s.client.Pods().UpdateStatus(ctx, cp)
		if err == nil || !apierrors.IsConflict(err) {
			return
		}
		fresh, err := s.client.Pods().Get(ctx, pod.Namespace, pod.Name)
		if err != nil || fresh.UID != pod.UID || fresh.Spec.NodeName != "" {
			return
		}
		pod = fresh
	}
}

// traceDecision records the outcome of a scheduling cycle in the trace
// (core/trace): the node chosen, or why none was (err).
func (s *Scheduler) traceDecision(pod *v1.Pod, result ScheduleResult, err error) {
	rec := s.client.Registry().Trace()
	if rec == nil {
		return
	}
	detail := ""
	if err != nil {
		detail = err.Error()
	} else {
		detail = fmt.Sprintf("%s (%d of %d nodes evaluated fit)", result.SuggestedHost, result.FeasibleNodes, result.EvaluatedNodes)
	}
	rec.Record(trace.Hop{Kind: trace.Decision, From: s.client.UserAgent, Verb: "schedule", Resource: "pods", Namespace: pod.Namespace, Name: pod.Name, Detail: detail})
}
