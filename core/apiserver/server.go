// Package apiserver is kubetab's kube-apiserver: an http.Handler that serves
// the Kubernetes REST API over the registry (and so over the store).
//
// Upstream counterpart: k8s.io/apiserver/pkg/endpoints (handlers/create.go,
// get.go, update.go, patch.go, delete.go, watch.go; discovery/) and
// k8s.io/kubernetes/pkg/controlplane.
//
// A request walks the same path as in a real cluster:
//
//	GET /api/v1/namespaces/default/pods?labelSelector=app%3Dweb
//	     │      │          │       │
//	     │      │          │       └ resource (plural)
//	     │      │          └ namespace
//	     │      └ group/version ("" and v1 live under /api; others under /apis/<group>/<version>)
//	     └ legacy core group
//
// The handler gives the request a deadline (timeout.go), parses the path into
// a requestInfo (verb, resource, namespace, name, subresource), negotiates
// the answer's encoding and shape from the Accept header (negotiate.go),
// decodes the body, calls the registry (which defaults, validates, admits
// and writes to the store) and encodes the answer: JSON or YAML, or a
// meta.k8s.io Table when the client asks for one (kubectl get does). Every
// failure is a metav1.Status with the upstream code, reason and message.
//
// Where to look:
//
//	rest.go       routing; get, create, update, delete, deletecollection, pods/log
//	list.go       lists: limit/continue at one revision, resourceVersion(Match)
//	watch.go      watches: initial events, bookmarks, timeouts, 410 Gone
//	patch.go      JSON, merge and strategic merge patches
//	apply.go      server-side apply and managedFields
//	decode.go     request bodies: JSON, YAML, protobuf; fieldValidation
//	options.go    dryRun, fieldManager, fieldValidation, force
//	discovery.go  /api, /apis, legacy and aggregated discovery
//	openapi_routes.go  /openapi/v2 and /openapi/v3 (documents: package openapi)
//	negotiate.go  Accept: JSON, YAML, Table, PartialObjectMetadata; 406
//	timeout.go    request deadlines: 504 after Config.RequestTimeout
package apiserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/openapi"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

// LogProvider streams a container's log; the kubelet of the pod's node
// implements it (upstream: the apiserver proxies to the kubelet's
// /containerLogs endpoint). The pod is bound and the container exists.
type LogProvider interface {
	PodLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error
}

// LogProviderFunc adapts a function to LogProvider.
type LogProviderFunc func(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error

// PodLogs calls f.
func (f LogProviderFunc) PodLogs(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions, w io.Writer) error {
	return f(ctx, pod, opts, w)
}

// Config configures a Server.
type Config struct {
	Registry *registry.Registry
	// Logs serves pods/log; nil answers 503.
	Logs LogProvider
	// Exec serves pods/exec (exec.go); nil answers 503.
	Exec ExecProvider
	// Attach serves pods/attach (attach.go); nil refuses it.
	Attach AttachProvider
	// PortForward serves pods/portforward (portforward.go); nil answers 503.
	PortForward PortForwardProvider
	// PodNetwork carries pods/proxy and services/proxy to the pods
	// (proxy.go); nil answers 503.
	PodNetwork PodNetwork
	// Decisions serves the scheduler's decision records (decisions.go); nil answers 503.
	Decisions DecisionProvider
	// Queue serves the scheduler's queue (schedqueue.go); nil: not served.
	Queue QueueProvider
	// Clock is used for ages in tables; nil means the real clock.
	Clock clock.PassiveClock
	// MaxRequestBodyBytes bounds request bodies (413 above); zero means 3 MiB,
	// kube-apiserver's limit.
	MaxRequestBodyBytes int64
	// JSONPatchMaxCopyBytes bounds how much a JSON patch's "copy" operations
	// may add to a document (evanphx/json-patch's AccumulatedCopySizeLimit);
	// zero means 3 MiB, kube-apiserver's limit. The library keeps the limit
	// in a package variable, so, as upstream, a server only ever lowers it.
	JSONPatchMaxCopyBytes int64
	// ExternalAddress is reported in /api's serverAddressByClientCIDRs.
	ExternalAddress string
	// RequestTimeout bounds every request that is not long-running (watches
	// and pods/log are): past it the answer is 504 "Timeout: request did not
	// complete within the allotted timeout". A client's ?timeout= shortens
	// it. Zero means 60 s, kube-apiserver's --request-timeout; negative
	// means no limit.
	RequestTimeout time.Duration
	// MinRequestTimeout: a watch without timeoutSeconds ends after a random
	// time between this and twice this, so clients reconnect spread out.
	// Zero means 30 minutes, kube-apiserver's --min-request-timeout.
	MinRequestTimeout time.Duration
	// Tokens authenticates the bearer tokens of requests (authn.go); a
	// request without one is system:anonymous. Nil turns authentication
	// off: every request is Admin (tests of this package and its users).
	Tokens TokenAuthenticator
	// BookmarkInterval is how often a watch that allows bookmarks gets one.
	// Zero means a minute, as kube-apiserver's watch cache.
	BookmarkInterval time.Duration
}

// Server is the API server's HTTP handler.
type Server struct {
	cfg     Config
	reg     *registry.Registry
	mux     *http.ServeMux
	openapi *openapi.Spec
	fields  *fieldManagers
	// rbac and authorizer decide who may do what (auth.go).
	rbac       *authz.RBAC
	authorizer authz.Authorizer
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Registry == nil {
		return nil, errors.New("apiserver: Config.Registry is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.MaxRequestBodyBytes == 0 {
		cfg.MaxRequestBodyBytes = 3 << 20
	}
	if cfg.JSONPatchMaxCopyBytes == 0 {
		cfg.JSONPatchMaxCopyBytes = 3 << 20
	}
	lowerJSONPatchCopyLimit(cfg.JSONPatchMaxCopyBytes)
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = time.Minute
	}
	if cfg.MinRequestTimeout <= 0 {
		cfg.MinRequestTimeout = 30 * time.Minute
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = time.Minute
	}
	s := &Server{cfg: cfg, reg: cfg.Registry, mux: http.NewServeMux()}
	s.rbac = authz.NewRBAC(newRegistryPolicy(s.reg))
	s.authorizer = authz.Privileged{Next: authz.NewNode(registryPods{reg: s.reg}, nodeRules(), s.rbac)}
	s.handleReviews() // review.go
	s.mux.HandleFunc("/version", s.version)
	s.mux.HandleFunc("/version/", s.version)
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		s.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "ok")
		})
	}
	s.openapi, _ = openapi.New(openapi.Config{Version: Version.GitVersion, Resources: s.openAPIResources})
	s.fields = &fieldManagers{s: s}
	s.mux.HandleFunc("/openapi/v2", s.openAPIV2)
	s.mux.HandleFunc("/openapi/v3", s.openAPIV3)
	s.mux.HandleFunc("/openapi/v3/", s.openAPIV3)
	s.mux.HandleFunc("/api", s.legacyVersions)
	s.mux.HandleFunc("/api/", s.resources)
	s.mux.HandleFunc("/apis", s.groups)
	s.mux.HandleFunc("/apis/", s.resources)
	s.mux.HandleFunc("/apis/"+schedv1alpha1.GroupName+"/", s.schedulingDecisions)
	s.mux.HandleFunc("/apis/"+flowGV.Group+"/", s.flowAPI) // flow.go
	s.mux.HandleFunc("/apis/"+flowGV.Group, s.flowAPI)
	s.mux.HandleFunc(execPattern, s.podExec)
	s.mux.HandleFunc(portForwardPattern, s.podPortForward)
	s.mux.HandleFunc(attachPattern, s.podAttach)
	s.mux.HandleFunc(podProxyPattern, s.podProxy)
	s.mux.HandleFunc(podProxyPattern+"/{path...}", s.podProxy)
	s.mux.HandleFunc(serviceProxyPattern, s.serviceProxy)
	s.mux.HandleFunc(serviceProxyPattern+"/{path...}", s.serviceProxy)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFoundPath(r.URL.Path))
	})
	return s, nil
}

// ServeHTTP serves the Kubernetes API, within the request timeout.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	s.withTimeout(w, r, s.serve)
}

// serve routes a request and turns a panic into a 500 Status.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			writeError(w, r, internalError(p))
		}
	}()
	s.mux.ServeHTTP(w, r)
}

func (s *Server) now() time.Time { return s.cfg.Clock.Now() }
