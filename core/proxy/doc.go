// Package proxy is kube-proxy: it makes a Service's virtual IP (its
// ClusterIP, and its NodePort on every node) lead to one of the Service's
// ready pods.
//
// Upstream counterpart: kube-proxy (cmd/kube-proxy, pkg/proxy), in its
// nftables mode (pkg/proxy/nftables/proxier.go), with the endpoint rules of
// pkg/proxy/topology.go (CategorizeEndpoints) and the change tracking of
// pkg/proxy/servicechangetracker.go and endpointschangetracker.go.
//
// # What kube-proxy does
//
// A Service's ClusterIP is not the address of any machine or pod: nothing
// listens on 10.96.123.45. kube-proxy runs on every node, watches Services and
// EndpointSlices through the API server, and programs the node's packet
// filter so that a new connection to a Service address is rewritten (DNAT) to
// the address of one of its endpoints, chosen at random:
//
//	client (a pod, or the node)                       node-1's kube-proxy rules
//	connect 10.96.123.45:80 ─────────────────────────▶ service-ips map:
//	                                                    10.96.123.45 . tcp . 80 → goto service default/web:http
//	                                                  service default/web:http:
//	                                                    numgen random mod 3 →
//	                                                      0: dnat to 10.244.1.2:8080
//	                                                      1: dnat to 10.244.2.2:8080  ◀── chosen
//	                                                      2: dnat to 10.244.3.2:8080
//	          ┌──────────── the pod network (CNI) routes 10.244.2.2 to node-2 ◀┘
//	          ▼
//	node-2: pod web-7d4b9-x2x8q, the container declaring containerPort 8080
//
// The rules are the same on every node except for NodePorts, which each node
// answers on its own address, and for Services whose traffic policy is Local
// (only endpoints on the same node). Each Proxier here is one node's
// kube-proxy; core/cluster runs one per node, as the kube-proxy DaemonSet
// does. That costs one watch of Services and one of EndpointSlices per node,
// and buys the per-node behaviour upstream has: externalTrafficPolicy and
// internalTrafficPolicy Local, NodePorts that answer on their own node, and
// source NAT (masquerade) by the node that did the DNAT.
//
// # The rules, per service port
//
// Upstream nftables mode keeps the rules in maps keyed by address, protocol
// and port; a Proxier keeps the same maps as Go maps and evaluates them the
// way the kernel would for the first packet of a connection (Route):
//
//	destination                         verdict
//	ClusterIP:port, usable endpoints    DNAT to a random usable endpoint
//	ClusterIP:port, no endpoints        REJECT: the client sees "Connection refused"
//	ClusterIP:port, internalTrafficPolicy Local and none on this node
//	                                    DROP: the client waits and times out
//	ClusterIP, a port it does not have  REJECT ("Reject traffic to invalid ports of ClusterIPs")
//	an unallocated IP of the Service CIDR
//	                                    DROP ("Drop traffic to unallocated ClusterIPs")
//	this node's IP:nodePort             as ClusterIP, with externalTrafficPolicy;
//	                                    source NAT to this node's IP for Cluster
//	anything else                       ACCEPT: routed as addressed (a pod IP, a node)
//
// "Usable" endpoints are the ready ones; when none is ready anywhere, the
// serving-and-terminating ones (a pod shutting down keeps traffic it can
// still serve, KEP-1669). Headless Services (clusterIP: None) and
// ExternalName Services get no rules: DNS answers for them (core/dns).
//
// Random, not round-robin: the nftables and iptables modes pick a random
// endpoint for each new connection (numgen random, statistic --mode random),
// so 300 requests over 3 pods give each about a third, never exactly. (The
// long-gone userspace mode went round-robin.) Tests seed Config.Rand.
//
// sessionAffinity: ClientIP pins a client address to the endpoint it got
// first, for sessionAffinityConfig.clientIP.timeoutSeconds (default 10800)
// after its last connection, as nftables' per-endpoint affinity sets with a
// timeout do.
//
// # Connections (Transport)
//
// WASI preview1 guests have no sockets, so there are no packets: a
// connection here is one HTTP request. Transport is an http.RoundTripper that
// carries a request the way the network would: it resolves the host with the
// cluster DNS (core/dns), lets the client node's kube-proxy rules decide
// (Route), follows a NodePort to the node it names (whose own rules decide
// there), and delivers to the pod address through that pod's node
// (kubelet.PodHTTPHandler: the container that declares the port serves the
// request, CGI-style). Errors are the ones a Go client gets from a real
// network: a *net.OpError wrapping ECONNREFUSED, EHOSTUNREACH or ETIMEDOUT,
// or a *net.DNSError.
package proxy
