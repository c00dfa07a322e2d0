package client

import (
	"context"
	"errors"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/trace"
)

// Who a component is. Upstream, each component has its own credentials
// (the scheduler's and the controller manager's client certificates, each
// kubelet's, a token per controller ServiceAccount) and the API server
// authorizes every request it makes. kubetab's components reach the
// registry in-process, so their client carries the identity instead: the
// user the API server's authentication would have found, and the API
// server's authorizer, which every call asks first.
//
//	scheduler.Bind(pod, node-2)
//	   └─ Client.As(system:kube-scheduler)
//	        authorize {create pods/binding in default} ── RBAC: ClusterRoleBinding system:kube-scheduler
//	        registry.Bind(ctx carrying the user)
//
// A refused call returns the 403 an HTTP client would get (`pods is
// forbidden: User "system:kube-scheduler" cannot delete resource
// "namespaces" ...`); the trace shows it, and Identity.Denied hears it (the
// component's log: core/cluster prints it), so a missing rule is never a
// silent hang. The check is an in-memory walk over the bindings (the API
// server keeps the RBAC objects decoded): about a microsecond, against the
// tens a write costs.
//
// A client made by New has no identity: it is the API server's own
// loopback client (upstream: system:apiserver in system:masters), for
// bootstrap steps and tests, and is not checked.

// Identity is who a client acts as, and who decides what it may do.
type Identity struct {
	// User is the component's user (system:kube-scheduler,
	// system:node:node-1, system:serviceaccount:kube-system:...).
	User *authz.User
	// ListWatchAs, when set, is the user of the client's lists and
	// watches. Upstream's controllers watch through the controller
	// manager's shared informers, which run as system:kube-controller-manager,
	// and only write (and get) as their ServiceAccount; kubetab's
	// controllers build their informers from their own client, so the
	// client sends lists and watches as the controller manager instead.
	ListWatchAs *authz.User
	// Authorizer is the API server's (apiserver.Server.Authorizer).
	Authorizer authz.Authorizer
	// Denied, if set, hears every refused call with the client's user
	// agent: what a component would log.
	Denied func(component string, err error)
}

// As returns a client like c that acts as id: every call is authorized
// for id.User first, and carries the user in its context.
func (c *Client) As(id Identity) *Client {
	cp := *c
	cp.id = &id
	return &cp
}

// User is the user the client acts as; nil for a loopback client.
func (c *Client) User() *authz.User {
	if c.id == nil {
		return nil
	}
	return c.id.User
}

// authorize asks the client's authorizer whether its user may do verb on
// the resource (subresource, namespace and name as the call names them),
// and returns ctx carrying the user. A list or watch of one name
// (a field selector on metadata.name) is a request for that name, as
// upstream's RequestInfo makes it.
func (r Resource[T]) authorize(ctx context.Context, verb, subresource, namespace, name string) (context.Context, error) {
	if r.id == nil {
		return ctx, nil
	}
	if verb == "create" && subresource == "" {
		name = "" // a create names no object yet (upstream's RequestInfo)
	}
	u := r.id.User
	if r.id.ListWatchAs != nil && (verb == "list" || verb == "watch") {
		u = r.id.ListWatchAs
	}
	res := r.store.Resource
	a := authz.Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: res.Group, APIVersion: res.Version,
		Resource: res.Resource, Subresource: subresource, Namespace: namespace, Name: name, NoAllowReason: true}
	if a.Resource == "namespaces" && a.APIGroup == "" && a.Subresource == "" && a.Name != "" {
		a.Namespace = a.Name
	}
	return r.id.authorize(ctx, r.component, a)
}

// authorize asks the identity's authorizer about a (whose User is set)
// and returns ctx carrying the user, or the 403 an HTTP client would get.
func (id *Identity) authorize(ctx context.Context, component string, a authz.Attributes) (context.Context, error) {
	ctx = authz.WithUser(ctx, a.User)
	dec, reason, err := id.Authorizer.Authorize(ctx, a)
	if dec == authz.DecisionAllow {
		return ctx, nil
	}
	if err != nil {
		if reason != "" {
			reason += ", "
		}
		reason += err.Error()
	}
	denied := authz.Forbidden(a, reason)
	if id.Denied != nil {
		id.Denied(component, denied)
	}
	return ctx, denied
}

// nameOf is the name a list or watch asks for by field selector, if any.
func nameOf(opts ListOptions) string {
	if opts.FieldSelector == nil {
		return ""
	}
	name, _ := opts.FieldSelector.RequiresExactMatch("metadata.name")
	return name
}

// GetScale reads the scale subresource of any resource that has one
// (deployments, replica sets, stateful sets, replication controllers,
// custom resources with a scale subresource).
func (c *Client) GetScale(ctx context.Context, group, resource, namespace, name string) (*autoscalingv1.Scale, error) {
	r := For[runtime.Object](c, group, resource)
	ctx, done, err := r.call(ctx, "get", "scale", namespace, name)
	if err != nil {
		return nil, err
	}
	sc, err := r.store.GetScale(ctx, namespace, name)
	done(http.StatusOK, err)
	return sc, err
}

// UpdateScale writes the scale subresource: the HPA's way to resize.
func (c *Client) UpdateScale(ctx context.Context, group, resource string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
	r := For[runtime.Object](c, group, resource)
	ctx, done, err := r.call(ctx, "update", "scale", sc.Namespace, sc.Name)
	if err != nil {
		return nil, err
	}
	out, err := r.store.UpdateScale(ctx, sc, registry.UpdateOptions{})
	done(http.StatusOK, err)
	return out, err
}

// ListPodMetrics lists the PodMetrics (metrics.k8s.io/v1beta1) of namespace
// that match selector: what the HPA controller reads. Upstream the
// controller reads them with a REST client of the resource metrics API
// under its own credentials, not through the controller manager's shared
// informers, so the call is authorized as the client's own user (list
// pods.metrics.k8s.io: the system:controller:horizontal-pod-autoscaler
// role) even when its lists and watches go as the controller manager.
func (c *Client) ListPodMetrics(ctx context.Context, namespace string, selector labels.Selector) (*metricsv1beta1.PodMetricsList, error) {
	api := c.reg.Metrics()
	gv := registry.MetricsGroupVersion
	res := "pods." + gv.Group
	rec := c.reg.Trace()
	ctx = registry.AsComponent(ctx, c.UserAgent)
	done := func(err error) {}
	if rec != nil {
		ctx = trace.WithComponent(ctx, c.UserAgent)
		rec.Record(trace.Hop{Kind: trace.Request, From: c.UserAgent, To: trace.APIServer, Verb: "list", Resource: res, Namespace: namespace})
		done = func(err error) {
			code, detail := http.StatusOK, ""
			if err != nil {
				code = http.StatusInternalServerError
				if st, ok := err.(apierrors.APIStatus); ok || errors.As(err, &st) {
					code, detail = int(st.Status().Code), st.Status().Message
				}
			}
			rec.Record(trace.Hop{Kind: trace.Response, From: trace.APIServer, To: c.UserAgent, Code: code, Resource: res, Namespace: namespace, Detail: detail})
		}
	}
	if c.id != nil {
		a := authz.Attributes{User: c.id.User, Verb: "list", ResourceRequest: true, APIGroup: gv.Group, APIVersion: gv.Version,
			Resource: "pods", Namespace: namespace, NoAllowReason: true}
		var err error
		if ctx, err = c.id.authorize(ctx, c.UserAgent, a); err != nil {
			done(err)
			return nil, err
		}
	}
	if api == nil {
		err := apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: "pods"}, "")
		done(err)
		return nil, err
	}
	list, err := api.ListPods(ctx, namespace, selector, nil)
	done(err)
	return list, err
}
