package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kubetab/kubetab/core/internal/tty"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// # One exec session, whatever carries it
//
// The channel protocol (exec_stream.go draws it) is messages, each a
// channel byte and that channel's bytes. Two connections carry them:
//
//   - a WebSocket (exec_stream.go, native only): what the real kubectl
//     speaks, one WebSocket message per protocol message;
//   - the bodies of one POST (exec_frames.go, both builds): what kubetab's
//     own kubectl speaks in the browser and in `kubetab console`, where its
//     requests reach the API server in the same process with no socket to
//     upgrade (kubectl.InProcessTransport). Each message is preceded by its
//     length.
//
// serveChannels runs the session on either: it tells the client that the
// stream is up, feeds stdin messages to the command, keeps the latest
// terminal size for it, sends its output as it is written, and ends with
// the status on channel 3.

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

// channelConn carries the channel protocol's messages, both ways.
type channelConn interface {
	// ReadMessage returns the client's next message; an error once the
	// connection has ended (or Close was called).
	ReadMessage() ([]byte, error)
	// WriteMessage sends one message to the client.
	WriteMessage(msg []byte) error
	// Close ends the connection: normally after the status, or at once
	// when there is nobody left to tell.
	Close(normal bool)
}

// streamFunc runs the command (or attaches) on a session's streams.
type streamFunc func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error)

// channelOptions are the PodExecOptions (or PodAttachOptions) a session
// was asked for, and whether the client speaks v5 (the close signal).
type channelOptions struct {
	stdin, stdout, stderr, tty bool
	v5                         bool
}

// channelOptionsOf reads a request's stdin, stdout, stderr and tty; at
// least one stream is needed, as upstream.
func channelOptionsOf(r *http.Request) (channelOptions, error) {
	q := r.URL.Query()
	o := channelOptions{
		stdin: execOption(q, "stdin", false), stdout: execOption(q, "stdout", true),
		stderr: execOption(q, "stderr", true), tty: execOption(q, "tty", false),
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// serveChannels runs one session on conn until run returns or the client
// goes; cmd names the command in a non-zero exit status.
func serveChannels(parent context.Context, conn channelConn, o channelOptions, cmd []string, run streamFunc) {
	// ctx ends the command when the client goes away. (After a WebSocket
	// upgrade the request's context no longer notices that: the reading
	// below does.)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	ended := make(chan struct{}) // the command has ended: stdin is read no more
	var frames chan []byte
	var stdin io.Reader
	if o.stdin {
		frames = make(chan []byte, execStdinFrames)
		stdin = &stdinReader{frames: frames}
	}
	// tty=true (kubectl exec -t): the kubelet gives the command a terminal,
	// whose sizes come on the resize channel.
	var sizes chan tty.Size
	if o.tty {
		sizes = make(chan tty.Size, 1)
		ctx = tty.With(ctx, &tty.Terminal{Resize: sizes})
	}
	received := make(chan struct{})
	go func() {
		defer close(received)
		defer cancel()
		receive(conn, o.v5, frames, sizes, ended)
	}()
	finish := func(st *metav1.Status) {
		close(ended)
		if st != nil {
			if data, err := json.Marshal(st); err == nil {
				_, _ = channelWriter{conn, remotecommand.StreamErr}.Write(data)
			}
		}
		conn.Close(st != nil)
		<-received
	}

	// Tell the client the stream is up: an empty message on the lowest
	// channel it reads, as upstream does.
	first := byte(remotecommand.StreamErr)
	switch {
	case o.stdout:
		first = remotecommand.StreamStdOut
	case o.stderr:
		first = remotecommand.StreamStdErr
	}
	if _, err := (channelWriter{conn, first}).Write(nil); err != nil {
		finish(nil)
		return
	}
	var stdout, stderr io.Writer = io.Discard, io.Discard
	if o.stdout {
		stdout = channelWriter{conn, remotecommand.StreamStdOut}
	}
	if o.stderr {
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

// receive reads the client's messages until the connection ends: stdin goes
// to frames (closed at stdin's close signal, or when the connection ends),
// terminal sizes to sizes (the latest kept; dropped without a terminal),
// and anything on channels the client does not write is dropped, as
// upstream drops it. While it reads, a WebSocket library answers the
// client's pings (kubectl pings every 5 s and gives up after a minute
// without a pong). frames is nil without stdin.
func receive(conn channelConn, v5 bool, frames chan<- []byte, sizes chan tty.Size, ended <-chan struct{}) {
	stdinOpen := frames != nil
	closeStdin := func() {
		if stdinOpen {
			stdinOpen = false
			close(frames)
		}
	}
	defer closeStdin()
	for {
		msg, err := conn.ReadMessage()
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
	conn channelConn
	ch   byte
}

func (w channelWriter) Write(p []byte) (int, error) {
	n := 0
	for {
		chunk := p[:min(len(p), execChunk)]
		msg := make([]byte, 1+len(chunk))
		msg[0] = w.ch
		copy(msg[1:], chunk)
		if err := w.conn.WriteMessage(msg); err != nil {
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
