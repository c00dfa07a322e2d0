package kubectl

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
)

// # Interactive exec and attach
//
// `kubectl exec -i`, `kubectl exec -it`, `kubectl attach -it` and `kubectl
// run -it` stream: what the learner types goes to the container while its
// output comes back. Upstream kubectl (k8s.io/kubectl pkg/cmd/exec and
// attach, client-go tools/remotecommand) does it over a WebSocket in the
// channel protocol (core/apiserver exec_stream.go draws it). This kubectl
// reaches the API server in the same process (InProcessTransport), which
// cannot upgrade to a WebSocket, so it POSTs the same messages on the
// request and response bodies (core/apiserver exec_frames.go):
//
//	terminal ──keys──▶ [0 keys]   ─┐
//	resizes  ────────▶ [4 {size}] ─┼─ request body ──▶ pods/NAME/exec ─▶ kubelet ─▶ runtime's pty ─▶ sh
//	EOF      ────────▶ [255 0]    ─┘
//	screen   ◀─────── [1 bytes] [2 bytes] [3 status] ◀── response body
//
// A terminal on stdin is the console's (Terminal): `-t` asks it for raw
// mode, as kubectl puts the learner's terminal in raw mode, so that every
// key reaches the remote line discipline (echo, line editing and Ctrl-C
// happen in the container's terminal, as upstream). Without a terminal,
// `-t` says "Unable to use a TTY - input is not a terminal or the right
// kind of file" and streams without one, as upstream.

// Terminal is the console's terminal, when it is kubectl's standard input
// (IOStreams.In): the page's xterm, or `kubetab console` on a real
// terminal. core/console documents the same methods (console.Terminal).
type Terminal interface {
	io.Reader
	// MakeRaw hands every key to the reader as typed (no local echo, line
	// editing or Ctrl-C) until restore is called.
	MakeRaw() (restore func(), err error)
	// Size is the terminal's size in characters (0, 0 when unknown).
	Size() (width, height uint16)
	// Resized receives a value when the size has changed.
	Resized() <-chan struct{}
}

// terminalOf returns the terminal on in, if it is one.
func terminalOf(in io.Reader) (Terminal, bool) {
	t, ok := in.(Terminal)
	return t, ok
}

// streamOptions are exec's and attach's -i, -t and -q (upstream's
// exec.StreamOptions).
type streamOptions struct {
	stdin, tty, quiet bool
}

// setupTTY is upstream's StreamOptions.SetupTTY: the terminal to use in raw
// mode, or nil. -t without -i uses none; -t with an input that is not a
// terminal says so and uses none.
func (s *session) setupTTY(o *streamOptions) Terminal {
	if !o.stdin {
		o.tty = false
		return nil
	}
	if !o.tty {
		return nil
	}
	t, ok := terminalOf(s.streams.In)
	if !ok {
		o.tty = false
		if !o.quiet {
			fmt.Fprintln(s.errOut(), "Unable to use a TTY - input is not a terminal or the right kind of file")
		}
		return nil
	}
	return t
}

// channelsContentType is core/apiserver's: the bodies carry the channel
// protocol.
const channelsContentType = "application/vnd.kubetab.channels"

// errStreamEnded is what a stream that ended without a status returns.
var errStreamEnded = errors.New("the connection to the server was closed before the command ended")

// streamSession POSTs path (pods/NAME/exec or attach) with q and streams:
// in (nil: no stdin) to the container, its output to out and errOut (nil:
// not asked for). With term (raw mode, the caller's) the terminal's sizes
// go along. It returns the command's exit code, or an error: a Status
// from the server, or the stream's end.
func (s *session) streamSession(path string, q url.Values, in io.Reader, out, errOut io.Writer, term Terminal) (int, error) {
	q.Set("stdin", strconv.FormatBool(in != nil))
	q.Set("stdout", strconv.FormatBool(out != nil))
	q.Set("stderr", strconv.FormatBool(errOut != nil))
	q.Set("tty", strconv.FormatBool(term != nil))
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	var wmu sync.Mutex
	send := func(ch byte, data []byte) error {
		frame := make([]byte, 5+len(data))
		binary.BigEndian.PutUint32(frame, uint32(1+len(data)))
		frame[4] = ch
		copy(frame[5:], data)
		wmu.Lock()
		defer wmu.Unlock()
		_, err := pw.Write(frame)
		return err
	}
	resp, err := s.client.do(ctx, request{method: http.MethodPost, path: path, query: q, stream: pr, contentType: channelsContentType})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if term != nil {
		sendSize := func() {
			w, h := term.Size()
			if w > 0 && h > 0 {
				b, _ := json.Marshal(struct{ Width, Height uint16 }{w, h})
				_ = send(remotecommand.StreamResize, b)
			}
		}
		sendSize()
		go func() {
			for {
				select {
				case <-term.Resized():
					sendSize()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	if in != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := in.Read(buf)
				if ctx.Err() != nil {
					return
				}
				if n > 0 {
					if send(remotecommand.StreamStdIn, buf[:n]) != nil {
						return
					}
				}
				if err != nil {
					// v5's close signal: stdin is done.
					_ = send(remotecommand.StreamClose, []byte{remotecommand.StreamStdIn})
					return
				}
			}
		}()
	}
	body := bufio.NewReader(resp.Body)
	var status []byte
	for {
		var n [4]byte
		if _, err := io.ReadFull(body, n[:]); err != nil {
			break
		}
		msg := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(body, msg); err != nil || len(msg) == 0 {
			break
		}
		switch ch, data := msg[0], msg[1:]; ch {
		case remotecommand.StreamStdOut:
			if out != nil && len(data) > 0 {
				_, _ = out.Write(data)
			}
		case remotecommand.StreamStdErr:
			if errOut != nil && len(data) > 0 {
				_, _ = errOut.Write(data)
			}
		case remotecommand.StreamErr:
			status = append(status, data...)
		}
	}
	if s.ctx.Err() != nil {
		return 0, s.ctx.Err()
	}
	if status == nil {
		return 0, errStreamEnded
	}
	var st metav1.Status
	if err := json.Unmarshal(status, &st); err != nil {
		return 0, fmt.Errorf("error stream protocol error: %v in %q", err, status)
	}
	switch {
	case st.Status == metav1.StatusSuccess:
		return 0, nil
	case st.Reason == remotecommand.NonZeroExitCodeReason && st.Details != nil:
		for _, c := range st.Details.Causes {
			if c.Type == remotecommand.ExitCodeCauseType {
				if code, err := strconv.Atoi(c.Message); err == nil {
					return code, nil
				}
			}
		}
	}
	return 0, errors.New(st.Message)
}
