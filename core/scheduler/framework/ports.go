package framework

import v1 "k8s.io/api/core/v1"

// DefaultBindAllHostIP is the host IP a hostPort binds when hostIP is empty.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and a port number.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo holds the host ports the pods of a node use, by host IP
// (upstream: framework.HostPortInfo):
//
//	{"0.0.0.0": {TCP/80}, "10.0.0.1": {UDP/53}}
//
// A port bound on 0.0.0.0 takes that port on every IP of the node.
type HostPortInfo map[string]map[ProtocolPort]struct{}

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return ip, protocol
}

// Add records a used port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if _, ok := h[ip]; !ok {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{Protocol: protocol, Port: port}] = struct{}{}
}

// Remove forgets a used port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if m, ok := h[ip]; ok {
		delete(m, ProtocolPort{Protocol: protocol, Port: port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// Len counts the used ports.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += len(m)
	}
	return n
}

// CheckConflict reports whether binding the port would collide with a used
// one: the same protocol and port on the same IP, or either side on 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{Protocol: protocol, Port: port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{DefaultBindAllHostIP, ip} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

// Clone returns a deep copy.
func (h HostPortInfo) Clone() HostPortInfo {
	if h == nil {
		return nil
	}
	out := make(HostPortInfo, len(h))
	for ip, m := range h {
		c := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			c[k] = struct{}{}
		}
		out[ip] = c
	}
	return out
}

// HostPorts lists the container ports of a pod that claim a port on the
// node (hostPort set), sidecars included (upstream: util.GetHostPorts).
func HostPorts(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	add := func(cs []v1.Container, sidecarsOnly bool) {
		for i := range cs {
			c := &cs[i]
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, p := range c.Ports {
				if p.HostPort > 0 {
					out = append(out, p)
				}
			}
		}
	}
	add(pod.Spec.Containers, false)
	add(pod.Spec.InitContainers, true)
	return out
}
