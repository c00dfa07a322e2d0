package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

// DecisionProvider serves the scheduler's record of why a pod went where it
// went (or why it is still Pending); the scheduler implements it. It is the
// same pattern as LogProvider: the API server does not keep this data, it
// asks the component that has it, as kube-apiserver asks the kubelet for
// pods/log.
type DecisionProvider interface {
	// SchedulingDecision returns the record of a pod's last scheduling
	// attempts, or false if the scheduler has none (the pod was never
	// attempted, was bound by someone else, or its record was evicted).
	SchedulingDecision(namespace, name string) (*schedv1alpha1.SchedulingDecision, bool)
}

// DecisionProviderFunc adapts a function to DecisionProvider.
type DecisionProviderFunc func(namespace, name string) (*schedv1alpha1.SchedulingDecision, bool)

// SchedulingDecision calls f.
func (f DecisionProviderFunc) SchedulingDecision(namespace, name string) (*schedv1alpha1.SchedulingDecision, bool) {
	return f(namespace, name)
}

// decisionsGroupResource names the resource in errors.
var decisionsGroupResource = schema.GroupResource{Group: schedv1alpha1.GroupName, Resource: schedv1alpha1.Resource}

// schedulingDecisions serves
//
//	GET /apis/scheduling.kubetab.dev/v1alpha1/namespaces/{namespace}/schedulingdecisions/{pod}
//
// a kubetab-only, read-only resource that lives in the scheduler's memory,
// not in the store (see package core/scheduler/apis/v1alpha1 for its shape
// and why its size is bounded). It is left out of discovery on purpose, so
// `kubectl api-resources` and `kubectl get all` never meet it; kubectl
// reaches it with `kubectl get --raw` or kubetab's `kubectl scheduling
// explain POD`.
func (s *Server) schedulingDecisions(w http.ResponseWriter, r *http.Request) {
	queues := "/apis/" + schedv1alpha1.SchemeGroupVersion.String() + "/" + schedv1alpha1.QueueResource
	if rest, ok := strings.CutPrefix(r.URL.Path, queues); ok && (rest == "" || rest[0] == '/') {
		segs := strings.Split(strings.Trim(rest, "/"), "/")
		if segs[0] == "" {
			segs = nil
		}
		if s.cfg.Queue == nil || len(segs) > 1 {
			writeError(w, r, notFoundPath(r.URL.Path))
			return
		}
		s.serveFlow(w, r, schedulingQueuesResource, segs) // schedqueue.go
		return
	}
	prefix := "/apis/" + schedv1alpha1.SchemeGroupVersion.String() + "/namespaces/"
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	segs := strings.Split(rest, "/")
	if !ok || len(segs) != 3 || segs[0] == "" || segs[1] != schedv1alpha1.Resource || segs[2] == "" {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	namespace, name := segs[0], segs[2]
	if r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(decisionsGroupResource, strings.ToLower(r.Method)))
		return
	}
	if s.cfg.Decisions == nil {
		writeError(w, r, apierrors.NewServiceUnavailable("the scheduler's decision records are not available"))
		return
	}
	d, found := s.cfg.Decisions.SchedulingDecision(namespace, name)
	if !found {
		writeError(w, r, apierrors.NewNotFound(decisionsGroupResource, name))
		return
	}
	if d.Namespace != namespace || d.Name != name {
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("decision provider answered %s/%s for %s/%s", d.Namespace, d.Name, namespace, name)))
		return
	}
	d.APIVersion = schedv1alpha1.SchemeGroupVersion.String()
	d.Kind = schedv1alpha1.Kind
	writeJSON(w, http.StatusOK, d)
}
