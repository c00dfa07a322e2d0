package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/dns"
	"github.com/kubetab/kubetab/core/kubelet"
	"github.com/kubetab/kubetab/core/proxy"
)

// This file wires the Service network: one kube-proxy per node (as the
// kube-proxy DaemonSet runs), the cluster DNS (CoreDNS behind the kube-dns
// Service, as kubeadm's addon phase installs it), and the network that
// carries a request between them:
//
//	client on node-1 ─▶ node-1 kube-proxy ─DNAT─▶ 10.244.2.3:8080
//	                                               │ in node-2's podCIDR
//	                                               ▼
//	                                   node-2 kubelet.PodHTTPHandler ─▶ container

// networkState is the cluster's Service network, built on first use.
type networkState struct {
	once sync.Once
	err  error
	dns  *dns.Server
	ctx  context.Context // startNetwork's: the kube-proxies of added nodes run under it

	mu       sync.RWMutex              // guards ctx and the maps: nodes join and leave
	proxiers map[string]*proxy.Proxier // by node name
	stops    map[string]context.CancelFunc
	byIP     map[netip.Addr]*proxy.Proxier
	podCIDRs map[string]netip.Prefix // by node name
}

// network builds the DNS server and the kube-proxies (not running yet).
func (c *Cluster) network() (*networkState, error) {
	n := &c.net
	n.once.Do(func() {
		n.dns, n.err = dns.New(dns.Config{Client: c.clientAs("coredns", serviceAccountUser(metav1.NamespaceSystem, coreDNSServiceAccount))})
		if n.err != nil {
			return
		}
		n.proxiers = map[string]*proxy.Proxier{}
		n.stops = map[string]context.CancelFunc{}
		n.byIP = map[netip.Addr]*proxy.Proxier{}
		n.podCIDRs = map[string]netip.Prefix{}
		c.mu.RLock()
		nodes := append([]nodeSpec(nil), c.nodes...)
		c.mu.RUnlock()
		for _, spec := range nodes {
			if n.err = n.add(c, spec); n.err != nil {
				return
			}
		}
	})
	return n, n.err
}

// networkLocked is network for a caller holding c.mu, once Launch has
// built the network (network itself takes c.mu).
func (c *Cluster) networkLocked() (*networkState, error) {
	if c.net.err != nil {
		return nil, c.net.err
	}
	if c.net.proxiers == nil {
		return nil, errors.New("the network is not running")
	}
	return &c.net, nil
}

// add makes a node's kube-proxy, running it if the network runs.
func (n *networkState) add(c *Cluster, spec nodeSpec) error {
	p, err := proxy.New(proxy.Config{
		Client: c.clientAs("kube-proxy/"+spec.Name, kubeProxyUser), NodeName: spec.Name, NodeIP: spec.ip,
		ClusterCIDR: ClusterCIDR, Clock: c.cfg.Clock,
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.proxiers[spec.Name] = p
	n.byIP[p.NodeIP()] = p
	n.podCIDRs[spec.Name] = netip.MustParsePrefix(spec.podCIDR)
	if n.ctx != nil {
		n.runLocked(spec.Name, p)
	}
	return nil
}

func (n *networkState) runLocked(node string, p *proxy.Proxier) {
	ctx, cancel := context.WithCancel(n.ctx)
	n.stops[node] = cancel
	go func() { _ = p.Run(ctx) }()
}

// addProxier starts the kube-proxy of a node that joined. Called with c.mu
// held (the lock order allows net.mu inside it).
func (c *Cluster) addProxier(spec nodeSpec) error {
	n, err := c.networkLocked()
	if err != nil {
		return err
	}
	return n.add(c, spec)
}

// removeProxier stops the kube-proxy of a node that left and forgets its
// addresses.
func (c *Cluster) removeProxier(node string) {
	n := &c.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if stop := n.stops[node]; stop != nil {
		stop()
	}
	if p := n.proxiers[node]; p != nil {
		delete(n.byIP, p.NodeIP())
	}
	delete(n.stops, node)
	delete(n.proxiers, node)
	delete(n.podCIDRs, node)
}

// startNetwork creates the kube-dns Service and runs the cluster DNS and
// every node's kube-proxy until ctx is done. Called by Start.
func (c *Cluster) startNetwork(ctx context.Context) error {
	n, err := c.network()
	if err != nil {
		return err
	}
	if err := c.ensureDNSService(ctx); err != nil {
		return err
	}
	go func() { _ = n.dns.Run(ctx) }()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ctx = ctx
	for node, p := range n.proxiers {
		n.runLocked(node, p)
	}
	return nil
}

// DNS returns the cluster DNS server.
func (c *Cluster) DNS() (*dns.Server, error) {
	n, err := c.network()
	if err != nil {
		return nil, err
	}
	return n.dns, nil
}

// Proxier returns the kube-proxy of a node.
func (c *Cluster) Proxier(node string) (*proxy.Proxier, bool) {
	n, err := c.network()
	if err != nil {
		return nil, false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	p, ok := n.proxiers[node]
	return p, ok
}

// NetworkSynced reports whether the cluster DNS and every kube-proxy have
// their first lists of Services and EndpointSlices.
func (c *Cluster) NetworkSynced() bool {
	n, err := c.network()
	if err != nil || !n.dns.HasSynced() {
		return false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, p := range n.proxiers {
		if !p.HasSynced() {
			return false
		}
	}
	return true
}

// Transport returns an HTTP transport for a client on node's host network
// that resolves names as a pod in namespace does (dnsPolicy
// ClusterFirstWithHostNet): `curl` run on that node. Its connections go
// through the node's kube-proxy rules.
func (c *Cluster) Transport(node, namespace string) (*proxy.Transport, error) {
	n, err := c.network()
	if err != nil {
		return nil, err
	}
	n.mu.RLock()
	p, ok := n.proxiers[node]
	n.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchNode, node)
	}
	return &proxy.Transport{
		Network:  clusterNetwork{c: c, n: n},
		Node:     p,
		Resolver: n.dns.ResolverFor(namespace),
		Clock:    c.cfg.Clock,
	}, nil
}

// ConsoleTransport is the transport of the console's curl: a client on the
// first node's host network, resolving names from namespace default.
func (c *Cluster) ConsoleTransport() (*proxy.Transport, error) {
	names := c.nodeNames()
	if len(names) == 0 {
		return nil, errors.New("the cluster has no nodes: add one with `node add NAME`")
	}
	return c.Transport(names[0], metav1.NamespaceDefault)
}

// podHTTPHandler is the server on a pod address, reached from the control
// plane: what the API server's pods/proxy and services/proxy dial.
func (c *Cluster) podHTTPHandler(addr netip.AddrPort) (http.Handler, error) {
	n, err := c.network()
	if err != nil {
		return nil, err
	}
	return clusterNetwork{c, n}.PodHTTPHandler(addr)
}

// clusterNetwork is the network between the nodes: node addresses lead to
// their kube-proxy, pod addresses to the kubelet of the node whose podCIDR
// holds them.
type clusterNetwork struct {
	c *Cluster
	n *networkState
}

var _ proxy.Network = clusterNetwork{}

func (cn clusterNetwork) NodeProxier(ip netip.Addr) (*proxy.Proxier, bool) {
	cn.n.mu.RLock()
	defer cn.n.mu.RUnlock()
	p, ok := cn.n.byIP[ip]
	return p, ok
}

func (cn clusterNetwork) PodHTTPHandler(addr netip.AddrPort) (http.Handler, error) {
	cn.n.mu.RLock()
	cidrs := make(map[string]netip.Prefix, len(cn.n.podCIDRs))
	for node, cidr := range cn.n.podCIDRs {
		cidrs[node] = cidr
	}
	cn.n.mu.RUnlock()
	for node, cidr := range cidrs {
		if !cidr.Contains(addr.Addr()) {
			continue
		}
		kl, ok := cn.c.Kubelet(node)
		if !ok {
			return nil, fmt.Errorf("node %s is not started: %w", node, syscall.EHOSTUNREACH)
		}
		h, err := kl.PodHTTPHandler(addr)
		switch {
		case errors.Is(err, kubelet.ErrNoPodAtAddress):
			return nil, fmt.Errorf("%w: %w", err, syscall.EHOSTUNREACH)
		case err != nil:
			return nil, fmt.Errorf("%w: %w", err, syscall.ECONNREFUSED)
		}
		return h, nil
	}
	if cp, err := netip.ParseAddr(registry.DefaultAPIServerIP); err == nil && addr.Addr() == cp {
		// The control plane host: its servers speak TLS or DNS, not HTTP.
		return nil, fmt.Errorf("the control plane serves no HTTP on port %d: %w", addr.Port(), syscall.ECONNREFUSED)
	}
	if netip.MustParsePrefix(ClusterCIDR).Contains(addr.Addr()) {
		return nil, fmt.Errorf("no node routes %s: %w", addr.Addr(), syscall.EHOSTUNREACH)
	}
	return nil, fmt.Errorf("%s is outside the cluster, and kubetab has no Internet: %w", addr.Addr(), syscall.ENETUNREACH)
}

// ensureDNSService creates the kube-dns Service at 10.96.0.10 with its
// Endpoints and EndpointSlice, as kubeadm's CoreDNS addon does (the Service
// keeps the name kube-dns). Upstream the Service selects the CoreDNS pods
// (k8s-app: kube-dns); kubetab's DNS server runs inside the control plane,
// not in pods, so the Service has no selector and its endpoints name the
// control plane's address, the way the "kubernetes" Service's do.
func (c *Cluster) ensureDNSService(ctx context.Context) error {
	cl := c.Client("kubeadm")
	if err := c.ensureCoreDNSIdentity(ctx, cl); err != nil {
		return err
	}
	ns := dns.ServiceNamespace
	labels := map[string]string{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: dns.ServiceName, Namespace: ns, Labels: labels,
			Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: dns.DefaultServerIP,
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: udp, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: tcp, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: tcp, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	services := client.For[*corev1.Service](cl, "", "services")
	if _, err := services.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create service %s/%s: %w", ns, dns.ServiceName, err)
	}

	ip := registry.DefaultAPIServerIP
	type port struct {
		name  string
		port  int32
		proto corev1.Protocol
	}
	ports := []port{{"dns", 53, udp}, {"dns-tcp", 53, tcp}, {"metrics", 9153, tcp}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: dns.ServiceName, Namespace: ns, Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}}},
	}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: dns.ServiceName, Namespace: ns, Labels: map[string]string{
			discoveryv1.LabelServiceName: dns.ServiceName, discoveryv1.LabelManagedBy: "kubeadm"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	for _, p := range ports {
		ep.Subsets[0].Ports = append(ep.Subsets[0].Ports, corev1.EndpointPort{Name: p.name, Port: p.port, Protocol: p.proto})
		name, num, proto := p.name, p.port, p.proto
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: &name, Port: &num, Protocol: &proto})
	}
	if _, err := client.For[*corev1.Endpoints](cl, "", "endpoints").Create(ctx, ep); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create endpoints %s/%s: %w", ns, dns.ServiceName, err)
	}
	if _, err := client.For[*discoveryv1.EndpointSlice](cl, discoveryv1.GroupName, "endpointslices").Create(ctx, slice); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster: create endpointslice %s/%s: %w", ns, dns.ServiceName, err)
	}
	return nil
}
