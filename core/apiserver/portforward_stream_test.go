//go:build !js

package apiserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// portForwardFixture is an API server whose PortForwardProvider echoes
// lines on port 80 ("echo <line>"), refuses port 81 and holds port 82
// until the connection ends; pods: "one" (running on node-1), "pend"
// (bound, Pending) and "nohost" (not bound).
type portForwardFixture struct {
	base  string // .../namespaces/default/pods/
	uid   string // of "one"
	ended chan error
}

func newPortForwardFixture(t *testing.T) *portForwardFixture {
	t.Helper()
	f := &portForwardFixture{ended: make(chan error, 4)}
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.PortForward = PortForwardProviderFunc(func(ctx context.Context, pod *corev1.Pod, port int32, stream io.ReadWriteCloser) error {
			defer stream.Close()
			switch port {
			case 80:
				sc := bufio.NewScanner(stream)
				for sc.Scan() {
					if _, err := fmt.Fprintf(stream, "echo %s from %s\n", sc.Text(), pod.Name); err != nil {
						return err
					}
				}
				return nil
			case 82:
				_, err := io.Copy(io.Discard, stream)
				f.ended <- err
				return nil
			}
			return errors.New("connection refused")
		})
	})
	st := reg.MustLookup("", "pods")
	for _, p := range []struct {
		name, node string
		phase      corev1.PodPhase
	}{{"one", "node-1", corev1.PodRunning}, {"pend", "node-1", corev1.PodPending}, {"nohost", "", ""}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: p.name},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "web", Image: "web"}}}}
		obj, err := st.Create(context.Background(), "default", pod, registry.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.phase != "" {
			pod = obj.(*corev1.Pod)
			pod.Status.Phase = p.phase
			if _, err := st.Update(context.Background(), pod, registry.UpdateOptions{Subresource: "status"}); err != nil {
				t.Fatal(err)
			}
		}
		if p.name == "one" {
			f.uid = string(obj.(*corev1.Pod).UID)
		}
	}
	f.base = srv.URL + "/api/v1/namespaces/default/pods/"
	return f
}

// dialSPDY opens a pods/portforward connection the way kubectl falls back
// to: an upgrade to SPDY/3.1.
func dialSPDY(t *testing.T, rawURL string) httpstream.Connection {
	t.Helper()
	rt, err := spdy.NewRoundTripper(nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(rawURL)
	req := &http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}}
	req.Header.Set(httpstream.HeaderProtocolVersion, portForwardProtocol)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rt.NewConnection(resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// dialTunnel opens one the way kubectl v1.31+ does first: SPDY frames in
// binary WebSocket messages.
func dialTunnel(t *testing.T, rawURL string) httpstream.Connection {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ws, _, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{Subprotocols: []string{portForwardTunnelProtocol}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Subprotocol(); got != portForwardTunnelProtocol {
		t.Fatalf("subprotocol %q, want %q", got, portForwardTunnelProtocol)
	}
	conn, err := spdy.NewClientConnection(websocket.NetConn(ctx, ws, websocket.MessageBinary))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// forward opens the stream pair of one forwarded connection, as client-go's
// PortForwarder.handleConnection does: the error stream first (closed for
// writing: only the server writes to it), then the data stream.
func forward(t *testing.T, conn httpstream.Connection, port, requestID string) (data httpstream.Stream, errs <-chan string) {
	t.Helper()
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, port)
	h.Set(corev1.PortForwardRequestIDHeader, requestID)
	errStream, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	errStream.Close()
	ch := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(errStream)
		ch <- string(b)
	}()
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err = conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	return data, ch
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
		panic("unreachable")
	}
}

func TestPodPortForward(t *testing.T) {
	f := newPortForwardFixture(t)
	for _, tr := range []struct {
		name string
		dial func(*testing.T, string) httpstream.Connection
	}{{"WebSocket tunnel", dialTunnel}, {"SPDY", dialSPDY}} {
		t.Run(tr.name, func(t *testing.T) {
			conn := tr.dial(t, f.base+"one/portforward")

			// Two connections at once on one upgraded connection, each
			// answered on its own stream.
			d1, e1 := forward(t, conn, "80", "0")
			d2, e2 := forward(t, conn, "80", "1")
			fmt.Fprint(d2, "b\n")
			fmt.Fprint(d1, "a\nc\n")
			d1.Close() // the local program is done writing
			d2.Close()
			for _, c := range []struct {
				data httpstream.Stream
				want string
			}{{d1, "echo a from one\necho c from one\n"}, {d2, "echo b from one\n"}} {
				got, err := io.ReadAll(c.data)
				if err != nil || string(got) != c.want {
					t.Errorf("data = %q, %v; want %q", got, err, c.want)
				}
			}
			for _, e := range []<-chan string{e1, e2} {
				if msg := wait(t, e); msg != "" {
					t.Errorf("error stream = %q, want empty", msg)
				}
			}

			// A port nobody serves: the error stream says why, in the
			// kubelet's words.
			d3, e3 := forward(t, conn, "81", "2")
			want := "error forwarding port 81 to pod " + f.uid + ", uid : connection refused"
			if msg := wait(t, e3); msg != want {
				t.Errorf("error stream = %q, want %q", msg, want)
			}
			if b, _ := io.ReadAll(d3); len(b) != 0 {
				t.Errorf("data of a refused connection = %q", b)
			}

			// The client going away ends a connection still forwarding.
			d4, _ := forward(t, conn, "82", "3")
			fmt.Fprint(d4, "x")
			conn.Close()
			wait(t, f.ended)
		})
	}
}

// TestPodPortForwardStreamChecks: streams with a bad port or type header
// are refused (reset) and do not disturb the connection's other streams.
func TestPodPortForwardStreamChecks(t *testing.T) {
	f := newPortForwardFixture(t)
	conn := dialSPDY(t, f.base+"one/portforward")
	for _, hdr := range []map[string]string{
		{corev1.StreamType: corev1.StreamTypeData},
		{corev1.StreamType: corev1.StreamTypeData, corev1.PortHeader: "http"},
		{corev1.StreamType: corev1.StreamTypeData, corev1.PortHeader: "0"},
		{corev1.StreamType: corev1.StreamTypeData, corev1.PortHeader: "70000"},
		{corev1.PortHeader: "80"},
		{corev1.StreamType: "stdin", corev1.PortHeader: "80"},
	} {
		h := http.Header{}
		for k, v := range hdr {
			h.Set(k, v)
		}
		// A refused stream is reset, which CreateStream reports (it waits
		// for the server's reply).
		if st, err := conn.CreateStream(h); err == nil {
			st.Reset()
			t.Errorf("stream %v was accepted, want it refused", hdr)
		}
	}
	d, e := forward(t, conn, "80", "7")
	fmt.Fprint(d, "still here\n")
	d.Close()
	if got, _ := io.ReadAll(d); string(got) != "echo still here from one\n" {
		t.Errorf("after refused streams: %q", got)
	}
	if msg := wait(t, e); msg != "" {
		t.Errorf("error stream = %q", msg)
	}
}

// TestPodPortForwardErrorsBeforeUpgrade: what is wrong with the pod or the
// request is answered as a Status before switching protocols, so kubectl
// prints it.
func TestPodPortForwardErrorsBeforeUpgrade(t *testing.T) {
	f := newPortForwardFixture(t)
	ws := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
		"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", portForwardTunnelProtocol}
	spdyHdr := []string{"Connection", "Upgrade", "Upgrade", "SPDY/3.1", "X-Stream-Protocol-Version", portForwardProtocol}
	tests := []struct {
		name, method, path string
		hdr                []string
		code               int
		want               string
	}{
		{"no such pod", "GET", "nope/portforward", ws, 404, `"message":"pods \"nope\" not found"`},
		{"not bound", "POST", "nohost/portforward", spdyHdr, 400, `"message":"pod nohost does not have a host assigned"`},
		{"not running", "POST", "pend/portforward", spdyHdr, 400, `"message":"unable to upgrade connection: pod pend is not running (phase Pending)"`},
		{"no upgrade", "POST", "one/portforward", nil, 400, `"message":"Upgrade request required"`},
		{"other upgrade", "POST", "one/portforward", []string{"Connection", "Upgrade", "Upgrade", "h2c"}, 400, `not \"h2c\"`},
		{"exec subprotocol", "GET", "one/portforward", append(ws[:8:8], "Sec-WebSocket-Protocol", "v5.channel.k8s.io"), 400,
			`"message":"requested protocol(s) are not supported: [v5.channel.k8s.io]; supports [SPDY/3.1+portforward.k8s.io]"`},
		{"SPDY without protocol", "POST", "one/portforward", spdyHdr[:4], 400, `unable to upgrade: header X-Stream-Protocol-Version does not exist`},
		{"SPDY other protocol", "POST", "one/portforward", append(spdyHdr[:4:4], "X-Stream-Protocol-Version", "v4.channel.k8s.io"), 403, `unable to negotiate protocol`},
		{"cross-origin page", "GET", "one/portforward", append(ws, "Origin", "http://evil.example"), 403, `not authorized`},
		{"PUT", "PUT", "one/portforward", ws, 405, `"reason":"MethodNotAllowed"`},
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
