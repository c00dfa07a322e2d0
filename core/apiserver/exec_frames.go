package apiserver

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// # Exec over the bodies of one POST
//
// kubetab's own kubectl (core/kubectl: the page's console, `kubetab
// console`) reaches the API server in the same process, with no socket to
// upgrade to a WebSocket. Its interactive exec and attach (`kubectl exec
// -it`, `kubectl run -it`, `kubectl attach -it`) send the same channel
// protocol on the bodies of one request instead, both open at once:
//
//	POST /api/v1/namespaces/default/pods/debug/attach?container=debug&stdin=true&stdout=true&tty=true
//	Content-Type: application/vnd.kubetab.channels
//	X-Stream-Protocol-Version: v5.channel.k8s.io
//
//	request body  (client ▶ server)   [len][0 "ls\r"]  [len][4 {"Width":80,"Height":24}]  [len][255 0]
//	response body (server ▶ client)   [len][1]  [len][1 "ls\r\n"]  ...  [len][3 {"status":"Success"}]
//
// where len is the message's length as 4 bytes, big-endian, and a message
// is exactly what one WebSocket message carries (a channel byte, then
// data). The answer is 200 with the same Content-Type once the stream is
// up; a request the API server refuses before that (no such pod, a bad
// container) is answered with the usual Status, as a WebSocket upgrade is.
// The response body ends after the status (or when the command could not
// be told: the client went away). Upstream has no such form: kubectl
// streams over a WebSocket, or SPDY.

// channelsContentType marks a request (and its answer) whose bodies carry
// the channel protocol's messages.
const channelsContentType = "application/vnd.kubetab.channels"

// isChannelsRequest says whether r asks for the POST form above.
func isChannelsRequest(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == channelsContentType
}

// execChannels serves an exec over the bodies of r (see above).
func (s *Server) execChannels(w http.ResponseWriter, r *http.Request, pod *corev1.Pod, container string, cmd []string) {
	s.serveBodies(w, r, cmd, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		return s.cfg.Exec.Exec(ctx, pod, container, cmd, stdin, stdout, stderr)
	})
}

// attachChannels serves an attach over the bodies of r.
func (s *Server) attachChannels(w http.ResponseWriter, r *http.Request, pod *corev1.Pod, container string) {
	s.serveBodies(w, r, nil, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		return 0, s.cfg.Attach.Attach(ctx, pod, container, stdin, stdout, stderr)
	})
}

func (s *Server) serveBodies(w http.ResponseWriter, r *http.Request, cmd []string, run streamFunc) {
	opts, err := channelOptionsOf(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts.v5 = true
	// Over HTTP/1.1 net/http stops reading a request body once the answer
	// has begun, unless asked not to (in process, both are pipes anyway).
	_ = http.NewResponseController(w).EnableFullDuplex()
	w.Header().Set("Content-Type", channelsContentType)
	w.WriteHeader(http.StatusOK)
	c := &bodyConn{in: bufio.NewReader(r.Body), w: w, body: r.Body}
	if f, ok := w.(http.Flusher); ok {
		c.flush = f.Flush
	}
	serveChannels(r.Context(), c, opts, cmd, run)
}

// bodyConn is a request's body and its response as a channelConn.
type bodyConn struct {
	in   *bufio.Reader
	body io.Closer

	mu     sync.Mutex // guards w, flush and closed
	w      io.Writer
	flush  func()
	closed bool
}

var errBodyClosed = errors.New("exec: the session has ended")

func (c *bodyConn) ReadMessage() ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(c.in, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > execReadLimit {
		return nil, fmt.Errorf("exec: a message of %d bytes is over the limit of %d", size, execReadLimit)
	}
	msg := make([]byte, size)
	if _, err := io.ReadFull(c.in, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

func (c *bodyConn) WriteMessage(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errBodyClosed
	}
	frame := make([]byte, 4+len(msg))
	binary.BigEndian.PutUint32(frame, uint32(len(msg)))
	copy(frame[4:], msg)
	if _, err := c.w.Write(frame); err != nil {
		return err
	}
	if c.flush != nil {
		c.flush()
	}
	return nil
}

// Close stops the writing and the reading: the request body is closed, so
// that the reading goroutine returns (an in-process body is a pipe).
func (c *bodyConn) Close(bool) {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	_ = c.body.Close()
}
