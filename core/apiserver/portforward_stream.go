//go:build !js

package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// # Port forwarding: SPDY streams, alone or inside a WebSocket
//
// `kubectl port-forward web-x 8080:80` listens on localhost:8080 and, for
// every connection a program makes to it, opens two streams on one
// upgraded connection to pods/portforward: an error stream and a data
// stream, both with the headers port: 80 and requestID: n. The data stream
// carries the connection's bytes both ways; the error stream carries, from
// the server, why the connection could not be made (the client prints it
// and closes everything). Many connections share the upgraded connection;
// the requestID pairs their streams.
//
//	kubectl port-forward                      API server (this file)              PortForwardProvider (the kubelet)
//	GET .../pods/web-x/portforward
//	Upgrade: websocket
//	Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io
//	                                     ◀──  101 Switching Protocols
//	SPDY in binary WebSocket messages:
//	SYN_STREAM 1 {streamType: error, port: 80, requestID: 0}
//	SYN_STREAM 3 {streamType: data,  port: 80, requestID: 0}
//	                                          the pair is complete ────────▶ PortForward(pod, 80, stream 3)
//	DATA 3 "GET / HTTP/1.1 ..."          ──▶  ───────────────────────────────▶ the container declaring port 80
//	                                     ◀──  DATA 3 "HTTP/1.1 200 OK ..." ◀──
//	FIN 3 (the local program closed)     ──▶  ───────────────────────────────▶ io.EOF: PortForward returns
//	                                     ◀──  FIN 1 (no error), FIN 3
//
// That is the protocol kubectl v1.31 and later speaks first: SPDY/3.1
// framing tunnelled through a WebSocket (client-go's tools/portforward,
// tunneling_dialer.go; upstream the kube-apiserver unwraps it in
// util/proxy's streamtunnel.go and speaks plain SPDY to the kubelet). When
// the WebSocket upgrade fails, kubectl falls back to plain SPDY/3.1: an
// upgrade to "SPDY/3.1" with X-Stream-Protocol-Version:
// portforward.k8s.io, served here too. Both end up in the same SPDY server
// connection (k8s.io/streaming's httpstream/spdy, on moby/spdystream), so
// only the first bytes differ.
//
// The stream checks and error texts are the kubelet's (upstream
// pkg/kubelet/cri/streaming/portforward/httpstream.go): a port header
// 1-65535, a streamType of data or error, a pair complete within
// portForwardStreamCreationTimeout, and "error forwarding port 80 to pod
// <id>, uid : <why>" on the error stream when the provider fails.

// portForwardProtocol is the one port-forward protocol there is.
const portForwardProtocol = "portforward.k8s.io"

// portForwardTunnelProtocol is it inside a WebSocket (client-go's
// WebsocketsSPDYTunnelingPrefix + portForwardProtocol).
const portForwardTunnelProtocol = "SPDY/3.1+" + portForwardProtocol

const (
	// portForwardStreamCreationTimeout bounds the wait for the second
	// stream of a pair (the kubelet's default: 30 s).
	portForwardStreamCreationTimeout = 30 * time.Second
	// portForwardIdleTimeout closes a connection with no stream traffic
	// (the kubelet's --streaming-connection-idle-timeout default: 4 h).
	portForwardIdleTimeout = 4 * time.Hour
	// portForwardReadLimit bounds one WebSocket message: one SPDY frame or
	// part of one (spdystream writes data frames of at most 64 KiB).
	portForwardReadLimit = 1 << 20
)

// portForwardUpgrade switches the protocol of a checked pods/portforward
// request (podPortForward) and serves its streams until the client goes.
func (s *Server) portForwardUpgrade(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	f := &portForwarder{
		ctx:      ctx,
		cancel:   cancel,
		provider: s.cfg.PortForward,
		pod:      pod,
		streams:  make(chan httpstream.Stream, 1),
		pairs:    map[string]*streamPair{},
		expired:  make(chan string),
	}
	var conn httpstream.Connection
	switch upgrade := r.Header.Get("Upgrade"); {
	case strings.EqualFold(upgrade, "websocket"):
		offered := offeredProtocols(r)
		if !slices.Contains(offered, portForwardTunnelProtocol) {
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("requested protocol(s) are not supported: %v; supports %v", offered, []string{portForwardTunnelProtocol})))
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{portForwardTunnelProtocol}})
		if err != nil {
			return // Accept has answered
		}
		ws.SetReadLimit(portForwardReadLimit)
		conn, err = spdy.NewServerConnection(websocket.NetConn(ctx, ws, websocket.MessageBinary), f.newStream)
		if err != nil {
			_ = ws.CloseNow()
			return
		}
	case strings.EqualFold(upgrade, spdy.HeaderSpdy31):
		if _, err := httpstream.Handshake(r, w, []string{portForwardProtocol}); err != nil {
			return // Handshake has answered 400 or 403
		}
		if conn = spdy.NewResponseUpgrader().UpgradeResponse(w, r, f.newStream); conn == nil {
			return // the upgrader has answered
		}
	default:
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("kubetab serves pods/portforward over %q or %q, not %q", "websocket", spdy.HeaderSpdy31, upgrade)))
		return
	}
	defer conn.Close()
	conn.SetIdleTimeout(portForwardIdleTimeout)
	f.conn = conn
	f.run()
}

// portForwarder serves the streams of one upgraded connection.
type portForwarder struct {
	ctx      context.Context
	cancel   context.CancelFunc // ends ctx: the forwards end with it
	provider PortForwardProvider
	pod      *corev1.Pod
	conn     httpstream.Connection

	// streams are accepted streams, in order, for run to pair.
	streams chan httpstream.Stream
	// pairs are the incomplete pairs by requestID; only run touches it.
	pairs map[string]*streamPair
	// expired receives the requestID of a pair whose creation timed out.
	expired chan string
	// forwarding counts the connections being forwarded.
	forwarding sync.WaitGroup
}

// streamPair is the two streams of one forwarded connection.
type streamPair struct {
	data, err httpstream.Stream
	timer     *time.Timer
}

// newStream checks a stream the client opened and hands it to run. Its
// error refuses the stream (the client sees it reset). It runs on the
// connection's reading goroutine.
func (f *portForwarder) newStream(st httpstream.Stream, _ <-chan struct{}) error {
	h := st.Headers()
	portString := h.Get(corev1.PortHeader)
	if portString == "" {
		return fmt.Errorf("%q header is required", corev1.PortHeader)
	}
	port, err := strconv.ParseUint(portString, 10, 16)
	if err != nil {
		return fmt.Errorf("unable to parse %q as a port: %v", portString, err)
	}
	if port < 1 {
		return fmt.Errorf("port %q must be > 0", portString)
	}
	switch t := h.Get(corev1.StreamType); t {
	case corev1.StreamTypeData, corev1.StreamTypeError:
	case "":
		return fmt.Errorf("%q header is required", corev1.StreamType)
	default:
		return fmt.Errorf("invalid stream type %q", t)
	}
	select {
	case f.streams <- st:
		return nil
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
}

// requestID pairs the two streams of a connection. Clients older than
// v1.6 sent none: their error stream came first, so the data stream's id
// minus 2 names the pair (the kubelet's rule too).
func requestID(st httpstream.Stream) string {
	if id := st.Headers().Get(corev1.PortForwardRequestIDHeader); id != "" {
		return id
	}
	id := st.Identifier()
	if st.Headers().Get(corev1.StreamType) == corev1.StreamTypeData {
		id -= 2
	}
	return strconv.FormatUint(uint64(id), 10)
}

// run pairs streams and forwards each complete pair, until the connection
// closes; then it ends the forwards still running and waits for them.
func (f *portForwarder) run() {
	defer f.forwarding.Wait()
	defer f.cancel()
	for {
		select {
		case <-f.conn.CloseChan():
			return
		case <-f.ctx.Done():
			return
		case id := <-f.expired:
			if p, ok := f.pairs[id]; ok {
				delete(f.pairs, id)
				if p.err != nil {
					fmt.Fprint(p.err, "timed out waiting for streams")
				}
				f.reset(p)
			}
		case st := <-f.streams:
			id := requestID(st)
			p, ok := f.pairs[id]
			if !ok {
				p = &streamPair{}
				p.timer = time.AfterFunc(portForwardStreamCreationTimeout, func() {
					select {
					case f.expired <- id:
					case <-f.ctx.Done():
					}
				})
				f.pairs[id] = p
			}
			slot := &p.data
			if st.Headers().Get(corev1.StreamType) == corev1.StreamTypeError {
				slot = &p.err
			}
			if *slot != nil {
				// A second stream of the same type for one request:
				// refuse it, keep the first.
				_ = st.Reset()
				continue
			}
			*slot = st
			if p.data != nil && p.err != nil {
				p.timer.Stop()
				delete(f.pairs, id)
				f.forwarding.Add(1)
				go f.forward(p)
			}
		}
	}
}

// forward carries one connection to the pod and reports its failure.
func (f *portForwarder) forward(p *streamPair) {
	defer f.forwarding.Done()
	defer f.conn.RemoveStreams(p.data, p.err)
	defer p.err.Close()
	// The provider may have closed the data stream already: harmless.
	defer p.data.Close()
	port, _ := strconv.ParseUint(p.data.Headers().Get(corev1.PortHeader), 10, 16) // checked in newStream
	if err := f.provider.PortForward(f.ctx, f.pod, int32(port), p.data); err != nil {
		fmt.Fprintf(p.err, "error forwarding port %d to pod %s, uid : %v", port, f.pod.UID, err)
	}
}

func (f *portForwarder) reset(p *streamPair) {
	p.timer.Stop()
	for _, st := range []httpstream.Stream{p.data, p.err} {
		if st != nil {
			_ = st.Reset()
		}
	}
}
