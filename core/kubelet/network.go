package kubelet

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// This file is where a packet addressed to a pod ends up: the node's side of
// the pod network. On a real node the kernel does this part: the bridge
// (cni0) forwards a packet for 10.244.1.3 to the veth of the pod holding that
// address, and the process in the pod that listens on the port accepts the
// connection. kube-proxy (core/proxy) has already turned a Service address
// into a pod address by then.
//
//	core/proxy: Service VIP ──DNAT──▶ 10.244.1.3:8080
//	this node:  10.244.1.3 ──CNI──▶ pod web-x ──containerPort 8080──▶ container "web"
//	                                              ──CRI──▶ an instance of its image (CGI)
//
// WASI preview1 has no sockets, so no guest listens: a container "listens"
// on the ports its image says its program listens on (the image config's
// ExposedPorts: web's 8080/tcp) and on the ports the pod spec declares
// (spec.containers[].ports[].containerPort, TCP), and the runtime serves
// each request with a new instance of the container's image
// (cri.Runtime.HTTPHandler). Upstream, containerPort is informational: an
// undeclared port works because the process listens on it, which is what
// ExposedPorts stands for here, so `kubectl expose --target-port=8080` of a
// deployment made without --port reaches its pods.

// Errors of PodHTTPHandler, as a connection to a pod's address fails.
var (
	// ErrNoPodAtAddress is an address no pod on this node holds: on a real
	// node nobody answers the bridge's ARP request and the client sees
	// "No route to host" (EHOSTUNREACH).
	ErrNoPodAtAddress = errors.New("kubelet: no pod on this node has this address")
	// ErrNotListening is a pod that holds the address but has no running
	// container declaring the port: the pod's kernel answers with a TCP
	// reset, "Connection refused" (ECONNREFUSED).
	ErrNotListening = errors.New("kubelet: no running container of the pod listens on this port")
)

// PodHTTPHandler returns the HTTP server behind addr, a pod address on this
// node and a TCP port: the running container of the pod that holds the
// address whose spec declares containerPort addr.Port() (regular containers
// first, then sidecars: init containers with restartPolicy Always). Each
// request to it runs an instance of the container's image, CGI-style.
//
// It fails with ErrNoPodAtAddress when no pod on this node holds the address
// (never assigned, or released when its pod finished or was deleted), and
// with ErrNotListening when no container declares the port or that container
// is not running (waiting for its image, crashed, in back-off). It works
// while the kubelet itself is stopped: the containers and their network stay
// up, as on a real node.
func (kl *Kubelet) PodHTTPHandler(addr netip.AddrPort) (http.Handler, error) {
	kl.mu.Lock()
	n := kl.network
	kl.mu.Unlock()
	if n == nil {
		return nil, fmt.Errorf("%w: %s (node %s has no pod network yet)", ErrNoPodAtAddress, addr.Addr(), kl.nodeName)
	}
	id, ok := n.Holder(addr.Addr())
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoPodAtAddress, addr.Addr())
	}
	pod := kl.networkPod(types.UID(id))
	if pod == nil {
		return nil, fmt.Errorf("%w: %s port %d", ErrNotListening, addr.Addr(), addr.Port())
	}
	h, err := kl.portHandler(pod, int32(addr.Port()))
	if err != nil {
		return nil, fmt.Errorf("%w: %s port %d (%v)", ErrNotListening, addr.Addr(), addr.Port(), err)
	}
	return h, nil
}

// portHandler is the HTTP server of the running container of pod that
// declares TCP port; the error says why there is none.
func (kl *Kubelet) portHandler(pod *corev1.Pod, port int32) (http.Handler, error) {
	name, ok := listeningContainer(pod, port)
	if !ok {
		name, ok = kl.exposingContainer(pod, port)
	}
	if !ok {
		return nil, fmt.Errorf("no container of pod %s/%s listens on port %d (none declares it as a containerPort, no image exposes it)", pod.Namespace, pod.Name, port)
	}
	running := cri.ContainerRunning
	cs := kl.runtime.ListContainers(cri.ContainerFilter{
		PodUID: string(pod.UID), State: &running, LabelSelector: map[string]string{labelContainerName: name},
	})
	if len(cs) == 0 {
		return nil, fmt.Errorf("container %q of pod %s/%s is not running", name, pod.Namespace, pod.Name)
	}
	return kl.runtime.HTTPHandler(cs[len(cs)-1].ID), nil
}

// networkPod is the pod whose sandbox is uid: the kubelet's record of it, or
// the informer's copy.
func (kl *Kubelet) networkPod(uid types.UID) *corev1.Pod {
	kl.mu.Lock()
	rec := kl.pods[uid]
	kl.mu.Unlock()
	if rec != nil && rec.pod != nil {
		return rec.pod
	}
	return kl.podByUID(uid)
}

// exposingContainer names the running container of pod whose image exposes
// TCP port (ExposedPorts "8080/tcp", or "8080": TCP by default).
func (kl *Kubelet) exposingContainer(pod *corev1.Pod, port int32) (string, bool) {
	running := cri.ContainerRunning
	want := strconv.Itoa(int(port))
	for _, cs := range kl.runtime.ListContainers(cri.ContainerFilter{PodUID: string(pod.UID), State: &running}) {
		img, ok := kl.runtime.ImageStatus(cs.ImageRef)
		if !ok {
			img, ok = kl.runtime.ImageStatus(cs.Image)
		}
		if !ok {
			continue
		}
		for _, p := range img.Config.ExposedPorts {
			if p == want || p == want+"/tcp" {
				return cs.Name, true
			}
		}
	}
	return "", false
}

// listeningContainer names the container of pod that declares TCP port.
func listeningContainer(pod *corev1.Pod, port int32) (string, bool) {
	declares := func(c *corev1.Container) bool {
		for _, p := range c.Ports {
			if p.ContainerPort == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
				return true
			}
		}
		return false
	}
	for i := range pod.Spec.Containers {
		if declares(&pod.Spec.Containers[i]) {
			return pod.Spec.Containers[i].Name, true
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways && declares(c) {
			return c.Name, true
		}
	}
	return "", false
}
