package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
)

// Labels kube-proxy selects on (upstream: cmd/kube-proxy/app/server.go).
const (
	// LabelServiceProxyName marks a Service (and its slices) as handled by
	// another proxy: kube-proxy leaves it alone.
	LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"
	// LabelHeadless marks the EndpointSlices of a headless Service, which
	// kube-proxy never needs.
	LabelHeadless = "service.kubernetes.io/headless"
)

// DefaultClientIPTimeout is sessionAffinityConfig.clientIP.timeoutSeconds
// when the Service does not set it: 3 hours.
const DefaultClientIPTimeout = 10800 * time.Second

// Config configures one node's kube-proxy.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// NodeName is the node this kube-proxy runs on (--hostname-override):
	// endpoints with this nodeName are local. Required.
	NodeName string
	// NodeIP is the node's InternalIP; NodePorts answer on it. Required, IPv4.
	NodeIP string
	// ClusterCIDR is the pod network (--cluster-cidr), say "10.244.0.0/16".
	// Connections to a ClusterIP from outside it (from a node, say) are
	// masqueraded to this node's IP, as upstream's local traffic detector
	// decides. Empty: never.
	ClusterCIDR string
	// ServiceCIDR is the Service range; new connections to an address in it
	// that no Service holds are dropped. Default registry.DefaultServiceCIDR.
	ServiceCIDR string
	// Clock times session affinity. Nil means the real clock.
	Clock clock.PassiveClock
	// Rand picks endpoints. Nil means a randomly seeded source. It is only
	// used with the Proxier's lock held, so it need not be safe for
	// concurrent use.
	Rand *rand.Rand
}

// ServicePortName names one port of a Service as upstream's
// proxy.ServicePortName prints it: "default/web:http", or "default/web" for
// an unnamed port.
type ServicePortName struct {
	types.NamespacedName
	Port     string
	Protocol corev1.Protocol
}

func (n ServicePortName) String() string {
	if n.Port == "" {
		return n.NamespacedName.String()
	}
	return n.NamespacedName.String() + ":" + n.Port
}

// Endpoint is one backend of a service port, from an EndpointSlice.
type Endpoint struct {
	// Addr is the pod's address and the port the Service's targetPort
	// resolved to for that pod.
	Addr netip.AddrPort
	// NodeName is the endpoint's node ("" when the slice does not say).
	NodeName string
	// Pod names the endpoint's pod (its targetRef), for people.
	Pod string
	// Conditions, as in the slice; a missing ready is true, a missing
	// serving is ready, a missing terminating is false.
	Ready, Serving, Terminating bool
}

func (e Endpoint) String() string { return e.Addr.String() }

// servicePort is the rules of one port of one Service: upstream's
// BaseServicePortInfo plus the endpoints categorized for this node.
// Immutable once built; a change builds a new one.
type servicePort struct {
	name            ServicePortName
	clusterIP       netip.Addr
	port            uint16
	nodePort        uint16
	affinityTimeout time.Duration // 0: no session affinity
	internalLocal   bool          // internalTrafficPolicy: Local
	externalLocal   bool          // externalTrafficPolicy: Local (NodePorts only)

	// The Decision reasons, worded once when the rules are built.
	reasonClusterIP, reasonNodePort, reasonNoEndpoints, reasonNoLocal string

	endpoints    []Endpoint // every endpoint of the port, sorted by address
	cluster      []Endpoint // usable with Cluster policy
	local        []Endpoint // usable with Local policy (on this node)
	hasEndpoints bool       // usable endpoints exist anywhere
}

type vipKey struct {
	addr     netip.Addr
	protocol corev1.Protocol
	port     uint16
}

type nodePortKey struct {
	protocol corev1.Protocol
	port     uint16
}

// affinityEntry is one client's pinned endpoint and when it last used it.
type affinityEntry struct {
	endpoint netip.AddrPort
	last     time.Time
}

// Proxier is one node's kube-proxy. Create it with New and run it with Run;
// Route and the Transport read its rules.
type Proxier struct {
	client      *client.Client
	nodeName    string
	nodeIP      netip.Addr
	clusterCIDR netip.Prefix // invalid: no local traffic detection
	serviceCIDR netip.Prefix
	clock       clock.PassiveClock

	services *client.Informer[*corev1.Service]
	slices   *client.Informer[*discoveryv1.EndpointSlice]
	synced   atomic.Bool
	running  atomic.Bool
	syncs    atomic.Int64 // rule rebuilds, for tests and the UI

	// mu guards the rules, the random source and the affinity table. It is
	// held while a Service's rules are rebuilt from the informers' caches
	// (which take their own locks: lock order mu, then an informer's), and
	// never while calling out of the package.
	mu        sync.Mutex
	rand      *rand.Rand
	byService map[types.NamespacedName][]*servicePort
	vips      map[vipKey]*servicePort
	nodePorts map[nodePortKey]*servicePort
	// clusterIPs counts the service ports per active ClusterIP: upstream's
	// cluster-ips set, for rejecting ports a ClusterIP does not have.
	clusterIPs map[netip.Addr]int
	affinity   map[ServicePortName]map[netip.Addr]affinityEntry
}

// New validates cfg and returns a Proxier with no rules; Run fills them.
func New(cfg Config) (*Proxier, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("proxy: Config.Client is required")
	case cfg.NodeName == "":
		return nil, errors.New("proxy: Config.NodeName is required")
	}
	nodeIP, err := netip.ParseAddr(cfg.NodeIP)
	if err != nil || !nodeIP.Is4() {
		return nil, fmt.Errorf("proxy: Config.NodeIP %q must be an IPv4 address", cfg.NodeIP)
	}
	p := &Proxier{
		client:     cfg.Client,
		nodeName:   cfg.NodeName,
		nodeIP:     nodeIP,
		clock:      cfg.Clock,
		rand:       cfg.Rand,
		byService:  map[types.NamespacedName][]*servicePort{},
		vips:       map[vipKey]*servicePort{},
		nodePorts:  map[nodePortKey]*servicePort{},
		clusterIPs: map[netip.Addr]int{},
		affinity:   map[ServicePortName]map[netip.Addr]affinityEntry{},
	}
	if cfg.ClusterCIDR != "" {
		if p.clusterCIDR, err = netip.ParsePrefix(cfg.ClusterCIDR); err != nil {
			return nil, fmt.Errorf("proxy: Config.ClusterCIDR: %w", err)
		}
	}
	svcCIDR := cfg.ServiceCIDR
	if svcCIDR == "" {
		svcCIDR = registry.DefaultServiceCIDR
	}
	if p.serviceCIDR, err = netip.ParsePrefix(svcCIDR); err != nil {
		return nil, fmt.Errorf("proxy: Config.ServiceCIDR: %w", err)
	}
	p.serviceCIDR = p.serviceCIDR.Masked()
	if p.clock == nil {
		p.clock = clock.RealClock{}
	}
	if p.rand == nil {
		p.rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}

	// Upstream selects away Services handled by another proxy and the slices
	// of headless Services.
	sel, err := labels.Parse("!" + LabelServiceProxyName + ",!" + LabelHeadless)
	if err != nil {
		return nil, err
	}
	opts := client.ListOptions{LabelSelector: sel}
	p.services = client.NewInformer(client.For[*corev1.Service](cfg.Client, "", "services"), "", opts)
	p.slices = client.NewInformer(client.For[*discoveryv1.EndpointSlice](cfg.Client, discoveryv1.GroupName, "endpointslices"), "", opts)
	p.slices.AddIndex(serviceIndex, func(s *discoveryv1.EndpointSlice) []string {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			return []string{client.NamespacedKey(s.Namespace, name)}
		}
		return nil
	})
	p.services.AddHandler(client.Handler[*corev1.Service]{
		OnAdd:    func(s *corev1.Service) { p.syncService(nsName(s.Namespace, s.Name)) },
		OnUpdate: func(_, s *corev1.Service) { p.syncService(nsName(s.Namespace, s.Name)) },
		OnDelete: func(s *corev1.Service) { p.syncService(nsName(s.Namespace, s.Name)) },
	})
	onSlice := func(s *discoveryv1.EndpointSlice) {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			p.syncService(nsName(s.Namespace, name))
		}
	}
	p.slices.AddHandler(client.Handler[*discoveryv1.EndpointSlice]{
		OnAdd: onSlice,
		OnUpdate: func(old, s *discoveryv1.EndpointSlice) {
			if old.Labels[discoveryv1.LabelServiceName] != s.Labels[discoveryv1.LabelServiceName] {
				onSlice(old)
			}
			onSlice(s)
		},
		OnDelete: onSlice,
	})
	return p, nil
}

const serviceIndex = "service"

func nsName(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// NodeName is the node this kube-proxy runs on.
func (p *Proxier) NodeName() string { return p.nodeName }

// NodeIP is the address its NodePorts answer on.
func (p *Proxier) NodeIP() netip.Addr { return p.nodeIP }

// HasSynced reports whether the first lists of Services and EndpointSlices
// have been turned into rules. Until then Route accepts everything, as a
// node whose kube-proxy has not started yet has no Service rules.
func (p *Proxier) HasSynced() bool { return p.synced.Load() }

// Syncs counts rule rebuilds (one per Service change).
func (p *Proxier) Syncs() int64 { return p.syncs.Load() }

// Run watches Services and EndpointSlices and keeps the rules current until
// ctx is done. It returns nil then; Run may not be called twice at once.
func (p *Proxier) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("proxy: already running")
	}
	defer p.running.Store(false)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.services.Run(ctx) }()
	go func() { defer wg.Done(); p.slices.Run(ctx) }()
	if client.WaitForCacheSync(ctx, p.services.HasSynced, p.slices.HasSynced) {
		// Every handler already built its Service's rules as the lists came
		// in; rebuild everything once so a slice that arrived before its
		// Service is not missed.
		for _, s := range p.services.List() {
			p.syncService(nsName(s.Namespace, s.Name))
		}
		p.synced.Store(true)
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// syncService rebuilds the rules of one Service from the informers' caches
// (upstream: the change trackers plus syncProxyRules, for one Service). Level
// based: it does not matter which event called it.
func (p *Proxier) syncService(key types.NamespacedName) {
	svc, _ := p.services.Get(key.Namespace, key.Name)
	var ports []*servicePort
	if svc != nil && !skipService(svc) {
		slices := p.slices.ByIndex(serviceIndex, key.String())
		for i := range svc.Spec.Ports {
			if sp := p.buildServicePort(svc, &svc.Spec.Ports[i], slices); sp != nil {
				ports = append(ports, sp)
			}
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.syncs.Add(1)
	for _, sp := range p.byService[key] {
		delete(p.vips, vipKey{sp.clusterIP, sp.name.Protocol, sp.port})
		if n := p.clusterIPs[sp.clusterIP] - 1; n > 0 {
			p.clusterIPs[sp.clusterIP] = n
		} else {
			delete(p.clusterIPs, sp.clusterIP)
		}
		if sp.nodePort != 0 {
			if cur := p.nodePorts[nodePortKey{sp.name.Protocol, sp.nodePort}]; cur == sp {
				delete(p.nodePorts, nodePortKey{sp.name.Protocol, sp.nodePort})
			}
		}
	}
	live := map[ServicePortName]bool{}
	for _, sp := range ports {
		live[sp.name] = true
		p.vips[vipKey{sp.clusterIP, sp.name.Protocol, sp.port}] = sp
		p.clusterIPs[sp.clusterIP]++
		if sp.nodePort != 0 {
			p.nodePorts[nodePortKey{sp.name.Protocol, sp.nodePort}] = sp
		}
	}
	for name := range p.affinity {
		if name.NamespacedName == key && (!live[name] || affinityOff(ports, name)) {
			delete(p.affinity, name)
		}
	}
	if len(ports) == 0 {
		delete(p.byService, key)
	} else {
		p.byService[key] = ports
	}
}

func affinityOff(ports []*servicePort, name ServicePortName) bool {
	for _, sp := range ports {
		if sp.name == name {
			return sp.affinityTimeout == 0
		}
	}
	return true
}

// skipService reports the Services kube-proxy has no rules for
// (upstream: ShouldSkipService): headless and ExternalName Services, and
// those without a valid IPv4 ClusterIP.
func skipService(svc *corev1.Service) bool {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		return true
	}
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	return err != nil || !ip.Is4()
}

// buildServicePort turns one port of a Service and the Service's slices into
// rules (upstream: newBaseServiceInfo and the EndpointSlice cache's
// endpointInfoByServicePort).
func (p *Proxier) buildServicePort(svc *corev1.Service, port *corev1.ServicePort, slices []*discoveryv1.EndpointSlice) *servicePort {
	proto := port.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	ip, _ := netip.ParseAddr(svc.Spec.ClusterIP)
	sp := &servicePort{
		name:          ServicePortName{NamespacedName: nsName(svc.Namespace, svc.Name), Port: port.Name, Protocol: proto},
		clusterIP:     ip,
		port:          uint16(port.Port),
		internalLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		sp.nodePort = uint16(port.NodePort)
		sp.externalLocal = svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	}
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		sp.affinityTimeout = DefaultClientIPTimeout
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			sp.affinityTimeout = time.Duration(*c.ClientIP.TimeoutSeconds) * time.Second
		}
	}

	n := sp.name.String()
	sp.reasonClusterIP, sp.reasonNodePort = "service "+n+" ClusterIP", "service "+n+" NodePort"
	sp.reasonNoEndpoints, sp.reasonNoLocal = "service "+n+" has no endpoints", "service "+n+" has no local endpoints"

	seen := map[netip.AddrPort]bool{}
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var target *int32
		for _, sport := range s.Ports {
			name := ""
			if sport.Name != nil {
				name = *sport.Name
			}
			sproto := corev1.ProtocolTCP
			if sport.Protocol != nil {
				sproto = *sport.Protocol
			}
			if name == port.Name && sproto == proto && sport.Port != nil {
				target = sport.Port
				break
			}
		}
		if target == nil || *target <= 0 || *target > 65535 {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			addr, err := netip.ParseAddr(ep.Addresses[0]) // upstream uses the first address
			if err != nil || !addr.Is4() {
				continue
			}
			ap := netip.AddrPortFrom(addr, uint16(*target))
			if seen[ap] {
				continue // the same endpoint in two slices (while one is being replaced)
			}
			seen[ap] = true
			e := Endpoint{Addr: ap, Ready: true}
			if ep.Conditions.Ready != nil {
				e.Ready = *ep.Conditions.Ready
			}
			e.Serving = e.Ready
			if ep.Conditions.Serving != nil {
				e.Serving = *ep.Conditions.Serving
			}
			if ep.Conditions.Terminating != nil {
				e.Terminating = *ep.Conditions.Terminating
			}
			if ep.NodeName != nil {
				e.NodeName = *ep.NodeName
			}
			if ep.TargetRef != nil {
				e.Pod = ep.TargetRef.Name
			}
			sp.endpoints = append(sp.endpoints, e)
		}
	}
	sort.Slice(sp.endpoints, func(i, j int) bool { return sp.endpoints[i].Addr.Compare(sp.endpoints[j].Addr) < 0 })
	p.categorize(sp)
	return sp
}

// categorize splits a port's endpoints into those usable with Cluster and
// with Local traffic policy (upstream: CategorizeEndpoints, without topology
// hints): ready endpoints, or else serving-and-terminating ones, each list
// falling back on its own.
func (p *Proxier) categorize(sp *servicePort) {
	filter := func(keep func(Endpoint) bool) []Endpoint {
		var out []Endpoint
		for _, e := range sp.endpoints {
			if keep(e) {
				out = append(out, e)
			}
		}
		return out
	}
	ready := func(e Endpoint) bool { return e.Ready }
	servingTerminating := func(e Endpoint) bool { return e.Serving && e.Terminating }
	local := func(f func(Endpoint) bool) func(Endpoint) bool {
		return func(e Endpoint) bool { return e.NodeName == p.nodeName && f(e) }
	}
	if sp.cluster = filter(ready); len(sp.cluster) == 0 {
		sp.cluster = filter(servingTerminating)
	}
	if sp.local = filter(local(ready)); len(sp.local) == 0 {
		sp.local = filter(local(servingTerminating))
	}
	sp.hasEndpoints = len(sp.cluster) > 0
}

// Verdict is what a node's rules do with the first packet of a connection.
type Verdict int

const (
	// Accept: no Service rule matched; the packet goes where it is addressed.
	Accept Verdict = iota
	// DNAT: the destination was rewritten to a Service endpoint.
	DNAT
	// Reject: the client gets a TCP reset (ICMP port unreachable for UDP):
	// "Connection refused".
	Reject
	// Drop: the packet vanishes; the client retries until it times out.
	Drop
)

func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case DNAT:
		return "dnat"
	case Reject:
		return "reject"
	case Drop:
		return "drop"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Decision is the outcome of a node's rules for one new connection.
type Decision struct {
	Verdict Verdict
	// Service is the service port that matched (zero for Accept and the
	// ClusterIP checks).
	Service ServicePortName
	// Endpoint is the new destination (DNAT only).
	Endpoint netip.AddrPort
	// Masquerade: the source is rewritten to the node's IP (SNAT), so the
	// backend sees the node as the client.
	Masquerade bool
	// Reason says which rule decided, in the words of the nftables rules'
	// comments ("service default/web has no endpoints").
	Reason string
}

// Route runs this node's rules on the first packet of a connection from src
// to dst (protocol proto, "" meaning TCP), as the nftables hooks would for a
// packet that arrives at (or leaves from) this node: Service IPs on any
// node, NodePorts only when dst is this node's address. It also records the
// client in the session affinity table of a ClientIP Service.
func (p *Proxier) Route(src netip.Addr, dst netip.AddrPort, proto corev1.Protocol) Decision {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	if !p.synced.Load() {
		return Decision{Verdict: Accept, Reason: "kube-proxy has not synced its rules yet"}
	}
	p.mu.Lock()
	defer p.mu.Unlock()

	if sp := p.vips[vipKey{dst.Addr(), proto, dst.Port()}]; sp != nil {
		return p.internal(sp, src)
	}
	if dst.Addr() == p.nodeIP {
		if sp := p.nodePorts[nodePortKey{proto, dst.Port()}]; sp != nil {
			return p.external(sp, src)
		}
	}
	if p.clusterIPs[dst.Addr()] > 0 {
		return Decision{Verdict: Reject, Reason: "Reject traffic to invalid ports of ClusterIPs"}
	}
	if p.serviceCIDR.Contains(dst.Addr()) {
		return Decision{Verdict: Drop, Reason: "Drop traffic to unallocated ClusterIPs"}
	}
	return Decision{Verdict: Accept}
}

// internal is the rules for ClusterIP traffic. Called with mu held.
func (p *Proxier) internal(sp *servicePort, src netip.Addr) Decision {
	d := Decision{Service: sp.name}
	eps := sp.cluster
	switch {
	case !sp.hasEndpoints:
		d.Verdict, d.Reason = Reject, sp.reasonNoEndpoints
		return d
	case sp.internalLocal:
		if eps = sp.local; len(eps) == 0 {
			d.Verdict, d.Reason = Drop, sp.reasonNoLocal
			return d
		}
	}
	// Traffic to a ClusterIP from outside the pod network (a node, say) is
	// masqueraded so the reply comes back through this node.
	d.Masquerade = p.clusterCIDR.IsValid() && !p.clusterCIDR.Contains(src)
	d.Verdict, d.Endpoint = DNAT, p.pick(sp, eps, src)
	d.Reason = sp.reasonClusterIP
	return d
}

// external is the rules for NodePort traffic. Called with mu held.
func (p *Proxier) external(sp *servicePort, src netip.Addr) Decision {
	d := Decision{Service: sp.name}
	if !sp.hasEndpoints {
		d.Verdict, d.Reason = Reject, sp.reasonNoEndpoints
		return d
	}
	eps := sp.cluster
	d.Masquerade = true // Cluster policy: the endpoint may be on another node
	if sp.externalLocal {
		switch {
		case p.clusterCIDR.IsValid() && p.clusterCIDR.Contains(src):
			// "short-circuit pod traffic": a pod reaching a NodePort is
			// treated as reaching the Service from inside.
			d.Masquerade = false
		case src == p.nodeIP:
			// "masquerade local traffic", then "short-circuit local traffic".
		default:
			if eps = sp.local; len(eps) == 0 {
				d.Verdict, d.Reason = Drop, sp.reasonNoLocal
				d.Masquerade = false
				return d
			}
			d.Masquerade = false // Local keeps the client's address
		}
	}
	d.Verdict, d.Endpoint = DNAT, p.pick(sp, eps, src)
	d.Reason = sp.reasonNodePort
	return d
}

// pick chooses the endpoint of a new connection: the client's pinned one
// under ClientIP session affinity while it is still usable and fresh, else
// one at random. Called with mu held.
func (p *Proxier) pick(sp *servicePort, eps []Endpoint, src netip.Addr) netip.AddrPort {
	if sp.affinityTimeout == 0 {
		return eps[p.rand.IntN(len(eps))].Addr
	}
	now := p.clock.Now()
	clients := p.affinity[sp.name]
	if clients == nil {
		clients = map[netip.Addr]affinityEntry{}
		p.affinity[sp.name] = clients
	}
	if e, ok := clients[src]; ok && now.Sub(e.last) < sp.affinityTimeout {
		for _, ep := range eps {
			if ep.Addr == e.endpoint {
				clients[src] = affinityEntry{endpoint: e.endpoint, last: now}
				return e.endpoint
			}
		}
	}
	chosen := eps[p.rand.IntN(len(eps))].Addr
	clients[src] = affinityEntry{endpoint: chosen, last: now}
	return chosen
}

// ServicePort is one Service port's rules on this node, for people and
// tests: what `nft list table ip kube-proxy` would show about it.
type ServicePort struct {
	Name      ServicePortName
	ClusterIP netip.Addr
	Port      uint16
	NodePort  uint16 // 0: none
	// Endpoints are all of the port's endpoints; Usable the ones ClusterIP
	// traffic from this node goes to (after traffic policy), in address
	// order.
	Endpoints, Usable []Endpoint
	// SessionAffinity is the ClientIP timeout, 0 without affinity.
	SessionAffinity time.Duration
}

// ServicePorts lists this node's rules, sorted by name.
func (p *Proxier) ServicePorts() []ServicePort {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []ServicePort
	for _, ports := range p.byService {
		for _, sp := range ports {
			usable := sp.cluster
			if sp.internalLocal {
				usable = sp.local
			}
			out = append(out, ServicePort{
				Name: sp.name, ClusterIP: sp.clusterIP, Port: sp.port, NodePort: sp.nodePort,
				Endpoints: append([]Endpoint(nil), sp.endpoints...), Usable: append([]Endpoint(nil), usable...),
				SessionAffinity: sp.affinityTimeout,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name.NamespacedName != out[j].Name.NamespacedName {
			return out[i].Name.NamespacedName.String() < out[j].Name.NamespacedName.String()
		}
		return out[i].Name.Port < out[j].Name.Port
	})
	return out
}
