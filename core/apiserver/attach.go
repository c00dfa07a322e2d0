package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// attachPattern is where pods/attach is served.
const attachPattern = "/api/v1/namespaces/{namespace}/pods/{name}/attach"

// AttachProvider joins the standard streams of a container's own process
// until it ends or ctx does; the kubelet of the pod's node implements it
// (upstream: kube-apiserver proxies pods/attach to the kubelet's /attach).
// stdin is nil unless the client asked for it.
type AttachProvider interface {
	Attach(ctx context.Context, pod *corev1.Pod, container string, stdin io.Reader, stdout, stderr io.Writer) error
}

// AttachProviderFunc adapts a function to AttachProvider.
type AttachProviderFunc func(ctx context.Context, pod *corev1.Pod, container string, stdin io.Reader, stdout, stderr io.Writer) error

// Attach calls f.
func (f AttachProviderFunc) Attach(ctx context.Context, pod *corev1.Pod, container string, stdin io.Reader, stdout, stderr io.Writer) error {
	return f(ctx, pod, container, stdin, stdout, stderr)
}

// errNoAttach answers pods/attach where nothing streams it: without a
// Config.Attach, for a WebSocket upgrade in the browser build, and for a
// request that neither upgrades nor POSTs the channel protocol's bodies
// (exec_frames.go). kubectl run --attach (and -i) falls back to
// streaming the logs when it reads this, printing it as the reason.
var errNoAttach = apierrors.NewBadRequest("kubetab cannot attach to a running container for this request: attach streams over a WebSocket (the real kubectl against kubetab cluster) or over the bodies of a POST (kubetab's own kubectl); kubectl logs -f POD shows the output")

// podAttach serves pods/attach: the pod and container are looked up first
// (a missing pod is a 404, as upstream), then the streams are joined over a
// WebSocket, as exec's are (exec_stream.go).
func (s *Server) podAttach(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/attach"}, strings.ToLower(r.Method)))
		return
	}
	pod, err := s.requestPod(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	channels := isChannelsRequest(r)
	if s.cfg.Attach == nil || !isUpgrade(r) && !channels {
		writeError(w, r, errNoAttach)
		return
	}
	container := r.URL.Query().Get("container")
	if container == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names)))
			return
		}
		container = pod.Spec.Containers[0].Name
	}
	valid := false
	for _, c := range pod.Spec.Containers {
		valid = valid || c.Name == container
	}
	switch {
	case !valid:
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name)))
		return
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("cannot attach a container in a completed pod; current phase is %s", pod.Status.Phase)))
		return
	}
	if channels {
		s.attachChannels(w, r, pod, container) // kubetab's kubectl (exec_frames.go)
		return
	}
	s.attachUpgrade(w, r, pod, container)
}
