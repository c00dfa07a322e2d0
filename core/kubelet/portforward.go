//go:build !js

package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PortForward carries one connection of `kubectl port-forward` to port
// inside pod: the bytes of stream are what the learner's program sent to
// the local port, and what comes back goes to it (upstream: the kubelet's
// streaming server hands the stream to the runtime, which dials
// localhost:port in the pod's network namespace and copies both ways). It
// implements apiserver.PortForwardProvider and returns when the
// connection has ended.
//
// No guest listens on a socket (WASI preview1 has none, see network.go):
// the container that declares containerPort port serves HTTP, one
// instance per request. So the connection is read as HTTP/1.1 by Go's
// own server, with keep-alive, and each request it carries goes to that
// container, as a request through the Service network would. A port no
// running container declares is refused as a closed port is, before any
// byte is read.
func (kl *Kubelet) PortForward(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	if pod.Spec.NodeName != kl.nodeName {
		return apierrors.NewInternalError(fmt.Errorf("pod %q is on node %q, not on %q", pod.Name, pod.Spec.NodeName, kl.nodeName))
	}
	h, err := kl.portHandler(pod, port)
	if err != nil {
		return fmt.Errorf("failed to connect to localhost:%d inside the pod: connection refused (%v)", port, err)
	}
	local := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
	conn := &streamConn{ReadWriteCloser: stream, local: local, closed: make(chan struct{})}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: time.Minute,
		// The request's Host is whatever the learner's client sent
		// (localhost:8080); the container sees it as is, as it would
		// behind a real port-forward.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	l := &oneConnListener{conn: conn}
	go func() { _ = srv.Serve(l) }()
	select {
	case <-conn.closed:
	case <-ctx.Done():
	}
	return srv.Close()
}

// streamConn is a port-forward stream as the connection an HTTP server
// reads: the peer is the kubelet itself (upstream the runtime's dialer
// connects from inside the pod, from 127.0.0.1).
type streamConn struct {
	io.ReadWriteCloser
	local     netip.AddrPort
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *streamConn) Close() error {
	err := c.ReadWriteCloser.Close()
	c.closeOnce.Do(func() { close(c.closed) })
	return err
}

func (c *streamConn) LocalAddr() net.Addr { return net.TCPAddrFromAddrPort(c.local) }
func (c *streamConn) RemoteAddr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.local.Addr(), 0))
}
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener accepts one connection, then waits until it is closed.
type oneConnListener struct {
	mu   sync.Mutex
	conn *streamConn
}

var errListenerDone = errors.New("kubelet: port-forward connection served")

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	return nil, errListenerDone
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
