package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// PodLogs writes the log of one container of a pod on this node to w: what
// `kubectl logs` shows (upstream: the API server proxies pods/log to the
// kubelet's /containerLogs endpoint, served by GetContainerLogs in
// pkg/kubelet/kubelet_pods.go). It implements apiserver.LogProvider.
//
// The container is picked from the pod's status as the kubelet knows it: the
// running (or last exited) container, or with opts.Previous the one before
// it. A container that never started has no log: the answer is a 400 saying
// why it is waiting ("container "hello" in pod "web-x" is waiting to start:
// ContainerCreating"). With opts.Follow, PodLogs returns once the container
// has exited and its log was written, or when ctx is done.
func (kl *Kubelet) PodLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error {
	if opts == nil {
		opts = &corev1.PodLogOptions{}
	}
	if pod.Spec.NodeName != kl.nodeName {
		return apierrors.NewInternalError(fmt.Errorf("pod %q is on node %q, not on %q", pod.Name, pod.Spec.NodeName, kl.nodeName))
	}
	name := opts.Container
	if name == "" && len(pod.Spec.Containers) == 1 {
		name = pod.Spec.Containers[0].Name
	}
	lo := cri.LogOptions{Follow: opts.Follow, TailLines: -1, Timestamps: opts.Timestamps}
	if opts.TailLines != nil {
		if *opts.TailLines < 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("tailLines: Invalid value: %d: must be greater than or equal to 0", *opts.TailLines))
		}
		lo.TailLines = *opts.TailLines
	}
	if opts.LimitBytes != nil {
		if *opts.LimitBytes < 1 {
			return apierrors.NewBadRequest(fmt.Sprintf("limitBytes: Invalid value: %d: must be greater than 0", *opts.LimitBytes))
		}
		lo.LimitBytes = *opts.LimitBytes
	}
	switch {
	case opts.SinceSeconds != nil:
		if *opts.SinceSeconds < 1 {
			return apierrors.NewBadRequest(fmt.Sprintf("sinceSeconds: Invalid value: %d: must be greater than 0", *opts.SinceSeconds))
		}
		lo.SinceTime = kl.clock.Now().Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	case opts.SinceTime != nil:
		lo.SinceTime = opts.SinceTime.Time
	}

	status, ok := kl.lastStatus(pod.UID)
	if !ok {
		status = pod.Status.DeepCopy()
	}
	cid, err := validateContainerLogStatus(pod.Name, status, name, opts.Previous)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	err = kl.runtime.ReadLogs(ctx, strings.TrimPrefix(cid, containerIDPrefix), lo, w)
	switch {
	case errors.Is(err, cri.ErrContainerNotFound):
		return apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is not available", name, pod.Name))
	case err != nil && ctx.Err() != nil:
		return nil // the client went away: the stream is over
	}
	return err
}

// validateContainerLogStatus picks the container whose log to read from the
// pod's status, or says why there is none (upstream's function of the same
// name, with its messages).
func validateContainerLogStatus(podName string, s *corev1.PodStatus, name string, previous bool) (string, error) {
	var st *corev1.ContainerStatus
	for _, list := range [][]corev1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				st = &list[i]
			}
		}
	}
	if st == nil {
		return "", fmt.Errorf("container %q in pod %q is not available", name, podName)
	}
	last := st.LastTerminationState.Terminated
	waiting, running, term := st.State.Waiting, st.State.Running, st.State.Terminated
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return "", fmt.Errorf("previous terminated container %q in pod %q not found", name, podName)
		}
		return last.ContainerID, nil
	case running != nil:
		return st.ContainerID, nil
	case term != nil:
		if term.ContainerID != "" {
			return term.ContainerID, nil
		}
		if last != nil && last.ContainerID != "" {
			return last.ContainerID, nil
		}
		return "", fmt.Errorf("container %q in pod %q is terminated", name, podName)
	case last != nil:
		if last.ContainerID == "" {
			return "", fmt.Errorf("container %q in pod %q is terminated", name, podName)
		}
		return last.ContainerID, nil
	case waiting != nil:
		switch waiting.Reason {
		case ReasonErrImagePull:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", name, podName)
		case ReasonImagePullBackOff:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", name, podName)
		}
		return "", fmt.Errorf("container %q in pod %q is waiting to start: %v", name, podName, waiting.Reason)
	}
	return "", fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", name, podName)
}
