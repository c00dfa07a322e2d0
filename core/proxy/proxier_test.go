package proxy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/proxy"
	"github.com/kubetab/kubetab/core/store"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// env is a real registry and store, with Services and EndpointSlices written
// straight to the API (no endpoints controller), and kube-proxies watching
// them.
type env struct {
	c   *client.Client
	clk *testingclock.FakeClock
	ctx context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(reg, "test")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, ns := range []string{"default", "other"} {
		if _, err := c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	return &env{c: c, clk: clk, ctx: ctx}
}

// nodeIP is node-N's address, as core/cluster numbers them.
func nodeIP(n int) string { return fmt.Sprintf("172.18.0.%d", n+1) }

// proxier runs node-N's kube-proxy and waits for its first sync.
func (e *env) proxier(t testing.TB, n int, seed uint64) *proxy.Proxier {
	t.Helper()
	p, err := proxy.New(proxy.Config{
		Client: e.c, NodeName: fmt.Sprintf("node-%d", n), NodeIP: nodeIP(n),
		ClusterCIDR: "10.244.0.0/16", Clock: e.clk, Rand: rand.New(rand.NewPCG(seed, seed)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "kube-proxy synced", p.HasSynced)
	return p
}

// eventually waits for cond, up to a deadline: the informers deliver in
// their own goroutines.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// svc builds a Service fixture.
type svc struct{ s *corev1.Service }

func makeService(name, clusterIP string) *svc {
	return &svc{&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}}
}

func (s *svc) nodePort(port int32) *svc {
	s.s.Spec.Type = corev1.ServiceTypeNodePort
	s.s.Spec.Ports[0].NodePort = port
	return s
}

func (s *svc) externalLocal() *svc {
	s.s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	return s
}

func (s *svc) internalLocal() *svc {
	p := corev1.ServiceInternalTrafficPolicyLocal
	s.s.Spec.InternalTrafficPolicy = &p
	return s
}

func (s *svc) clientIP(timeout int32) *svc {
	s.s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	s.s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	return s
}

func (s *svc) obj() *corev1.Service { return s.s }

// ep is an endpoint fixture: "10.244.1.2@node-1", with conditions.
type ep struct {
	ip, node                    string
	ready, serving, terminating bool
}

func ready(ip, node string) ep { return ep{ip: ip, node: node, ready: true, serving: true} }

func slice(service, name string, port int32, eps ...ep) *discoveryv1.EndpointSlice {
	pname, proto := "http", corev1.ProtocolTCP
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &pname, Port: &port, Protocol: &proto}},
	}
	for _, e := range eps {
		r, s, term, node := e.ready, e.serving, e.terminating, e.node
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &r, Serving: &s, Terminating: &term},
			NodeName:   &node,
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod-" + strings.ReplaceAll(e.ip, ".", "-")},
		})
	}
	return es
}

func (e *env) create(t testing.TB, objs ...any) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Service:
			_, err = client.For[*corev1.Service](e.c, "", "services").Create(e.ctx, o)
		case *discoveryv1.EndpointSlice:
			_, err = client.For[*discoveryv1.EndpointSlice](e.c, discoveryv1.GroupName, "endpointslices").Create(e.ctx, o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func addrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func addr(s string) netip.Addr         { return netip.MustParseAddr(s) }

// fixtures creates the Services every Route case uses.
func (e *env) fixtures(t *testing.T) {
	e.create(t,
		// web: two ready endpoints on node-1 and node-2, one not ready.
		makeService("web", "10.96.100.1").nodePort(30080).obj(),
		slice("web", "web-a", 8080, ready("10.244.1.2", "node-1"), ready("10.244.2.2", "node-2")),
		slice("web", "web-b", 8080, ep{ip: "10.244.3.2", node: "node-3"}),
		// empty: no endpoints at all.
		makeService("empty", "10.96.100.2").nodePort(30081).obj(),
		slice("empty", "empty-a", 8080),
		// local: internalTrafficPolicy Local, its only endpoint on node-2.
		makeService("local", "10.96.100.3").internalLocal().obj(),
		slice("local", "local-a", 8080, ready("10.244.2.3", "node-2")),
		// etp: a NodePort with externalTrafficPolicy Local, its endpoint on node-2.
		makeService("etp", "10.96.100.4").nodePort(30084).externalLocal().obj(),
		slice("etp", "etp-a", 8080, ready("10.244.2.4", "node-2")),
		// draining: its only pod is terminating but still serving.
		makeService("draining", "10.96.100.5").obj(),
		slice("draining", "draining-a", 8080, ep{ip: "10.244.1.5", node: "node-1", serving: true, terminating: true}),
		// gone: terminating and no longer serving: nothing usable.
		makeService("gone", "10.96.100.6").obj(),
		slice("gone", "gone-a", 8080, ep{ip: "10.244.1.6", node: "node-1", terminating: true}),
		// headless: no rules at all.
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "h"},
				Ports: []corev1.ServicePort{{Port: 80}}}},
	)
}

func TestRoute(t *testing.T) {
	e := newEnv(t)
	e.fixtures(t)
	nodes := map[int]*proxy.Proxier{1: e.proxier(t, 1, 1), 2: e.proxier(t, 2, 2)}
	for _, p := range nodes {
		eventually(t, "rules for every fixture", func() bool { return len(p.ServicePorts()) == 6 })
	}
	pod := addr("10.244.1.9")    // a client pod on node-1
	host := addr(nodeIP(1))      // a client on node-1's host network
	outside := addr("192.0.2.7") // a client outside the cluster

	cases := []struct {
		name       string
		node       int
		src        netip.Addr
		dst        string
		verdict    proxy.Verdict
		endpoints  []string // DNAT: the endpoint is one of these
		masquerade bool
		reason     string
	}{
		{"ClusterIP from a pod", 1, pod, "10.96.100.1:80", proxy.DNAT, []string{"10.244.1.2:8080", "10.244.2.2:8080"}, false, "service default/web:http ClusterIP"},
		{"ClusterIP from the node is masqueraded", 1, host, "10.96.100.1:80", proxy.DNAT, []string{"10.244.1.2:8080", "10.244.2.2:8080"}, true, ""},
		{"a port the ClusterIP lacks", 1, pod, "10.96.100.1:81", proxy.Reject, nil, false, "Reject traffic to invalid ports of ClusterIPs"},
		{"an unallocated ClusterIP", 1, pod, "10.96.200.200:80", proxy.Drop, nil, false, "Drop traffic to unallocated ClusterIPs"},
		{"no endpoints", 1, pod, "10.96.100.2:80", proxy.Reject, nil, false, "service default/empty:http has no endpoints"},
		{"no endpoints, NodePort", 1, outside, nodeIP(1) + ":30081", proxy.Reject, nil, false, "service default/empty:http has no endpoints"},
		{"internal Local, none on this node", 1, pod, "10.96.100.3:80", proxy.Drop, nil, false, "service default/local:http has no local endpoints"},
		{"internal Local, one on this node", 2, pod, "10.96.100.3:80", proxy.DNAT, []string{"10.244.2.3:8080"}, false, ""},
		{"NodePort on this node", 1, outside, nodeIP(1) + ":30080", proxy.DNAT, []string{"10.244.1.2:8080", "10.244.2.2:8080"}, true, "service default/web:http NodePort"},
		{"NodePort of another node is not ours", 1, outside, nodeIP(2) + ":30080", proxy.Accept, nil, false, ""},
		{"external Local, none on this node", 1, outside, nodeIP(1) + ":30084", proxy.Drop, nil, false, "service default/etp:http has no local endpoints"},
		{"external Local keeps the client's address", 2, outside, nodeIP(2) + ":30084", proxy.DNAT, []string{"10.244.2.4:8080"}, false, ""},
		{"external Local, a pod short-circuits", 1, pod, nodeIP(1) + ":30084", proxy.DNAT, []string{"10.244.2.4:8080"}, false, ""},
		{"external Local, the node itself", 1, host, nodeIP(1) + ":30084", proxy.DNAT, []string{"10.244.2.4:8080"}, true, ""},
		{"only a serving terminating endpoint", 1, pod, "10.96.100.5:80", proxy.DNAT, []string{"10.244.1.5:8080"}, false, ""},
		{"terminating, not serving", 1, pod, "10.96.100.6:80", proxy.Reject, nil, false, "service default/gone:http has no endpoints"},
		{"a pod address", 1, pod, "10.244.2.2:8080", proxy.Accept, nil, false, ""},
		{"a node address", 1, pod, nodeIP(2) + ":10250", proxy.Accept, nil, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := nodes[tc.node].Route(tc.src, addrPort(tc.dst), "")
			if d.Verdict != tc.verdict {
				t.Fatalf("verdict = %v (%s), want %v", d.Verdict, d.Reason, tc.verdict)
			}
			if tc.reason != "" && d.Reason != tc.reason {
				t.Errorf("reason = %q, want %q", d.Reason, tc.reason)
			}
			if d.Masquerade != tc.masquerade {
				t.Errorf("masquerade = %v, want %v", d.Masquerade, tc.masquerade)
			}
			if tc.verdict != proxy.DNAT {
				return
			}
			// Every pick, over many connections, is a usable endpoint, and
			// every usable endpoint gets picked.
			seen := map[string]int{}
			for range 300 {
				seen[nodes[tc.node].Route(tc.src, addrPort(tc.dst), "").Endpoint.String()]++
			}
			for got := range seen {
				if !contains(tc.endpoints, got) {
					t.Errorf("DNAT to %s, want one of %v", got, tc.endpoints)
				}
			}
			for _, want := range tc.endpoints {
				if seen[want] == 0 {
					t.Errorf("%s never chosen in 300 connections: %v", want, seen)
				}
			}
		})
	}

	// Headless Services get no rules; UDP is not TCP.
	for _, sp := range nodes[1].ServicePorts() {
		if sp.Name.Name == "headless" {
			t.Errorf("headless Service has rules: %+v", sp)
		}
	}
	if d := nodes[1].Route(pod, addrPort("10.96.100.1:80"), corev1.ProtocolUDP); d.Verdict != proxy.Reject {
		t.Errorf("UDP to a TCP-only ClusterIP: %v, want reject", d.Verdict)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestRulesFollowTheAPI: a slice change, a Service update and a deletion
// reach the rules without a restart.
func TestRulesFollowTheAPI(t *testing.T) {
	e := newEnv(t)
	e.create(t, makeService("web", "10.96.100.1").obj(), slice("web", "web-a", 8080, ready("10.244.1.2", "node-1")))
	p := e.proxier(t, 1, 1)
	pod := addr("10.244.1.9")
	endpointsOf := func() []string {
		var out []string
		for _, sp := range p.ServicePorts() {
			for _, u := range sp.Usable {
				out = append(out, u.String())
			}
		}
		return out
	}
	eventually(t, "the first endpoint", func() bool { return fmt.Sprint(endpointsOf()) == "[10.244.1.2:8080]" })

	slices := client.For[*discoveryv1.EndpointSlice](e.c, discoveryv1.GroupName, "endpointslices")
	// A second pod becomes ready; then the first one stops being ready.
	es, err := slices.Get(e.ctx, "default", "web-a")
	if err != nil {
		t.Fatal(err)
	}
	es = es.DeepCopy()
	es.Endpoints = slice("web", "x", 8080, ready("10.244.1.2", "node-1"), ready("10.244.2.2", "node-2")).Endpoints
	if es, err = slices.Update(e.ctx, es); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two endpoints", func() bool { return fmt.Sprint(endpointsOf()) == "[10.244.1.2:8080 10.244.2.2:8080]" })
	es = es.DeepCopy()
	notReady := false
	es.Endpoints[0].Conditions.Ready = &notReady
	es.Endpoints[0].Conditions.Serving = &notReady
	if _, err = slices.Update(e.ctx, es); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the not-ready endpoint out of rotation", func() bool { return fmt.Sprint(endpointsOf()) == "[10.244.2.2:8080]" })
	for range 100 {
		if d := p.Route(pod, addrPort("10.96.100.1:80"), ""); d.Endpoint != addrPort("10.244.2.2:8080") {
			t.Fatalf("DNAT to %v after 10.244.1.2 stopped being ready", d.Endpoint)
		}
	}

	// The Service's port changes: the old port is rejected, the new one works.
	services := client.For[*corev1.Service](e.c, "", "services")
	s, err := services.Get(e.ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	s = s.DeepCopy()
	s.Spec.Ports[0].Port = 8000
	if _, err := services.Update(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new port", func() bool { return p.Route(pod, addrPort("10.96.100.1:8000"), "").Verdict == proxy.DNAT })
	if d := p.Route(pod, addrPort("10.96.100.1:80"), ""); d.Verdict != proxy.Reject {
		t.Errorf("old port: %v, want reject", d.Verdict)
	}

	// Deleted: the address is unallocated again.
	if err := services.Delete(e.ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no rules", func() bool { return len(p.ServicePorts()) == 0 })
	if d := p.Route(pod, addrPort("10.96.100.1:8000"), ""); d.Verdict != proxy.Drop {
		t.Errorf("deleted Service's address: %v, want drop", d.Verdict)
	}
}

// TestSessionAffinity: ClientIP pins each client to one endpoint until the
// timeout passes without a connection, or the endpoint goes away.
func TestSessionAffinity(t *testing.T) {
	e := newEnv(t)
	e.create(t, makeService("sticky", "10.96.100.7").clientIP(60).obj(),
		slice("sticky", "sticky-a", 8080, ready("10.244.1.2", "node-1"), ready("10.244.2.2", "node-2"), ready("10.244.3.2", "node-3")))
	p := e.proxier(t, 1, 7)
	eventually(t, "rules", func() bool { return len(p.ServicePorts()) == 1 })
	vip := addrPort("10.96.100.7:80")

	clients := map[netip.Addr]netip.AddrPort{}
	spread := map[netip.AddrPort]bool{}
	for i := range 30 {
		c := netip.AddrFrom4([4]byte{10, 244, 1, byte(10 + i)})
		first := p.Route(c, vip, "").Endpoint
		clients[c] = first
		spread[first] = true
		for range 20 {
			if got := p.Route(c, vip, "").Endpoint; got != first {
				t.Fatalf("client %s moved from %s to %s within the timeout", c, first, got)
			}
		}
	}
	if len(spread) < 2 {
		t.Errorf("30 clients all pinned to the same endpoint: %v", spread)
	}

	// Each connection refreshes the timeout: 59 s later it still holds.
	c := netip.AddrFrom4([4]byte{10, 244, 1, 10})
	e.clk.Step(59 * time.Second)
	if got := p.Route(c, vip, ""); got.Endpoint != clients[c] {
		t.Errorf("after 59 s: %s, want %s", got.Endpoint, clients[c])
	}
	e.clk.Step(59 * time.Second)
	if got := p.Route(c, vip, ""); got.Endpoint != clients[c] {
		t.Errorf("59 s after the last connection: %s, want %s", got.Endpoint, clients[c])
	}
	// After the timeout the client is chosen for afresh: over many idle
	// periods it lands elsewhere at least once.
	moved := false
	for range 30 {
		e.clk.Step(61 * time.Second)
		if p.Route(c, vip, "").Endpoint != clients[c] {
			moved = true
			break
		}
	}
	if !moved {
		t.Errorf("client %s never re-balanced after its affinity expired", c)
	}
}

func TestNewValidates(t *testing.T) {
	e := newEnv(t)
	for _, cfg := range []proxy.Config{
		{NodeName: "n", NodeIP: "172.18.0.2"},
		{Client: e.c, NodeIP: "172.18.0.2"},
		{Client: e.c, NodeName: "n", NodeIP: "not-an-ip"},
		{Client: e.c, NodeName: "n", NodeIP: "fd00::1"},
		{Client: e.c, NodeName: "n", NodeIP: "172.18.0.2", ClusterCIDR: "10.244.0.0"},
	} {
		if _, err := proxy.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// BenchmarkRoute is the rules' cost per new connection to a ClusterIP
// (a map lookup and a random pick, under the Proxier's lock).
func BenchmarkRoute(b *testing.B) {
	e := newEnv(b)
	e.create(b, makeService("web", "10.96.100.1").obj(),
		slice("web", "web-a", 8080, ready("10.244.1.2", "node-1"), ready("10.244.2.2", "node-2"), ready("10.244.3.2", "node-3")))
	p := e.proxier(b, 1, 1)
	eventually(b, "rules", func() bool { return len(p.ServicePorts()) == 1 })
	src, dst := addr("10.244.1.9"), addrPort("10.96.100.1:80")
	b.ResetTimer()
	for range b.N {
		if p.Route(src, dst, "").Verdict != proxy.DNAT {
			b.Fatal("not DNAT")
		}
	}
}
