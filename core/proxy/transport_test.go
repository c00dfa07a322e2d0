package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/proxy"
)

// podNet is a small cluster network for Transport tests: kube-proxies by
// node address, and pods that echo what they received. (core/cluster tests
// the real one, with kubelets and guests.)
type podNet struct {
	proxiers map[netip.Addr]*proxy.Proxier
	// pods: address → name; a pod listens on listen[address] only.
	pods   map[netip.Addr]string
	listen map[netip.Addr]uint16
}

func (n *podNet) NodeProxier(ip netip.Addr) (*proxy.Proxier, bool) {
	p, ok := n.proxiers[ip]
	return p, ok
}

func (n *podNet) PodHTTPHandler(addr netip.AddrPort) (http.Handler, error) {
	name, ok := n.pods[addr.Addr()]
	if !netip.MustParsePrefix("10.244.0.0/16").Contains(addr.Addr()) {
		return nil, fmt.Errorf("%s is outside the cluster: %w", addr.Addr(), syscall.ENETUNREACH)
	}
	if !ok {
		return nil, fmt.Errorf("no pod at %s: %w", addr.Addr(), syscall.EHOSTUNREACH)
	}
	if n.listen[addr.Addr()] != addr.Port() {
		return nil, fmt.Errorf("nothing listens on %s: %w", addr, syscall.ECONNREFUSED)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Pod", name)
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprintf(w, "pod=%s remote=%s host=%s uri=%s method=%s ua=%s body=%q\n",
			name, strings.SplitN(r.RemoteAddr, ":", 2)[0], r.Host, r.RequestURI, r.Method, r.UserAgent(), body)
	}), nil
}

// names is a resolver with a fixed table.
type names map[string][]netip.Addr

func (n names) LookupNetIP(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// transportEnv is the Route fixtures, kube-proxies on node-1 and node-2,
// and pods at the fixtures' endpoint addresses.
func transportEnv(t *testing.T) (*env, *proxy.Transport, *podNet) {
	e := newEnv(t)
	e.fixtures(t)
	p1, p2 := e.proxier(t, 1, 11), e.proxier(t, 2, 12)
	for _, p := range []*proxy.Proxier{p1, p2} {
		eventually(t, "rules", func() bool { return len(p.ServicePorts()) == 6 })
	}
	n := &podNet{
		proxiers: map[netip.Addr]*proxy.Proxier{p1.NodeIP(): p1, p2.NodeIP(): p2},
		pods:     map[netip.Addr]string{},
		listen:   map[netip.Addr]uint16{},
	}
	for ip, name := range map[string]string{"10.244.1.2": "web-1", "10.244.2.2": "web-2", "10.244.3.2": "web-3", "10.244.2.4": "etp-1", "10.244.1.7": "quiet"} {
		n.pods[addr(ip)] = name
		n.listen[addr(ip)] = 8080
	}
	n.listen[addr("10.244.1.7")] = 9999
	tr := &proxy.Transport{
		Network: n, Node: p1, Clock: e.clk,
		Resolver: names{
			"web":   {addr("10.96.100.1")},
			"empty": {addr("10.96.100.2")},
			"two":   {addr("10.96.100.2"), addr("10.96.100.1")}, // the first refuses
		},
	}
	return e, tr, n
}

func get(t *testing.T, tr http.RoundTripper, ctx context.Context, method, url, body string) (*http.Response, string, error) {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rb)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "test/1")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b), nil
}

func TestTransportLoadBalances(t *testing.T) {
	e, tr, _ := transportEnv(t)
	counts := map[string]int{}
	for range 300 {
		resp, body, err := get(t, tr, e.ctx, "GET", "http://web/", "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		counts[resp.Header.Get("X-Pod")]++
		if !strings.Contains(body, "host=web uri=/ method=GET ua=test/1") {
			t.Fatalf("the pod saw %q", body)
		}
	}
	if len(counts) != 2 || counts["web-1"] == 0 || counts["web-2"] == 0 {
		t.Errorf("300 requests reached %v, want web-1 and web-2 (web-3 is not ready)", counts)
	}
}

func TestTransportRequestAndResponse(t *testing.T) {
	e, tr, _ := transportEnv(t)
	resp, body, err := get(t, tr, e.ctx, "POST", "http://10.244.1.2:8080/form?x=1", "a=b")
	if err != nil {
		t.Fatal(err)
	}
	if want := `pod=web-1 remote=172.18.0.2 host=10.244.1.2:8080 uri=/form?x=1 method=POST ua=test/1 body="a=b"` + "\n"; body != want {
		t.Errorf("body = %q\nwant   %q", body, want)
	}
	for k, want := range map[string]string{
		"Content-Length": fmt.Sprint(len(body)),
		"Content-Type":   "text/plain; charset=utf-8",
		"Date":           t0.Format(http.TimeFormat),
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if resp.Proto != "HTTP/1.1" || resp.Status != "200 OK" {
		t.Errorf("status line %s %s", resp.Proto, resp.Status)
	}

	resp, body, err = get(t, tr, e.ctx, "HEAD", "http://10.244.1.2:8080/", "")
	if err != nil || body != "" || resp.Header.Get("Content-Length") == "0" {
		t.Errorf("HEAD: err %v, body %q, Content-Length %q", err, body, resp.Header.Get("Content-Length"))
	}
	resp, _, err = get(t, tr, e.ctx, "GET", "http://10.244.1.2:8080/missing", "")
	if err != nil || resp.StatusCode != 404 || resp.Status != "404 Not Found" {
		t.Errorf("an HTTP error is a response: %v %v", resp, err)
	}
}

// TestTransportNodePort: a client on node-1 reaching node-2's NodePort goes
// through node-2's rules, which masquerade it to node-2's address.
func TestTransportNodePort(t *testing.T) {
	e, tr, _ := transportEnv(t)
	var hops []proxy.Hop
	ctx := proxy.WithHops(e.ctx, func(h proxy.Hop) { hops = append(hops, h) })
	_, body, err := get(t, tr, ctx, "GET", "http://"+nodeIP(2)+":30080/", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "remote="+nodeIP(2)+" ") {
		t.Errorf("the pod saw %q, want the client masqueraded to node-2's address", body)
	}
	if len(hops) != 3 || hops[0].Node != "node-1" || hops[0].Decision.Verdict != proxy.Accept ||
		hops[1].Node != "node-2" || hops[1].Decision.Verdict != proxy.DNAT || hops[2].To != hops[1].To {
		t.Errorf("hops = %+v", hops)
	}

	// externalTrafficPolicy Local from another node: node-1 has no local
	// endpoint, so the connection is dropped there; on node-2 it arrives
	// with the client's own address.
	_, body, err = get(t, tr, e.ctx, "GET", "http://"+nodeIP(2)+":30084/", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "pod=etp-1 remote="+nodeIP(1)+" ") {
		t.Errorf("Local NodePort: the pod saw %q, want the client's own address", body)
	}
}

func TestTransportErrors(t *testing.T) {
	e, tr, _ := transportEnv(t)
	cases := []struct {
		name, url string
		errno     syscall.Errno // 0: a DNS error
		msg       string
	}{
		{"unknown name", "http://nope/", 0, "lookup nope: no such host"},
		{"no endpoints", "http://empty/", syscall.ECONNREFUSED, "dial tcp 10.96.100.2:80: connect: " + syscall.ECONNREFUSED.Error()},
		{"a ClusterIP's missing port", "http://10.96.100.1:81/", syscall.ECONNREFUSED, ""},
		{"nobody at the pod address", "http://10.244.1.99:8080/", syscall.EHOSTUNREACH, "dial tcp 10.244.1.99:8080: connect: " + syscall.EHOSTUNREACH.Error()},
		{"nothing listening", "http://10.244.1.7:8080/", syscall.ECONNREFUSED, ""},
		{"a node port nobody serves", "http://" + nodeIP(2) + ":10250/", syscall.ECONNREFUSED, ""},
		{"loopback", "http://127.0.0.1:8080/", syscall.ECONNREFUSED, ""},
		{"the Internet", "http://192.0.2.80/", syscall.ENETUNREACH, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := get(t, tr, e.ctx, "GET", tc.url, "")
			if err == nil {
				t.Fatal("no error")
			}
			if tc.errno == 0 {
				var dnsErr *net.DNSError
				if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
					t.Errorf("err = %v, want a not-found DNS error", err)
				}
			} else {
				var op *net.OpError
				if !errors.Is(err, tc.errno) || !errors.As(err, &op) {
					t.Errorf("err = %v (%T), want a *net.OpError with %v", err, err, tc.errno)
				}
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("err = %q, want %q", err, tc.msg)
			}
		})
	}

	// Of several addresses, the first that connects serves.
	if _, body, err := get(t, tr, e.ctx, "GET", "http://two/", ""); err != nil || !strings.HasPrefix(body, "pod=web-") {
		t.Errorf("two addresses: %q %v", body, err)
	}
	// Only plain HTTP.
	if _, _, err := get(t, tr, e.ctx, "GET", "https://web/", ""); err == nil || !strings.Contains(err.Error(), "unsupported protocol scheme") {
		t.Errorf("https: %v", err)
	}
}

// TestTransportDrop: a dropped connection hangs until the connect timeout
// (on the clock) or the request's context ends.
func TestTransportDrop(t *testing.T) {
	e, tr, _ := transportEnv(t)
	tr.ConnectTimeout = 5 * time.Second
	errc := make(chan error, 1)
	go func() {
		_, _, err := get(t, tr, e.ctx, "GET", "http://10.96.200.200/", "") // unallocated: dropped
		errc <- err
	}()
	eventually(t, "the client waiting", e.clk.HasWaiters)
	select {
	case err := <-errc:
		t.Fatalf("returned before its timeout: %v", err)
	default:
	}
	e.clk.Step(5 * time.Second)
	if err := <-errc; !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("err = %v, want ETIMEDOUT", err)
	}

	ctx, cancel := context.WithCancel(e.ctx)
	go func() {
		_, _, err := get(t, tr, ctx, "GET", "http://10.96.100.3/", "") // internal Local, none on node-1
		errc <- err
	}()
	eventually(t, "the client waiting", e.clk.HasWaiters)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
