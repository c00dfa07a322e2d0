package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/internal/tty"
	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// Exec runs cmd in a container of a pod on this node and waits for it: what
// `kubectl exec POD [-c C] -- CMD ARGS` asks for (upstream: the API server
// proxies pods/exec to the kubelet's /exec endpoint, which streams to the
// runtime's Exec). It implements apiserver.ExecProvider.
//
// WASI has no processes, so the command is a second instance of the
// container's image with cmd as its argv, the container's environment and
// volumes (see cri.Runtime.Exec): `kubectl exec web -- web --unhealthy`
// runs the web program once more, and it sees the same /data. The command
// reads stdin (`echo hi | kubectl exec -i web -- hello --stdin`) and its
// output streams to stdout and stderr as it writes. exitCode is the command's; err is
// set when it could not run, as a Kubernetes status error (`container not
// found ("hello")` for a container that is not running).
func (kl *Kubelet) Exec(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if pod.Spec.NodeName != kl.nodeName {
		return 0, apierrors.NewInternalError(fmt.Errorf("pod %q is on node %q, not on %q", pod.Name, pod.Spec.NodeName, kl.nodeName))
	}
	if len(cmd) == 0 {
		return 0, apierrors.NewBadRequest("you must specify at least 1 command")
	}
	if container == "" && len(pod.Spec.Containers) == 1 {
		container = pod.Spec.Containers[0].Name
	}
	notFound := apierrors.NewBadRequest(fmt.Sprintf("container not found (%q)", container))
	running := cri.ContainerRunning
	list := kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(pod.UID), State: &running})
	id := ""
	for _, c := range list {
		if c.Name == container {
			id = c.ID
		}
	}
	if id == "" {
		return 0, notFound
	}
	var code int32
	var err error
	if t := tty.From(ctx); t != nil {
		// kubectl exec -t: the runtime is the terminal's line discipline;
		// stdout is the screen (stderr goes there too, as on a pty).
		code, err = kl.runtime.ExecTTY(ctx, id, cmd, stdin, stdout, t.Resize)
	} else {
		code, err = kl.runtime.Exec(ctx, id, cmd, stdin, stdout, stderr)
	}
	switch {
	case err == nil:
		return int(code), nil
	case errors.Is(err, cri.ErrContainerNotRunning):
		return 0, notFound
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case errors.Is(err, cri.ErrInvalidConfig):
		return 0, apierrors.NewBadRequest(strings.TrimPrefix(err.Error(), "cri: invalid container config: "))
	}
	return 0, apierrors.NewInternalError(fmt.Errorf("failed to exec in container: %s", rpcError(err)))
}

// Attach joins the standard streams of a container's own process until it
// ends or ctx does: what `kubectl attach POD` and `kubectl run -it` ask for
// (upstream: the kubelet's /attach endpoint, then the runtime's Attach).
// stdin reaches the process only when the container's spec says stdin: true.
func (kl *Kubelet) Attach(ctx context.Context, pod *corev1.Pod, container string, stdin io.Reader, stdout, stderr io.Writer) error {
	if pod.Spec.NodeName != kl.nodeName {
		return apierrors.NewInternalError(fmt.Errorf("pod %q is on node %q, not on %q", pod.Name, pod.Spec.NodeName, kl.nodeName))
	}
	if container == "" && len(pod.Spec.Containers) == 1 {
		container = pod.Spec.Containers[0].Name
	}
	running := cri.ContainerRunning
	id := ""
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(pod.UID), State: &running}) {
		if c.Name == container {
			id = c.ID
		}
	}
	if id == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("container not found (%q)", container))
	}
	if err := kl.runtime.Attach(ctx, id, stdin, stdout, stderr); err != nil {
		if errors.Is(err, cri.ErrContainerNotRunning) {
			return apierrors.NewBadRequest(fmt.Sprintf("container not found (%q)", container))
		}
		return apierrors.NewInternalError(err)
	}
	return nil
}
