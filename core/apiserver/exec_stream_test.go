//go:build !js

package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// v5 and v4 are what a client offers: kubectl v1.32 offers v5 only.
var (
	v5 = []string{"v5.channel.k8s.io"}
	v4 = []string{"v4.channel.k8s.io"}
)

// message is one WebSocket message from the server, split into its
// channel and data.
type message struct {
	ch   byte
	data string
}

// session is what a client saw of one exec.
type session struct {
	protocol string
	msgs     []message
	out      map[byte]string // everything per channel
	status   metav1.Status   // decoded from channel 3
	close    websocket.StatusCode
}

func dial(t *testing.T, url string, protocols []string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protocols}) // http:// is taken for ws://
	if err != nil {
		body := ""
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			body = fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
		t.Fatalf("dial %s: %v %s", url, err, body)
	}
	t.Cleanup(func() { conn.CloseNow() })
	conn.SetReadLimit(1 << 20)
	return conn
}

// readAll reads messages until the server closes.
func readAll(t *testing.T, conn *websocket.Conn) session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := session{protocol: conn.Subprotocol(), out: map[byte]string{}}
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			s.close = websocket.CloseStatus(err)
			break
		}
		if typ != websocket.MessageBinary || len(b) == 0 {
			t.Fatalf("message %q of type %v: want binary with a channel byte", b, typ)
		}
		s.msgs = append(s.msgs, message{b[0], string(b[1:])})
		s.out[b[0]] += string(b[1:])
	}
	if st := s.out[3]; st != "" {
		if err := json.Unmarshal([]byte(st), &s.status); err != nil {
			t.Fatalf("status %q: %v", st, err)
		}
	}
	return s
}

// send writes messages, each a channel byte and data.
func send(t *testing.T, conn *websocket.Conn, msgs ...[]byte) {
	t.Helper()
	for _, m := range msgs {
		if err := conn.Write(context.Background(), websocket.MessageBinary, m); err != nil {
			t.Fatal(err)
		}
	}
}

func stdinMsg(s string) []byte { return append([]byte{0}, s...) }

func TestPodExecStream(t *testing.T) {
	f := newExecFixture(t)
	exitCode3 := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [fail], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}`
	tests := []struct {
		name      string
		path      string
		protocols []string
		send      [][]byte
		protocol  string          // negotiated
		first     byte            // channel of the first (empty) message
		out       map[byte]string // channels 1 and 2
		status    string          // channel 3, as JSON
	}{{
		name: "exit 0", path: "one/exec?command=ls&command=-l&stdout=true&stderr=true", protocols: v5,
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "out ls -l\n", 2: "err\n"},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "non-zero exit", path: "one/exec?command=fail&stdout=true&stderr=true", protocols: v5,
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "out fail\n", 2: "err\n"},
		status: exitCode3,
	}, {
		name: "stdin to cat, closed by the v5 signal", path: "one/exec?command=cat&stdin=true&stdout=true&stderr=true", protocols: v5,
		send:     [][]byte{stdinMsg("hi\n"), stdinMsg(""), stdinMsg("there"), {255, 0}},
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "hi\nthere"},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "resize and unknown channels are dropped", path: "one/exec?command=cat&stdin=true", protocols: v5,
		send:     [][]byte{append([]byte{4}, `{"Width":80,"Height":24}`...), {7, 'x'}, {1, 'y'}, stdinMsg("ok"), {255, 4}, {255, 0}},
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "ok"},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "v4", path: "one/exec?command=fail", protocols: []string{"v3.channel.k8s.io", "v4.channel.k8s.io"},
		protocol: "v4.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "out fail\n", 2: "err\n"},
		status: exitCode3,
	}, {
		name: "v5 preferred", path: "one/exec?command=ls", protocols: []string{"v4.channel.k8s.io", "v5.channel.k8s.io"},
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{1: "out ls\n", 2: "err\n"},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "stdout off", path: "one/exec?command=ls&stdout=false", protocols: v5,
		protocol: "v5.channel.k8s.io", first: 2,
		out:    map[byte]string{2: "err\n"},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "only stdin", path: "one/exec?command=cat&stdin=true&stdout=false&stderr=false", protocols: v5,
		send:     [][]byte{stdinMsg("dropped"), {255, 0}},
		protocol: "v5.channel.k8s.io", first: 3,
		out:    map[byte]string{},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`,
	}, {
		name: "the provider cannot run it", path: "one/exec?command=missing", protocols: v5,
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"container not found (\"hello\")","reason":"BadRequest","code":400}`,
	}, {
		name: "the runtime fails", path: "one/exec?command=broken", protocols: v5,
		protocol: "v5.channel.k8s.io", first: 1,
		out:    map[byte]string{},
		status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: error executing command in container: boom","reason":"InternalError","details":{"causes":[{"message":"error executing command in container: boom"}]},"code":500}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, f.base+tt.path, tt.protocols)
			send(t, conn, tt.send...)
			s := readAll(t, conn)
			if s.protocol != tt.protocol {
				t.Errorf("protocol = %q, want %q", s.protocol, tt.protocol)
			}
			if len(s.msgs) == 0 || s.msgs[0] != (message{tt.first, ""}) {
				t.Errorf("first message = %v, want an empty one on channel %d", s.msgs, tt.first)
			}
			if s.close != websocket.StatusNormalClosure {
				t.Errorf("closed with %v, want a normal closure", s.close)
			}
			if last := s.msgs[len(s.msgs)-1]; last.ch != 3 {
				t.Errorf("last message %v: want the status", last)
			}
			if got := s.out[3]; got != tt.status {
				t.Errorf("status = %s\nwant       %s", got, tt.status)
			}
			delete(s.out, 3)
			for ch, out := range s.out {
				if out == "" {
					delete(s.out, ch)
				}
			}
			if fmt.Sprint(s.out) != fmt.Sprint(tt.out) {
				t.Errorf("output = %q, want %q", s.out, tt.out)
			}
		})
	}
}

// TestPodExecStreamErrorsBeforeUpgrade: what can be told before the command
// runs is a plain HTTP Status, as kube-apiserver answers it, for the
// WebSocket and for kubectl's SPDY fallback alike.
func TestPodExecStreamErrorsBeforeUpgrade(t *testing.T) {
	f := newExecFixture(t)
	ws := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
		"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", "v5.channel.k8s.io"}
	spdy := []string{"Connection", "Upgrade", "Upgrade", "SPDY/3.1", "X-Stream-Protocol-Version", "v5.channel.k8s.io"}
	tests := []struct {
		name, method, path string
		hdr                []string
		code               int
		want               string
	}{
		{"bad container", "GET", "one/exec?container=x&command=ls", ws, 400, `"message":"container x is not valid for pod one"`},
		{"no such pod", "GET", "nope/exec?command=ls", ws, 404, `"message":"pods \"nope\" not found"`},
		{"no command", "GET", "one/exec", ws, 400, `"message":"you must specify at least 1 command"`},
		{"no stream", "GET", "one/exec?command=ls&stdout=false&stderr=false", ws, 400, `"message":"you must specify at least 1 of stdin, stdout, stderr"`},
		{"tty over SPDY", "POST", "one/exec?command=ls&tty=true", spdy, 400, `kubetab streams pods/exec over a WebSocket`},
		{"unknown subprotocol", "GET", "one/exec?command=ls", append(ws[:8:8], "Sec-WebSocket-Protocol", "channel.k8s.io, base64.channel.k8s.io"), 400,
			`"message":"requested protocol(s) are not supported: [channel.k8s.io base64.channel.k8s.io]; supports [v5.channel.k8s.io v4.channel.k8s.io]"`},
		{"no subprotocol", "GET", "one/exec?command=ls", ws[:8], 400, `requested protocol(s) are not supported: []`},
		{"SPDY", "POST", "one/exec?command=ls", spdy, 400, `"message":"kubetab streams pods/exec over a WebSocket (v5.channel.k8s.io, v4.channel.k8s.io), not \"SPDY/3.1\""`},
		{"cross-origin page", "GET", "one/exec?command=ls", append(ws, "Origin", "http://evil.example"), 403, `not authorized`},
		{"GET without upgrade", "GET", "one/exec?command=ls", nil, 405, `"reason":"MethodNotAllowed"`},
		{"PUT with upgrade", "PUT", "one/exec?command=ls", ws, 405, `"reason":"MethodNotAllowed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := do(t, tt.method, f.base+tt.path, "", "", tt.hdr...)
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%s %s = %d %s\nwant %d with %s", tt.method, tt.path, code, body, tt.code, tt.want)
			}
		})
	}
}

// TestPodExecStreamTTY: tty=true gives the command a terminal, whose sizes
// come from the resize channel (4); without it there is none.
func TestPodExecStreamTTY(t *testing.T) {
	f := newExecFixture(t)
	conn := dial(t, f.base+"one/exec?command=term&stdin=true&tty=true&stderr=false", v5)
	send(t, conn, append([]byte{4}, `{"Width":120,"Height":40}`...))
	if s := readAll(t, conn); s.out[1] != "terminal 120x40\n" {
		t.Errorf("with tty: %+v", s)
	}
	conn = dial(t, f.base+"one/exec?command=term", v5)
	if s := readAll(t, conn); s.out[1] != "no terminal\n" {
		t.Errorf("without tty: %+v", s)
	}
}

// TestPodExecStreamsAsWritten: each write of the command reaches the client
// while the command still runs.
func TestPodExecStreamsAsWritten(t *testing.T) {
	f := newExecFixture(t)
	conn := dial(t, f.base+"one/exec?command=step", v5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, want := range []string{"\x01", "\x01first\n"} {
		if _, b, err := conn.Read(ctx); err != nil || string(b) != want {
			t.Fatalf("read %q, %v; want %q before the command ends", b, err, want)
		}
	}
	close(f.release)
	s := readAll(t, conn)
	if s.out[1] != "second\n" || s.status.Status != metav1.StatusSuccess {
		t.Errorf("after the release: %q, status %+v", s.out, s.status)
	}
}

// TestPodExecStreamLargeOutput: output longer than a message is split, and
// arrives whole.
func TestPodExecStreamLargeOutput(t *testing.T) {
	f := newExecFixture(t)
	s := readAll(t, dial(t, f.base+"one/exec?command=big", v5))
	if want := strings.Repeat("0123456789", 10_000); s.out[1] != want {
		t.Errorf("stdout: %d bytes, want %d", len(s.out[1]), len(want))
	}
	n := 0
	for _, m := range s.msgs {
		if len(m.data) > execChunk {
			t.Errorf("a message of %d bytes, more than %d", len(m.data), execChunk)
		}
		if m.ch == 1 && m.data != "" {
			n++
		}
	}
	if n < 4 {
		t.Errorf("stdout came in %d messages, want 100,000 bytes split into at least 4", n)
	}
}

// TestPodExecStreamClientGoes: when the client goes away (kubectl is
// interrupted), the command's context ends.
func TestPodExecStreamClientGoes(t *testing.T) {
	f := newExecFixture(t)
	conn := dial(t, f.base+"one/exec?command=wait&stdin=true", v5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := conn.Read(ctx); err != nil { // the stream is up
		t.Fatal(err)
	}
	conn.CloseNow()
	select {
	case err := <-f.gone:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the command's context ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the command's context did not end")
	}
}

// TestPodExecStreamReadLimit: kubectl's largest stdin message (32 KiB and
// the channel byte) is accepted.
func TestPodExecStreamReadLimit(t *testing.T) {
	f := newExecFixture(t)
	conn := dial(t, f.base+"one/exec?command=cat&stdin=true", v5)
	in := strings.Repeat("x", 32<<10)
	send(t, conn, stdinMsg(in), stdinMsg(in), []byte{255, 0})
	if s := readAll(t, conn); s.out[1] != in+in || s.status.Status != metav1.StatusSuccess {
		t.Errorf("stdout: %d bytes, status %+v", len(s.out[1]), s.status)
	}
}

// TestPodExecStreamWaitsForTheClientsStreams: a client that says nothing
// gets no message before streamGrace has passed (kubectl v1.32 drops a
// message that comes before it has made its streams); a client that speaks
// first has made them, and gets the output without that wait.
func TestPodExecStreamWaitsForTheClientsStreams(t *testing.T) {
	f := newExecFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	start := time.Now()
	conn := dial(t, f.base+"one/exec?command=ls&stdout=true", v5)
	if _, b, err := conn.Read(ctx); err != nil || string(b) != "\x01" {
		t.Fatalf("first message %q, %v; want the empty stdout message", b, err)
	}
	if waited := time.Since(start); waited < streamGrace {
		t.Errorf("the first message came %v after the dial; want it held for %v", waited, streamGrace)
	}

	// cat with a stdin: the client's first frame releases the server at
	// once, and the output it echoes follows.
	conn = dial(t, f.base+"one/exec?command=cat&stdin=true&stdout=true", v5)
	send(t, conn, stdinMsg("hi"), []byte{255, 0})
	s := readAll(t, conn)
	if s.out[1] != "hi" || s.status.Status != metav1.StatusSuccess {
		t.Errorf("cat after the client spoke: %q, status %+v", s.out, s.status)
	}
}
