//go:build !js

package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// # Exec over a WebSocket
//
// Since v1.30 kubectl exec (client-go's tools/remotecommand, websocket.go)
// upgrades its pods/exec request to a WebSocket and speaks the channel
// protocol on it; upstream the kube-apiserver serves it (apiserver's
// util/proxy, websocket.go, on k8s.io/streaming's wsstream.Conn) and relays
// it to the kubelet's streaming server. Every WebSocket message, both ways,
// is one byte naming a channel and then that channel's bytes:
//
//	channel  direction        carries
//	0        client ▶ server  stdin
//	1        server ▶ client  stdout
//	2        server ▶ client  stderr
//	3        server ▶ client  the final metav1.Status, as JSON (the "error" channel)
//	4        client ▶ server  terminal sizes, JSON {"Width":80,"Height":24}
//	255      client ▶ server  v5 only: close signal, one more byte naming the
//	                          channel the client is done with (stdin's EOF)
//
// A session of `echo hi | kubectl exec -i web -- cat`:
//
//	kubectl                                        API server (this file)           ExecProvider (the kubelet)
//	GET .../pods/web/exec?command=cat&stdin=true&stdout=true&stderr=true
//	Upgrade: websocket
//	Sec-WebSocket-Protocol: v5.channel.k8s.io ─▶  pod, container, command checked
//	                                          ◀─  101 Switching Protocols (v5.channel.k8s.io)
//	                                          ◀─  [1]                 "the stream is up" (streamGrace)
//	[0 'h' 'i' '\n']                          ─▶  stdin ───────────────▶ Exec(ctx, pod, "web", ["cat"], stdin, ...)
//	[255 0]                                   ─▶  stdin's EOF ─────────▶ the command reads io.EOF
//	                                          ◀─  [1 'h' 'i' '\n'] ◀──── stdout, each write as it comes
//	                                          ◀─  [3 {"status":"Success",...}] when Exec returns
//	                                          ◀─▶ close 1000 (normal closure)
//
// The client reads stdout and stderr until the normal closure and then
// decodes the status: Success ends kubectl with 0; Failure with reason
// NonZeroExitCode and a cause {type: ExitCode, message: "3"} makes it print
// "command terminated with exit code 3" and exit 3; any other Failure is
// printed as "error: <message>". v4.channel.k8s.io is the same without the
// close signal (so its stdin ends only with the connection); kubectl v1.32
// offers only v5, other clients still offer v4.
//
// The protocol does not depend on what the provider does with it: kubetab's
// kubelet (core/kubelet/exec.go) writes a command's output when the command
// ends, and refuses a non-empty stdin for now, which the client then gets
// as the Failure on channel 3.
//
// The server closes with the WebSocket close handshake (its close frame,
// then the client's, then TCP) rather than dropping the connection after
// the status: a client still reading the output then gets all of it.
//
// The WebSocket library is github.com/coder/websocket. Upstream's own server
// side, wsstream.Conn, is built on golang.org/x/net/websocket, whose
// documentation points to coder/websocket and gorilla/websocket for what it
// lacks; the channel framing on top is a byte, written here by hand.
//
// Not here: SPDY/3.1, the older transport kubectl falls back to when the
// WebSocket upgrade fails (an error before the upgrade, such as a bad
// container name, is answered as a plain Status to both, so kubectl prints
// it).
//
// Terminals: with tty=true (kubectl exec -t) the command gets a terminal
// (package tty carries the request to the kubelet, whose runtime is the
// terminal's line discipline: it echoes, edits the line, turns Ctrl-C into
// a signal and "\n" into "\r\n", as the kernel's pty does upstream); the
// client's resize messages on channel 4 reach it, the latest kept.

// execProtocols are the subprotocols served, best first.
var execProtocols = []string{remotecommand.StreamProtocolV5Name, remotecommand.StreamProtocolV4Name}

// execUpgrade serves an exec whose request asks to switch protocols, once
// the pod, container and command have been checked (podExec).
func (s *Server) execUpgrade(w http.ResponseWriter, r *http.Request, pod *corev1.Pod, container string, cmd []string) {
	s.streamUpgrade(w, r, cmd, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		return s.cfg.Exec.Exec(ctx, pod, container, cmd, stdin, stdout, stderr)
	})
}

// attachUpgrade serves an attach the way execUpgrade serves an exec: the
// same channels, ended by a Success status when the process ends.
func (s *Server) attachUpgrade(w http.ResponseWriter, r *http.Request, pod *corev1.Pod, container string) {
	s.streamUpgrade(w, r, nil, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		return 0, s.cfg.Attach.Attach(ctx, pod, container, stdin, stdout, stderr)
	})
}

// streamUpgrade upgrades r to a WebSocket speaking the channel protocol and
// runs run on its streams (serveChannels); cmd names the command in a
// non-zero exit status.
func (s *Server) streamUpgrade(w http.ResponseWriter, r *http.Request, cmd []string, run streamFunc) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("kubetab streams pods/exec over a WebSocket (%s), not %q", strings.Join(execProtocols, ", "), r.Header.Get("Upgrade"))))
		return
	}
	opts, err := channelOptionsOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	offered := offeredProtocols(r)
	if !slices.ContainsFunc(execProtocols, func(p string) bool { return slices.Contains(offered, p) }) {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("requested protocol(s) are not supported: %v; supports %v", offered, execProtocols)))
		return
	}
	// Accept answers 101, or an error of its own (a malformed handshake;
	// 403 for an Origin other than the server's, so that a web page open in
	// the learner's browser cannot exec into the cluster).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: execProtocols})
	if err != nil {
		return
	}
	conn.SetReadLimit(execReadLimit)
	opts.v5 = conn.Subprotocol() == remotecommand.StreamProtocolV5Name
	serveChannels(r.Context(), newWSConn(conn), opts, cmd, run)
}

// streamGrace is how long the server holds its first message after the
// upgrade unless the client speaks first. kubectl v1.32's client
// (client-go's remotecommand/websocket.go) starts reading the connection
// before it has made its streams, and drops a message for a stream not yet
// made ("Unknown stream id 1, discarding message"): on a loaded machine a
// fast command's whole output went that way. Upstream the API server dials
// the kubelet after the upgrade, so the first output comes much later;
// client-go fixed the race after v1.32 (the read loop waits for its
// streams). A client that sends anything (stdin, its close signal, a
// terminal size) has made its streams, and ends the wait at once.
const streamGrace = 50 * time.Millisecond

// wsConn is a WebSocket as a channelConn: one message each.
type wsConn struct {
	c     *websocket.Conn
	ready chan struct{} // closed once writing is safe (streamGrace)
	once  sync.Once
}

func newWSConn(c *websocket.Conn) *wsConn {
	w := &wsConn{c: c, ready: make(chan struct{})}
	time.AfterFunc(streamGrace, w.release)
	return w
}

func (c *wsConn) release() { c.once.Do(func() { close(c.ready) }) }

func (c *wsConn) ReadMessage() ([]byte, error) {
	// Not the request's context: a Read whose context ends closes the
	// connection. Closing the connection ends the Read.
	_, msg, err := c.c.Read(context.Background())
	if err == nil {
		c.release()
	}
	return msg, err
}

func (c *wsConn) WriteMessage(msg []byte) error {
	<-c.ready
	ctx, cancel := context.WithTimeout(context.Background(), execWriteTimeout)
	defer cancel()
	return c.c.Write(ctx, websocket.MessageBinary, msg)
}

// Close ends the connection: with the close handshake after the status
// (a client still reading the output then gets all of it), else at once.
func (c *wsConn) Close(normal bool) {
	if normal {
		_ = c.c.Close(websocket.StatusNormalClosure, "")
	} else {
		_ = c.c.CloseNow()
	}
}

// offeredProtocols lists the WebSocket subprotocols a request offers, in
// its order (Sec-WebSocket-Protocol: one header or several, comma-separated).
func offeredProtocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
