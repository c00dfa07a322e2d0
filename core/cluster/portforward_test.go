//go:build !js

package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
)

// TestPortForward is `kubectl port-forward pod/web-x 0:8080` end to end:
// client-go's PortForwarder (kubectl's code) on the WebSocket tunnel to the
// API server, the pod's kubelet, and the web container serving each HTTP
// request of the forwarded connection, keep-alive included.
func TestPortForward(t *testing.T) {
	c, ctx := startCluster(t)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	cl := c.Client("test")
	if _, err := cl.Deployments().Create(ctx, webDeployment("web", 1)); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	eventually(t, 60*time.Second, "a web pod Running", func() (bool, string) {
		pods, _, err := cl.Pods().List(ctx, "default", client.ListOptions{})
		if err != nil || len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Sprint(pods, err)
		}
		pod = pods[0]
		return true, ""
	})

	forward := func(t *testing.T, port string) (local string) {
		t.Helper()
		u, _ := url.Parse(srv.URL + "/api/v1/namespaces/default/pods/" + pod.Name + "/portforward")
		dialer, err := portforward.NewSPDYOverWebsocketDialer(u, &rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		stop, ready := make(chan struct{}), make(chan struct{})
		pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + port}, stop, ready, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- pf.ForwardPorts() }()
		t.Cleanup(func() { close(stop); <-done })
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("ForwardPorts: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("port forward not ready")
		}
		ports, err := pf.GetPorts()
		if err != nil || len(ports) != 1 {
			t.Fatal(ports, err)
		}
		return fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local)
	}

	t.Run("declared port", func(t *testing.T) {
		local := forward(t, "8080")
		// One client, so the second request reuses the connection: the
		// kubelet serves HTTP with keep-alive on the forwarded stream.
		hc := &http.Client{Timeout: 30 * time.Second}
		for i, path := range []string{"/", "/healthz"} {
			var reused bool
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, local+path, nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode != 200:
				t.Errorf("GET %s = %d %s", path, resp.StatusCode, b)
			case i == 0 && !strings.Contains(string(b), "hello from "+pod.Name):
				t.Errorf("GET / = %q, want the pod's greeting", b)
			case i == 1 && strings.TrimSpace(string(b)) != "ok":
				t.Errorf("GET /healthz = %q", b)
			}
			if i == 1 && !reused {
				t.Errorf("GET %s: a new connection; want the first one kept alive", path)
			}
		}
	})

	t.Run("undeclared port", func(t *testing.T) {
		// The forwarded connection is closed without an answer; kubectl
		// prints the kubelet's reason (checked with the real kubectl in
		// test/conformance, and word for word in core/apiserver).
		local := forward(t, "81")
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, local+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET through a port nobody serves = %d, want a closed connection", resp.StatusCode)
		}
		if ctx.Err() != nil {
			t.Fatalf("GET through a port nobody serves: %v; want the connection closed at once", err)
		}
	})
}
