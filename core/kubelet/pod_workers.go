package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/kubelet/cni"
	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// This file is the pod workers' sync (upstream: pkg/kubelet/pod_workers.go
// and kubelet.go SyncPod, SyncTerminatingPod, SyncTerminatedPod). A sync is
// level-based: it reads the pod from the informer and the containers from the
// runtime, and does whatever brings the second closer to the first. It does
// not matter which event queued the pod.
//
//	the pod is ...                          the kubelet ...
//	gone from the API                       kills and removes its containers, frees its IP
//	being deleted (deletionTimestamp)       kills its containers (Killing), frees its IP,
//	                                        posts the final status, deletes it for good
//	Succeeded or Failed                     frees its IP; its exited containers stay for logs
//	anything else                           sets up its network, starts/restarts containers,
//	                                        posts its status

// syncPod syncs one pod by UID. It returns how long until the pod needs
// another sync (0: only when something happens); an error retries it with a
// back-off.
func (kl *Kubelet) syncPod(ctx context.Context, uid types.UID) (time.Duration, error) {
	pod := kl.podByUID(uid)
	if pod == nil {
		return 0, kl.cleanupPod(ctx, uid)
	}
	kl.record(pod)
	switch {
	case pod.DeletionTimestamp != nil:
		return 0, kl.syncTerminatingPod(ctx, pod)
	case isTerminal(pod.Status.Phase):
		return 0, kl.syncTerminalPod(ctx, pod)
	case kl.evictionMessage(pod.UID) != "":
		// Evicted (eviction.go): stopped for good, Failed.
		return 0, kl.syncTerminalPod(ctx, pod)
	}
	return kl.syncRunningPod(ctx, pod)
}

// syncRunningPod brings a live pod's containers to its spec.
//
// It writes the pod's status before acting (what the runtime has now) and
// after, except when it re-creates a lost sandbox: then the containers it
// sees are the exited records of the old sandbox, which this same sync
// replaces, and the status before acting would only make the pod flap
// (not ready for a moment, its endpoints removed and added back, its
// ReplicaSet's status written twice). That sync writes once, after acting,
// as upstream's status manager sends only the latest status it was given
// for a pod (pkg/kubelet/status/status_manager.go syncBatch); the status
// still shows what the old sandbox left: restartCount + 1 and
// lastState.terminated (255 Unknown).
func (kl *Kubelet) syncRunningPod(ctx context.Context, pod *corev1.Pod) (time.Duration, error) {
	// The pod's sandbox: here, its network (CNI ADD). A pod that has
	// containers in the runtime but no sandbox lost it (the machine
	// rebooted: the runtime recovered its containers, exited, but not
	// their network): upstream's computePodActions re-creates the sandbox,
	// unless the pod is never restarted and its containers have run.
	var lost []cri.ContainerStatus
	if _, has := kl.podNetwork(pod.UID); !has {
		lost = kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(pod.UID)})
	}
	if len(lost) > 0 && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
		_, err := kl.syncStatus(ctx, pod, false) // its containers exited: the pod fails
		return 0, err
	}

	// The status as things are, before acting: a new pod shows Pending with
	// its containers waiting in ContainerCreating while images are pulled.
	// When the sandbox is re-created below it is written only if the sync
	// stops before starting containers.
	written := false
	statusBeforeActing := func() error {
		if written {
			return nil
		}
		written = true
		p, err := kl.syncStatus(ctx, pod, false)
		pod = p
		return err
	}
	if len(lost) == 0 {
		if err := statusBeforeActing(); err != nil {
			return 0, err
		}
	}

	// Its volumes, before anything runs (upstream: WaitForAttachAndMount).
	// Set up volumes are refreshed: a changed ConfigMap reaches its files.
	if ready, retry := kl.mountVolumes(ctx, pod); !ready {
		kl.enqueueAfter(pod.UID, retry)
		return 0, statusBeforeActing()
	}

	if len(lost) > 0 {
		kl.recorder.Eventf(pod, corev1.EventTypeNormal, EventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.")
		kl.sandboxChanged(pod.UID, lost)
	}
	if _, err := kl.setupNetwork(pod); err != nil {
		kl.enqueueAfter(pod.UID, sandboxRetryDelay)
		kl.recorder.Eventf(pod, corev1.EventTypeWarning, EventFailedCreatePodSandBox,
			"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: %v", string(pod.UID), err)
		return 0, statusBeforeActing()
	}

	// The next sync is scheduled before the status that shows why it is
	// needed (ImagePullBackOff, CrashLoopBackOff) is written, so whoever
	// sees that status and moves the clock is sure to wake the pod up.
	kl.enqueueAfter(pod.UID, kl.syncContainers(ctx, pod))

	pod, err := kl.syncStatus(ctx, pod, false)
	if err != nil {
		return 0, err
	}
	// Probe workers start once the status names the containers to probe.
	if !isTerminal(pod.Status.Phase) {
		kl.probes.addPod(pod)
	}
	if isTerminal(pod.Status.Phase) {
		// Nothing will run in this pod again: tear its sandbox down.
		kl.teardownNetwork(pod.UID)
		if _, err := kl.syncStatus(ctx, pod, false); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// syncTerminatingPod finishes a graceful deletion: `kubectl delete pod` only
// set deletionTimestamp; the kubelet stops the containers, and once they are
// stopped it deletes the pod with grace period 0, which removes it from the
// API (upstream: SyncTerminatingPod, then the status manager's final
// delete).
func (kl *Kubelet) syncTerminatingPod(ctx context.Context, pod *corev1.Pod) error {
	if err := kl.killPod(ctx, pod, pod.UID); err != nil {
		return fmt.Errorf("stop pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	kl.teardownNetwork(pod.UID)
	if _, err := kl.syncStatus(ctx, pod, true); err != nil {
		return err
	}
	zero := int64(0)
	uid := pod.UID
	err := kl.client.Pods().Delete(ctx, pod.Namespace, pod.Name, &metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil // the informer reports the deletion; cleanupPod removes the containers
}

// syncTerminalPod keeps a finished pod finished: nothing runs, its IP is free.
func (kl *Kubelet) syncTerminalPod(ctx context.Context, pod *corev1.Pod) error {
	if err := kl.killPod(ctx, pod, pod.UID); err != nil {
		return err
	}
	kl.teardownNetwork(pod.UID)
	_, err := kl.syncStatus(ctx, pod, true)
	return err
}

// cleanupPod removes everything of a pod the API no longer has: its
// containers (and their logs), its IP and what the kubelet remembered.
func (kl *Kubelet) cleanupPod(ctx context.Context, uid types.UID) error {
	kl.mu.Lock()
	rec := kl.pods[uid]
	kl.mu.Unlock()
	var last *corev1.Pod
	if rec != nil {
		last = rec.pod
	}
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(uid)}) {
		if c.State == cri.ContainerRunning {
			if err := kl.killContainer(ctx, last, c.Name, c.ID, "Stopping container "+c.Name); err != nil {
				return err
			}
		}
		if err := kl.runtime.RemoveContainer(ctx, c.ID); err != nil {
			return err
		}
	}
	kl.teardownNetwork(uid)
	kl.probes.removePod(uid)
	kl.unmountVolumes(uid)
	kl.crashBackOff.DeletePrefix(string(uid) + "/")
	kl.images.forget(uid)
	kl.mu.Lock()
	delete(kl.pods, uid)
	kl.mu.Unlock()
	return nil
}

// podByUID returns the pod from the informer's cache, or nil.
func (kl *Kubelet) podByUID(uid types.UID) *corev1.Pod {
	kl.mu.Lock()
	inf := kl.informer
	kl.mu.Unlock()
	if inf == nil {
		return nil
	}
	if pods := inf.ByIndex(uidIndex, string(uid)); len(pods) > 0 {
		return pods[0]
	}
	return nil
}

// record notes the pod's latest API object, creating its record on first
// sight (which is the pod's startTime).
func (kl *Kubelet) record(pod *corev1.Pod) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[pod.UID]
	if rec == nil {
		rec = &podRecord{startTime: kl.clock.Now(), reasons: map[string]waitingReason{}, restartForChange: map[string]bool{}}
		kl.pods[pod.UID] = rec
	}
	rec.pod = pod
}

// recordSnapshot returns a copy of the pod's waiting reasons and its start
// time.
func (kl *Kubelet) recordSnapshot(pod *corev1.Pod) (map[string]waitingReason, time.Time) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[pod.UID]
	if rec == nil {
		return nil, kl.clock.Now()
	}
	reasons := make(map[string]waitingReason, len(rec.reasons))
	for k, v := range rec.reasons {
		reasons[k] = v
	}
	return reasons, rec.startTime
}

// storeStatus keeps the last status generated for a pod, for PodLogs.
func (kl *Kubelet) storeStatus(uid types.UID, s corev1.PodStatus) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		rec.status = &s
	}
}

// lastStatus returns the last status generated for a pod.
func (kl *Kubelet) lastStatus(uid types.UID) (*corev1.PodStatus, bool) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil && rec.status != nil {
		return rec.status.DeepCopy(), true
	}
	return nil, false
}

// sandboxChanged notes that the pod's sandbox was re-created, old being
// the containers of the one before: its init containers run again before
// its regular containers restart, as upstream's (computePodActions starts
// from the first init container with a new sandbox).
func (kl *Kubelet) sandboxChanged(uid types.UID, old []cri.ContainerStatus) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		rec.oldSandbox = map[string]bool{}
		for _, c := range old {
			rec.oldSandbox[c.ID] = true
		}
	}
}

// inOldSandbox reports whether a container ran in a sandbox the pod has lost.
func (kl *Kubelet) inOldSandbox(uid types.UID, id string) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[uid]
	return rec != nil && rec.oldSandbox[id]
}

// setReason records why a container waits; it reports whether that changed.
func (kl *Kubelet) setReason(uid types.UID, name, reason, message string) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[uid]
	if rec == nil {
		return false
	}
	r := waitingReason{Reason: reason, Message: message}
	if rec.reasons[name] == r {
		return false
	}
	rec.reasons[name] = r
	return true
}

func (kl *Kubelet) clearReason(uid types.UID, name string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		delete(rec.reasons, name)
	}
}

func (kl *Kubelet) setRestartForChange(uid types.UID, name string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		rec.restartForChange[name] = true
	}
}

// restartingForChange reports the mark setRestartForChange set; the
// container's next start clears it.
func (kl *Kubelet) restartingForChange(uid types.UID, name string) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	rec := kl.pods[uid]
	return rec != nil && rec.restartForChange[name]
}

func (kl *Kubelet) clearRestartForChange(uid types.UID, name string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		delete(rec.restartForChange, name)
	}
}

// setupNetwork is the sandbox's CNI ADD; it returns the pod's address.
func (kl *Kubelet) setupNetwork(pod *corev1.Pod) (cni.Result, error) {
	kl.mu.Lock()
	n := kl.network
	kl.mu.Unlock()
	if n == nil {
		return cni.Result{}, fmt.Errorf("network plugin is not ready: node %q has no podCIDR yet", kl.nodeName)
	}
	_, had := n.Get(string(pod.UID))
	res, err := n.Add(string(pod.UID))
	if err == nil && !had {
		kl.traceCall(traceCNI, "ADD", pod.Namespace, pod.Name, res.Address.Addr().String())
	}
	return res, err
}

// teardownNetwork is the sandbox's CNI DEL: the pod's address is free again.
func (kl *Kubelet) teardownNetwork(uid types.UID) {
	kl.mu.Lock()
	n := kl.network
	kl.mu.Unlock()
	if n == nil {
		return
	}
	if res, had := n.Get(string(uid)); had {
		ns, name := kl.podName(uid)
		kl.traceCall(traceCNI, "DEL", ns, name, res.Address.Addr().String()+" is free again")
	}
	n.Del(string(uid))
}

// podNetwork returns the pod's address, if it holds one.
func (kl *Kubelet) podNetwork(uid types.UID) (cni.Result, bool) {
	kl.mu.Lock()
	n := kl.network
	kl.mu.Unlock()
	if n == nil {
		return cni.Result{}, false
	}
	return n.Get(string(uid))
}
