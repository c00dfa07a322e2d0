// Package defaultpreemption holds DefaultPreemption, the PostFilter plugin
// that makes room for a pod no node fits by deleting pods of lower priority
// (upstream: pkg/scheduler/framework/plugins/defaultpreemption and
// pkg/scheduler/framework/preemption, which are one package here).
//
// It runs only after every node was rejected, and only looks at nodes whose
// rejection was Unschedulable: room could appear there. A node rejected as
// UnschedulableAndUnresolvable (a taint, a node selector, a request bigger
// than the whole node) stays out of reach however many pods are deleted.
//
//	for each candidate node (a sample of at least 100 nodes or 10%):
//	    remove every pod of lower priority than the incoming one (on a copy)
//	    does the pod fit now?  no -> the node cannot help
//	    put the removed pods back, most important first, as long as the pod
//	    still fits: the ones that do not fit back are the victims
//	pick the node whose victims hurt least:
//	    fewest PodDisruptionBudget violations, then the lowest highest
//	    priority among the victims, then the lowest sum of priorities, then
//	    the fewest victims, then the victims that started last
//	delete the victims (each gets a "Preempted" event) and nominate the node:
//	    pod.status.nominatedNodeName = node
//
// The pod itself is not bound yet: it goes back to the queue, and once the
// victims are gone (their kubelets stop them) it is scheduled again,
// normally onto the nominated node. Meanwhile the scheduler counts it on
// that node for pods of lower priority, so they cannot take the room.
//
// A pod's priority is spec.priority, which the Priority admission plugin
// fills in from its priorityClassName.
package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/yield"
)

// Name is the plugin's name in profiles.
const Name = "DefaultPreemption"

// Upstream's messages. The plugin's status message is "preemption: " and
// then either one of the first two, or a FitError over the candidate nodes
// built from the last two:
//
//	preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.
const (
	MsgPreemptionPolicyNever   = "not eligible due to preemptionPolicy=Never."
	MsgTerminatingOnNominated  = "not eligible due to a terminating pod on the nominated node."
	ErrReasonNotHelpful        = "Preemption is not helpful for scheduling"
	ErrReasonNoVictims         = "No preemption victims found for incoming pod"
	preemptionMessagePrefix    = "preemption: "
	reasonPreempted            = "Preempted"
	disruptionConditionMessage = "%s: preempting to accommodate a higher priority pod"
)

// Args configures the plugin (upstream: DefaultPreemptionArgs): how many
// candidate nodes are dry-run at least, as a share of the potential nodes
// and as a number.
type Args struct {
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32
}

// DefaultArgs are upstream's defaults.
func DefaultArgs() Args {
	return Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
}

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	fh   framework.Handle
	args Args
	// offset picks the first candidate node (random, as upstream; tests
	// replace it).
	offset func(n int) int
}

var (
	_ framework.PostFilterPlugin  = (*DefaultPreemption)(nil)
	_ framework.EnqueueExtensions = (*DefaultPreemption)(nil)
)

// New is the plugin's factory, with DefaultArgs.
func New(ctx context.Context, h framework.Handle) (framework.Plugin, error) {
	return NewWithArgs(ctx, h, DefaultArgs())
}

// NewWithArgs builds the plugin from args.
func NewWithArgs(_ context.Context, h framework.Handle, args Args) (*DefaultPreemption, error) {
	if args.MinCandidateNodesPercentage < 0 || args.MinCandidateNodesPercentage > 100 {
		return nil, fmt.Errorf("minCandidateNodesPercentage: Invalid value: %d: not in valid range [0, 100]", args.MinCandidateNodesPercentage)
	}
	if args.MinCandidateNodesAbsolute < 0 {
		return nil, fmt.Errorf("minCandidateNodesAbsolute: Invalid value: %d: not in valid range [0, inf)", args.MinCandidateNodesAbsolute)
	}
	if args.MinCandidateNodesPercentage == 0 && args.MinCandidateNodesAbsolute == 0 {
		return nil, errors.New("minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero")
	}
	return &DefaultPreemption{fh: h, args: args, offset: rand.IntN}, nil
}

// Name implements framework.Plugin.
func (*DefaultPreemption) Name() string { return Name }

// EventsToRegister: the plugin never rejects a pod by itself (the filters
// that did say when to retry), so it registers nothing.
func (*DefaultPreemption) EventsToRegister() []framework.ClusterEvent { return nil }

// PostFilter implements framework.PostFilterPlugin.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m *framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	result, status := pl.preempt(ctx, state, pod, m)
	if msg := status.Message(); msg != "" {
		return result, framework.NewStatus(status.Code(), preemptionMessagePrefix+msg)
	}
	return result, status
}

// candidate is a node and the pods to delete there.
type candidate struct {
	node             string
	victims          []*v1.Pod // most important first
	numPDBViolations int
}

// preempt returns, as upstream's Evaluator.Preempt:
//   - nil, Error: something broke; try again later, keep the nomination;
//   - nil, Unschedulable: not eligible now (keep the nomination);
//   - result with "", Unschedulable: preemption cannot help (clears the
//     nomination);
//   - result with a node, Success: victims deleted, node nominated.
func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m *framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	// 0) The latest version of the pod: its nominatedNodeName may be newer.
	if l := pl.fh.Listers().Pods; l != nil {
		latest, ok := l.Get(pod.Namespace, pod.Name)
		if !ok {
			return nil, framework.AsStatus(fmt.Errorf("pod %s/%s not found", pod.Namespace, pod.Name))
		}
		pod = latest
	}
	// 1) Is the pod allowed to preempt?
	if ok, msg := pl.podEligibleToPreemptOthers(pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}
	// 2) Dry-run preemption on the candidate nodes.
	lister := pl.fh.SnapshotSharedLister().NodeInfos()
	allNodes, err := lister.List()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(allNodes) == 0 {
		return nil, framework.AsStatus(errors.New("no nodes available"))
	}
	potential, err := m.NodesForStatusCode(lister, framework.Unschedulable)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	var candidates []candidate
	nodeStatuses := framework.NewDefaultNodeToStatus()
	if len(potential) > 0 {
		candidates, nodeStatuses, err = pl.dryRunPreemption(ctx, state, pod, potential)
		if err != nil && len(candidates) == 0 {
			return nil, framework.AsStatus(err)
		}
	}
	if len(candidates) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: framework.Diagnosis{NodeToStatus: nodeStatuses}}
		fitErr.Diagnosis.NodeToStatus.SetAbsentNodesStatus(framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotHelpful))
		// A result with no node clears a nomination the pod may have.
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, fitErr.Error())
	}
	// 3) The best candidate.
	best := pickOneNodeForPreemption(candidates)
	// 4) Delete the victims.
	if st := pl.prepareCandidate(ctx, best, pod); !st.IsSuccess() {
		return nil, st
	}
	return &framework.PostFilterResult{NominatedNodeName: best.node, Victims: best.victims}, nil
}

// podEligibleToPreemptOthers: a pod with preemptionPolicy Never may not
// preempt; neither may a pod whose earlier victims are still terminating
// on its nominated node (it already made room; deleting more would be
// greedy), unless that node no longer suits it at all.
func (pl *DefaultPreemption) podEligibleToPreemptOthers(pod *v1.Pod, nominatedNodeStatus *framework.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, MsgPreemptionPolicyNever
	}
	if nom := pod.Status.NominatedNodeName; nom != "" {
		if nominatedNodeStatus.Code() == framework.UnschedulableAndUnresolvable {
			return true, ""
		}
		if ni, err := pl.fh.SnapshotSharedLister().NodeInfos().Get(nom); err == nil {
			for _, p := range ni.Pods {
				if podPriority(p.Pod) < podPriority(pod) && podTerminatingByPreemption(p.Pod) {
					return false, MsgTerminatingOnNominated
				}
			}
		}
	}
	return true, ""
}

// podTerminatingByPreemption: being deleted, with the DisruptionTarget
// condition preemption sets.
func podTerminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// numCandidates is how many candidate nodes to find before stopping:
// MinCandidateNodesPercentage of the potential nodes, at least
// MinCandidateNodesAbsolute, at most all of them.
func (pl *DefaultPreemption) numCandidates(numNodes int) int {
	n := numNodes * int(pl.args.MinCandidateNodesPercentage) / 100
	n = max(n, int(pl.args.MinCandidateNodesAbsolute))
	return min(n, numNodes)
}

// dryRunPreemption runs selectVictimsOnNode on the potential nodes, from a
// random offset, until enough candidates are found (at least one that
// violates no PodDisruptionBudget). Candidates without violations come
// first.
func (pl *DefaultPreemption) dryRunPreemption(ctx context.Context, state *framework.CycleState, pod *v1.Pod, potential []*framework.NodeInfo) ([]candidate, *framework.NodeToStatus, error) {
	var pdbs []*policyv1.PodDisruptionBudget
	if l := pl.fh.Listers().PodDisruptionBudgets; l != nil {
		pdbs = l.List()
	}
	offset := pl.offset(len(potential))
	want := pl.numCandidates(len(potential))
	var nonViolating, violating []candidate
	statuses := framework.NewDefaultNodeToStatus()
	var errs []error
	for i := range potential {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		ni := potential[(offset+i)%len(potential)].Snapshot()
		name := ni.Node().Name
		victims, violations, st := pl.selectVictimsOnNode(ctx, state.Clone(), pod, ni, pdbs)
		if st.IsSuccess() && len(victims) > 0 {
			c := candidate{node: name, victims: victims, numPDBViolations: violations}
			if violations == 0 {
				nonViolating = append(nonViolating, c)
			} else {
				violating = append(violating, c)
			}
			if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
				break
			}
			continue
		}
		if st.IsSuccess() {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", name))
		}
		if st.Code() == framework.Error {
			errs = append(errs, st.AsError())
		}
		statuses.Set(name, st)
		yield.Maybe(i)
	}
	return append(nonViolating, violating...), statuses, errors.Join(errs...)
}

// selectVictimsOnNode finds the fewest, least important pods to delete on
// the node (a copy) for the pod to fit.
func (pl *DefaultPreemption) selectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	removePod := func(pi *framework.PodInfo) error {
		if err := ni.RemovePod(pi.Pod); err != nil {
			return err
		}
		return pl.fh.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, ni).AsError()
	}
	addPod := func(pi *framework.PodInfo) error {
		ni.AddPodInfo(pi)
		return pl.fh.RunPreFilterExtensionAddPod(ctx, state, pod, pi, ni).AsError()
	}
	// First remove every pod of lower priority and see whether the pod fits.
	var potential []*framework.PodInfo
	prio := podPriority(pod)
	for _, pi := range append([]*framework.PodInfo(nil), ni.Pods...) {
		if podPriority(pi.Pod) < prio {
			potential = append(potential, pi)
			if err := removePod(pi); err != nil {
				return nil, 0, framework.AsStatus(err)
			}
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNoVictims)
	}
	// Inter-pod affinity to one of the victims is not considered, as
	// upstream: affinity to lower-priority pods is not a recommended setup.
	if st := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); !st.IsSuccess() {
		return nil, 0, st
	}
	// Then reprieve as many as possible, most important first: those whose
	// PodDisruptionBudget would be violated first, then the others.
	sort.SliceStable(potential, func(i, j int) bool { return moreImportantPod(potential[i].Pod, potential[j].Pod) })
	violatingPods, nonViolatingPods := filterPodsWithPDBViolation(potential, pdbs)
	var victims []*framework.PodInfo
	numViolating := 0
	reprieve := func(pi *framework.PodInfo) (bool, error) {
		if err := addPod(pi); err != nil {
			return false, err
		}
		fits := pl.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess()
		if !fits {
			if err := removePod(pi); err != nil {
				return false, err
			}
			victims = append(victims, pi)
		}
		return fits, nil
	}
	for _, pi := range violatingPods {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if !fits {
			numViolating++
		}
	}
	for _, pi := range nonViolatingPods {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if len(violatingPods) > 0 && len(nonViolatingPods) > 0 {
		sort.SliceStable(victims, func(i, j int) bool { return moreImportantPod(victims[i].Pod, victims[j].Pod) })
	}
	out := make([]*v1.Pod, len(victims))
	for i, pi := range victims {
		out[i] = pi.Pod
	}
	return out, numViolating, nil
}

// filterPodsWithPDBViolation splits the pods (keeping their order) into
// those whose deletion would exceed a PodDisruptionBudget's
// disruptionsAllowed and the others.
func filterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, pi := range pods {
		pod := pi.Pod
		violated := false
		if len(pod.Labels) != 0 {
			for i, pdb := range pdbs {
				if pdb.Namespace != pod.Namespace {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
					continue
				}
				// Already counted by the disruption controller.
				if _, ok := pdb.Status.DisruptedPods[pod.Name]; ok {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violated = true
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pickOneNodeForPreemption picks the candidate whose victims hurt least,
// by upstream's criteria in order, each breaking the ties of the one
// before: fewest PDB violations, lowest highest victim priority, lowest sum
// of priorities, fewest victims, latest start of the most important
// victims; then the first.
func pickOneNodeForPreemption(candidates []candidate) candidate {
	if len(candidates) == 1 {
		return candidates[0]
	}
	scoreFuncs := []func(c *candidate) int64{
		func(c *candidate) int64 { return -int64(c.numPDBViolations) },
		func(c *candidate) int64 { return -int64(podPriority(c.victims[0])) },
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.victims {
				// +MaxInt32+1 makes every priority positive, so more victims
				// with a negative priority never look cheaper.
				sum += int64(podPriority(p)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *candidate) int64 { return -int64(len(c.victims)) },
		func(c *candidate) int64 { return earliestStartTime(c.victims).UnixNano() },
	}
	remaining := make([]*candidate, len(candidates))
	for i := range candidates {
		remaining[i] = &candidates[i]
	}
	for _, f := range scoreFuncs {
		var best []*candidate
		bestScore := int64(math.MinInt64)
		for _, c := range remaining {
			s := f(c)
			if s > bestScore {
				bestScore, best = s, best[:0]
			}
			if s == bestScore {
				best = append(best, c)
			}
		}
		if len(best) == 1 {
			return *best[0]
		}
		remaining = best
	}
	return *remaining[0]
}

// startTime is status.startTime; a pod not started yet counts as starting
// now, later than any that did (upstream uses time.Now()).
func startTime(p *v1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Unix(1<<40, 0)
}

// earliestStartTime is the earliest start among the victims of the highest
// priority.
func earliestStartTime(victims []*v1.Pod) time.Time {
	if len(victims) == 0 {
		return time.Time{}
	}
	top := podPriority(victims[0])
	earliest := startTime(victims[0])
	for _, p := range victims[1:] {
		if podPriority(p) == top && startTime(p).Before(earliest) {
			earliest = startTime(p)
		}
	}
	return earliest
}

// moreImportantPod: higher priority, then started earlier (upstream:
// util.MoreImportantPod).
func moreImportantPod(a, b *v1.Pod) bool {
	pa, pb := podPriority(a), podPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// prepareCandidate deletes the victims, each with the DisruptionTarget
// condition and a Preempted event, and takes the nomination away from
// lower-priority pods nominated to the same node: they may no longer fit.
func (pl *DefaultPreemption) prepareCandidate(ctx context.Context, c candidate, pod *v1.Pod) *framework.Status {
	cs := pl.fh.ClientSet()
	for _, victim := range c.victims {
		if err := pl.markDisruptionTarget(ctx, victim, pod); err != nil && !apierrors.IsNotFound(err) {
			return framework.AsStatus(fmt.Errorf("adding the DisruptionTarget condition to %s/%s: %w", victim.Namespace, victim.Name, err))
		}
		uid := victim.UID
		err := cs.Pods().Delete(ctx, victim.Namespace, victim.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return framework.AsStatus(fmt.Errorf("preempting %s/%s: %w", victim.Namespace, victim.Name, err))
		}
		if r := pl.fh.EventRecorder(); r != nil {
			r.Eventf(victim, v1.EventTypeNormal, reasonPreempted, "Preempted by pod %v on node %v", pod.UID, c.node)
		}
	}
	for _, pi := range pl.fh.NominatedPodsForNode(c.node) {
		if podPriority(pi.Pod) < podPriority(pod) {
			_ = pl.setNominatedNodeName(ctx, pi.Pod, "")
		}
	}
	return nil
}

// markDisruptionTarget sets DisruptionTarget=True (reason
// PreemptionByScheduler) on the victim's status, retrying on conflicts.
func (pl *DefaultPreemption) markDisruptionTarget(ctx context.Context, victim, preemptor *v1.Pod) error {
	cond := v1.PodCondition{
		Type:               v1.DisruptionTarget,
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf(disruptionConditionMessage, preemptor.Spec.SchedulerName),
		LastTransitionTime: metav1.NewTime(pl.fh.Clock().Now()),
	}
	return pl.updateStatus(ctx, victim, func(p *v1.Pod) bool {
		for i := range p.Status.Conditions {
			c := &p.Status.Conditions[i]
			if c.Type == cond.Type {
				if c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
					return false
				}
				*c = cond
				return true
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, cond)
		return true
	})
}

func (pl *DefaultPreemption) setNominatedNodeName(ctx context.Context, pod *v1.Pod, node string) error {
	return pl.updateStatus(ctx, pod, func(p *v1.Pod) bool {
		if p.Status.NominatedNodeName == node {
			return false
		}
		p.Status.NominatedNodeName = node
		return true
	})
}

// updateStatus applies change to a copy of the pod's status and writes it,
// re-reading the pod on a conflict (a few times).
func (pl *DefaultPreemption) updateStatus(ctx context.Context, pod *v1.Pod, change func(*v1.Pod) bool) error {
	pods := pl.fh.ClientSet().Pods()
	cur := pod
	for range 3 {
		cp := cur.DeepCopy()
		if !change(cp) {
			return nil
		}
		_, err := pods.UpdateStatus(ctx, cp)
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		if cur, err = pods.Get(ctx, pod.Namespace, pod.Name); err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return nil
		}
	}
	return fmt.Errorf("updating the status of %s/%s: too many conflicts", pod.Namespace, pod.Name)
}
