package kubelet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// imageManager makes sure a container's image is on the node before the
// container is created, following the container's imagePullPolicy
// (upstream: pkg/kubelet/images/image_manager.go, EnsureImageExists):
//
//	imagePullPolicy   image on the node      image not on the node
//	Always            pull                   pull
//	IfNotPresent      use it                 pull
//	Never             use it                 ErrImageNeverPull
//
// (The API server defaults the policy: Always for an image without a tag or
// with ":latest", IfNotPresent otherwise.)
//
// A failed pull makes the container wait with reason ErrImagePull; pulls of
// that image for that pod are then held back (ImagePullBackOff) for 10 s,
// 20 s, 40 s ... up to 5 min.
type imageManager struct {
	runtime  *cri.Runtime
	recorder *client.Recorder
	clock    clock.PassiveClock
	backOff  *backOff // keyed "<pod UID>_<image>"

	// trace records a pull in the trace (the kubelet's traceCall); nil
	// records nothing.
	trace func(pod *corev1.Pod, image string, took time.Duration)

	mu          sync.Mutex        // guards prevPullErr
	prevPullErr map[string]string // the last pull error per back-off key, shown during ImagePullBackOff
}

func newImageManager(rt *cri.Runtime, rec *client.Recorder, clk clock.PassiveClock) *imageManager {
	return &imageManager{
		runtime:     rt,
		recorder:    rec,
		clock:       clk,
		backOff:     newBackOff(clk, backOffPeriod, maxContainerBackOff),
		prevPullErr: map[string]string{},
	}
}

// pullResult is the outcome of ensureImageExists. An empty reason means the
// image is present; otherwise the container waits with reason and message,
// and the pod should be synced again after retry.
type pullResult struct {
	reason, message string
	retry           time.Duration
}

// ensureImageExists pulls c's image if its pull policy asks for it, recording
// the events `kubectl describe pod` shows (Pulling, Pulled, Failed, BackOff).
func (m *imageManager) ensureImageExists(ctx context.Context, pod *corev1.Pod, c *corev1.Container, fieldPath string) pullResult {
	img := c.Image
	event := func(eventtype, reason, format string, args ...any) {
		m.recorder.FieldEventf(pod, fieldPath, eventtype, reason, format, args...)
	}
	if _, err := cri.ParseRef(img); err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %s", img, img, strings.TrimPrefix(err.Error(), "cri: "))
		event(corev1.EventTypeWarning, EventFailedToInspectImage, "%s", msg)
		return pullResult{reason: ReasonInvalidImageName, message: msg}
	}

	_, present := m.runtime.ImageStatus(img)
	policy := c.ImagePullPolicy
	if policy == corev1.PullNever || (policy == corev1.PullIfNotPresent && present) {
		if present {
			event(corev1.EventTypeNormal, EventPulledImage, "Container image %q already present on machine and can be accessed by the pod", img)
			return pullResult{}
		}
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", img)
		event(corev1.EventTypeWarning, EventErrImageNeverPull, "%s", msg)
		return pullResult{reason: ReasonErrImageNeverPull, message: msg}
	}

	key := string(pod.UID) + "_" + img
	if in, left := m.backOff.InBackOffSinceUpdate(key); in {
		msg := fmt.Sprintf("Back-off pulling image %q", img)
		event(corev1.EventTypeNormal, EventBackOffPullImage, "%s", msg)
		m.mu.Lock()
		if prev, ok := m.prevPullErr[key]; ok {
			msg += ": " + prev
		}
		m.mu.Unlock()
		return pullResult{reason: ReasonImagePullBackOff, message: msg, retry: left}
	}

	event(corev1.EventTypeNormal, EventPullingImage, "Pulling image %q", img)
	start := m.clock.Now()
	st, err := m.runtime.PullImage(ctx, img)
	if err != nil {
		msg := rpcError(err)
		event(corev1.EventTypeWarning, EventFailedToCreate, "Failed to pull image %q: %s", img, msg)
		m.backOff.Next(key, m.clock.Now())
		m.mu.Lock()
		m.prevPullErr[key] = ReasonErrImagePull + ": " + msg
		m.mu.Unlock()
		return pullResult{reason: ReasonErrImagePull, message: msg, retry: pullRetryDelay}
	}
	d := m.clock.Since(start).Truncate(time.Millisecond)
	if m.trace != nil {
		m.trace(pod, img, d)
	}
	event(corev1.EventTypeNormal, EventPulledImage, "Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", img, d, d, st.Size)
	m.mu.Lock()
	delete(m.prevPullErr, key)
	m.mu.Unlock()
	return pullResult{}
}

// forget drops the back-offs of a pod that is gone.
func (m *imageManager) forget(uid types.UID) {
	prefix := string(uid) + "_"
	m.backOff.DeletePrefix(prefix)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.prevPullErr {
		if strings.HasPrefix(k, prefix) {
			delete(m.prevPullErr, k)
		}
	}
}

// rpcError words a runtime error as the kubelet receives it over the CRI's
// gRPC connection, which is how it appears in a real cluster's events and
// container states: "rpc error: code = NotFound desc = failed to pull and
// unpack image ...".
func rpcError(err error) string {
	code := "Unknown"
	switch {
	case errors.Is(err, cri.ErrImageNotFound), errors.Is(err, cri.ErrContainerNotFound):
		code = "NotFound"
	case errors.Is(err, cri.ErrInvalidReference), errors.Is(err, cri.ErrInvalidConfig):
		code = "InvalidArgument"
	case errors.Is(err, context.Canceled):
		code = "Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		code = "DeadlineExceeded"
	}
	return fmt.Sprintf("rpc error: code = %s desc = %s", code, err.Error())
}
