package kubelet

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// This file is the kubelet's status manager: it turns what the runtime says
// into the pod's status (upstream: pkg/kubelet/kubelet_pods.go
// generateAPIPodStatus, convertToAPIContainerStatuses and getPhase;
// pkg/kubelet/status/generate.go for the conditions) and writes it to the API
// server (pkg/kubelet/status/status_manager.go).
//
// A status is written only when it differs from the one the API server has,
// and every timestamp is cut to whole seconds (what the API stores), so
// syncing a pod that did not change writes nothing.

// maxStatusRetries bounds the conflict retries of one status write.
const maxStatusRetries = 5

// syncStatus generates the pod's status from the runtime and writes it if it
// changed, retrying on conflicts with a fresh copy of the pod. podIsTerminal
// says the pod's containers were stopped for good (it is being deleted): its
// phase becomes Succeeded or Failed whatever the restartPolicy. It returns
// the pod as last written or read.
func (kl *Kubelet) syncStatus(ctx context.Context, pod *corev1.Pod, podIsTerminal bool) (*corev1.Pod, error) {
	// The informer may not have seen the kubelet's last write yet; comparing
	// with its older copy could skip a write that undoes that last one
	// (Ready, then not ready again within a moment). Upstream's status
	// manager compares with its own cache of what it wrote, for the same
	// reason.
	pod = kl.newerWritten(pod)
	for attempt := 0; ; attempt++ {
		// A status of its own (generateAPIPodStatus shares nothing with
		// pod), kept as the last one generated and sent; neither changes it.
		status := kl.generateAPIPodStatus(pod, podIsTerminal)
		kl.storeStatus(pod.UID, status)
		if equality.Semantic.DeepEqual(pod.Status, status) {
			return pod, nil
		}
		// The request: the cached pod's metadata and spec with the new
		// status. A shallow copy is enough: the API server reads the
		// request and stores a copy of its own (upstream decodes one from
		// the request's body), so the cache's pod is never written.
		p := *pod
		p.Status = status
		updated, err := kl.client.Pods().UpdateStatus(ctx, &p)
		switch {
		case err == nil:
			kl.storeWritten(updated, pod.ResourceVersion)
			return updated, nil
		case apierrors.IsNotFound(err):
			return pod, nil // deleted meanwhile: the informer will tell
		case apierrors.IsConflict(err) && attempt < maxStatusRetries:
			fresh, gerr := kl.client.Pods().Get(ctx, pod.Namespace, pod.Name)
			if apierrors.IsNotFound(gerr) || (gerr == nil && fresh.UID != pod.UID) {
				return pod, nil
			}
			if gerr != nil {
				return pod, fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, gerr)
			}
			pod = fresh
		default:
			return pod, fmt.Errorf("update status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
}

// storeWritten remembers the pod as the kubelet's last status write left it,
// and the resourceVersion from which that write was made.
func (kl *Kubelet) storeWritten(p *corev1.Pod, from string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[p.UID]; rec != nil {
		rec.written, rec.writtenFrom = p, from
	}
}

// newerWritten returns the pod as the kubelet last wrote it when that is newer
// than pod (a higher resourceVersion: the store's revisions only grow), else
// pod.
func (kl *Kubelet) newerWritten(pod *corev1.Pod) *corev1.Pod {
	kl.mu.Lock()
	rec := kl.pods[pod.UID]
	var w *corev1.Pod
	if rec != nil {
		w = rec.written
	}
	kl.mu.Unlock()
	if w == nil {
		return pod
	}
	wrv, err1 := strconv.ParseUint(w.ResourceVersion, 10, 64)
	prv, err2 := strconv.ParseUint(pod.ResourceVersion, 10, 64)
	if err1 == nil && err2 == nil && wrv > prv {
		return w
	}
	return pod
}

// generateAPIPodStatus computes the pod's status from its spec, the runtime's
// containers and what the kubelet remembers (why a container waits), keeping
// the fields the kubelet does not own (qosClass, conditions of others).
func (kl *Kubelet) generateAPIPodStatus(pod *corev1.Pod, podIsTerminal bool) corev1.PodStatus {
	rp := kl.runtimePod(pod.UID)
	reasons, startTime := kl.recordSnapshot(pod)
	now := metav1.NewTime(kl.clock.Now().Truncate(time.Second))
	old := pod.Status
	s := *old.DeepCopy()

	s.HostIP, s.HostIPs = kl.nodeIP, []corev1.HostIP{{IP: kl.nodeIP}}
	if res, ok := kl.podNetwork(pod.UID); ok {
		ip := res.IP().String()
		s.PodIP, s.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	} // else keep the last known IPs: a finished pod keeps showing the IP it had
	if s.StartTime == nil {
		t := metav1.NewTime(startTime.Truncate(time.Second))
		s.StartTime = &t
	}

	restartable := !podIsTerminal && !isTerminal(old.Phase)
	s.InitContainerStatuses = kl.convertContainerStatuses(pod, pod.Spec.InitContainers, true, rp, reasons, ReasonPodInitializing, restartable)
	initialized := initContainersDone(pod, s.InitContainerStatuses)
	defaultReason := ReasonContainerCreating
	if !initialized {
		defaultReason = ReasonPodInitializing
	}
	s.ContainerStatuses = kl.convertContainerStatuses(pod, pod.Spec.Containers, false, rp, reasons, defaultReason, restartable)
	if isTerminal(old.Phase) {
		s.Phase = old.Phase // a finished pod never runs again
	} else {
		s.Phase = getPhase(pod, s.InitContainerStatuses, s.ContainerStatuses, podIsTerminal)
	}

	// Conditions: the others' first, then the kubelet's, in upstream's order.
	var conds []corev1.PodCondition
	var scheduled *corev1.PodCondition
	for i, c := range old.Conditions {
		switch c.Type {
		case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady:
		case corev1.PodScheduled:
			scheduled = &old.Conditions[i]
		default:
			conds = append(conds, c)
		}
	}
	_, hasNetwork := kl.podNetwork(pod.UID)
	sandbox := corev1.ConditionFalse
	if hasNetwork && !isTerminal(s.Phase) {
		sandbox = corev1.ConditionTrue
	}
	containersReady := containersReadyCondition(pod, s.ContainerStatuses, s.Phase)
	podReady := containersReady
	podReady.Type = corev1.PodReady
	conds = append(conds,
		condition(old.Conditions, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: sandbox}, now),
		condition(old.Conditions, initializedCondition(pod, s.InitContainerStatuses, s.Phase), now),
		condition(old.Conditions, podReady, now),
		condition(old.Conditions, containersReady, now),
	)
	// When the kubelet sees a pod, it was scheduled (pods created with
	// spec.nodeName set never met a scheduler).
	if scheduled != nil && scheduled.Status == corev1.ConditionTrue {
		conds = append(conds, *scheduled)
	} else {
		conds = append(conds, condition(old.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now))
	}
	// Which spec this status describes (PodObservedGenerationTracking, on
	// by default since 1.34): it lags metadata.generation until the kubelet
	// has seen a change, such as a new image.
	s.ObservedGeneration = pod.Generation
	for i := range conds {
		switch conds[i].Type {
		case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady:
			conds[i].ObservedGeneration = pod.Generation
		}
	}
	s.Conditions = conds
	if msg := kl.evictionMessage(pod.UID); msg != "" {
		applyEviction(&s, msg, now)
	}
	return s
}

// condition fills in c's lastTransitionTime: kept from the old condition of
// the same type when the status did not change, else now.
func condition(old []corev1.PodCondition, c corev1.PodCondition, now metav1.Time) corev1.PodCondition {
	c.LastTransitionTime = now
	for _, o := range old {
		if o.Type == c.Type && o.Status == c.Status {
			c.LastTransitionTime = o.LastTransitionTime
			c.LastProbeTime = o.LastProbeTime
		}
	}
	return c
}

// convertContainerStatuses builds the status of each container in specs
// (upstream: convertToAPIContainerStatuses, with the prober manager's
// UpdatePodStatus for ready and started):
//
//	no container yet              waiting: the reason it waits (ErrImagePull ...) or defaultReason
//	latest container running      running; started once its startup probe succeeded (at once
//	                              without one); ready once started and its readiness probe
//	                              succeeded (at once without one)
//	latest container exited       terminated, with its termination message; but waiting
//	                              (CrashLoopBackOff ...) with lastState = that termination
//	                              when it will be restarted
//	a previous exited container   lastState.terminated
//
// An init container is ready once it exited 0. restartCount is the latest
// container's attempt. restartable is false for a pod that will not run
// again.
func (kl *Kubelet) convertContainerStatuses(pod *corev1.Pod, specs []corev1.Container, init bool, rp runtimePod, reasons map[string]waitingReason, defaultReason string, restartable bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i := range specs {
		c := &specs[i]
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptrTo(false)}
		latest := rp.latest(c.Name)
		if latest == nil {
			w := &corev1.ContainerStateWaiting{Reason: defaultReason}
			if r, ok := reasons[c.Name]; ok {
				w.Reason, w.Message = r.Reason, r.Message
			}
			st.State.Waiting = w
			out = append(out, st)
			continue
		}
		st.Image = latest.Image
		st.ImageID = latest.ImageRef
		st.ContainerID = containerIDPrefix + latest.ID
		st.RestartCount = int32(latest.Attempt)
		switch latest.State {
		case cri.ContainerRunning:
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: metaTime(latest.StartedAt)}
			if init {
				st.Started = ptrTo(true)
				break
			}
			started := true
			if c.StartupProbe != nil {
				started = kl.probes.succeeded(latest.ID, startup)
			}
			st.Started = ptrTo(started)
			if started {
				st.Ready = true
				if c.ReadinessProbe != nil {
					// Not ready yet: probe now rather than at the next
					// period (upstream: UpdatePodStatus's manual trigger).
					if st.Ready = kl.probes.succeeded(latest.ID, readiness); !st.Ready {
						kl.probes.triggerReadiness(pod.UID, c.Name)
					}
				}
			}
		case cri.ContainerExited:
			st.State.Terminated = kl.terminated(pod, c, latest)
			st.Ready = init && latest.ExitCode == 0
		default:
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
		}
		if prev := rp.previous(c.Name); prev != nil {
			st.LastTerminationState.Terminated = kl.terminated(pod, c, prev)
		}
		// A container that will be started again waits, and says why.
		if latest.State == cri.ContainerExited && restartable {
			if r, ok := reasons[c.Name]; ok && willRestart(pod, c.Name, latest) {
				st.LastTerminationState = st.State
				st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
				st.Ready = false
			}
		}
		out = append(out, st)
	}
	return out
}

// willRestart reports whether an exited container is to be started again.
func willRestart(pod *corev1.Pod, name string, latest *cri.ContainerStatus) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return latest.ExitCode != 0 && pod.Spec.RestartPolicy != corev1.RestartPolicyNever
		}
	}
	return shouldRestart(pod.Spec.RestartPolicy, latest.ExitCode)
}

// terminated is an exited container's state, its message enriched with the
// termination message (see terminationMessage in termination.go).
func (kl *Kubelet) terminated(pod *corev1.Pod, spec *corev1.Container, c *cri.ContainerStatus) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{
		ExitCode:    c.ExitCode,
		Reason:      c.Reason,
		Message:     kl.containerMessage(pod, spec, c),
		StartedAt:   metaTime(c.StartedAt),
		FinishedAt:  metaTime(c.FinishedAt),
		ContainerID: containerIDPrefix + c.ID,
	}
}

func metaTime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

func ptrTo[T any](v T) *T { return &v }

func isTerminal(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// initContainersDone reports whether every init container exited 0.
func initContainersDone(pod *corev1.Pod, statuses []corev1.ContainerStatus) bool {
	for _, st := range statuses {
		if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}

// getPhase is the pod's phase from its containers' states (upstream: getPhase):
//
//	Pending    an init container has not finished, or a container has never run
//	Running    a container runs, or all exited and some will be restarted
//	Succeeded  all exited 0 and none will be restarted
//	Failed     all exited, one did not exit 0, none will be restarted
//	           (or an init container failed under restartPolicy Never)
func getPhase(pod *corev1.Pod, initStatuses, statuses []corev1.ContainerStatus, podIsTerminal bool) corev1.PodPhase {
	policy := pod.Spec.RestartPolicy
	pendingInit, failedInit := 0, 0
	for _, st := range initStatuses {
		switch {
		case st.State.Running != nil:
			pendingInit++
		case st.State.Terminated != nil:
			if st.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case st.State.Waiting != nil:
			if t := st.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
				failedInit++
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}
	running, waiting, stopped, succeeded := 0, 0, 0, 0
	for _, st := range statuses {
		switch {
		case st.State.Running != nil:
			running++
		case st.State.Terminated != nil:
			stopped++
			if st.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case st.State.Waiting != nil:
			if st.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		}
	}
	if failedInit > 0 && policy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	switch {
	case pendingInit > 0:
		return corev1.PodPending
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if podIsTerminal {
			if stopped == succeeded {
				return corev1.PodSucceeded
			}
			return corev1.PodFailed
		}
		switch {
		case policy == corev1.RestartPolicyAlways:
			return corev1.PodRunning // all are being restarted
		case stopped == succeeded:
			return corev1.PodSucceeded
		case policy == corev1.RestartPolicyNever:
			return corev1.PodFailed
		}
		return corev1.PodRunning // OnFailure: the failed ones are being restarted
	}
	return corev1.PodPending
}

// containersReadyCondition is upstream's GenerateContainersReadyCondition
// (the pod's Ready condition is the same, with readiness gates, which kubetab
// does not have yet).
func containersReadyCondition(pod *corev1.Pod, statuses []corev1.ContainerStatus, phase corev1.PodPhase) corev1.PodCondition {
	var unready []string
	for _, c := range pod.Spec.Containers {
		ready := false
		for _, st := range statuses {
			if st.Name == c.Name {
				ready = st.Ready
			}
		}
		if !ready {
			unready = append(unready, c.Name)
		}
	}
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	switch {
	case phase == corev1.PodSucceeded:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonPodCompleted
	case len(unready) > 0:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonContainersNotReady
		c.Message = fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	}
	return c
}

// initializedCondition is upstream's GeneratePodInitializedCondition.
func initializedCondition(pod *corev1.Pod, statuses []corev1.ContainerStatus, phase corev1.PodPhase) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if len(pod.Spec.InitContainers) == 0 {
		return c
	}
	var incomplete []string
	for _, st := range statuses {
		if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
			incomplete = append(incomplete, st.Name)
		}
	}
	switch {
	case phase == corev1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case len(incomplete) > 0:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonContainersNotInitialized
		c.Message = fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " "))
	}
	return c
}
