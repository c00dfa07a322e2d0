//go:build js

package kubelet

import (
	"context"
	"errors"
	"io"

	corev1 "k8s.io/api/core/v1"
)

// PortForward refuses in the browser build, whose API server never asks
// (a tab has no local port to forward from: see core/apiserver's
// portforward_stream_js.go). Leaving the native HTTP server out
// (portforward.go) keeps net/http's server code out of kubetab.wasm:
// 0.7 MB raw, 0.15 MB gzip.
func (kl *Kubelet) PortForward(_ context.Context, _ *corev1.Pod, _ int32, _ io.ReadWriteCloser) error {
	return errors.New("port forwarding is served by the native build only")
}
