package apiserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/trace"
)

// The API server's hops in the trace (core/trace): each resource request
// from a client that names itself in its User-Agent, and the answer.
// Discovery and OpenAPI requests are left out: they describe the API, they
// do not act on objects.

// traceComponent names the client of r as the trace shows it: the
// User-Agent up to its first "/" ("kubectl/v1.32.0 (linux/amd64) ..." is
// kubectl). Browsers ("Mozilla/5.0 ...": the page's own panels) and clients
// without a User-Agent are not traced.
func traceComponent(r *http.Request) string {
	ua := r.UserAgent()
	if ua == "" || strings.HasPrefix(ua, "Mozilla/") {
		return ""
	}
	name, _, _ := strings.Cut(ua, "/")
	return strings.TrimSpace(name)
}

// tracedWriter records the request when it is known and the answer's status.
type tracedWriter struct {
	http.ResponseWriter
	rec   *trace.Recorder
	hop   trace.Hop // the request
	begun bool      // the request is recorded
	code  int
	// created names the object a create made (generateName's result).
	created string
}

func (w *tracedWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *tracedWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps watches and logs streaming through the wrapper.
func (w *tracedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *tracedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// begin records the request, once; name fills in a create's object name.
func (w *tracedWriter) begin(name string) {
	if w.begun {
		return
	}
	w.begun = true
	if w.hop.Name == "" {
		w.hop.Name = name
	}
	w.rec.Record(w.hop)
}

// done records the answer (watches: nothing; their events are traced as
// they are sent).
func (w *tracedWriter) done() {
	w.begin("")
	if w.hop.Verb == "watch" || w.code == 0 {
		return
	}
	name := w.hop.Name
	if w.created != "" {
		name = w.created
	}
	w.rec.Record(trace.Hop{Kind: trace.Response, From: trace.APIServer, To: w.hop.From, Code: w.code, Resource: w.hop.Resource, Namespace: w.hop.Namespace, Name: name})
}

type tracedKey struct{}

// traceRequest returns the writer that traces r, and r with the client named
// in its context. The request is recorded at once, except a create's: that
// waits for the body, which names the object (traceCreating).
func (s *Server) traceRequest(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo, who string) (*tracedWriter, *http.Request) {
	res := st.Resource.TraceName()
	if info.Subresource != "" {
		res += "/" + info.Subresource
	}
	tw := &tracedWriter{ResponseWriter: w, rec: s.reg.Trace(),
		hop: trace.Hop{Kind: trace.Request, From: who, To: trace.APIServer, Verb: info.Verb, Resource: res, Namespace: info.Namespace, Name: info.Name}}
	if info.Verb != "create" || info.Name != "" {
		tw.begin("")
	}
	ctx := context.WithValue(trace.WithComponent(r.Context(), who), tracedKey{}, tw)
	return tw, r.WithContext(ctx)
}

// traceCreating records a create request once its body is read.
func traceCreating(ctx context.Context, name string) {
	if tw, ok := ctx.Value(tracedKey{}).(*tracedWriter); ok {
		tw.begin(name)
	}
}

// traceCreated names the object a create request made, for its answer.
func traceCreated(ctx context.Context, name string) {
	if tw, ok := ctx.Value(tracedKey{}).(*tracedWriter); ok {
		tw.created = name
	}
}
