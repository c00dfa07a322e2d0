package apiserver

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Serving on loopback only
//
// kube-apiserver authenticates every request (client certificates, bearer
// tokens) before anything else in its filter chain
// (k8s.io/apiserver/pkg/server/filters, DefaultBuildHandlerChain), over
// TLS. kubetab authenticates bearer tokens (authn.go), and `kubetab
// cluster` serves TLS with a self-signed certificate, but it is one
// learner's sandbox: it listens on loopback only, where only programs on
// the learner's own machine can reach it. A web page cannot read the
// kubeconfig's token, so its requests are system:anonymous, which RBAC
// lets read /version and /healthz only; still, one of those
// programs is the learner's web browser, and any page it shows can send
// requests to http://127.0.0.1:6443 in two ways that need no permission
// from the server:
//
//   - DNS rebinding: a page on evil.example makes its own name resolve to
//     127.0.0.1, and its requests then reach the cluster as same-origin
//     requests, free to read the answers. They still carry
//     "Host: evil.example".
//   - "Simple" cross-origin requests: a POST with no Content-Type, or one of
//     text/plain, application/x-www-form-urlencoded or multipart/form-data,
//     is sent without a CORS preflight; the page cannot read the answer,
//     but the write happens.
//
// LoopbackOnly closes both: it answers only requests whose Host names the
// served address or a loopback name, and it refuses a request body without
// a Content-Type that comes from a web page (the API server already answers
// a body in any type but JSON, YAML or protobuf with 415). A browser marks
// every request that is not a GET or HEAD with an Origin header (the Fetch
// standard), which no command-line client sends. kube-apiserver reads a
// body without a Content-Type as JSON, and so does kubetab for those
// clients: `kubectl create --raw -f FILE` sends none.

// LoopbackOnly wraps the API handler h for serving at served (host:port,
// the listener's address): see above.
func LoopbackOnly(h http.Handler, served string) http.Handler {
	servedHost, _, err := net.SplitHostPort(served)
	if err != nil {
		servedHost = served
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host, servedHost) {
			writeError(w, r, forbiddenHost(r.Host, served))
			return
		}
		if r.Header.Get("Content-Type") == "" && hasBody(r) && fromPage(r) {
			writeError(w, r, unsupportedMedia(""))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// fromPage says whether a request was sent by a web page: browsers add
// Origin to every request but GET and HEAD, and Sec-Fetch-Site to all.
func fromPage(r *http.Request) bool {
	return r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != ""
}

// loopbackHost says whether a request's Host header names the served host
// or a loopback one: an IP literal in 127.0.0.0/8 or ::1, "localhost", or a
// name under .localhost (which resolvers must answer with loopback, RFC
// 6761). The port is not checked: only names can be rebound.
func loopbackHost(hostport, served string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport // no port
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return false
	}
	if strings.EqualFold(host, strings.Trim(served, "[]")) {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	host = strings.ToLower(host)
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// hasBody says whether r carries a body: a Content-Length above zero, or
// one of unknown length (chunked).
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

func forbiddenHost(host, served string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: fmt.Sprintf("forbidden: the Host %q is neither %s nor a loopback name; "+
			"this unauthenticated API answers only requests addressed to the machine it runs on (protection against DNS rebinding)", host, served),
	}}
}
