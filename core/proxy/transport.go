package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Network is the rest of the cluster network as a Transport needs it: the
// nodes' kube-proxies, and the pods behind their addresses. core/cluster
// implements it.
type Network interface {
	// NodeProxier returns the kube-proxy of the node whose address is ip.
	NodeProxier(ip netip.Addr) (*Proxier, bool)
	// PodHTTPHandler returns the server listening on a pod address, reached
	// through the node that holds the address (kubelet.PodHTTPHandler). The
	// error wraps ErrHostUnreachable when no pod holds the address (or no
	// node routes it) and ErrConnectionRefused when nothing listens on the
	// port.
	PodHTTPHandler(addr netip.AddrPort) (http.Handler, error)
}

// Resolver resolves host names to addresses: a pod's stub resolver over the
// cluster DNS (core/dns). Errors are *net.DNSError, as Go's resolver returns.
type Resolver interface {
	LookupNetIP(ctx context.Context, host string) ([]netip.Addr, error)
}

// The connection failures a Transport reports, wrapped in a *net.OpError as
// Go's dialer wraps them, so errors.Is(err, syscall.ECONNREFUSED) works as it
// does against a real network.
var (
	// ErrConnectionRefused: a Service with no endpoints (REJECT), or a pod
	// with nothing listening on the port.
	ErrConnectionRefused error = syscall.ECONNREFUSED
	// ErrHostUnreachable: no pod or node holds the address.
	ErrHostUnreachable error = syscall.EHOSTUNREACH
	// ErrNetworkUnreachable: an address outside the cluster; a tab has no
	// Internet to route it to.
	ErrNetworkUnreachable error = syscall.ENETUNREACH
	// ErrTimedOut: the rules dropped the connection and the client gave up.
	ErrTimedOut error = syscall.ETIMEDOUT
)

// DefaultConnectTimeout is how long a connection whose packets are dropped
// waits before ETIMEDOUT: Linux's SYN retries (tcp_syn_retries = 6) give up
// after 1+2+4+8+16+32+64 = 127 s.
const DefaultConnectTimeout = 127 * time.Second

// Hop is one step a request took through the network, for the UI's trace
// and for tests: "node-1 kube-proxy: 10.96.5.5:80 → dnat 10.244.2.2:8080".
type Hop struct {
	// Node is the node whose rules decided ("" for delivery to a pod).
	Node     string
	Decision Decision
	// From and To are the destination before and after this hop.
	From, To netip.AddrPort
}

type hopsKey struct{}

// WithHops returns a context whose requests through a Transport report
// every hop to f, in order.
func WithHops(ctx context.Context, f func(Hop)) context.Context {
	return context.WithValue(ctx, hopsKey{}, f)
}

// Transport is an http.RoundTripper over the cluster network, from a client
// on one node. Each request is one new connection: it is resolved, routed
// through the kube-proxy rules of the client's node (and of the node a
// NodePort names), and served by the container listening on the final pod
// address. There is no keep-alive: every request gets a fresh endpoint
// choice, as `curl` in a loop does.
type Transport struct {
	// Network is the cluster network. Required.
	Network Network
	// Node is the kube-proxy of the node the client runs on: its rules see
	// every connection first (nftables' output hook). Required.
	Node *Proxier
	// SourceIP is the client's address: a pod's IP, or the node's for a
	// client on the host network (the zero value).
	SourceIP netip.Addr
	// Resolver resolves host names; nil resolves IP literals only.
	Resolver Resolver
	// Clock times dropped connections out. Nil means the real clock.
	Clock clock.Clock
	// ConnectTimeout bounds a connection the rules drop; 0 means
	// DefaultConnectTimeout. A request's context can end it sooner.
	ConnectTimeout time.Duration

	ports atomic.Uint32 // ephemeral source ports handed out
}

var _ http.RoundTripper = (*Transport)(nil)

// RoundTrip sends one request. It follows the http.RoundTripper contract:
// it closes the request body, and it returns an error only when no response
// came (the host did not resolve, the connection failed); an HTTP error
// status is a response. Supported schemes: http.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err != nil && req.Body != nil {
		req.Body.Close()
	}
	return resp, err
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	if t.Network == nil || t.Node == nil {
		return nil, errors.New("proxy: Transport needs a Network and a Node")
	}
	if req.URL == nil {
		return nil, errors.New("proxy: request has no URL")
	}
	if req.URL.Scheme != "http" {
		return nil, fmt.Errorf("proxy: unsupported protocol scheme %q", req.URL.Scheme)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	host := req.URL.Hostname()
	if host == "" {
		return nil, errors.New("proxy: no Host in request URL")
	}
	port := uint16(80)
	if ps := req.URL.Port(); ps != "" {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("proxy: invalid port %q", ps)
		}
		port = uint16(n)
	}

	addrs, err := t.resolve(ctx, host, trace)
	if err != nil {
		return nil, err
	}
	// Like curl and Go's dialer, try each address in turn until one
	// connects.
	var firstErr error
	for _, a := range addrs {
		dst := netip.AddrPortFrom(a, port)
		if trace != nil && trace.ConnectStart != nil {
			trace.ConnectStart("tcp", dst.String())
		}
		h, src, err := t.connect(ctx, dst)
		if trace != nil && trace.ConnectDone != nil {
			trace.ConnectDone("tcp", dst.String(), err)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return t.serve(req, h, src)
	}
	return nil, firstErr
}

// resolve returns the addresses of host: itself for an IP literal, else
// the resolver's answer.
func (t *Transport) resolve(ctx context.Context, host string, trace *httptrace.ClientTrace) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if trace != nil && trace.DNSStart != nil {
		trace.DNSStart(httptrace.DNSStartInfo{Host: host})
	}
	var addrs []netip.Addr
	err := error(&net.DNSError{Err: "no such host", Name: host, IsNotFound: true})
	if t.Resolver != nil {
		addrs, err = t.Resolver.LookupNetIP(ctx, host)
	}
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if trace != nil && trace.DNSDone != nil {
		info := httptrace.DNSDoneInfo{Err: err}
		for _, a := range addrs {
			info.Addrs = append(info.Addrs, net.IPAddr{IP: a.AsSlice()})
		}
		trace.DNSDone(info)
	}
	return addrs, err
}

// connect follows a new connection to dst through the rules and returns the
// server that accepts it and the source address it sees.
func (t *Transport) connect(ctx context.Context, dst netip.AddrPort) (http.Handler, netip.Addr, error) {
	hops, _ := ctx.Value(hopsKey{}).(func(Hop))
	src := t.SourceIP
	if !src.IsValid() {
		src = t.Node.NodeIP()
	}
	orig := dst
	fail := func(errno error) (http.Handler, netip.Addr, error) {
		return nil, src, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(orig), Err: os.NewSyscallError("connect", errno)}
	}
	// at runs a node's rules on the connection and applies the decision.
	at := func(p *Proxier) (Verdict, error) {
		d := p.Route(src, dst, corev1.ProtocolTCP)
		from := dst
		switch d.Verdict {
		case DNAT:
			dst = d.Endpoint
			if d.Masquerade {
				src = p.NodeIP()
			}
		}
		if hops != nil {
			hops(Hop{Node: p.NodeName(), Decision: d, From: from, To: dst})
		}
		switch d.Verdict {
		case Reject:
			return d.Verdict, ErrConnectionRefused
		case Drop:
			return d.Verdict, t.waitDropped(ctx)
		}
		return d.Verdict, nil
	}

	// The client's own node first: Service IPs, and NodePorts of its own
	// address.
	if _, err := at(t.Node); err != nil {
		return fail(err)
	}
	// A node address: that node's rules (its NodePorts). What is left
	// addressed to a node finds nothing listening: kubetab's nodes serve no
	// ports of their own to pods.
	if p, ok := t.Network.NodeProxier(dst.Addr()); ok {
		if p != t.Node {
			if _, err := at(p); err != nil {
				return fail(err)
			}
		}
		if _, ok := t.Network.NodeProxier(dst.Addr()); ok {
			return fail(ErrConnectionRefused)
		}
	}
	if dst.Addr().IsLoopback() {
		return fail(ErrConnectionRefused)
	}
	h, err := t.Network.PodHTTPHandler(dst)
	if hops != nil {
		d := Decision{Verdict: Accept, Reason: "delivered to the pod"}
		if err != nil {
			d = Decision{Verdict: Reject, Reason: err.Error()}
		}
		hops(Hop{Decision: d, From: dst, To: dst})
	}
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.EHOSTUNREACH
		}
		return fail(errno)
	}
	return h, src, nil
}

// waitDropped is a client whose SYNs vanish: it waits for its connect
// timeout (or its context) and fails.
func (t *Transport) waitDropped(ctx context.Context) error {
	clk := t.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	d := t.ConnectTimeout
	if d <= 0 {
		d = DefaultConnectTimeout
	}
	timer := clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C():
		return ErrTimedOut
	}
}

// serve hands the request to the server h as a server would receive it, and
// turns what h wrote into a client's *http.Response.
func (t *Transport) serve(req *http.Request, h http.Handler, src netip.Addr) (*http.Response, error) {
	ctx := req.Context()
	sreq := req.Clone(ctx)
	body := req.Body
	if body == nil {
		body = http.NoBody
	}
	defer body.Close()
	sreq.Body = body
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.Host = req.Host
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.URL.Scheme, sreq.URL.Host, sreq.URL.User = "", "", nil // Clone copied the URL
	// An ephemeral port from Linux's default range, 32768-60999.
	sport := 32768 + int(t.ports.Add(1)%28232)
	sreq.RemoteAddr = netip.AddrPortFrom(src, uint16(sport)).String()

	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, sreq)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rec.code == 0 {
		rec.code = http.StatusOK
	}

	// What Go's HTTP server adds to a response it sends.
	hdr := rec.header.Clone()
	if hdr.Get("Date") == "" {
		clk := t.Clock
		if clk == nil {
			clk = clock.RealClock{}
		}
		hdr.Set("Date", clk.Now().UTC().Format(http.TimeFormat))
	}
	out := rec.body.Bytes()
	if hdr.Get("Content-Type") == "" && len(out) > 0 {
		hdr.Set("Content-Type", http.DetectContentType(out))
	}
	if hdr.Get("Content-Length") == "" && hdr.Get("Transfer-Encoding") == "" {
		hdr.Set("Content-Length", strconv.Itoa(len(out)))
	}
	if req.Method == http.MethodHead {
		out = nil
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rec.code, http.StatusText(rec.code)),
		StatusCode:    rec.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       req,
	}, nil
}

// recorder is the server side of a connection: an http.ResponseWriter that
// keeps what the handler wrote. (net/http/httptest has one; this small one
// keeps httptest's flags out of the browser build.)
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}
