package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// Termination messages (upstream: kuberuntime_container.go,
// getTerminationMessage and readLastStringFromContainerLogs). When a
// container exits, `kubectl describe pod` shows why in its state's message:
//
//	terminationMessagePath (default /dev/termination-log): what the container
//	    wrote there, its last 4 KiB. The kubelet places an empty file at the
//	    path when it creates the container (upstream: a file of the node
//	    bind-mounted there) and reads it back through the runtime, from the
//	    container's in-memory root or volume: never a host file, so a link
//	    a guest made cannot point the kubelet at one.
//	terminationMessagePolicy FallbackToLogsOnError: when the container failed
//	    (exit code not 0) and left no message, the end of its log: its last
//	    80 lines, at most 2 KiB of them.
//
// The runtime's own message (an OOM kill's, a deadline's) comes first,
// followed by ": " and the container's.

const (
	maxTerminationMessageLength          = 4 << 10 // MaxContainerTerminationMessageLength
	maxTerminationMessageLogLength       = 2 << 10 // MaxContainerTerminationMessageLogLength
	maxTerminationMessageLogLines  int64 = 80      // MaxContainerTerminationMessageLogLines
)

// containerMessage is an exited container's state message. It is worked out
// once per container and remembered.
func (kl *Kubelet) containerMessage(pod *corev1.Pod, spec *corev1.Container, c *cri.ContainerStatus) string {
	kl.mu.Lock()
	rec := kl.pods[pod.UID]
	if rec != nil {
		if msg, ok := rec.termMessages[c.ID]; ok {
			kl.mu.Unlock()
			return msg
		}
	}
	kl.mu.Unlock()

	msg, _ := kl.terminationMessage(c.ID, spec)
	fallback := spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError &&
		c.ExitCode != 0 && c.Reason != cri.ReasonStartError
	if msg == "" && fallback {
		msg = kl.logTail(c.ID)
	}
	if msg != "" && c.Message != "" {
		msg = c.Message + ": " + msg
	} else if msg == "" {
		msg = c.Message
	}

	kl.mu.Lock()
	if rec != nil {
		if rec.termMessages == nil {
			rec.termMessages = map[string]string{}
		}
		rec.termMessages[c.ID] = msg
	}
	kl.mu.Unlock()
	return msg
}

// logTail is the end of a container's log, for FallbackToLogsOnError.
func (kl *Kubelet) logTail(id string) string {
	var buf bytes.Buffer
	if err := kl.runtime.ReadLogs(context.Background(), id, cri.LogOptions{TailLines: maxTerminationMessageLogLines}, &buf); err != nil {
		return ""
	}
	b := buf.Bytes()
	if len(b) > maxTerminationMessageLogLength {
		b = b[len(b)-maxTerminationMessageLogLength:]
	}
	return string(b)
}

// terminationMessage reads what a container left at its
// terminationMessagePath, its last 4 KiB (upstream: getTerminationMessage).
// found is false when there is no such file.
func (kl *Kubelet) terminationMessage(id string, c *corev1.Container) (msg string, found bool) {
	p := c.TerminationMessagePath
	if p == "" {
		return "", false
	}
	data, err := kl.runtime.ReadFile(id, p, maxTerminationMessageLength)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false
	case err != nil:
		return fmt.Sprintf("Error on reading termination log %s: %v", p, err), true
	}
	return string(data), true
}
