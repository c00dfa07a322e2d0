// Package cni gives pods their IP addresses: the network plugin a kubelet
// calls when it sets up a pod's sandbox ("CNI ADD") and tears it down ("CNI
// DEL").
//
// Upstream counterpart: the Container Network Interface plugins from
// github.com/containernetworking/plugins that a simple cluster (kind, kubeadm
// with the "bridge" example config) chains together:
//
//   - plugins/main/bridge: creates the node's Linux bridge "cni0", whose address
//     is the gateway (.1 of the node's podCIDR), and plugs each pod's "eth0"
//     into it;
//   - plugins/ipam/host-local: hands out addresses from the node's podCIDR and
//     remembers which container holds which address (in files under
//     /var/lib/cni/networks/<network>).
//
// kubetab has no Linux network to wire, so Network keeps only what a learner
// can observe: which address each pod holds, the gateway, and the errors.
// How a pod gets its address on a node:
//
//	kube-controller-manager (nodeipam)  node-1.spec.podCIDR = 10.244.1.0/24
//	kubelet on node-1                   new pod web-x: set up its sandbox
//	  └─ CNI ADD(web-x) ─▶ bridge ─▶ host-local
//	                                 10.244.1.0/24: .0 network, .1 gateway (cni0),
//	                                 .2 taken by web-a, .3 free ─▶ 10.244.1.3/24
//	kubelet                             status.podIP = 10.244.1.3
//	  ...
//	kubelet                             pod web-x deleted: CNI DEL(web-x), .3 is free again
//
// One difference from host-local: host-local hands out addresses round-robin
// (it continues after the last one it reserved, so a freed address is reused
// late). Network always hands out the lowest free address, so a learner sees
// predictable IPs (.2, .3, ...) and a freed address come back at once.
//
// Only IPv4 podCIDRs are supported.
package cni

import (
	"container/heap"
	"errors"
	"fmt"
	"net/netip"
	"sync"
)

// ErrExhausted is an ADD on a network whose range has no free address left.
// The error's message has host-local's wording, as a kubelet event shows it:
//
//	plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254
var ErrExhausted = errors.New("no IP addresses available in range set")

// PluginType is the type of the (outer) plugin named in errors, as libcni
// names the plugin that failed.
const PluginType = "bridge"

// BridgeName is the node's bridge interface: the pods' gateway.
const BridgeName = "cni0"

// InterfaceName is the pod's side of the network: its "eth0".
const InterfaceName = "eth0"

// Result is what an ADD returns: upstream's CNI Result with one IP.
type Result struct {
	// Interface is the pod's interface, "eth0".
	Interface string
	// Address is the pod's address with the podCIDR's prefix length:
	// 10.244.1.2/24.
	Address netip.Prefix
	// Gateway is the bridge's address, the first address of the podCIDR.
	Gateway netip.Addr
}

// IP is the pod's address without its prefix length: what status.podIP shows.
func (r Result) IP() netip.Addr { return r.Address.Addr() }

// Network is one node's pod network: a bridge and a host-local address range
// carved from the node's podCIDR. It is safe for concurrent use.
type Network struct {
	subnet  netip.Prefix // masked: 10.244.1.0/24
	gateway netip.Addr   // .1
	first   netip.Addr   // first address of the range: .1 (the gateway is skipped when handing out)
	last    netip.Addr   // last address of the range: the one before broadcast

	// mu guards the fields below.
	mu    sync.Mutex
	byID  map[string]netip.Addr // container (pod) ID → address
	inUse map[netip.Addr]string // address → ID
	next  netip.Addr            // lowest address never handed out yet ("high-water mark")
	freed addrHeap              // addresses below next that were released: reused lowest first
}

// New returns the network of a node whose podCIDR is podCIDR
// ("10.244.1.0/24"). The range is podCIDR without its network address,
// gateway (.1) and broadcast address, so a /24 has 253 pod addresses (.2 to
// .254). Prefixes longer than /30 leave no room and are refused.
func New(podCIDR string) (*Network, error) {
	p, err := netip.ParsePrefix(podCIDR)
	if err != nil {
		return nil, fmt.Errorf("cni: invalid podCIDR %q: %w", podCIDR, err)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("cni: podCIDR %q: only IPv4 is supported", podCIDR)
	}
	if p.Bits() > 30 {
		return nil, fmt.Errorf("cni: podCIDR %q is too small: a pod network needs at least a /30", podCIDR)
	}
	p = p.Masked()
	gateway := p.Addr().Next()
	n := &Network{
		subnet:  p,
		gateway: gateway,
		first:   gateway,
		last:    broadcast(p).Prev(),
		byID:    map[string]netip.Addr{},
		inUse:   map[netip.Addr]string{},
		next:    gateway.Next(),
	}
	return n, nil
}

// broadcast is the last address of p.
func broadcast(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Subnet is the podCIDR: 10.244.1.0/24.
func (n *Network) Subnet() netip.Prefix { return n.subnet }

// Gateway is the bridge's address: 10.244.1.1.
func (n *Network) Gateway() netip.Addr { return n.gateway }

// RangeSet is the range as host-local prints it in errors:
// "10.244.1.1-10.244.1.254" (the gateway is inside the range but never handed
// out).
func (n *Network) RangeSet() string { return n.first.String() + "-" + n.last.String() }

// Add sets up the network of the pod sandbox id ("CNI ADD"): it reserves the
// lowest free address and returns it. Add is idempotent: a second ADD for the
// same id returns the address it already holds, as host-local does for a
// container that already has one. When no address is free the error wraps
// ErrExhausted.
func (n *Network) Add(id string) (Result, error) {
	if id == "" {
		return Result{}, fmt.Errorf("plugin type=%q failed (add): CNI_CONTAINERID is required", PluginType)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if a, ok := n.byID[id]; ok {
		return n.result(a), nil
	}
	var a netip.Addr
	switch {
	case n.freed.Len() > 0:
		a = heap.Pop(&n.freed).(netip.Addr)
	case n.next.Compare(n.last) <= 0:
		a = n.next
		n.next = n.next.Next()
	default:
		return Result{}, fmt.Errorf("plugin type=%q failed (add): failed to allocate for range 0: %w: %s", PluginType, ErrExhausted, n.RangeSet())
	}
	n.byID[id] = a
	n.inUse[a] = id
	return n.result(a), nil
}

func (n *Network) result(a netip.Addr) Result {
	return Result{Interface: InterfaceName, Address: netip.PrefixFrom(a, n.subnet.Bits()), Gateway: n.gateway}
}

// Del tears down the network of sandbox id ("CNI DEL") and frees its address.
// As the CNI spec asks, deleting an unknown id is not an error.
func (n *Network) Del(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, ok := n.byID[id]
	if !ok {
		return
	}
	delete(n.byID, id)
	delete(n.inUse, a)
	heap.Push(&n.freed, a)
}

// Get returns the address sandbox id holds ("CNI CHECK", without the checking).
func (n *Network) Get(id string) (Result, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, ok := n.byID[id]
	if !ok {
		return Result{}, false
	}
	return n.result(a), true
}

// Holder returns the id holding address a, if any.
func (n *Network) Holder(a netip.Addr) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	id, ok := n.inUse[a]
	return id, ok
}

// Len is the number of addresses in use.
func (n *Network) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byID)
}

// Size is the number of addresses the range can hand out (a /24 has 253).
func (n *Network) Size() int {
	return int(addrDiff(n.last, n.first)) // last-first+1, minus the gateway
}

func addrDiff(a, b netip.Addr) uint32 {
	x, y := a.As4(), b.As4()
	return (uint32(x[0])<<24 | uint32(x[1])<<16 | uint32(x[2])<<8 | uint32(x[3])) -
		(uint32(y[0])<<24 | uint32(y[1])<<16 | uint32(y[2])<<8 | uint32(y[3]))
}

// addrHeap is a min-heap of addresses (container/heap), so a freed address is
// reused lowest first in O(log n).
type addrHeap []netip.Addr

func (h addrHeap) Len() int           { return len(h) }
func (h addrHeap) Less(i, j int) bool { return h[i].Less(h[j]) }
func (h addrHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *addrHeap) Push(x any)        { *h = append(*h, x.(netip.Addr)) }
func (h *addrHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
