//go:build js

package apiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// execUpgrade refuses to stream in the browser build. Its requests come from
// the page as messages (wasm/), which cannot switch protocols, and the
// in-browser kubectl POSTs the command instead (podExec); the WebSocket
// server of the native build (exec_stream.go) is left out.
func (s *Server) execUpgrade(w http.ResponseWriter, r *http.Request, _ *corev1.Pod, _ string, _ []string) {
	writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("kubetab serves pods/exec without streaming in the browser: upgrading to %q is not supported; POST the command instead", r.Header.Get("Upgrade"))))
}

// attachUpgrade refuses, as execUpgrade does.
func (s *Server) attachUpgrade(w http.ResponseWriter, r *http.Request, _ *corev1.Pod, _ string) {
	writeError(w, r, errNoAttach)
}
