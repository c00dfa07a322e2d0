package kubelet

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// This file is the kubelet's side of the CRI, upstream's
// pkg/kubelet/kuberuntime (kuberuntime_manager.go: computePodActions and
// SyncPod; kuberuntime_container.go: startContainer and killContainer).

// containerIDPrefix is the runtime's name in container IDs
// (status.containerStatuses[].containerID), as "containerd://" is upstream.
const containerIDPrefix = "wasm://"

// Labels the kubelet puts on its containers, upstream's
// (pkg/kubelet/types/labels.go), so a runtime's container list says whose
// container each one is.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
)

// runtimePod is one pod's containers as the runtime has them, newest first
// for each container name: [the current one, the previous one (exited), ...].
// The kubelet reads it back on every sync instead of remembering what it did,
// so a sync always starts from the truth.
type runtimePod map[string][]cri.ContainerStatus

func (kl *Kubelet) runtimePod(uid types.UID) runtimePod {
	rp := runtimePod{}
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(uid)}) {
		rp[c.Name] = append(rp[c.Name], c)
	}
	for _, hist := range rp {
		sort.SliceStable(hist, func(i, j int) bool {
			if hist[i].Attempt != hist[j].Attempt {
				return hist[i].Attempt > hist[j].Attempt
			}
			return hist[i].CreatedAt.After(hist[j].CreatedAt)
		})
	}
	return rp
}

// latest is the newest container of name, or nil.
func (rp runtimePod) latest(name string) *cri.ContainerStatus {
	if hist := rp[name]; len(hist) > 0 {
		return &hist[0]
	}
	return nil
}

// previous is the exited container before the latest one, or nil.
func (rp runtimePod) previous(name string) *cri.ContainerStatus {
	if hist := rp[name]; len(hist) > 1 && hist[1].State == cri.ContainerExited {
		return &hist[1]
	}
	return nil
}

// shouldRestart reports whether an exited container is started again under
// the pod's restartPolicy.
func shouldRestart(policy corev1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// fieldPath names a container inside its pod for events:
// "spec.containers{hello}".
func fieldPath(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return "spec.initContainers{" + name + "}"
		}
	}
	return "spec.containers{" + name + "}"
}

// formatPod is how the kubelet names a pod in messages: "web-x_default(<uid>)".
func formatPod(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// sameImage compares a spec image with the image a container was created
// from, both normalized ("hello" is "hello:latest").
func sameImage(a, b string) bool {
	na, err1 := cri.NormalizeRef(a)
	nb, err2 := cri.NormalizeRef(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return na == nb
}

// syncContainers does what the pod's spec asks of its containers, given what
// the runtime has (upstream: computePodActions followed by SyncPod):
//
//  1. a running container is killed when its image was changed in the spec
//     ("definition changed"), or when it failed its liveness or startup
//     probe; it is started again (at once, unless it is backing off) when
//     the spec changed or the restartPolicy allows;
//  2. init containers run one at a time, in order, each to a successful exit;
//  3. then every regular container without a container is started, and every
//     exited one is restarted if the restartPolicy says so, after its back-off.
//
// It returns when the pod should be synced again (0: only when something
// happens).
func (kl *Kubelet) syncContainers(ctx context.Context, pod *corev1.Pod) time.Duration {
	var requeue time.Duration
	after := func(d time.Duration) {
		if d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	rp := kl.runtimePod(pod.UID)

	// 1. Running containers to kill: spec changes, failed probes. killed
	// keeps, for each, the exited container before it: the restart's
	// back-off is judged against that one, as upstream judges it against the
	// status it read before killing.
	killed := map[string]*cri.ContainerStatus{}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		l := rp.latest(c.Name)
		if l == nil || l.State != cri.ContainerRunning {
			continue
		}
		restart := pod.Spec.RestartPolicy != corev1.RestartPolicyNever
		var msg string
		switch {
		case !sameImage(l.Image, c.Image):
			msg, restart = fmt.Sprintf("Container %s definition changed", c.Name), true
			kl.setRestartForChange(pod.UID, c.Name)
		case kl.probes.failed(l.ID, liveness):
			msg = fmt.Sprintf("Container %s failed liveness probe", c.Name)
		case kl.probes.failed(l.ID, startup):
			msg = fmt.Sprintf("Container %s failed startup probe", c.Name)
		default:
			continue
		}
		if restart {
			msg += ", will be restarted"
		}
		killed[c.Name] = rp.previous(c.Name)
		_ = kl.killContainer(ctx, pod, c.Name, l.ID, msg)
	}
	if len(killed) > 0 {
		rp = kl.runtimePod(pod.UID)
	}

	// 2. Init containers, in order: each must exit 0 before the next starts.
	// After the sandbox was re-created they all run again: one that ran in
	// the old sandbox counts as not run (its restart count goes on).
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		l := rp.latest(c.Name)
		switch {
		case l != nil && l.State == cri.ContainerExited && kl.inOldSandbox(pod.UID, l.ID):
			after(kl.startContainer(ctx, pod, c, l.Attempt+1))
			return requeue
		case l == nil:
			after(kl.startContainer(ctx, pod, c, 0))
			return requeue
		case l.State == cri.ContainerRunning:
			return requeue // wait for it to finish
		case l.State == cri.ContainerCreated:
			after(kl.replaceCreated(ctx, pod, c, l))
			return requeue
		case l.ExitCode == 0:
			continue
		case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
			return requeue // the pod has failed
		default:
			after(kl.startWithBackOff(ctx, pod, c, l, l.Attempt+1))
			return requeue
		}
	}

	// 3. Regular containers.
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		l := rp.latest(c.Name)
		prev, wasKilled := killed[c.Name]
		switch {
		case l == nil:
			after(kl.startContainer(ctx, pod, c, 0))
		case l.State == cri.ContainerRunning:
		case l.State == cri.ContainerCreated:
			after(kl.replaceCreated(ctx, pod, c, l))
		case wasKilled && (kl.restartingForChange(pod.UID, c.Name) || pod.Spec.RestartPolicy != corev1.RestartPolicyNever):
			after(kl.startWithBackOff(ctx, pod, c, prev, l.Attempt+1))
		case kl.restartingForChange(pod.UID, c.Name) || shouldRestart(pod.Spec.RestartPolicy, l.ExitCode):
			after(kl.startWithBackOff(ctx, pod, c, l, l.Attempt+1))
		}
	}
	return requeue
}

// replaceCreated removes a container that was created but never started (its
// start failed) and starts a new one in its place.
func (kl *Kubelet) replaceCreated(ctx context.Context, pod *corev1.Pod, c *corev1.Container, l *cri.ContainerStatus) time.Duration {
	if err := kl.runtime.RemoveContainer(ctx, l.ID); err != nil {
		return sandboxRetryDelay
	}
	return kl.startContainer(ctx, pod, c, l.Attempt)
}

// startWithBackOff starts container c again (restart count attempt) unless
// it is backing off after exited, the newest exited container of c (nil:
// none, start at once). Upstream: doBackOff, then startContainer. The first
// restart is at once; then the container waits 10 s, 20 s, 40 s ... (at most
// 5 min) after each exit, in state Waiting with reason CrashLoopBackOff. The
// back-off starts over once a container ran for 10 minutes.
func (kl *Kubelet) startWithBackOff(ctx context.Context, pod *corev1.Pod, c *corev1.Container, exited *cri.ContainerStatus, attempt uint32) time.Duration {
	if exited != nil {
		key := string(pod.UID) + "/" + c.Name
		if in, left := kl.crashBackOff.InBackOffSince(key, exited.FinishedAt); in {
			msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", kl.crashBackOff.Get(key), c.Name, formatPod(pod))
			if kl.setReason(pod.UID, c.Name, ReasonCrashLoopBackOff, msg) {
				kl.recorder.FieldEventf(pod, fieldPath(pod, c.Name), corev1.EventTypeWarning, EventBackOffStartContainer,
					"Back-off restarting failed container %s in pod %s", c.Name, formatPod(pod))
			}
			return left
		}
		kl.crashBackOff.Next(key, exited.FinishedAt)
	}
	return kl.startContainer(ctx, pod, c, attempt)
}

// startContainer pulls c's image (per its pull policy), creates the container
// and starts it (upstream: kuberuntime_container.go startContainer). attempt
// is the restart count. On failure the container's waiting reason is
// recorded and the returned delay says when to try again.
func (kl *Kubelet) startContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, attempt uint32) time.Duration {
	fp := fieldPath(pod, c.Name)
	event := func(eventtype, reason, format string, args ...any) {
		kl.recorder.FieldEventf(pod, fp, eventtype, reason, format, args...)
	}
	fail := func(reason, message string, retry time.Duration) time.Duration {
		kl.setReason(pod.UID, c.Name, reason, message)
		return retry
	}

	// Step 1: pull the image.
	if res := kl.images.ensureImageExists(ctx, pod, c, fp); res.reason != "" {
		event(corev1.EventTypeWarning, EventFailedToCreate, "Error: %s", res.reason)
		return fail(res.reason, res.message, res.retry)
	}

	// Step 2: create the container.
	cfg, err := kl.containerConfig(ctx, pod, c, attempt)
	if err != nil {
		event(corev1.EventTypeWarning, EventFailedToCreate, "Error: %v", err)
		return fail(ReasonCreateContainerConfigError, err.Error(), sandboxRetryDelay)
	}
	id, err := kl.runtime.CreateContainer(ctx, cfg)
	if err != nil {
		event(corev1.EventTypeWarning, EventFailedToCreate, "Error: %v", err)
		return fail(ReasonCreateContainerError, err.Error(), sandboxRetryDelay)
	}
	kl.traceCall(traceCRI, "CreateContainer", pod.Namespace, pod.Name, c.Name+" ("+c.Image+")")
	event(corev1.EventTypeNormal, EventCreatedContainer, "Container created")

	// Step 3: start it.
	if err := kl.runtime.StartContainer(ctx, id); err != nil {
		event(corev1.EventTypeWarning, EventFailedToCreate, "Error: %v", err)
		return fail(ReasonRunContainerError, err.Error(), sandboxRetryDelay)
	}
	kl.traceCall(traceCRI, "StartContainer", pod.Namespace, pod.Name, c.Name)
	event(corev1.EventTypeNormal, EventStartedContainer, "Container started")
	kl.clearReason(pod.UID, c.Name)
	kl.clearRestartForChange(pod.UID, c.Name)
	kl.pruneContainers(ctx, pod.UID, c.Name)
	return 0
}

// pruneContainers removes the exited containers of name older than the
// previous one: the kubelet keeps one dead container per container name, for
// lastState and `kubectl logs --previous` (upstream's container GC,
// MaxPerPodContainer = 1).
func (kl *Kubelet) pruneContainers(ctx context.Context, uid types.UID, name string) {
	hist := kl.runtimePod(uid)[name]
	for i := 2; i < len(hist); i++ {
		if hist[i].State != cri.ContainerRunning {
			_ = kl.runtime.RemoveContainer(ctx, hist[i].ID)
		}
	}
}

// killContainer stops a running container, recording the Killing event
// (upstream: killContainer). WASI has no signals, so the runtime kills at
// once; the grace period has nothing to wait for.
func (kl *Kubelet) killContainer(ctx context.Context, pod *corev1.Pod, name, id, message string) error {
	if pod != nil {
		kl.recorder.FieldEventf(pod, fieldPath(pod, name), corev1.EventTypeNormal, EventKillingContainer, "%s", message)
	}
	grace := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if pod != nil {
		switch {
		case pod.DeletionGracePeriodSeconds != nil:
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		case pod.Spec.TerminationGracePeriodSeconds != nil:
			grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
		}
	}
	if pod != nil {
		kl.traceCall(traceCRI, "StopContainer", pod.Namespace, pod.Name, name)
	}
	return kl.runtime.StopContainer(ctx, id, grace)
}

// killPod stops every running container of the pod and removes the ones that
// never started.
func (kl *Kubelet) killPod(ctx context.Context, pod *corev1.Pod, uid types.UID) error {
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(uid)}) {
		switch c.State {
		case cri.ContainerRunning:
			if err := kl.killContainer(ctx, pod, c.Name, c.ID, "Stopping container "+c.Name); err != nil {
				return err
			}
		case cri.ContainerCreated:
			if err := kl.runtime.RemoveContainer(ctx, c.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// containerConfig turns a container of the pod spec into what the runtime
// runs (upstream: generateContainerConfig): its environment, command and
// args with $(VAR) expanded, its volumes (which must be set up), workingDir
// and limits. limits.memory becomes the guest's memory limit (growing past
// it ends the container OOMKilled, 137); limits.cpu its share of a core.
func (kl *Kubelet) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, attempt uint32) (cri.ContainerConfig, error) {
	podIP := ""
	if res, ok := kl.podNetwork(pod.UID); ok {
		podIP = res.IP().String()
	}
	env, err := kl.makeEnvironment(ctx, pod, c, podIP)
	if err != nil {
		return cri.ContainerConfig{}, err
	}
	mounts, err := kl.containerMounts(pod, c, env)
	if err != nil {
		return cri.ContainerConfig{}, err
	}
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	var mem, cpu int64
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		mem = q.Value()
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		cpu = q.MilliValue()
	}
	return cri.ContainerConfig{
		PodUID:             string(pod.UID),
		PodName:            pod.Name,
		PodNamespace:       pod.Namespace,
		Name:               c.Name,
		Attempt:            attempt,
		Image:              c.Image,
		Command:            expandAll(c.Command, vars),
		Args:               expandAll(c.Args, vars),
		Env:                env,
		Files:              kl.containerFiles(pod, c, podIP),
		Mounts:             mounts,
		WorkingDir:         c.WorkingDir,
		MemoryLimitBytes:   mem,
		CPULimitMillicores: cpu,
		Stdin:              c.Stdin,
		StdinOnce:          c.StdinOnce,
		TTY:                c.TTY,
		Labels: map[string]string{
			labelPodName:       pod.Name,
			labelPodNamespace:  pod.Namespace,
			labelPodUID:        string(pod.UID),
			labelContainerName: c.Name,
		},
	}, nil
}

// expand replaces $(VAR) with the value of VAR when vars has it; $$ is a
// literal $, and any other reference is left as written (upstream:
// third_party/forked/golang/expansion, written here in a few lines).
func expand(s string, vars map[string]string) string {
	return expandWith(s, func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
}

// expandWith is expand with a lookup function.
func expandWith(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(list []string, vars map[string]string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expand(s, vars)
	}
	return out
}
