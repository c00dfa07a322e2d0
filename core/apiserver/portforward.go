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

// PortForwardProvider carries one forwarded connection to a port inside a
// pod; the kubelet of the pod's node implements it (upstream:
// kube-apiserver proxies pods/portforward to that kubelet's
// /portForward endpoint, and the kubelet's runtime dials the port inside
// the pod). The pod is bound to a node. stream is the connection's bytes,
// both ways; PortForward returns when the connection has ended, with an
// error when it could not be made (the client prints it). The caller
// closes stream afterwards.
type PortForwardProvider interface {
	PortForward(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error
}

// PortForwardProviderFunc adapts a function to PortForwardProvider.
type PortForwardProviderFunc func(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error

// PortForward calls f.
func (f PortForwardProviderFunc) PortForward(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error {
	return f(ctx, pod, port, stream)
}

// portForwardPattern is where pods/portforward is served.
const portForwardPattern = "/api/v1/namespaces/{namespace}/pods/{name}/portforward"

// podPortForward serves pods/portforward, what `kubectl port-forward`
// opens: the request switches protocols (portforward_stream.go) and then
// carries any number of connections, each a pair of streams naming the
// port in a header. What it checks before switching is what the
// kube-apiserver and the kubelet check before theirs: the pod exists, it
// runs on a node, and that node's kubelet has it running.
func (s *Server) podPortForward(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/portforward"}, strings.ToLower(r.Method)))
		return
	}
	pod, err := s.requestPod(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case pod.Spec.NodeName == "":
		err = apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	case pod.Status.Phase != corev1.PodRunning:
		// The kubelet's answer for a pod with no running sandbox.
		err = apierrors.NewBadRequest(fmt.Sprintf("unable to upgrade connection: pod %s is not running (phase %s)", pod.Name, pod.Status.Phase))
	case s.cfg.PortForward == nil:
		err = apierrors.NewServiceUnavailable("no kubelet serves port forwarding")
	case !isUpgrade(r):
		err = apierrors.NewBadRequest("Upgrade request required")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.portForwardUpgrade(w, r, pod)
}
