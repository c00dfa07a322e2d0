// Package dns is the cluster DNS: it answers "what address does
// web.default.svc.cluster.local have?" from the Services, EndpointSlices and
// Namespaces in the API server, and gives each pod a stub resolver with
// Kubernetes' search path.
//
// Upstream counterpart: CoreDNS with its kubernetes plugin
// (github.com/coredns/coredns, plugin/kubernetes: parse.go, kubernetes.go
// findServices and findPods), deployed as the "coredns" Deployment behind the
// kube-dns Service at 10.96.0.10; and the kubelet's side, which writes each
// pod's /etc/resolv.conf for dnsPolicy ClusterFirst
// (pkg/kubelet/network/dns/dns.go).
//
// # Records
//
// The zone is cluster.local. With kubeadm's Corefile (kubernetes plugin,
// "pods insecure", "ttl 30") CoreDNS answers:
//
//	<svc>.<ns>.svc.cluster.local          A      the Service's ClusterIP
//	                                             headless (clusterIP: None): the
//	                                             ready endpoints' addresses, or
//	                                             NXDOMAIN when there is none
//	                                      CNAME  an ExternalName Service's externalName
//	<host>.<svc>.<ns>.svc.cluster.local   A      the endpoint whose hostname is <host>
//	                                             (a StatefulSet pod's), or whose
//	                                             address dashed is <host>: 10-244-1-2
//	<a-b-c-d>.<ns>.pod.cluster.local      A      a.b.c.d ("pods insecure": the name is
//	                                             the answer; only the namespace must exist)
//	<ns>.svc.cluster.local                       exists, no records (NODATA)
//	anything else in the zone                    NXDOMAIN
//
// Names outside the zone would go to the upstream resolvers of the node
// (the "forward . /etc/resolv.conf" line). A tab has no Internet, so the
// server answers them as an upstream that knows no names would: NXDOMAIN.
//
// # Resolving from a pod
//
// A pod with dnsPolicy ClusterFirst (the default) gets this resolv.conf from
// the kubelet (ResolvConf):
//
//	search default.svc.cluster.local svc.cluster.local cluster.local
//	nameserver 10.96.0.10
//	options ndots:5
//
// so a name with fewer than 5 dots is tried with each search domain first:
// "web" from a pod in default is web.default.svc.cluster.local, and
// "web.default" is web.default.svc.cluster.local too (its first try,
// web.default.default.svc.cluster.local, does not exist). Resolver does what
// the C library's res_search does with that file.
//
// kubetab serves no DNS packets: the guests have no sockets. Resolver asks
// the Server in-process; the kube-dns Service exists (core/cluster creates
// it) so that `kubectl get svc -n kube-system` shows the address a pod's
// resolv.conf names.
package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubetab/kubetab/core/client"
)

// Defaults, kubeadm's (the kubelet's clusterDomain and clusterDNS, CoreDNS's
// Service and TTL).
const (
	DefaultClusterDomain = "cluster.local"
	// DefaultServerIP is the kube-dns Service's ClusterIP: the tenth address
	// of the default Service CIDR, by kubeadm's convention.
	DefaultServerIP = "10.96.0.10"
	// ServiceName and ServiceNamespace name the cluster DNS Service; it keeps
	// the name kube-dns from before CoreDNS, for compatibility.
	ServiceName      = "kube-dns"
	ServiceNamespace = "kube-system"
	// TTL is the records' time to live, in seconds ("ttl 30").
	TTL = 30
	// Ndots is the resolv.conf option the kubelet writes: names with fewer
	// dots try the search domains first.
	Ndots = 5
)

// Type is a DNS record type.
type Type uint16

// The record types the cluster DNS serves.
const (
	TypeA     Type = 1
	TypeCNAME Type = 5
)

func (t Type) String() string {
	switch t {
	case TypeA:
		return "A"
	case TypeCNAME:
		return "CNAME"
	}
	return fmt.Sprintf("TYPE%d", uint16(t))
}

// Rcode is a DNS response code.
type Rcode int

// Response codes (RFC 1035).
const (
	RcodeSuccess  Rcode = 0 // NOERROR; with no answer, "NODATA"
	RcodeServFail Rcode = 2 // SERVFAIL
	RcodeNXDomain Rcode = 3 // NXDOMAIN: the name does not exist
)

func (r Rcode) String() string {
	switch r {
	case RcodeSuccess:
		return "NOERROR"
	case RcodeServFail:
		return "SERVFAIL"
	case RcodeNXDomain:
		return "NXDOMAIN"
	}
	return fmt.Sprintf("RCODE%d", int(r))
}

// Record is one resource record of an answer.
type Record struct {
	Name string // fully qualified, with the final dot
	Type Type
	TTL  uint32
	A    netip.Addr // TypeA
	// Target is a CNAME's canonical name, fully qualified.
	Target string
}

func (r Record) String() string {
	v := r.A.String()
	if r.Type == TypeCNAME {
		v = r.Target
	}
	return fmt.Sprintf("%s\t%d\tIN\t%s\t%s", r.Name, r.TTL, r.Type, v)
}

// Response is the answer to one query.
type Response struct {
	Rcode  Rcode
	Answer []Record
}

// Config configures the cluster DNS server.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// ClusterDomain is the zone; default DefaultClusterDomain.
	ClusterDomain string
	// ServerIP is the nameserver address pods are told to use; default
	// DefaultServerIP.
	ServerIP string
}

// Server is the cluster DNS server: CoreDNS's kubernetes plugin.
type Server struct {
	zone     string // "cluster.local", lower case, no dots at the ends
	serverIP netip.Addr

	services   *client.Informer[*corev1.Service]
	slices     *client.Informer[*discoveryv1.EndpointSlice]
	namespaces *client.Informer[*corev1.Namespace]
	synced     atomic.Bool
	running    atomic.Bool
}

// New validates cfg and returns a server; Run starts its watches.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("dns: Config.Client is required")
	}
	zone := strings.ToLower(strings.Trim(cfg.ClusterDomain, "."))
	if zone == "" {
		zone = DefaultClusterDomain
	}
	ipStr := cfg.ServerIP
	if ipStr == "" {
		ipStr = DefaultServerIP
	}
	ip, err := netip.ParseAddr(ipStr)
	if err != nil {
		return nil, fmt.Errorf("dns: Config.ServerIP: %w", err)
	}
	s := &Server{zone: zone, serverIP: ip}
	s.services = client.NewInformer(client.For[*corev1.Service](cfg.Client, "", "services"), "", client.ListOptions{})
	s.slices = client.NewInformer(client.For[*discoveryv1.EndpointSlice](cfg.Client, discoveryv1.GroupName, "endpointslices"), "", client.ListOptions{})
	s.slices.AddIndex(serviceIndex, func(es *discoveryv1.EndpointSlice) []string {
		if name := es.Labels[discoveryv1.LabelServiceName]; name != "" {
			return []string{client.NamespacedKey(es.Namespace, name)}
		}
		return nil
	})
	s.namespaces = client.NewInformer(cfg.Client.Namespaces(), "", client.ListOptions{})
	return s, nil
}

const serviceIndex = "service"

// Zone is the cluster domain, "cluster.local".
func (s *Server) Zone() string { return s.zone }

// ServerIP is the nameserver address pods use.
func (s *Server) ServerIP() netip.Addr { return s.serverIP }

// HasSynced reports whether the first lists have arrived (CoreDNS waits for
// them before it serves).
func (s *Server) HasSynced() bool { return s.synced.Load() }

// Run watches Services, EndpointSlices and Namespaces until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("dns: already running")
	}
	defer s.running.Store(false)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); s.services.Run(ctx) }()
	go func() { defer wg.Done(); s.slices.Run(ctx) }()
	go func() { defer wg.Done(); s.namespaces.Run(ctx) }()
	if client.WaitForCacheSync(ctx, s.services.HasSynced, s.slices.HasSynced, s.namespaces.HasSynced) {
		s.synced.Store(true)
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// Query answers one question for name (relative names are taken as fully
// qualified). Only A and CNAME questions are answered; others get NODATA for
// names that exist.
func (s *Server) Query(name string, qtype Type) Response {
	fqdn := strings.ToLower(strings.TrimSuffix(name, ".")) + "."
	rel, ok := s.inZone(fqdn)
	if !ok {
		return Response{Rcode: RcodeNXDomain} // would be forwarded upstream: none here
	}
	recs, rcode := s.records(fqdn, rel)
	if rcode != RcodeSuccess {
		return Response{Rcode: rcode}
	}
	var out []Record
	for _, r := range recs {
		// A CNAME answers every question type, as an alias does.
		if r.Type == qtype || r.Type == TypeCNAME {
			out = append(out, r)
		}
	}
	return Response{Rcode: RcodeSuccess, Answer: out}
}

// inZone returns the labels of fqdn in front of the zone, closest to the
// zone last ("web.default.svc"), and whether fqdn is in the zone at all.
func (s *Server) inZone(fqdn string) (string, bool) {
	name := strings.TrimSuffix(fqdn, ".")
	if name == s.zone {
		return "", true
	}
	rel, ok := strings.CutSuffix(name, "."+s.zone)
	return rel, ok
}

// records finds the records of a name in the zone (CoreDNS: parseRequest,
// then findServices or findPods).
func (s *Server) records(fqdn, rel string) ([]Record, Rcode) {
	if rel == "" {
		return nil, RcodeSuccess // the zone apex: SOA and NS only
	}
	labels := strings.Split(rel, ".")
	n := len(labels)
	switch labels[n-1] {
	case "svc":
		switch n {
		case 1:
			return nil, RcodeSuccess
		case 2:
			return nil, s.namespaceRcode(labels[0])
		case 3:
			return s.serviceRecords(fqdn, labels[1], labels[0], "")
		case 4:
			return s.serviceRecords(fqdn, labels[2], labels[1], labels[0])
		}
	case "pod":
		switch n {
		case 1:
			return nil, RcodeSuccess
		case 2:
			return nil, s.namespaceRcode(labels[0])
		case 3:
			if !s.namespaceExists(labels[1]) {
				return nil, RcodeNXDomain
			}
			// "pods insecure": the dashed address is the answer.
			ip, err := netip.ParseAddr(strings.ReplaceAll(labels[0], "-", "."))
			if err != nil || !ip.Is4() || strings.Count(labels[0], "-") != 3 {
				return nil, RcodeNXDomain
			}
			return []Record{{Name: fqdn, Type: TypeA, TTL: TTL, A: ip}}, RcodeSuccess
		}
	}
	return nil, RcodeNXDomain
}

func (s *Server) namespaceExists(ns string) bool {
	_, ok := s.namespaces.Get("", ns)
	return ok
}

func (s *Server) namespaceRcode(ns string) Rcode {
	if s.namespaceExists(ns) {
		return RcodeSuccess
	}
	return RcodeNXDomain
}

// serviceRecords answers <svc>.<ns>.svc and, with host set,
// <host>.<svc>.<ns>.svc.
func (s *Server) serviceRecords(fqdn, ns, name, host string) ([]Record, Rcode) {
	if !s.namespaceExists(ns) {
		return nil, RcodeNXDomain
	}
	svc, ok := s.services.Get(ns, name)
	if !ok {
		return nil, RcodeNXDomain
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if host != "" || svc.Spec.ExternalName == "" {
			return nil, RcodeNXDomain
		}
		target := strings.ToLower(strings.TrimSuffix(svc.Spec.ExternalName, ".")) + "."
		return []Record{{Name: fqdn, Type: TypeCNAME, TTL: TTL, Target: target}}, RcodeSuccess
	}
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone
	if !headless && host == "" {
		var out []Record
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 && svc.Spec.ClusterIP != "" {
			ips = []string{svc.Spec.ClusterIP}
		}
		for _, s := range ips {
			if ip, err := netip.ParseAddr(s); err == nil && ip.Is4() {
				out = append(out, Record{Name: fqdn, Type: TypeA, TTL: TTL, A: ip})
			}
		}
		if len(out) == 0 {
			return nil, RcodeNXDomain
		}
		return out, RcodeSuccess
	}
	// The endpoints: every A of a headless Service, or one endpoint by
	// hostname. CoreDNS answers only ready endpoints (the endpoints
	// controller marks not-ready ones ready when the Service says
	// publishNotReadyAddresses).
	var out []Record
	seen := map[netip.Addr]bool{}
	for _, es := range s.slices.ByIndex(serviceIndex, client.NamespacedKey(ns, name)) {
		if es.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil || !ip.Is4() || seen[ip] {
					continue
				}
				if host != "" && !strings.EqualFold(host, endpointHostname(ep, ip)) {
					continue
				}
				seen[ip] = true
				out = append(out, Record{Name: fqdn, Type: TypeA, TTL: TTL, A: ip})
			}
		}
	}
	if len(out) == 0 {
		return nil, RcodeNXDomain
	}
	sort.Slice(out, func(i, j int) bool { return out[i].A.Less(out[j].A) })
	return out, RcodeSuccess
}

// endpointHostname is the name of an endpoint under its Service: its
// hostname (a StatefulSet pod's), or its address with dashes.
func endpointHostname(ep discoveryv1.Endpoint, ip netip.Addr) string {
	if ep.Hostname != nil && *ep.Hostname != "" {
		return *ep.Hostname
	}
	return strings.ReplaceAll(ip.String(), ".", "-")
}

// Resolver is a pod's stub resolver: what the C library does with the
// resolv.conf the kubelet writes for dnsPolicy ClusterFirst.
type Resolver struct {
	server *Server
	// Search is the search path, most specific first.
	Search []string
	// Ndots: names with fewer dots try the search path before themselves.
	Ndots int
}

// ResolverFor returns the resolver of a pod in namespace (dnsPolicy
// ClusterFirst): search <ns>.svc.<zone> svc.<zone> <zone>, ndots 5.
func (s *Server) ResolverFor(namespace string) *Resolver {
	return &Resolver{
		server: s,
		Search: []string{namespace + ".svc." + s.zone, "svc." + s.zone, s.zone},
		Ndots:  Ndots,
	}
}

// ResolvConf is the pod's /etc/resolv.conf, as the kubelet writes it.
func (r *Resolver) ResolvConf() string {
	return fmt.Sprintf("search %s\nnameserver %s\noptions ndots:%d\n", strings.Join(r.Search, " "), r.server.serverIP, r.Ndots)
}

// Candidates lists the names a lookup of host tries, in order (res_search):
// a name ending in a dot is only itself; a name with at least Ndots dots is
// tried as is first, then with each search domain; any other name with each
// search domain first, then as is.
func (r *Resolver) Candidates(host string) []string {
	if strings.HasSuffix(host, ".") {
		return []string{host}
	}
	var search []string
	for _, d := range r.Search {
		search = append(search, host+"."+d+".")
	}
	if strings.Count(host, ".") >= r.Ndots {
		return append([]string{host + "."}, search...)
	}
	return append(search, host+".")
}

// maxCNAMEs bounds how many aliases a lookup follows.
const maxCNAMEs = 8

// LookupNetIP returns the IPv4 addresses of host, the way a pod's resolver
// finds them: IP literals as they are, then each candidate name in turn
// until one has addresses, following CNAMEs inside the cluster zone. A name
// nobody has fails with a *net.DNSError whose IsNotFound is true, naming
// host as it was asked, as Go's resolver does.
func (r *Resolver) LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	server := netip.AddrPortFrom(r.server.serverIP, 53).String()
	if host == "" || strings.HasPrefix(host, ".") || strings.Contains(host, "..") {
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: server, IsNotFound: true}
	}
	servfail := false
	for _, name := range r.Candidates(host) {
		if err := ctx.Err(); err != nil {
			return nil, &net.DNSError{Err: err.Error(), Name: host, Server: server, IsTimeout: errors.Is(err, context.DeadlineExceeded)}
		}
		addrs, rcode := r.lookupA(name)
		switch {
		case len(addrs) > 0:
			return addrs, nil
		case rcode == RcodeServFail:
			servfail = true
		}
	}
	if servfail {
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: server, IsTemporary: true}
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: server, IsNotFound: true}
}

// lookupA asks for the A records of a fully qualified name, following
// CNAMEs.
func (r *Resolver) lookupA(name string) ([]netip.Addr, Rcode) {
	for range maxCNAMEs {
		resp := r.server.Query(name, TypeA)
		if resp.Rcode != RcodeSuccess {
			return nil, resp.Rcode
		}
		var addrs []netip.Addr
		next := ""
		for _, rr := range resp.Answer {
			switch rr.Type {
			case TypeA:
				addrs = append(addrs, rr.A)
			case TypeCNAME:
				next = rr.Target
			}
		}
		if len(addrs) > 0 || next == "" {
			return addrs, RcodeSuccess
		}
		name = next
	}
	return nil, RcodeServFail
}

// LookupHost is LookupNetIP with the addresses as strings, like
// net.Resolver.LookupHost.
func (r *Resolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	addrs, err := r.LookupNetIP(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out, nil
}
