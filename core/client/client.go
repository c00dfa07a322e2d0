// Package client is how the control plane's own components talk to the API
// server in-process: a typed client, informers (a list+watch cache with event
// handlers) and work queues.
//
// Upstream counterpart: k8s.io/client-go (kubernetes.Interface,
// tools/cache.SharedIndexInformer and util/workqueue). Controllers, the
// scheduler and the kubelets in kubetab use the same pattern as upstream:
//
//	        list + watch                 events               keys
//	API ───────────────▶ Informer ─────────────────▶ handler ───────▶ Queue
//	server               (cache: the Lister)                          │
//	   ▲                                                               ▼
//	   └─────────── create / update / delete ◀──── Reconcile(key) ◀── worker
//
// The difference is the transport: these calls go straight to the API
// server's registry (the same authorization, validation, defaulting,
// admission and resourceVersion checks as an HTTP request: each component's
// client carries its identity, identity.go), with no JSON on the way.
// kubectl, in the browser console or the real one, uses HTTP.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/core/trace"
)

// Client is the in-process client of one component.
type Client struct {
	reg *registry.Registry
	// UserAgent names the component ("kube-scheduler"); the trace shows it.
	UserAgent string
	// id is who the client acts as (identity.go); nil: the loopback client.
	id *Identity
	// informers, when not nil, makes NewInformer over this client's
	// resources share the factory's informers (WithSharedInformers).
	informers *SharedInformerFactory
}

// New returns a client over the registry.
func New(reg *registry.Registry, userAgent string) *Client {
	return &Client{reg: reg, UserAgent: userAgent}
}

// Registry is the registry the client talks to.
func (c *Client) Registry() *registry.Registry { return c.reg }

// Typed clients of the served resources.
func (c *Client) Pods() Resource[*corev1.Pod]     { return For[*corev1.Pod](c, "", "pods") }
func (c *Client) Nodes() Resource[*corev1.Node]   { return For[*corev1.Node](c, "", "nodes") }
func (c *Client) Events() Resource[*corev1.Event] { return For[*corev1.Event](c, "", "events") }
func (c *Client) Namespaces() Resource[*corev1.Namespace] {
	return For[*corev1.Namespace](c, "", "namespaces")
}
func (c *Client) Deployments() Resource[*appsv1.Deployment] {
	return For[*appsv1.Deployment](c, "apps", "deployments")
}
func (c *Client) ReplicaSets() Resource[*appsv1.ReplicaSet] {
	return For[*appsv1.ReplicaSet](c, "apps", "replicasets")
}

// For returns the typed client of a registered resource. It panics if the
// resource is not served or T is not its type: a programming error.
func For[T runtime.Object](c *Client, group, resource string) Resource[T] {
	s := c.reg.MustLookup(group, resource)
	if _, ok := s.Resource.New().(T); !ok {
		panic(fmt.Sprintf("client: %s.%s does not hold %T", resource, group, *new(T)))
	}
	return Resource[T]{store: s, component: c.UserAgent, id: c.id, informers: c.informers}
}

// Resource is a typed client of one resource, like client-go's PodInterface,
// but across namespaces: every call names its namespace ("" for cluster-scoped
// resources, and for "all namespaces" in List and Watch).
type Resource[T runtime.Object] struct {
	store     *registry.Store
	component string // the client's UserAgent, for the trace
	id        *Identity
	informers *SharedInformerFactory
}

// Store is the registry store behind the client.
func (r Resource[T]) Store() *registry.Store { return r.store }

// Get returns one object.
func (r Resource[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	ctx, done, err := r.call(ctx, "get", "", namespace, name)
	if err != nil {
		var zero T
		return zero, err
	}
	obj, err := r.store.Get(ctx, namespace, name)
	done(http.StatusOK, err)
	if err != nil {
		var zero T
		return zero, err
	}
	return obj.(T), nil
}

// ListOptions select the objects of a List or Watch, as metav1.ListOptions
// do for client-go's typed clients (there, as query parameters): components
// say what they want in the client's own terms and never reach into the
// API server's registry for them.
type ListOptions struct {
	LabelSelector labels.Selector // nil: everything
	FieldSelector fields.Selector // nil: everything
	// ResourceVersion for Watch: "" or "0" starts with the current state as
	// ADDED events; any other value streams the changes after that revision.
	ResourceVersion string
	// AllowWatchBookmarks asks Watch for BOOKMARK events.
	AllowWatchBookmarks bool
}

// List returns the objects of namespace ("" for all) matching opts, and the
// resourceVersion of the list.
func (r Resource[T]) List(ctx context.Context, namespace string, opts ListOptions) ([]T, string, error) {
	ctx, done, err := r.call(ctx, "list", "", namespace, nameOf(opts))
	if err != nil {
		return nil, "", err
	}
	list, err := r.store.List(ctx, namespace, registry.ListOptions(opts))
	done(http.StatusOK, err)
	if err != nil {
		return nil, "", err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
	}
	acc, _ := meta.ListAccessor(list)
	return out, acc.GetResourceVersion(), nil
}

// Create stores a new object; its namespace comes from the object.
func (r Resource[T]) Create(ctx context.Context, obj T) (T, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		var zero T
		return zero, err
	}
	name := acc.GetName()
	if name == "" {
		name = acc.GetGenerateName() // "web-5d9c7b8f6-": the server adds the rest
	}
	ctx, done, err := r.call(ctx, "create", "", acc.GetNamespace(), name)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := r.store.Create(ctx, acc.GetNamespace(), obj, registry.CreateOptions{})
	done(http.StatusCreated, err, out)
	return r.cast(out, err)
}

// Update replaces an object (409 Conflict if its resourceVersion is stale).
func (r Resource[T]) Update(ctx context.Context, obj T) (T, error) {
	return r.update(ctx, obj, "")
}

// UpdateStatus writes the status subresource.
func (r Resource[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	return r.update(ctx, obj, "status")
}

// UpdateSubresource writes another subresource that takes the whole
// object: a namespace's "finalize".
func (r Resource[T]) UpdateSubresource(ctx context.Context, obj T, subresource string) (T, error) {
	return r.update(ctx, obj, subresource)
}

func (r Resource[T]) update(ctx context.Context, obj T, subresource string) (T, error) {
	var ns, name string
	if acc, err := meta.Accessor(obj); err == nil {
		ns, name = acc.GetNamespace(), acc.GetName()
	}
	ctx, done, err := r.call(ctx, "update", subresource, ns, name)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := r.store.Update(ctx, obj, registry.UpdateOptions{Subresource: subresource})
	done(http.StatusOK, err)
	return r.cast(out, err)
}

// Delete deletes an object; opts may be nil.
func (r Resource[T]) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) error {
	ctx, done, err := r.call(ctx, "delete", "", namespace, name)
	if err != nil {
		return err
	}
	_, _, err = r.store.Delete(ctx, namespace, name, opts)
	done(http.StatusOK, err)
	return err
}

// Watch streams changes; see registry.Store.Watch.
func (r Resource[T]) Watch(ctx context.Context, namespace string, opts ListOptions) (watch.Interface, error) {
	ctx, done, err := r.call(ctx, "watch", "", namespace, nameOf(opts))
	if err != nil {
		return nil, err
	}
	w, err := r.store.Watch(ctx, namespace, registry.ListOptions(opts))
	if err != nil {
		done(http.StatusOK, err) // a watch that starts answers only when it ends
	}
	return w, err
}

func (r Resource[T]) cast(obj runtime.Object, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return obj.(T), nil
}

// Bind assigns a pod to a node through the pods/binding subresource.
func (c *Client) Bind(ctx context.Context, b *corev1.Binding) error {
	pods := For[*corev1.Pod](c, "", "pods")
	ctx, done, err := pods.call(ctx, "create", "binding", b.Namespace, b.Name)
	if err != nil {
		return err
	}
	_, err = pods.store.Bind(ctx, b)
	done(http.StatusCreated, err)
	return err
}

// call records the request of one call in the trace (core/trace),
// authorizes it (identity.go) and returns ctx naming the client and its
// user, and the function that records the response: code on success, the
// error's status otherwise. A created object (the optional argument) names
// the response when the request had only generateName. A refused call
// returns the 403 (already recorded as the response).
func (r Resource[T]) call(ctx context.Context, verb, subresource, namespace, name string) (context.Context, func(code int, err error, created ...runtime.Object), error) {
	// In the browser every goroutine shares one thread, and a call here is
	// a function call, not a network round trip: a controller creating 500
	// pods in a burst would never block, and the worker would not read the
	// page's messages until it was done. Each call is a point where the
	// thread goes back to the event loop once it has been held for
	// eventloop.Slice (nothing natively).
	eventloop.MaybeTurn()
	// The mark of a component's call: step mode holds these writes
	// (registry/step.go); the learner's HTTP requests carry none.
	ctx = registry.AsComponent(ctx, r.component)
	rec := r.store.Registry().Trace()
	if rec == nil {
		ctx, err := r.authorize(ctx, verb, subresource, namespace, name)
		return ctx, func(int, error, ...runtime.Object) {}, err
	}
	ctx = trace.WithComponent(ctx, r.component)
	res := r.store.Resource.TraceName()
	if subresource != "" {
		res += "/" + subresource
	}
	rec.Record(trace.Hop{Kind: trace.Request, From: r.component, To: trace.APIServer, Verb: verb, Resource: res, Namespace: namespace, Name: name})
	done := func(code int, err error, created ...runtime.Object) {
		detail := ""
		if err != nil {
			code = http.StatusInternalServerError
			if st, ok := err.(apierrors.APIStatus); ok || errors.As(err, &st) {
				code = int(st.Status().Code)
				detail = st.Status().Message
			}
		} else if len(created) > 0 && created[0] != nil {
			if acc, aerr := meta.Accessor(created[0]); aerr == nil {
				name = acc.GetName()
			}
		}
		rec.Record(trace.Hop{Kind: trace.Response, From: trace.APIServer, To: r.component, Code: code, Resource: res, Namespace: namespace, Name: name, Detail: detail})
	}
	ctx, err := r.authorize(ctx, verb, subresource, namespace, name)
	if err != nil {
		done(0, err)
	}
	return ctx, done, err
}
