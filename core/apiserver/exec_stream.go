//go:build !js

package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/kubetab/kubetab/core/internal/tty"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//	                                          ◀─  [1]                 "the stream is up"
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

const (
	// execReadLimit bounds one message from the client. kubectl sends stdin
	// in reads of 32 KiB, plus the channel byte.
	execReadLimit = 1 << 20
	// execChunk is the largest message sent: longer writes are split.
	execChunk = 32 << 10
	// execWriteTimeout cuts off a client that takes longer than this to
	// accept one message (client-go's own write deadline is a minute too).
	execWriteTimeout = time.Minute
	// execStdinFrames is how many stdin messages may wait for a command
	// that has not read them yet. Beyond it the reading of the connection
	// waits for the command, and so do its pings.
	execStdinFrames = 16
)

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
// runs run on its streams; cmd names the command in a non-zero exit status.
func (s *Server) streamUpgrade(w http.ResponseWriter, r *http.Request, cmd []string, run func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error)) {
	q := r.URL.Query()
	ttyOn := execOption(q, "tty", false)
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("kubetab streams pods/exec over a WebSocket (%s), not %q", strings.Join(execProtocols, ", "), r.Header.Get("Upgrade"))))
		return
	}
	stdinOn, stdoutOn, stderrOn := execOption(q, "stdin", false), execOption(q, "stdout", true), execOption(q, "stderr", true)
	if !stdinOn && !stdoutOn && !stderrOn {
		writeError(w, r, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr"))
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

	// ctx ends the command when the client goes away. (After the upgrade the
	// request's context no longer notices that: the reading below does.)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ended := make(chan struct{}) // the command has ended: stdin is read no more
	var frames chan []byte
	var stdin io.Reader
	if stdinOn {
		frames = make(chan []byte, execStdinFrames)
		stdin = &stdinReader{frames: frames}
	}
	// tty=true (kubectl exec -t): the kubelet gives the command a terminal,
	// whose sizes come on the resize channel.
	var sizes chan tty.Size
	if ttyOn {
		sizes = make(chan tty.Size, 1)
		ctx = tty.With(ctx, &tty.Terminal{Resize: sizes})
	}
	received := make(chan struct{})
	go func() {
		defer close(received)
		defer cancel()
		receive(conn, conn.Subprotocol() == remotecommand.StreamProtocolV5Name, frames, sizes, ended)
	}()
	finish := func(st *metav1.Status) {
		close(ended)
		if st != nil {
			if data, err := json.Marshal(st); err == nil {
				_, _ = channelWriter{conn, remotecommand.StreamErr}.Write(data)
			}
			_ = conn.Close(websocket.StatusNormalClosure, "")
		} else {
			_ = conn.CloseNow()
		}
		<-received
	}

	// Tell the client the stream is up: an empty message on the lowest
	// channel it reads, as upstream does.
	first := byte(remotecommand.StreamErr)
	switch {
	case stdoutOn:
		first = remotecommand.StreamStdOut
	case stderrOn:
		first = remotecommand.StreamStdErr
	}
	if _, err := (channelWriter{conn, first}).Write(nil); err != nil {
		finish(nil)
		return
	}
	var stdout, stderr io.Writer = io.Discard, io.Discard
	if stdoutOn {
		stdout = channelWriter{conn, remotecommand.StreamStdOut}
	}
	if stderrOn {
		stderr = channelWriter{conn, remotecommand.StreamStdErr}
	}
	code, err := run(ctx, stdin, stdout, stderr)
	switch {
	case err == nil:
		st := exitStatus(cmd, code)
		finish(&st)
	case ctx.Err() != nil:
		finish(nil) // the client has gone: nobody to tell
	default:
		if _, ok := err.(apierrors.APIStatus); !ok {
			// The kubelet's words for a runtime that failed to run it.
			err = apierrors.NewInternalError(fmt.Errorf("error executing command in container: %w", err))
		}
		finish(execFailure(err))
	}
}

// execFailure is the Status an exec that could not run ends with.
func execFailure(err error) *metav1.Status {
	st := statusOf(err)
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	st.Status = metav1.StatusFailure
	return st
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

// receive reads the client's messages until the connection ends: stdin goes
// to frames (closed at stdin's close signal, or when the connection ends),
// terminal sizes are dropped (there is no terminal), and so is anything on
// channels the client does not write, as upstream drops it. While it reads,
// the library answers the client's pings (kubectl pings every 5 s and gives
// up after a minute without a pong). frames is nil without stdin.
func receive(conn *websocket.Conn, v5 bool, frames chan<- []byte, sizes chan tty.Size, ended <-chan struct{}) {
	stdinOpen := frames != nil
	closeStdin := func() {
		if stdinOpen {
			stdinOpen = false
			close(frames)
		}
	}
	defer closeStdin()
	for {
		// Not the request's context: a Read whose context ends closes the
		// connection. Closing the connection ends the Read.
		_, msg, err := conn.Read(context.Background())
		if err != nil {
			return
		}
		if len(msg) == 0 {
			continue
		}
		switch ch, data := msg[0], msg[1:]; {
		case ch == remotecommand.StreamClose && v5:
			if len(data) != 1 {
				return // a protocol error: the command ends (upstream closes the connection)
			}
			if data[0] == remotecommand.StreamStdIn {
				closeStdin()
			}
		case ch == remotecommand.StreamResize && sizes != nil:
			var sz struct{ Width, Height uint16 }
			if json.Unmarshal(data, &sz) == nil {
				// Keep the latest size only: a terminal being resized
				// sends many.
				select {
				case <-sizes:
				default:
				}
				sizes <- tty.Size{Width: sz.Width, Height: sz.Height}
			}
		case ch == remotecommand.StreamStdIn && stdinOpen:
			select {
			case frames <- data:
			case <-ended:
			}
		}
	}
}

// stdinReader is the command's stdin: the client's stdin messages, in
// order, then io.EOF once the client has closed its stdin or gone.
type stdinReader struct {
	frames <-chan []byte
	cur    []byte
}

func (r *stdinReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		b, ok := <-r.frames
		if !ok {
			return 0, io.EOF
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// channelWriter sends what is written to it to the client on one channel,
// at once, in messages of at most execChunk bytes. An empty write sends one
// empty message.
type channelWriter struct {
	conn *websocket.Conn
	ch   byte
}

func (w channelWriter) Write(p []byte) (int, error) {
	n := 0
	for {
		chunk := p[:min(len(p), execChunk)]
		msg := make([]byte, 1+len(chunk))
		msg[0] = w.ch
		copy(msg[1:], chunk)
		ctx, cancel := context.WithTimeout(context.Background(), execWriteTimeout)
		err := w.conn.Write(ctx, websocket.MessageBinary, msg)
		cancel()
		if err != nil {
			return n, fmt.Errorf("exec: write to channel %d: %w", w.ch, err)
		}
		n += len(chunk)
		p = p[len(chunk):]
		if len(p) == 0 {
			return n, nil
		}
	}
}

var _ io.Writer = channelWriter{}
