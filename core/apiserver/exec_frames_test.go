package apiserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/internal/tty"
)

// frame is one channel protocol message with its length before it.
func frame(ch byte, data string) []byte {
	b := make([]byte, 5+len(data))
	binary.BigEndian.PutUint32(b, uint32(1+len(data)))
	b[4] = ch
	copy(b[5:], data)
	return b
}

// TestPodExecChannels: the POST form of the channel protocol, exec_frames.go.
// stdin reaches the command until the close signal, a resize reaches its
// terminal, the output comes on channels 1 and 2, and the status ends it.
func TestPodExecChannels(t *testing.T) {
	var size tty.Size
	srv, reg := newTestServerWith(t, func(c *Config) {
		c.Exec = ExecProviderFunc(func(ctx context.Context, pod *corev1.Pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
			if term := tty.From(ctx); term != nil {
				size = <-term.Resize
			}
			b, _ := io.ReadAll(stdin)
			fmt.Fprintf(stdout, "read %q", b)
			fmt.Fprint(stderr, "err")
			return 4, nil
		})
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "hello", Image: "hello"}}}}
	if _, err := reg.MustLookup("", "pods").Create(context.Background(), "default", pod, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.Write(frame(4, `{"Width":90,"Height":20}`))
	body.Write(frame(0, "hi "))
	body.Write(frame(0, "there"))
	body.Write(frame(255, "\x00"))
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/namespaces/default/pods/one/exec?command=sh&stdin=true&tty=true", &body)
	req.Header.Set("Content-Type", "application/vnd.kubetab.channels")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.kubetab.channels" {
		t.Fatalf("%d %s: %q", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	out := map[byte]string{}
	var order []byte
	for len(data) >= 4 {
		n := binary.BigEndian.Uint32(data)
		msg := data[4 : 4+n]
		data = data[4+n:]
		out[msg[0]] += string(msg[1:])
		order = append(order, msg[0])
	}
	var st metav1.Status
	if err := json.Unmarshal([]byte(out[3]), &st); err != nil {
		t.Fatalf("status %q: %v", out[3], err)
	}
	if out[1] != `read "hi there"` || out[2] != "err" || order[0] != 1 || order[len(order)-1] != 3 ||
		st.Reason != "NonZeroExitCode" || st.Details.Causes[0].Message != "4" || size != (tty.Size{Width: 90, Height: 20}) {
		t.Errorf("got %q (order %v), status %+v, size %v", out, order, st, size)
	}

	// Refused before the stream, as a plain Status.
	req, _ = http.NewRequest("POST", srv.URL+"/api/v1/namespaces/default/pods/one/exec?command=sh&container=nope", strings.NewReader(""))
	req.Header.Set("Content-Type", "application/vnd.kubetab.channels")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "container nope is not valid for pod one") {
		t.Errorf("bad container: %d %s", resp.StatusCode, b)
	}
}
