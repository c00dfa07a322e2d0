package kubelet

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// RecoveredContainers is what a node's container runtime held of pod when
// the machine went down, as its kubelet last reported it: every container
// with an ID in status.containerStatuses (and init containers), current and
// previous. A running one comes back without its process (cri.Recover marks
// it exited, 255 Unknown); one that had exited keeps how it ended. Give them
// to the restarted node's runtime (cri.Runtime.Recover) before its kubelet
// runs, and the kubelet does what upstream's does after a reboot: the pod's
// sandbox is re-created (event SandboxChanged) and its containers restarted
// under its restartPolicy, restartCount + 1, lastState the lost container.
func RecoveredContainers(pod *corev1.Pod) []cri.RecoveredContainer {
	var out []cri.RecoveredContainer
	add := func(st corev1.ContainerStatus, containerID string, state corev1.ContainerState, attempt int32) {
		id, ok := strings.CutPrefix(containerID, containerIDPrefix)
		if !ok || id == "" || attempt < 0 {
			return
		}
		rc := cri.RecoveredContainer{
			ID: id, PodUID: string(pod.UID), PodName: pod.Name, PodNamespace: pod.Namespace, Name: st.Name,
			Attempt: uint32(attempt), Image: st.Image, ImageRef: st.ImageID,
			Labels: map[string]string{labelPodName: pod.Name, labelPodNamespace: pod.Namespace, labelPodUID: string(pod.UID), labelContainerName: st.Name},
		}
		switch {
		case state.Running != nil:
			rc.StartedAt = state.Running.StartedAt.Time
		case state.Terminated != nil:
			t := state.Terminated
			rc.Exited, rc.ExitCode, rc.Reason, rc.Message = true, t.ExitCode, t.Reason, t.Message
			rc.StartedAt, rc.FinishedAt = t.StartedAt.Time, t.FinishedAt.Time
		default:
			return
		}
		rc.CreatedAt = rc.StartedAt
		out = append(out, rc)
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, st := range list {
			id, state := st.ContainerID, st.State
			if t := st.State.Terminated; t != nil && t.ContainerID != "" {
				id = t.ContainerID
			}
			last := st.LastTerminationState.Terminated
			switch {
			case last != nil && last.ContainerID == id && state.Waiting != nil:
				// Exited and waiting to restart (CrashLoopBackOff): the
				// current container is the one that exited.
				add(st, id, st.LastTerminationState, st.RestartCount)
			case last != nil:
				// The previous container (kept for lastState and logs --previous).
				add(st, last.ContainerID, st.LastTerminationState, st.RestartCount-1)
				fallthrough
			default:
				add(st, id, state, st.RestartCount)
			}
		}
	}
	return out
}
