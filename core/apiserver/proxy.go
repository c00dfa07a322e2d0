package apiserver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// # pods/proxy and services/proxy
//
// The kube-apiserver can carry an HTTP request to a pod, or to a Service's
// pod, itself: `kubectl proxy` then
//
//	curl localhost:8001/api/v1/namespaces/default/pods/web-x:8080/proxy/healthz
//	curl localhost:8001/api/v1/namespaces/default/services/web:80/proxy/
//
// (the Kubernetes Basics tutorial reaches its pod this way), and
// `kubectl get --raw` the same without the local proxy. The name may carry
// a port and a scheme, "web-x", "web-x:8080" or "http:web-x:8080"; for a
// pod without a port the first containerPort is used, for a Service a port
// number is its port (the request goes to the endpoint port of the same
// name: the targetPort), and a name is a port's name. The rest of the path
// and the query go to the pod as the request's path and query (upstream:
// pkg/registry/core/pod and service ResourceLocation, then the
// apimachinery proxy's UpgradeAwareHandler).
//
// kubetab's pods serve HTTP through their kubelet (core/kubelet/network.go):
// the request is handed to the container declaring the port, as a packet
// from the control plane to the pod's address would reach it. Failures
// carry upstream's words: "address not allowed" for a pod with no IP yet,
// 503 "no endpoints available for service" and "error trying to reach
// service: dial tcp 10.244.1.2:81: connect: connection refused".

// PodNetwork reaches the server listening on a pod address; the cluster's
// network implements it (core/cluster, through the kubelet holding the
// address). Its error wraps syscall.ECONNREFUSED when nothing listens on
// the port and syscall.EHOSTUNREACH when no pod holds the address.
type PodNetwork interface {
	PodHTTPHandler(addr netip.AddrPort) (http.Handler, error)
}

// PodNetworkFunc adapts a function to PodNetwork.
type PodNetworkFunc func(addr netip.AddrPort) (http.Handler, error)

// PodHTTPHandler calls f.
func (f PodNetworkFunc) PodHTTPHandler(addr netip.AddrPort) (http.Handler, error) { return f(addr) }

const (
	podProxyPattern     = "/api/v1/namespaces/{namespace}/pods/{name}/proxy"
	serviceProxyPattern = "/api/v1/namespaces/{namespace}/services/{name}/proxy"
)

// splitSchemeNamePort reads "name", "name:port" or "scheme:name:port"
// (upstream utilnet.SplitSchemeNamePort); ok is false for anything else.
func splitSchemeNamePort(id string) (scheme, name, port string, ok bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", "", false
	}
	if name == "" || len(parts) == 2 && port == "" || (scheme != "" && scheme != "http" && scheme != "https") {
		return "", "", "", false
	}
	return scheme, name, port, true
}

// proxyTarget reads the {name} of a pods/proxy or services/proxy request
// (splitSchemeNamePort); a malformed one is answered with a 400 naming
// kind ("invalid pod request").
func proxyTarget(w http.ResponseWriter, r *http.Request, kind string) (id, scheme, name, port string, ok bool) {
	id = r.PathValue("name")
	if scheme, name, port, ok = splitSchemeNamePort(id); !ok {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", kind, id)))
	}
	return id, scheme, name, port, ok
}

// podProxy serves pods/proxy.
func (s *Server) podProxy(w http.ResponseWriter, r *http.Request) {
	_, scheme, name, port, ok := proxyTarget(w, r, "pod")
	if !ok {
		return
	}
	r.SetPathValue("name", name)
	pod, err := s.requestPod(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	ip, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil || !ip.IsGlobalUnicast() {
		writeError(w, r, apierrors.NewBadRequest("address not allowed"))
		return
	}
	s.proxyTo(w, r, scheme, ip, port)
}

// serviceProxy serves services/proxy: a random ready endpoint of the
// Service's port.
func (s *Server) serviceProxy(w http.ResponseWriter, r *http.Request) {
	id, scheme, name, port, ok := proxyTarget(w, r, "service")
	if !ok {
		return
	}
	ns := r.PathValue("namespace")
	svcStore, ok := s.reg.Lookup(schema.GroupResource{Resource: "services"})
	epStore, ok2 := s.reg.Lookup(schema.GroupResource{Resource: "endpoints"})
	if !ok || !ok2 {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	obj, err := svcStore.Get(r.Context(), ns, name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	svc := obj.(*corev1.Service)
	portName := port
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		found := false
		for _, sp := range svc.Spec.Ports {
			if int64(sp.Port) == n {
				portName, found = sp.Name, true
				break
			}
		}
		if !found {
			writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name)))
			return
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("unsupported service type %q", svc.Spec.Type)))
		return
	}
	noEndpoints := apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", id))
	obj, err = epStore.Get(r.Context(), ns, name)
	if apierrors.IsNotFound(err) {
		writeError(w, r, noEndpoints)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	type target struct {
		ip   string
		port int32
	}
	var targets []target
	for _, ss := range obj.(*corev1.Endpoints).Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName {
				continue
			}
			for _, a := range ss.Addresses {
				targets = append(targets, target{a.IP, p.Port})
			}
		}
	}
	if len(targets) == 0 {
		writeError(w, r, noEndpoints)
		return
	}
	t := targets[rand.IntN(len(targets))]
	ip, err := netip.ParseAddr(t.ip)
	if err != nil {
		writeError(w, r, noEndpoints)
		return
	}
	s.proxyTo(w, r, scheme, ip, strconv.Itoa(int(t.port)))
}

// proxyTo carries r to ip:port on the pod network, its path being what
// follows /proxy in r's.
func (s *Server) proxyTo(w http.ResponseWriter, r *http.Request, scheme string, ip netip.Addr, port string) {
	host := ip.String()
	p := uint64(80)
	if port != "" {
		var err error
		if p, err = strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
			// A named pod port that no number stands for: nothing listens.
			writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: dial tcp: lookup port %s: unknown port", port)))
			return
		}
		host = net.JoinHostPort(host, port)
	}
	addr := netip.AddrPortFrom(ip, uint16(p))
	if scheme == "https" {
		writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: tls: %s serves plain HTTP (kubetab's containers have no TLS)", host)))
		return
	}
	if s.cfg.PodNetwork == nil {
		writeError(w, r, apierrors.NewServiceUnavailable("error trying to reach service: the API server has no route to the pod network"))
		return
	}
	h, err := s.cfg.PodNetwork.PodHTTPHandler(addr)
	if err != nil {
		why := err.Error()
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			why = "connect: connection refused"
		case errors.Is(err, syscall.EHOSTUNREACH):
			why = "connect: no route to host"
		}
		writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: dial tcp %s: %s", addr, why)))
		return
	}
	out := r.Clone(r.Context())
	out.URL.Path = "/" + r.PathValue("path")
	out.URL.RawPath = ""
	out.RequestURI = out.URL.RequestURI()
	out.Host = host
	out.Header.Del("Authorization")
	if client, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		out.Header.Add("X-Forwarded-For", client)
	}
	h.ServeHTTP(w, out)
}
