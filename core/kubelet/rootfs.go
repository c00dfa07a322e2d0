package kubelet

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// The files the kubelet places in every container's root (upstream:
// kubelet_pods.go makeMounts, which bind-mounts a managed hosts file, and
// pkg/kubelet/network/dns, whose resolv.conf the runtime writes from the
// sandbox config):
//
//	/etc/hostname         the pod's hostname (spec.hostname, else its name)
//	/etc/hosts            localhost, the pod's own address and name, hostAliases
//	/etc/resolv.conf      the cluster DNS and the search path, by dnsPolicy
//	terminationMessagePath  an empty file the container may write its last words to

// The cluster DNS a ClusterFirst pod uses: kubeadm's defaults for the
// kubelet's --cluster-dns and --cluster-domain. core/dns serves them.
const (
	clusterDNS    = "10.96.0.10"
	clusterDomain = "cluster.local"
)

// containerFiles is what the kubelet places in container c of pod.
func (kl *Kubelet) containerFiles(pod *corev1.Pod, c *corev1.Container, podIP string) []cri.File {
	hostname := podHostname(pod)
	files := []cri.File{
		{Path: "/etc/hostname", Data: []byte(hostname + "\n")},
		{Path: "/etc/hosts", Data: hostsFile(pod, hostname, podIP)},
		{Path: "/etc/resolv.conf", Data: resolvConf(pod)},
	}
	if p := c.TerminationMessagePath; p != "" && path.IsAbs(p) {
		files = append(files, cri.File{Path: path.Clean(p), Mode: 0o666})
	}
	return files
}

// podHostname is spec.hostname, or the pod's name (upstream:
// GeneratePodHostNameAndDomain, which also truncates to 63 characters).
func podHostname(pod *corev1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}

// hostsFile is upstream's managed hosts file (managedHostsFileContent).
func hostsFile(pod *corev1.Pod, hostname, podIP string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if podIP != "" {
		if pod.Spec.Subdomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", podIP, hostname, pod.Spec.Subdomain, pod.Namespace, clusterDomain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", podIP, hostname)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return []byte(b.String())
}

// resolvConf is the pod's /etc/resolv.conf by its dnsPolicy and dnsConfig
// (upstream: Configurer.GetPodDNS). ClusterFirst (the default) names the
// cluster DNS with the namespace's search path; Default is the node's
// resolv.conf, and a kubetab node has no upstream resolvers; None is
// dnsConfig alone. dnsConfig's nameservers and searches are added, its
// options override by name.
func resolvConf(pod *corev1.Pod) []byte {
	var servers, searches []string
	opts := map[string]string{}
	var order []string
	setOpt := func(name, value string) {
		if _, ok := opts[name]; !ok {
			order = append(order, name)
		}
		opts[name] = value
	}
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone, corev1.DNSDefault:
	default: // ClusterFirst, and ClusterFirstWithHostNet (kubetab pods have no host network)
		servers = []string{clusterDNS}
		searches = []string{pod.Namespace + ".svc." + clusterDomain, "svc." + clusterDomain, clusterDomain}
		setOpt("ndots", "5")
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		servers = append(servers, dc.Nameservers...)
		searches = append(searches, dc.Searches...)
		for _, o := range dc.Options {
			v := ""
			if o.Value != nil {
				v = *o.Value
			}
			setOpt(o.Name, v)
		}
	}
	var b strings.Builder
	if len(searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(searches, " "))
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(order) > 0 {
		parts := make([]string, len(order))
		for i, name := range order {
			parts[i] = name
			if opts[name] != "" {
				parts[i] += ":" + opts[name]
			}
		}
		fmt.Fprintf(&b, "options %s\n", strings.Join(parts, " "))
	}
	return []byte(b.String())
}
