package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// attachPattern is where pods/attach is served.
const attachPattern = "/api/v1/namespaces/{namespace}/pods/{name}/attach"

// errNoAttach answers pods/attach. Upstream it joins the standard streams
// of the container's running process; kubetab's runtime keeps a guest's
// output only in its log and gives it no stdin, so there is nothing to
// join. kubectl run --attach (and -i) falls back to streaming the logs
// when it reads this, printing it as the reason; kubectl attach prints it.
var errNoAttach = apierrors.NewBadRequest("kubetab cannot attach to a running container: its output is in the container's log (kubectl logs -f POD) and it reads no stdin; kubectl exec runs a command in it")

// podAttach serves pods/attach: the pod is looked up first (a missing pod
// is a 404, as upstream), then refused with errNoAttach.
func (s *Server) podAttach(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/attach"}, strings.ToLower(r.Method)))
		return
	}
	if _, err := s.requestPod(r); err != nil {
		writeError(w, r, err)
		return
	}
	writeError(w, r, errNoAttach)
}
