package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/kubelet"
	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/core/proxy"
)

// What the API server asks of the kubelets, routed to the right one. In a
// real cluster kube-apiserver reaches a pod's kubelet over HTTPS on port
// 10250 (pods/log, pods/exec, pods/portforward), and metrics-server scrapes every kubelet's
// /metrics/resource to serve metrics.k8s.io; here both are method calls.

// The kubelet serves what the API server proxies to it (upstream: the
// kubelet's server on port 10250, which kube-apiserver dials).
var (
	_ apiserver.ExecProvider        = (*kubelet.Kubelet)(nil)
	_ apiserver.AttachProvider      = (*kubelet.Kubelet)(nil)
	_ apiserver.LogProvider         = (*kubelet.Kubelet)(nil)
	_ apiserver.PortForwardProvider = (*kubelet.Kubelet)(nil)
)

var (
	_ registry.MetricsProvider      = kubeletMetrics{}
	_ apiserver.ExecProvider        = apiserver.ExecProviderFunc((*Cluster)(nil).podExec)
	_ apiserver.PortForwardProvider = apiserver.PortForwardProviderFunc((*Cluster)(nil).podPortForward)
)

// podExec routes an exec to the kubelet of the pod's node.
func (c *Cluster) podExec(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	k, ok := c.Kubelet(pod.Spec.NodeName)
	if !ok {
		return 0, apierrors.NewServiceUnavailable(fmt.Sprintf("no kubelet for node %q", pod.Spec.NodeName))
	}
	if !c.NodeRunning(pod.Spec.NodeName) {
		// A stopped kubelet does not answer (upstream: the API server's
		// connection to port 10250 fails).
		return 0, apierrors.NewInternalError(fmt.Errorf("error dialing backend: the kubelet of node %q is not running", pod.Spec.NodeName))
	}
	return k.Exec(ctx, pod, container, cmd, stdin, stdout, stderr)
}

// podAttach routes an attach to the kubelet of the pod's node.
func (c *Cluster) podAttach(ctx context.Context, pod *corev1.Pod, container string, stdin io.Reader, stdout, stderr io.Writer) error {
	k, ok := c.Kubelet(pod.Spec.NodeName)
	if !ok {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("no kubelet for node %q", pod.Spec.NodeName))
	}
	if !c.NodeRunning(pod.Spec.NodeName) {
		return apierrors.NewInternalError(fmt.Errorf("error dialing backend: the kubelet of node %q is not running", pod.Spec.NodeName))
	}
	return k.Attach(ctx, pod, container, stdin, stdout, stderr)
}

// podPortForward routes a forwarded connection to the kubelet of the pod's
// node.
func (c *Cluster) podPortForward(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error {
	k, ok := c.Kubelet(pod.Spec.NodeName)
	if !ok {
		return fmt.Errorf("no kubelet for node %q", pod.Spec.NodeName)
	}
	if !c.NodeRunning(pod.Spec.NodeName) {
		return fmt.Errorf("error dialing backend: the kubelet of node %q is not running", pod.Spec.NodeName)
	}
	return k.PortForward(ctx, pod, port, stream)
}

// podNetwork is the cluster network as the processes of a node's
// containers reach it (wget, nslookup): the node's kube-proxy rules and the
// cluster DNS, with the pod's namespace for the search path.
type podNetwork struct {
	c    *Cluster
	node string
}

var _ cri.PodNetwork = podNetwork{}

func (p podNetwork) RoundTrip(req *http.Request, namespace string) (*http.Response, string, error) {
	t, err := p.c.Transport(p.node, namespace)
	if err != nil {
		return nil, "", err
	}
	addr := ""
	ctx := proxy.WithHops(req.Context(), func(h proxy.Hop) {
		if addr == "" && h.From.IsValid() {
			addr = h.From.String()
		}
	})
	resp, err := t.RoundTrip(req.WithContext(ctx))
	return resp, addr, err
}

func (p podNetwork) LookupNetIP(ctx context.Context, namespace, host string) ([]netip.Addr, error) {
	d, err := p.c.DNS()
	if err != nil {
		return nil, err
	}
	return d.ResolverFor(namespace).LookupNetIP(ctx, host)
}

// kubeletMetrics is metrics-server: it serves metrics.k8s.io from the latest
// sample of every running kubelet. A stopped node's kubelet cannot be
// scraped, so its node and pods have no metrics, as upstream.
type kubeletMetrics struct{ c *Cluster }

// NodeMetrics implements registry.MetricsProvider.
func (m kubeletMetrics) NodeMetrics(ctx context.Context) ([]metricsv1beta1.NodeMetrics, error) {
	var out []metricsv1beta1.NodeMetrics
	for _, name := range m.c.nodeNames() {
		if k, ok := m.c.Kubelet(name); ok && m.c.NodeRunning(name) {
			node, _ := k.ResourceMetrics()
			out = append(out, node)
		}
	}
	return out, nil
}

// PodMetrics implements registry.MetricsProvider.
func (m kubeletMetrics) PodMetrics(ctx context.Context, namespace string) ([]metricsv1beta1.PodMetrics, error) {
	var out []metricsv1beta1.PodMetrics
	for _, name := range m.c.nodeNames() {
		k, ok := m.c.Kubelet(name)
		if !ok || !m.c.NodeRunning(name) {
			continue
		}
		_, pods := k.ResourceMetrics()
		for _, p := range pods {
			if namespace == "" || p.Namespace == namespace {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
