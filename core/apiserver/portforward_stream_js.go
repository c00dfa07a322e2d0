//go:build js

package apiserver

import (
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// portForwardUpgrade refuses in the browser build: the page's requests are
// messages (wasm/), which cannot switch protocols, and a tab has no local
// port to forward from. The SPDY server of the native build
// (portforward_stream.go) is left out.
func (s *Server) portForwardUpgrade(w http.ResponseWriter, r *http.Request, _ *corev1.Pod) {
	writeError(w, r, apierrors.NewBadRequest("kubetab forwards ports only natively (kubetab cluster with the real kubectl): a browser tab has no local port to listen on"))
}
