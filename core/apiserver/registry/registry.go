// Package registry turns the key/value store into Kubernetes objects: it is
// the part of kube-apiserver between the HTTP handlers and etcd.
//
// Upstream counterpart: k8s.io/apiserver/pkg/registry/generic/registry/store.go
// (the generic "Store" every resource uses) with the per-resource strategies of
// k8s.io/kubernetes/pkg/registry/<group>/<resource>/strategy.go.
//
// Every request, whether it came over HTTP from kubectl or in-process from a
// controller, passes the same steps here:
//
//	create:  name (generateName) -> uid, creationTimestamp -> mutating admission
//	         (NamespaceLifecycle, ServiceAccount, Priority, LimitRanger, then
//	         RBAC's escalation check) ->
//	         PrepareForCreate (defaults, clear status) -> Validate -> validating
//	         admission (NodeRestriction, Priority, ResourceQuota) ->
//	         BeginCreate (allocate a Service's clusterIP) -> store.Create -> finish
//	update:  read current -> resourceVersion check (409 Conflict) -> mutating
//	         admission -> PrepareForUpdate (keep status, bump generation) ->
//	         ValidateUpdate -> validating admission -> BeginUpdate ->
//	         store.Update(compare-and-swap on the mod revision) -> finish
//	delete:  admission -> graceful deletion, finalizers and termination phases
//	         (namespaces) set deletionTimestamp (an update); otherwise
//	         store.Delete -> AfterDelete (release a Service's clusterIP)
//
// The files beside this one hold the strategies, one file per API group
// (core_*.go for the legacy group, apps.go, batch.go, ...), the admission
// plugins (admission.go, admission_node.go, scheduling.go, admission_quota.go, rbac_escalation.go), the Service IP and port allocators
// (allocator.go), the metrics API (metrics.go) and the objects a new cluster
// starts with (bootstrap.go).
//
// An object's metadata.resourceVersion is the store's ModRevision of its key;
// it is not stored inside the value, exactly as in kube-apiserver's etcd3 layer.
package registry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/step"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/core/trace"
)

// Resource describes one served resource: its names, its Go type and its
// strategy (the rules that differ between resources).
type Resource struct {
	Group, Version, Kind string
	Resource             string   // plural, lower case: "pods"
	Singular             string   // "pod"
	ShortNames           []string // "po"
	Categories           []string // "all"
	Namespaced           bool
	// KeyPrefix is the store prefix, "/registry/pods". Upstream keeps some
	// historical names (nodes live under /registry/minions).
	KeyPrefix string
	// Subresources served besides the main resource: "status", "binding", ...
	Subresources []string
	New          func() runtime.Object
	NewList      func() runtime.Object
	Strategy     Strategy
	// NoGeneration marks kinds without metadata.generation (ConfigMaps,
	// Services, Events ...); upstream only sets it where a spec is reconciled.
	NoGeneration bool
	// Codec, when set, stores the objects as another kind: events.k8s.io/v1
	// Events live under /registry/events as core/v1 Events (see events.go).
	Codec *Codec
	// Table, when set, answers kubectl get's Table requests instead of the
	// printers (core/printers): custom resources print their CRD's
	// additionalPrinterColumns.
	Table func(obj runtime.Object, now time.Time) (*metav1.Table, error)
	// OpenAPISchema, when set, is the JSON schema of the objects for the
	// OpenAPI documents (a CRD version's openAPIV3Schema); otherwise they
	// describe the Go type New returns.
	OpenAPISchema []byte
}

// Codec converts between a served kind and the kind it is stored as, the way
// kube-apiserver stores every version of a resource as one storage version.
type Codec struct {
	// Storage is the stored kind; NewStorage returns an empty one.
	Storage    schema.GroupVersionKind
	NewStorage func() runtime.Object
	// ToStorage and FromStorage convert one object; neither may fail on a
	// valid object.
	ToStorage   func(runtime.Object) runtime.Object
	FromStorage func(runtime.Object) runtime.Object
}

// GroupVersionKind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// GroupResource names the resource in error messages ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// GroupVersionResource of the resource.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// HasSubresource reports whether sub is served.
func (r *Resource) HasSubresource(sub string) bool {
	for _, s := range r.Subresources {
		if s == sub {
			return true
		}
	}
	return false
}

// Strategy holds the per-resource rules, like upstream's RESTCreateStrategy,
// RESTUpdateStrategy and RESTDeleteStrategy together.
type Strategy interface {
	// PrepareForCreate sets defaults and clears fields a client may not set
	// (status, for resources with a status subresource).
	PrepareForCreate(obj runtime.Object)
	// PrepareForUpdate copies from old what this kind of update may not change.
	PrepareForUpdate(obj, old runtime.Object)
	// Validate checks a new object; ValidateUpdate checks an update.
	Validate(obj runtime.Object) field.ErrorList
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
	// Fields returns the values a field selector can match.
	Fields(obj runtime.Object) fields.Set
}

// LazyFields is implemented by strategies whose objects are matched
// against field selectors on a hot path (every pod event, for each
// kubelet's watch of spec.nodeName=<its node>): the same fields as Fields,
// each read when a selector asks for it, instead of a map of all of them
// built for every match. (Upstream's watch cache gets there with its
// spec.nodeName trigger, which skips the watchers of other nodes.)
type LazyFields interface {
	FieldsOf(obj runtime.Object) fields.Fields
}

// GracefulDeleter is implemented by strategies of resources that are not
// deleted at once (pods). It returns the grace period to wait, and false when
// the object should go at once.
type GracefulDeleter interface {
	GracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) (int64, bool)
}

// StatusStrategy is implemented by strategies that serve a status subresource.
type StatusStrategy interface {
	PrepareForStatusUpdate(obj, old runtime.Object)
	ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList
}

// FinalizeStrategy is implemented by the namespace strategy: the
// namespaces/{name}/finalize subresource writes spec.finalizers only.
type FinalizeStrategy interface {
	PrepareForFinalize(obj, old runtime.Object)
	ValidateFinalize(obj, old runtime.Object) field.ErrorList
}

// Terminator is implemented by strategies of resources whose deletion is a
// phase of their own (upstream: the namespace storage's Delete). The first
// delete sets deletionTimestamp and calls Terminate (a namespace turns
// Terminating); the object stays until Finalized reports true (its
// spec.finalizers are empty), when a delete, or the update that empties them,
// removes it.
type Terminator interface {
	Terminate(obj runtime.Object)
	Finalized(obj runtime.Object) bool
}

// FinishFunc ends what a BeginCreate or BeginUpdate started: success tells
// whether the object was written (upstream: genericregistry.FinishFunc).
type FinishFunc func(ctx context.Context, success bool)

// CreateHook is implemented by strategies that reserve something outside the
// object before it is stored (a Service's clusterIP and nodePorts), or act
// once it is (a new namespace gets its "default" ServiceAccount). BeginCreate
// runs after validation and admission, just before the write; the returned
// FinishFunc (may be nil) runs after the write.
type CreateHook interface {
	BeginCreate(ctx context.Context, reg *Registry, obj runtime.Object, dryRun bool) (FinishFunc, error)
}

// UpdateHook is CreateHook for updates; it may run more than once for one
// update when a write conflicts and is retried (each with its FinishFunc).
type UpdateHook interface {
	BeginUpdate(ctx context.Context, reg *Registry, obj, old runtime.Object, dryRun bool) (FinishFunc, error)
}

// DeleteHook is implemented by strategies that release what an object held
// once it is gone from the store (upstream: genericregistry.Store.AfterDelete).
type DeleteHook interface {
	AfterDelete(ctx context.Context, reg *Registry, obj runtime.Object)
}

// Admission checks a create, update or delete before it is stored, like
// kube-apiserver's admission chain (NamespaceLifecycle, ...). On delete, obj
// is the object as stored.
type Admission func(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error

// Operation is what a request does, for admission.
type Operation string

type subresourceKey struct{}

// SubresourceOf is, for an admission plugin, the subresource of the write
// it checks: "" for the object itself, "status" for a status update,
// "eviction" for a pods/eviction (upstream's
// admission.Attributes.GetSubresource). Plugins about an object's spec
// skip subresource writes, as upstream's ResourceQuota does; NodeRestriction
// tells a kubelet's pods/status from its pods.
func SubresourceOf(ctx context.Context) string {
	sub, _ := ctx.Value(subresourceKey{}).(string)
	return sub
}

// withSubresource marks ctx as a write of sub. Every entry of the store
// sets it, so a write the registry makes on behalf of another (ResourceQuota
// charging a quota's status while it admits a pod) carries its own.
func withSubresource(ctx context.Context, sub string) context.Context {
	if SubresourceOf(ctx) == sub {
		return ctx
	}
	return context.WithValue(ctx, subresourceKey{}, sub)
}

// Operations.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Config configures a Registry.
type Config struct {
	Store *store.Store
	Clock clock.PassiveClock
	// ServiceCIDR is the range Service clusterIPs come from
	// (--service-cluster-ip-range); default 10.96.0.0/12.
	ServiceCIDR string
	// NodePortRange is the range of Service nodePorts
	// (--service-node-port-range); default 30000-32767.
	NodePortRange string
	// Metrics serves metrics.k8s.io; nil serves no metrics (see metrics.go).
	Metrics MetricsProvider
	// Trace records the API server's writes to etcd and the watch events it
	// hands to components (core/trace); nil records nothing.
	Trace *trace.Recorder
	// RootCA is the PEM bundle published as the kube-root-ca.crt ConfigMap
	// of every namespace (its ca.crt key). kubetab serves plain HTTP and has
	// no CA, so it is empty unless a host sets one.
	RootCA string
}

// Registry is the set of served resources over one store.
type Registry struct {
	kv    *store.Store
	clock clock.PassiveClock

	serviceIPs *ipRange   // Config.ServiceCIDR
	nodePorts  *portRange // Config.NodePortRange
	metrics    MetricsProvider
	rootCA     string
	trace      *trace.Recorder
	step       atomic.Pointer[step.Gate] // step mode (step.go)
	// policyGen counts the writes to RBAC objects (policy_generation.go).
	policyGen atomic.Uint64

	mu        sync.RWMutex // guards the maps and the admission lists
	byName    map[schema.GroupResource]*Store
	byKind    map[schema.GroupVersionKind]*Store
	byVersion map[schema.GroupVersionResource]*Store
	byPrefix  map[string]*Store // by Resource.KeyPrefix, for the trace
	order     []*Store
	mutating  []Admission
	admission []Admission
}

// New returns a registry with no resources; see Register and Default.
func New(cfg Config) (*Registry, error) {
	if cfg.Store == nil {
		return nil, errors.New("registry: Config.Store is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.ServiceCIDR == "" {
		cfg.ServiceCIDR = DefaultServiceCIDR
	}
	if cfg.NodePortRange == "" {
		cfg.NodePortRange = DefaultNodePortRange
	}
	ips, err := parseIPRange(cfg.ServiceCIDR)
	if err != nil {
		return nil, fmt.Errorf("registry: ServiceCIDR: %w", err)
	}
	ports, err := parsePortRange(cfg.NodePortRange)
	if err != nil {
		return nil, fmt.Errorf("registry: NodePortRange: %w", err)
	}
	r := &Registry{
		kv:         cfg.Store,
		clock:      cfg.Clock,
		serviceIPs: ips,
		nodePorts:  ports,
		metrics:    cfg.Metrics,
		rootCA:     cfg.RootCA,
		trace:      cfg.Trace,
		byName:     map[schema.GroupResource]*Store{},
		byKind:     map[schema.GroupVersionKind]*Store{},
		byVersion:  map[schema.GroupVersionResource]*Store{},
		byPrefix:   map[string]*Store{},
	}
	cfg.Store.SetObserver(r.observe)
	return r, nil
}

// Register adds a resource and returns its store.
func (r *Registry) Register(res *Resource) *Store {
	s := &Store{Resource: res, reg: r, gone: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	// A resource served in a second version (autoscaling/v1 beside v2)
	// keeps its first, preferred, version under its name and prefix.
	if _, dup := r.byName[res.GroupResource()]; !dup {
		r.byName[res.GroupResource()] = s
		r.byPrefix[res.KeyPrefix] = s
	}
	r.byVersion[res.GroupVersionResource()] = s
	r.byKind[res.GroupVersionKind()] = s
	r.order = append(r.order, s)
	return s
}

// Unregister stops serving one version of a resource: discovery, the REST
// paths and the OpenAPI documents drop it at once, and every open watch of
// it ends (its result channel closes, as when upstream's crdHandler tears
// down a CRD's storage: clients watch again, and find it gone). Its objects
// stay in the store (the apiextensions controller deletes a CRD's objects
// before it unregisters them). It reports whether the version was served.
func (r *Registry) Unregister(gvr schema.GroupVersionResource) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byVersion[gvr]
	if !ok {
		return false
	}
	s.destroy()
	delete(r.byVersion, gvr)
	delete(r.byKind, s.Resource.GroupVersionKind())
	for i, o := range r.order {
		if o == s {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	if r.byName[s.Resource.GroupResource()] == s {
		delete(r.byName, s.Resource.GroupResource())
		delete(r.byPrefix, s.Resource.KeyPrefix)
		// Another version of the resource, if one is left, takes its name.
		for _, o := range r.order {
			if o.Resource.GroupResource() == s.Resource.GroupResource() {
				r.byName[o.Resource.GroupResource()] = o
				r.byPrefix[o.Resource.KeyPrefix] = o
				break
			}
		}
	}
	return true
}

// AddAdmission appends a validating admission check, run on every create
// and update after the object is defaulted and validated, and on every
// delete.
func (r *Registry) AddAdmission(a Admission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admission = append(r.admission, a)
}

// AddMutatingAdmission appends a mutating admission plugin: it runs first,
// on the object as the client sent it (before defaults and validation), and
// may change it, as upstream's mutating admission phase does.
func (r *Registry) AddMutatingAdmission(a Admission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mutating = append(r.mutating, a)
}

// Resources lists the registered stores in registration order.
func (r *Registry) Resources() []*Store {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*Store(nil), r.order...)
}

// Lookup finds a store by group and plural resource name.
func (r *Registry) Lookup(gr schema.GroupResource) (*Store, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.byName[gr]
	return s, ok
}

// LookupVersion finds the store of one version of a resource.
func (r *Registry) LookupVersion(gvr schema.GroupVersionResource) (*Store, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.byVersion[gvr]
	return s, ok
}

// ForKind finds the store serving a kind.
func (r *Registry) ForKind(gvk schema.GroupVersionKind) (*Store, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.byKind[gvk]
	return s, ok
}

// MustLookup is Lookup for resources the caller registered itself.
func (r *Registry) MustLookup(group, resource string) *Store {
	s, ok := r.Lookup(schema.GroupResource{Group: group, Resource: resource})
	if !ok {
		panic(fmt.Sprintf("registry: %s.%s is not registered", resource, group))
	}
	return s
}

// KV is the underlying key/value store.
func (r *Registry) KV() *store.Store { return r.kv }

// Clock is the registry's clock.
func (r *Registry) Clock() clock.PassiveClock { return r.clock }

// Store serves one resource: the generic REST storage of upstream.
type Store struct {
	Resource *Resource
	reg      *Registry
	decoded  decodedCache // see storage.go

	// gone is closed when the store stops being served (Unregister): its
	// open watches end, as upstream's storage teardown ends them.
	gone     chan struct{}
	goneOnce sync.Once
}

// destroy ends the store's open watches; it may be called more than once.
func (s *Store) destroy() { s.goneOnce.Do(func() { close(s.gone) }) }

// Key returns the store key of an object: /registry/pods/default/web-1, or
// /registry/minions/node-1 for cluster-scoped resources.
func (s *Store) Key(namespace, name string) string {
	if s.Resource.Namespaced {
		return s.Resource.KeyPrefix + "/" + namespace + "/" + name
	}
	return s.Resource.KeyPrefix + "/" + name
}

// prefix is the key prefix of a list: every namespace when namespace is "".
func (s *Store) prefix(namespace string) string {
	if s.Resource.Namespaced && namespace != "" {
		return s.Resource.KeyPrefix + "/" + namespace + "/"
	}
	return s.Resource.KeyPrefix + "/"
}

func (s *Store) notFound(name string) error {
	return apierrors.NewNotFound(s.Resource.GroupResource(), name)
}

// encode serializes obj for the store, with apiVersion and kind set and
// without resourceVersion (the store's revision is the resourceVersion).
func (s *Store) encode(obj runtime.Object) ([]byte, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := acc.GetResourceVersion()
	acc.SetResourceVersion("")
	obj.GetObjectKind().SetGroupVersionKind(s.Resource.GroupVersionKind())
	stored := obj
	if c := s.Resource.Codec; c != nil {
		stored = c.ToStorage(obj)
		if sacc, err := meta.Accessor(stored); err == nil {
			sacc.SetResourceVersion("")
		}
		stored.GetObjectKind().SetGroupVersionKind(c.Storage)
	}
	data, err := marshalStorage(stored)
	acc.SetResourceVersion(rv)
	return data, err
}

// CreateOptions are the options of a create.
type CreateOptions struct {
	DryRun bool
}

// Create stores a new object in namespace and returns it as stored.
func (s *Store) Create(ctx context.Context, namespace string, obj runtime.Object, opts CreateOptions) (runtime.Object, error) {
	ctx = withSubresource(withDryRun(ctx, opts.DryRun), "")
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if ctx, err = s.hold(ctx, "create", "", cmp.Or(acc.GetNamespace(), namespace), cmp.Or(acc.GetName(), acc.GetGenerateName())); err != nil {
		return nil, err
	}
	if err := s.checkKind(obj); err != nil {
		return nil, err
	}
	if s.Resource.Namespaced {
		if acc.GetNamespace() == "" {
			acc.SetNamespace(namespace)
		}
		if namespace != "" && acc.GetNamespace() != namespace {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		acc.SetNamespace("")
	}
	if acc.GetName() == "" && acc.GetGenerateName() != "" {
		acc.SetName(generateName(acc.GetGenerateName()))
	}
	acc.SetUID(types.UID(uuid.NewUUID()))
	acc.SetCreationTimestamp(metav1.NewTime(s.reg.clock.Now().Truncate(1e9)))
	acc.SetResourceVersion("")
	acc.SetDeletionTimestamp(nil)
	acc.SetDeletionGracePeriodSeconds(nil)
	acc.SetGeneration(0)
	if !s.Resource.NoGeneration {
		acc.SetGeneration(1)
	}
	acc.SetSelfLink("")
	if err := s.admitChain(ctx, s.reg.mutatingChain(), Create, obj, nil); err != nil {
		return nil, err
	}
	s.Resource.Strategy.PrepareForCreate(obj)
	if errs := s.Resource.Strategy.Validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(s.Resource.GroupVersionKind().GroupKind(), acc.GetName(), errs)
	}
	if err := s.admit(ctx, Create, obj, nil); err != nil {
		return nil, err
	}
	key := s.Key(acc.GetNamespace(), acc.GetName())
	if _, err := s.reg.kv.Get(key); err == nil {
		// Checked before BeginCreate so an existing name never allocates.
		return nil, apierrors.NewAlreadyExists(s.Resource.GroupResource(), acc.GetName())
	}
	var finish FinishFunc
	if h, ok := s.Resource.Strategy.(CreateHook); ok {
		if finish, err = h.BeginCreate(ctx, s.reg, obj, opts.DryRun); err != nil {
			return nil, err
		}
	}
	done := func(ok bool) {
		if finish != nil {
			finish(ctx, ok)
		}
	}
	data, err := s.encode(obj)
	if err != nil {
		done(false)
		return nil, apierrors.NewInternalError(err)
	}
	if opts.DryRun {
		done(true)
		return obj, nil
	}
	kv, err := s.reg.kv.Create(key, data)
	if errors.Is(err, store.ErrExists) {
		done(false)
		return nil, apierrors.NewAlreadyExists(s.Resource.GroupResource(), acc.GetName())
	}
	if err != nil {
		done(false)
		return nil, s.storeErr(err, acc.GetName())
	}
	acc.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	done(true)
	return obj, nil
}

func (s *Store) checkKind(obj runtime.Object) error {
	want := reflect.TypeOf(s.Resource.New())
	if got := reflect.TypeOf(obj); got != want {
		return apierrors.NewBadRequest(fmt.Sprintf("%s: expected %v, got %v", s.Resource.Resource, want, got))
	}
	return nil
}

func (r *Registry) mutatingChain() []Admission {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mutating
}

// admit runs the validating admission chain.
func (s *Store) admit(ctx context.Context, op Operation, obj, old runtime.Object) error {
	s.reg.mu.RLock()
	chain := s.reg.admission
	s.reg.mu.RUnlock()
	return s.admitChain(ctx, chain, op, obj, old)
}

// Admit runs the validating admission chain for a write to a subresource
// that the API server serves itself before it changes anything, as
// upstream's handlers admit a pods/eviction (obj, a policy/v1 Eviction)
// before the eviction's own checks run.
func (s *Store) Admit(ctx context.Context, op Operation, subresource string, obj, old runtime.Object) error {
	return s.admit(withSubresource(ctx, subresource), op, obj, old)
}

func (s *Store) admitChain(ctx context.Context, chain []Admission, op Operation, obj, old runtime.Object) error {
	for _, a := range chain {
		if err := a(ctx, op, s.Resource, obj, old); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the current object, the caller's own copy.
func (s *Store) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	obj, err := s.getShared(namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.DeepCopyObject(), nil
}

// getShared returns the current object without copying it: the caller must
// not modify it. Admission plugins read what they look up this way, as
// upstream's read from their informers' listers.
func (s *Store) getShared(namespace, name string) (runtime.Object, error) {
	kv, err := s.reg.kv.Get(s.Key(namespace, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, s.notFound(name)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj, err := s.decodeShared(kv)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// listShared returns every object of namespace ("" for all) without copying
// them: the caller must not modify them.
func (s *Store) listShared(namespace string) ([]runtime.Object, error) {
	kvs, _ := s.reg.kv.List(s.prefix(namespace))
	out := make([]runtime.Object, 0, len(kvs))
	for _, kv := range kvs {
		obj, err := s.decodeShared(kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// ListOptions select what List and Watch return.
type ListOptions struct {
	LabelSelector labels.Selector // nil: everything
	FieldSelector fields.Selector // nil: everything
	// ResourceVersion for Watch: "" or "0" starts with the current state as
	// ADDED events; any other value streams the changes after that revision.
	ResourceVersion string
	// AllowWatchBookmarks asks Watch for BOOKMARK events.
	AllowWatchBookmarks bool
}

// filters reports whether opts selects anything less than every object.
func (o ListOptions) filters() bool {
	return (o.LabelSelector != nil && !o.LabelSelector.Empty()) || (o.FieldSelector != nil && !o.FieldSelector.Empty())
}

func (s *Store) matches(obj runtime.Object, opts ListOptions) bool {
	if opts.LabelSelector != nil && !opts.LabelSelector.Empty() {
		acc, err := meta.Accessor(obj)
		if err != nil || !opts.LabelSelector.Matches(labels.Set(acc.GetLabels())) {
			return false
		}
	}
	if opts.FieldSelector != nil && !opts.FieldSelector.Empty() {
		var f fields.Fields
		if lf, ok := s.Resource.Strategy.(LazyFields); ok {
			f = lf.FieldsOf(obj)
		} else {
			f = s.Resource.Strategy.Fields(obj)
		}
		if !opts.FieldSelector.Matches(f) {
			return false
		}
	}
	return true
}

// List returns a list object (a *v1.PodList for pods) with the matching items
// of namespace ("" for all), at one consistent revision.
func (s *Store) List(ctx context.Context, namespace string, opts ListOptions) (runtime.Object, error) {
	kvs, rev := s.reg.kv.List(s.prefix(namespace))
	items := make([]runtime.Object, 0, len(kvs))
	for _, kv := range kvs {
		// Only the objects that match are copied out of the decoded
		// cache: a kubelet listing the pods of its node does not pay for
		// the others.
		obj, err := s.decodeShared(kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if s.matches(obj, opts) {
			items = append(items, obj.DeepCopyObject())
		}
	}
	list := s.Resource.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lacc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lacc.SetResourceVersion(strconv.FormatInt(rev, 10))
	list.GetObjectKind().SetGroupVersionKind(s.Resource.GroupVersionKind().GroupVersion().WithKind(s.Resource.Kind + "List"))
	return list, nil
}

// UpdateOptions are the options of an update.
type UpdateOptions struct {
	DryRun bool
	// Subresource is "" for the main resource or "status".
	Subresource string
}

// Update replaces an object. A non-empty resourceVersion in obj must match the
// stored one, or the answer is 409 Conflict; an empty one updates whatever is
// current (upstream allows unconditional updates for most resources).
func (s *Store) Update(ctx context.Context, obj runtime.Object, opts UpdateOptions) (runtime.Object, error) {
	ctx = withSubresource(withDryRun(ctx, opts.DryRun), opts.Subresource)
	if err := s.checkKind(obj); err != nil {
		return nil, err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if !s.Resource.Namespaced {
		acc.SetNamespace("")
	}
	if ctx, err = s.hold(ctx, "update", opts.Subresource, acc.GetNamespace(), acc.GetName()); err != nil {
		return nil, err
	}
	key := s.Key(acc.GetNamespace(), acc.GetName())
	for {
		cur, err := s.reg.kv.Get(key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, s.notFound(acc.GetName())
		}
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		old, err := s.decode(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		expect := int64(0)
		if rv := acc.GetResourceVersion(); rv != "" {
			n, err := strconv.ParseInt(rv, 10, 64)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))
			}
			if n != cur.ModRevision {
				return nil, s.conflict(acc.GetName())
			}
			expect = n
		}
		updated := obj.DeepCopyObject()
		if opts.Subresource == "" {
			if err := s.admitChain(ctx, s.reg.mutatingChain(), Update, updated, old); err != nil {
				return nil, err
			}
		}
		if err := s.prepareUpdate(updated, old, opts.Subresource); err != nil {
			return nil, err
		}
		if err := s.admit(ctx, Update, updated, old); err != nil {
			return nil, err
		}
		uacc, _ := meta.Accessor(updated)
		// An object being deleted goes away when its last finalizer is removed.
		if uacc.GetDeletionTimestamp() != nil && len(uacc.GetFinalizers()) == 0 && gracePassed(uacc) && s.finalized(updated) {
			if opts.DryRun {
				return updated, nil
			}
			gone, err := s.reg.kv.Delete(key, cur.ModRevision)
			if errors.Is(err, store.ErrConflict) && expect == 0 {
				continue
			}
			if err != nil {
				return nil, s.storeErr(err, acc.GetName())
			}
			s.decoded.forget(key)
			s.afterDelete(ctx, old)
			uacc.SetResourceVersion(strconv.FormatInt(gone.ModRevision, 10))
			return updated, nil
		}
		// A no-op update writes nothing and keeps the resourceVersion: like
		// etcd3's GuaranteedUpdate, compare what would be stored, so a body
		// that differs only in encoding (an empty list where the stored
		// object has none) is no change. (No deep comparison first: equal
		// objects have equal encodings, and most updates change something,
		// which such a comparison finds only after walking the metadata
		// and the spec.)
		data, err := s.encode(updated)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if bytes.Equal(data, cur.Value) {
			return old, nil
		}
		var finish FinishFunc
		if h, ok := s.Resource.Strategy.(UpdateHook); ok && opts.Subresource == "" {
			if finish, err = h.BeginUpdate(ctx, s.reg, updated, old, opts.DryRun); err != nil {
				return nil, err
			}
		}
		done := func(ok bool) {
			if finish != nil {
				finish(ctx, ok)
			}
		}
		if opts.DryRun {
			done(true)
			return updated, nil
		}
		if finish != nil { // the hook may have changed the object (a Service's new clusterIP)
			if data, err = s.encode(updated); err != nil {
				done(false)
				return nil, apierrors.NewInternalError(err)
			}
		}
		kv, err := s.reg.kv.Update(key, data, cur.ModRevision)
		if errors.Is(err, store.ErrConflict) && expect == 0 {
			done(false)
			continue // someone wrote in between; an unconditional update retries
		}
		if err != nil {
			done(false)
			return nil, s.storeErr(err, acc.GetName())
		}
		done(true)
		uacc.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
		return updated, nil
	}
}

// finalized reports whether a Terminator's object may be removed.
func (s *Store) finalized(obj runtime.Object) bool {
	t, ok := s.Resource.Strategy.(Terminator)
	return !ok || t.Finalized(obj)
}

func (s *Store) afterDelete(ctx context.Context, obj runtime.Object) {
	if h, ok := s.Resource.Strategy.(DeleteHook); ok {
		h.AfterDelete(ctx, s.reg, obj)
	}
}

// gracePassed: finalizer-driven deletes go once finalizers are gone; graceful
// deletes (pods) wait for the kubelet, which deletes with grace period 0.
func gracePassed(acc metav1.Object) bool {
	g := acc.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

func (s *Store) conflict(name string) error {
	return apierrors.NewConflict(s.Resource.GroupResource(), name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

func (s *Store) storeErr(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrConflict):
		return s.conflict(name)
	case errors.Is(err, store.ErrNotFound):
		return s.notFound(name)
	case errors.Is(err, store.ErrRequestTooLarge):
		return errRequestTooLarge
	}
	return apierrors.NewInternalError(err)
}

// errRequestTooLarge is what kube-apiserver answers when etcd refuses a
// write over its --max-request-bytes: etcd's error passed through as a 500
// with no reason, as the API server does with any error that is not a
// Status.
var errRequestTooLarge = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
	Reason: metav1.StatusReasonUnknown, Message: "etcdserver: request is too large",
}}

// prepareUpdate applies the update strategy to updated (a copy of the
// request's object) against old, and validates it.
func (s *Store) prepareUpdate(updated, old runtime.Object, sub string) error {
	uacc, _ := meta.Accessor(updated)
	oacc, _ := meta.Accessor(old)
	// Metadata the server owns.
	uacc.SetUID(oacc.GetUID())
	uacc.SetCreationTimestamp(oacc.GetCreationTimestamp())
	uacc.SetNamespace(oacc.GetNamespace())
	uacc.SetDeletionTimestamp(oacc.GetDeletionTimestamp())
	uacc.SetDeletionGracePeriodSeconds(oacc.GetDeletionGracePeriodSeconds())
	uacc.SetGeneration(oacc.GetGeneration())
	uacc.SetResourceVersion(oacc.GetResourceVersion())
	updated.GetObjectKind().SetGroupVersionKind(s.Resource.GroupVersionKind())
	var errs field.ErrorList
	switch sub {
	case "":
		s.Resource.Strategy.PrepareForUpdate(updated, old)
		if !s.Resource.NoGeneration && specChanged(updated, old) {
			uacc.SetGeneration(oacc.GetGeneration() + 1)
		}
		errs = s.Resource.Strategy.ValidateUpdate(updated, old)
	case "finalize":
		fs, ok := s.Resource.Strategy.(FinalizeStrategy)
		if !ok {
			return apierrors.NewNotFound(s.Resource.GroupResource(), oacc.GetName())
		}
		fs.PrepareForFinalize(updated, old)
		errs = fs.ValidateFinalize(updated, old)
	case "status":
		ss, ok := s.Resource.Strategy.(StatusStrategy)
		if !ok {
			return apierrors.NewNotFound(s.Resource.GroupResource(), oacc.GetName())
		}
		ss.PrepareForStatusUpdate(updated, old)
		errs = ss.ValidateStatusUpdate(updated, old)
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("subresource %q cannot be updated", sub))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(s.Resource.GroupVersionKind().GroupKind(), oacc.GetName(), errs)
	}
	return nil
}

// specChanged compares the Spec fields semantically (upstream's
// apiequality.Semantic.DeepEqual: an empty list equals none, quantities
// compare by value), so an update that only re-sends the spec keeps
// metadata.generation. Kinds without a spec never change generation.
func specChanged(a, b runtime.Object) bool {
	sa, ok1 := fieldOf(a, "Spec")
	sb, ok2 := fieldOf(b, "Spec")
	return ok1 && ok2 && !apiequality.Semantic.DeepEqual(sa.Interface(), sb.Interface())
}

// fieldOf returns the named field of a pointer-to-struct object.
func fieldOf(obj runtime.Object, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	return f, f.IsValid()
}

// CopyField copies the named top-level field (Spec, Status) from src to dst,
// both of the same type. Strategies use it to keep status on a main-resource
// update and spec on a status update.
func CopyField(dst, src runtime.Object, name string) {
	d, ok1 := fieldOf(dst, name)
	s, ok2 := fieldOf(src, name)
	if ok1 && ok2 {
		d.Set(s)
	}
}

// DeleteOptions are the options of a delete.
type DeleteOptions = metav1.DeleteOptions

// Delete removes an object. It returns the object as last seen, and whether it
// is already gone (false: deletion is in progress: finalizers or a grace
// period, with deletionTimestamp set).
func (s *Store) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	dryRun := len(opts.DryRun) > 0
	ctx = withSubresource(ctx, "")
	ctx, err := s.hold(ctx, "delete", "", namespace, name)
	if err != nil {
		return nil, false, err
	}
	key := s.Key(namespace, name)
	for {
		cur, err := s.reg.kv.Get(key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, s.notFound(name)
		}
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		obj, err := s.decode(cur)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		acc, _ := meta.Accessor(obj)
		if p := opts.Preconditions; p != nil {
			if p.UID != nil && *p.UID != acc.GetUID() {
				return nil, false, apierrors.NewConflict(s.Resource.GroupResource(), name,
					fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, acc.GetUID()))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
				return nil, false, apierrors.NewConflict(s.Resource.GroupResource(), name,
					fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, acc.GetResourceVersion()))
			}
		}
		if err := s.admitChain(ctx, s.reg.mutatingChain(), Delete, obj, nil); err != nil {
			return nil, false, err
		}
		if err := s.admit(ctx, Delete, obj, nil); err != nil {
			return nil, false, err
		}
		changed := false
		terminating := false
		if t, ok := s.Resource.Strategy.(Terminator); ok && !t.Finalized(obj) {
			before := obj.DeepCopyObject()
			t.Terminate(obj)
			changed = !reflect.DeepEqual(before, obj)
			terminating = true
		}
		finalizers := acc.GetFinalizers()
		if opts.PropagationPolicy != nil {
			switch *opts.PropagationPolicy {
			case metav1.DeletePropagationForeground:
				finalizers, changed = addFinalizer(finalizers, metav1.FinalizerDeleteDependents)
			case metav1.DeletePropagationOrphan:
				finalizers, changed = addFinalizer(finalizers, metav1.FinalizerOrphanDependents)
			}
		} else if opts.OrphanDependents != nil && *opts.OrphanDependents {
			finalizers, changed = addFinalizer(finalizers, metav1.FinalizerOrphanDependents)
		}
		now := metav1.NewTime(s.reg.clock.Now())
		graceful := false
		if gd, ok := s.Resource.Strategy.(GracefulDeleter); ok {
			if grace, ok := gd.GracePeriod(obj, opts); ok && grace > 0 {
				cur := acc.GetDeletionGracePeriodSeconds()
				if cur == nil || grace < *cur {
					ts := metav1.NewTime(now.Add(secondsDuration(grace)))
					acc.SetDeletionTimestamp(&ts)
					acc.SetDeletionGracePeriodSeconds(&grace)
					changed = true
				}
				graceful = true
			} else if ok && acc.GetDeletionGracePeriodSeconds() != nil && *acc.GetDeletionGracePeriodSeconds() != 0 {
				zero := int64(0)
				acc.SetDeletionGracePeriodSeconds(&zero)
				changed = true
			}
		}
		if !graceful && !terminating && len(finalizers) == 0 {
			if dryRun {
				return obj, true, nil
			}
			gone, err := s.reg.kv.Delete(key, cur.ModRevision)
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, false, s.storeErr(err, name)
			}
			s.decoded.forget(key)
			s.afterDelete(ctx, obj)
			acc.SetResourceVersion(strconv.FormatInt(gone.ModRevision, 10))
			return obj, true, nil
		}
		if acc.GetDeletionTimestamp() == nil {
			acc.SetDeletionTimestamp(&now)
			zero := int64(0)
			acc.SetDeletionGracePeriodSeconds(&zero)
			changed = true
		}
		acc.SetFinalizers(finalizers)
		if !changed || dryRun {
			return obj, false, nil
		}
		data, err := s.encode(obj)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		kv, err := s.reg.kv.Update(key, data, cur.ModRevision)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, s.storeErr(err, name)
		}
		acc.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
		return obj, false, nil
	}
}

func addFinalizer(list []string, f string) ([]string, bool) {
	for _, x := range list {
		if x == f {
			return list, false
		}
	}
	return append(list, f), true
}

// generateName appends five random characters from upstream's alphabet
// (no vowels, no confusable digits), as k8s.io/apiserver/pkg/storage/names does.
func generateName(base string) string {
	const maxNameLength, randomLength = 63, 5
	if len(base) > maxNameLength-randomLength {
		base = base[:maxNameLength-randomLength]
	}
	return base + utilrand.String(randomLength)
}

// ForKindOf finds the store serving the Go type of obj (objects from the
// in-process client often have an empty TypeMeta).
func (r *Registry) ForKindOf(obj runtime.Object) (*Store, bool) {
	t := reflect.TypeOf(obj)
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range r.order {
		if reflect.TypeOf(s.Resource.New()) == t {
			return s, true
		}
	}
	return nil, false
}
