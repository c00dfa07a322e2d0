package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/store"
)

// Service clusterIPs and nodePorts come from two allocators, both kept in the
// store so that they survive a snapshot and are shared by every writer, as
// kube-apiserver keeps them in etcd:
//
//	clusterIPs  one networking.k8s.io/v1 IPAddress object per allocated IP,
//	            /registry/ipaddresses/10.96.0.1, naming the Service that holds
//	            it (upstream's MultiCIDRServiceAllocator, the default since
//	            1.33). Allocating is creating the key, so two Services can
//	            never get the same IP: the second create fails.
//	nodePorts   one core/v1 RangeAllocation, /registry/ranges/servicenodeports:
//	            a bitmap of the 30000-32767 range, updated by compare-and-swap
//	            (upstream's portallocator).
//
// Dynamic allocation prefers the upper part of each range and leaves the
// lower part for values asked for by name (upstream's static subranges: the
// first 256 IPs of a /12, the first 86 nodePorts), so "clusterIP: 10.96.0.10"
// rarely collides with an automatic pick. The first IP, 10.96.0.1, is the
// "kubernetes" Service's (see bootstrap.go).

// Defaults of the Service ranges (kube-apiserver's --service-cluster-ip-range
// and --service-node-port-range).
const (
	DefaultServiceCIDR   = "10.96.0.0/12"
	DefaultNodePortRange = "30000-32767"
)

// Allocator errors, worded as upstream's.
var (
	errIPAllocated   = errors.New("provided IP is already allocated")
	errPortAllocated = errors.New("provided port is already allocated")
	errRangeFull     = errors.New("range is full")
)

const (
	ipAddressPrefix    = "/registry/ipaddresses/"
	nodePortsKey       = "/registry/ranges/servicenodeports"
	ipAllocatorManager = "ipallocator.k8s.io"
)

// ipRange is an IPv4 service CIDR: addresses first..last (the network and
// broadcast addresses excluded).
type ipRange struct {
	prefix      netip.Prefix
	first, last uint32
}

func parseIPRange(cidr string) (*ipRange, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("%s: only IPv4 service ranges are supported", cidr)
	}
	if p.Bits() > 30 {
		return nil, fmt.Errorf("%s: the range is too small", cidr)
	}
	p = p.Masked()
	base := ip4ToInt(p.Addr())
	size := uint32(1) << (32 - p.Bits())
	return &ipRange{prefix: p, first: base + 1, last: base + size - 2}, nil
}

func ip4ToInt(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func intToIP4(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// FirstIP is the first address of the range: the "kubernetes" Service's.
func (r *ipRange) FirstIP() string { return intToIP4(r.first).String() }

func (r *ipRange) contains(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	n := ip4ToInt(a)
	return n >= r.first && n <= r.last
}

// staticBand is upstream's calculateRangeOffset: min(max(16, size/16), 256)
// addresses at the start of a range are left for static picks.
func staticBand(size, div, max int) int {
	band := size / div
	if band < 16 {
		band = 16
	}
	if band > max {
		band = max
	}
	if band >= size {
		return 0
	}
	return band
}

// errNotInIPRange is upstream's ipallocator.ErrNotInRange.
func (r *ipRange) errNotInRange(ip string) error {
	return fmt.Errorf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, r.prefix)
}

func ipAddressKey(ip string) string { return ipAddressPrefix + ip }

// allocateIP reserves ip ("" for any free one) for a Service and returns it.
// In a dry run nothing is written.
func (reg *Registry) allocateIP(ctx context.Context, svc *corev1.Service, ip string, dryRun bool) (string, error) {
	r := reg.serviceIPs
	if ip != "" {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return "", fmt.Errorf("failed to parse service IP %q", ip)
		}
		if !r.contains(a) {
			return "", r.errNotInRange(ip)
		}
		if err := reg.claimIP(svc, a.String(), dryRun); err != nil {
			return "", err
		}
		return a.String(), nil
	}
	size := int(r.last - r.first + 1)
	got, failure := "", error(nil)
	scan(size, staticBand(size, 16, 256), func(off int) bool {
		cand := intToIP4(r.first + uint32(off)).String()
		err := reg.claimIP(svc, cand, dryRun)
		switch {
		case err == nil:
			got = cand
			return true
		case !errors.Is(err, errIPAllocated):
			failure = err
			return true
		}
		return false
	})
	if failure != nil {
		return "", failure
	}
	if got == "" {
		return "", errRangeFull
	}
	return got, nil
}

// scan calls try for the offsets of a range of size until it returns true:
// the dynamic band [band, size) from a random offset, wrapping, then the
// static band [0, band).
func scan(size, band int, try func(off int) bool) {
	dyn := size - band
	start := rand.IntN(dyn)
	for i := 0; i < dyn; i++ {
		if try(band + (start+i)%dyn) {
			return
		}
	}
	for off := 0; off < band; off++ {
		if try(off) {
			return
		}
	}
}

// claimIP creates the IPAddress object of ip.
func (reg *Registry) claimIP(svc *corev1.Service, ip string, dryRun bool) error {
	key := ipAddressKey(ip)
	if dryRun {
		if _, err := reg.kv.Get(key); err == nil {
			return errIPAllocated
		}
		return nil
	}
	// The object is written as JSON directly: linking all of
	// k8s.io/api/networking/v1 (Ingress, NetworkPolicy ...) into the wasm
	// for one small kind costs ~50 KB gzip. Its shape is networking/v1
	// IPAddress; serving the ipaddresses resource would import the type.
	addr := map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
		"metadata": map[string]any{
			"name": ip, "creationTimestamp": metav1.NewTime(reg.clock.Now().Truncate(1e9)),
			"labels": map[string]string{
				"ipaddress.kubernetes.io/ip-family":  string(corev1.IPv4Protocol),
				"ipaddress.kubernetes.io/managed-by": ipAllocatorManager,
			},
		},
		"spec": map[string]any{"parentRef": map[string]string{
			"group": "", "resource": "services", "namespace": svc.Namespace, "name": svc.Name,
		}},
	}
	data, err := json.Marshal(addr)
	if err != nil {
		return err
	}
	if _, err := reg.kv.Create(key, data); errors.Is(err, store.ErrExists) {
		return errIPAllocated
	} else if err != nil {
		return err
	}
	return nil
}

// releaseIP frees ip; freeing a free IP is not an error.
func (reg *Registry) releaseIP(ip string) {
	if ip == "" || ip == corev1.ClusterIPNone {
		return
	}
	key := ipAddressKey(ip)
	for {
		kv, err := reg.kv.Get(key)
		if err != nil {
			return
		}
		if _, err := reg.kv.Delete(key, kv.ModRevision); !errors.Is(err, store.ErrConflict) {
			return
		}
	}
}

// portRange is a nodePort range, "30000-32767".
type portRange struct {
	base, size int
	spec       string
}

func parsePortRange(s string) (*portRange, error) {
	lo, hi, ok := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || a < 1 || b > 65535 || b < a {
		return nil, fmt.Errorf("%q is not a port range like 30000-32767", s)
	}
	return &portRange{base: a, size: b - a + 1, spec: fmt.Sprintf("%d-%d", a, b)}, nil
}

func (r *portRange) errNotInRange() error {
	return fmt.Errorf("provided port is not in the valid range. The range of valid ports is %s", r.spec)
}

// updatePorts applies fn to the nodePort bitmap with compare-and-swap, and
// writes it unless dryRun.
func (reg *Registry) updatePorts(dryRun bool, fn func(bits *big.Int) error) error {
	r := reg.nodePorts
	for {
		ra := &corev1.RangeAllocation{}
		var rev int64
		kv, err := reg.kv.Get(nodePortsKey)
		switch {
		case err == nil:
			if err := json.Unmarshal(kv.Value, ra); err != nil {
				return err
			}
			rev = kv.ModRevision
		case errors.Is(err, store.ErrNotFound):
		default:
			return err
		}
		bits := new(big.Int).SetBytes(ra.Data)
		if err := fn(bits); err != nil {
			return err
		}
		if dryRun {
			return nil
		}
		ra.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "RangeAllocation"}
		ra.Range = r.spec
		ra.Data = bits.Bytes()
		data, err := json.Marshal(ra)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = reg.kv.Create(nodePortsKey, data)
			if errors.Is(err, store.ErrExists) {
				continue
			}
		} else {
			_, err = reg.kv.Update(nodePortsKey, data, rev)
			if errors.Is(err, store.ErrConflict) {
				continue
			}
		}
		return err
	}
}

// allocatePort reserves port (0 for any free one) and returns it.
func (reg *Registry) allocatePort(port int, dryRun bool) (int, error) {
	r := reg.nodePorts
	if port != 0 && (port < r.base || port >= r.base+r.size) {
		return 0, r.errNotInRange()
	}
	got := 0
	err := reg.updatePorts(dryRun, func(bits *big.Int) error {
		if port != 0 {
			if bits.Bit(port-r.base) == 1 {
				return errPortAllocated
			}
			bits.SetBit(bits, port-r.base, 1)
			got = port
			return nil
		}
		scan(r.size, staticBand(r.size, 32, 128), func(off int) bool {
			if bits.Bit(off) == 1 {
				return false
			}
			bits.SetBit(bits, off, 1)
			got = r.base + off
			return true
		})
		if got != 0 {
			return nil
		}
		return errRangeFull
	})
	return got, err
}

// releasePorts frees ports; ports outside the range are ignored.
func (reg *Registry) releasePorts(ports []int) {
	r := reg.nodePorts
	if len(ports) == 0 {
		return
	}
	_ = reg.updatePorts(false, func(bits *big.Int) error {
		for _, p := range ports {
			if p >= r.base && p < r.base+r.size {
				bits.SetBit(bits, p-r.base, 0)
			}
		}
		return nil
	})
}
