package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

func TestResolvConf(t *testing.T) {
	two := "2"
	for _, tt := range []struct {
		name string
		mod  func(*corev1.Pod)
		want string
	}{
		{"ClusterFirst", func(*corev1.Pod) {},
			"search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{"ClusterFirst with dnsConfig", func(p *corev1.Pod) {
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}, Searches: []string{"example.com"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "edns0"}}}
		}, "search ns1.svc.cluster.local svc.cluster.local cluster.local example.com\nnameserver 10.96.0.10\nnameserver 1.2.3.4\noptions ndots:2 edns0\n"},
		{"None", func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}}
		}, "nameserver 1.2.3.4\n"},
		{"Default", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pod("p", tt.mod)
			p.Namespace = "ns1"
			if got := string(resolvConf(p)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHostsFile(t *testing.T) {
	p := pod("web-1", func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db"
		p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}}
	})
	got := string(hostsFile(p, podHostname(p), "10.244.1.7"))
	for _, want := range []string{
		"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n",
		"\n10.244.1.7\tdb-0.db.default.svc.cluster.local\tdb-0\n",
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts file:\n%s\nwant it to contain %q", got, want)
		}
	}
}

// TestContainerRootFiles: a running container's /etc/hostname, /etc/hosts
// and /etc/resolv.conf, as the kubelet placed them, and its termination log.
func TestContainerRootFiles(t *testing.T) {
	n := newTestNode(t)
	created := n.create(t, pod("files"))
	p := n.waitPod(t, "files", "Running", isRunningReady)
	running := cri.ContainerRunning
	cs := n.rt.ListContainers(cri.ContainerFilter{PodUID: string(created.UID), State: &running})
	if len(cs) != 1 {
		t.Fatalf("containers: %+v", cs)
	}
	read := func(path string) string {
		b, err := n.rt.ReadFile(cs[0].ID, path, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return string(b)
	}
	if got := read("/etc/hostname"); got != "files\n" {
		t.Errorf("/etc/hostname = %q", got)
	}
	if got := read("/etc/hosts"); !strings.HasSuffix(got, "\n"+p.Status.PodIP+"\tfiles\n") {
		t.Errorf("/etc/hosts = %q, want the pod's address %s last", got, p.Status.PodIP)
	}
	if got := read("/etc/resolv.conf"); !strings.HasPrefix(got, "search default.svc.cluster.local ") {
		t.Errorf("/etc/resolv.conf = %q", got)
	}
	if got := read(corev1.TerminationMessagePathDefault); got != "" {
		t.Errorf("termination log = %q, want an empty file", got)
	}
}
