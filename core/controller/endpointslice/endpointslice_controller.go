// Package endpointslice is the EndpointSlice controller: for every Service
// with a selector it keeps EndpointSlices listing the pods the selector
// picks, at most 100 endpoints a slice.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/endpointslice
// (endpointslice_controller.go) and k8s.io/endpointslice (reconciler.go,
// utils.go).
//
// EndpointSlices replaced Endpoints because one Endpoints object per
// Service grows with the Service: with 5,000 pods, every pod change rewrote
// (and sent to every node) one huge object. Slices hold 100 endpoints each,
// so a change rewrites one small slice. For Service web:
//
//	kind: EndpointSlice
//	metadata:
//	  name: web-7xk2p                        (generateName "web-")
//	  labels:
//	    kubernetes.io/service-name: web
//	    endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io
//	  ownerReferences: [Service web]          (deleted with the Service)
//	addressType: IPv4
//	ports: [{name: http, port: 8080, protocol: TCP}]
//	endpoints:
//	- addresses: [10.244.1.2]
//	  conditions: {ready: true, serving: true, terminating: false}
//	  nodeName: node-1
//	  targetRef: {kind: Pod, name: web-1}
//
// Unlike Endpoints, a slice keeps not-ready and terminating pods as
// endpoints, with their conditions saying so: ready is false for both, so
// kube-proxy sends them nothing; serving tells a terminating pod that still
// passes its readiness apart. Pods that resolve a named targetPort to
// different numbers go into different slices (a slice has one port list).
// A Service with no endpoints gets one empty "placeholder" slice.
package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/endpointslice/util"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-service-endpoint-syncs.
	DefaultWorkers = 5
	// DefaultMaxEndpointsPerSlice is --max-endpoints-per-slice.
	DefaultMaxEndpointsPerSlice = 100
	// ControllerName is the managed-by label value of the slices this
	// controller owns.
	ControllerName = "endpointslice-controller.k8s.io"
	// Component is the user agent (kube-controller-manager's controller
	// name); EventSource is what its events say they come from.
	Component   = "endpointslice-controller"
	EventSource = "endpoint-slice-controller"
	// maxRetries: a failing Service is retried this often, then dropped
	// until its next event.
	maxRetries = 15
)

var serviceKind = corev1.SchemeGroupVersion.WithKind("Service")

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of Services synced at once (default 5).
	Workers int
	// MaxEndpointsPerSlice (default 100).
	MaxEndpointsPerSlice int
}

// Controller is the EndpointSlice controller.
type Controller struct {
	client   *client.Client
	slices   client.Resource[*discoveryv1.EndpointSlice]
	workers  int
	maxPer   int
	queue    *client.Queue[string]
	recorder *client.Recorder

	serviceInformer *client.Informer[*corev1.Service]
	podInformer     *client.Informer[*corev1.Pod]
	nodeInformer    *client.Informer[*corev1.Node]
	sliceInformer   *client.Informer[*discoveryv1.EndpointSlice]

	tracker *sliceTracker
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("endpointslice: Config.Client is required")
	}
	if cfg.Workers < 0 || cfg.MaxEndpointsPerSlice < 0 {
		return nil, fmt.Errorf("endpointslice: Workers (%d) and MaxEndpointsPerSlice (%d) must not be negative", cfg.Workers, cfg.MaxEndpointsPerSlice)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MaxEndpointsPerSlice == 0 {
		cfg.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	services := client.For[*corev1.Service](cfg.Client, "", "services")
	slices := client.For[*discoveryv1.EndpointSlice](cfg.Client, discoveryv1.GroupName, "endpointslices")
	c := &Controller{
		client:          cfg.Client,
		slices:          slices,
		workers:         cfg.Workers,
		maxPer:          cfg.MaxEndpointsPerSlice,
		queue:           client.NewQueue[string](cfg.Clock),
		recorder:        client.NewRecorder(cfg.Client, EventSource, "", cfg.Clock),
		serviceInformer: client.NewInformer(services, "", client.ListOptions{}),
		podInformer:     client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		nodeInformer:    client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{}),
		sliceInformer: client.NewInformer(slices, "", client.ListOptions{
			LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelManagedBy: ControllerName}),
		}),
		tracker: newSliceTracker(),
	}
	c.serviceInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Service])
	c.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	c.sliceInformer.AddIndex(serviceIndex, func(s *discoveryv1.EndpointSlice) []string {
		if name, ok := s.Labels[discoveryv1.LabelServiceName]; ok {
			return []string{client.NamespacedKey(s.Namespace, name)}
		}
		return nil
	})
	c.serviceInformer.AddHandler(client.Handler[*corev1.Service]{
		OnAdd:    c.enqueue,
		OnUpdate: func(_, s *corev1.Service) { c.enqueue(s) },
		OnDelete: c.enqueue,
	})
	c.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    c.addPod,
		OnUpdate: c.updatePod,
		OnDelete: c.addPod,
	})
	// A node's zone is in its endpoints.
	c.nodeInformer.AddHandler(client.Handler[*corev1.Node]{
		OnUpdate: func(old, cur *corev1.Node) {
			if old.Labels[corev1.LabelTopologyZone] != cur.Labels[corev1.LabelTopologyZone] {
				for _, s := range c.serviceInformer.List() {
					c.enqueue(s)
				}
			}
		},
	})
	// A slice changed or deleted by someone else: look at its Service.
	c.sliceInformer.AddHandler(client.Handler[*discoveryv1.EndpointSlice]{
		OnAdd:    c.onSlice,
		OnUpdate: func(_, s *discoveryv1.EndpointSlice) { c.onSlice(s) },
		OnDelete: c.onSlice,
	})
	return c, nil
}

const serviceIndex = "service"

// HasSynced reports whether the controller's caches hold their first lists.
func (c *Controller) HasSynced() bool { return controller.Synced(c.informers()...) }

func (c *Controller) informers() []controller.Informer {
	return []controller.Informer{c.serviceInformer, c.podInformer, c.nodeInformer, c.sliceInformer}
}

// Run watches Services, pods, nodes and EndpointSlices and syncs slices
// until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, c.informers(),
		controller.Worker[string]{Queue: c.queue, Workers: c.workers, Reconcile: c.Reconcile, MaxRetries: maxRetries})
}

func (c *Controller) enqueue(s *corev1.Service) { c.queue.Add(client.Key(s)) }

func (c *Controller) addPod(pod *corev1.Pod) {
	for key := range util.PodServiceMemberships(c.serviceInformer.ByIndex(controller.NamespaceIndex, pod.Namespace), pod) {
		c.queue.Add(key)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	for key := range util.ServicesToUpdateOnPodChange(c.serviceInformer.ByIndex(controller.NamespaceIndex, cur.Namespace), old, cur) {
		c.queue.Add(key)
	}
}

func (c *Controller) onSlice(s *discoveryv1.EndpointSlice) {
	name, ok := s.Labels[discoveryv1.LabelServiceName]
	if !ok {
		return
	}
	key := client.NamespacedKey(s.Namespace, name)
	if c.tracker.changedByOthers(key, s) {
		c.queue.Add(key)
	}
}

// errStaleCache: the slice cache has not seen the controller's own last
// writes yet; syncing now would create duplicates.
var errStaleCache = errors.New("endpointslice: the EndpointSlice cache is older than this controller's last write; retrying")

// Reconcile brings the EndpointSlices of the Service "namespace/name" in
// line with its pods (upstream: syncService and reconciler.Reconcile).
// Slices of a deleted Service are left to the garbage collector, which
// follows their owner reference.
func (c *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	svc, ok := c.serviceInformer.Get(namespace, name)
	if !ok {
		c.tracker.forget(key)
		return nil
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	existing := c.sliceInformer.ByIndex(serviceIndex, key)
	if c.tracker.stale(key, existing) {
		return errStaleCache
	}
	desired := c.desiredEndpoints(svc)
	return c.reconcile(ctx, svc, existing, desired)
}

// endpointGroup is the desired endpoints of one address type and port list.
type endpointGroup struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   map[string]discoveryv1.Endpoint // by endpointKey
}

// desiredEndpoints turns the Service's pods into endpoints, grouped by the
// ports they resolve to.
func (c *Controller) desiredEndpoints(svc *corev1.Service) map[string]*endpointGroup {
	groups := map[string]*endpointGroup{}
	addressType := addressTypeOf(svc)
	for _, pod := range c.podInformer.ByIndex(controller.NamespaceIndex, svc.Namespace) {
		if !util.ServiceSelects(svc, pod) || !util.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		ip := util.PodIP(pod)
		if ip == "" {
			continue
		}
		ports := endpointPorts(svc, pod)
		gk := groupKey(addressType, ports)
		g := groups[gk]
		if g == nil {
			g = &endpointGroup{addressType: addressType, ports: ports, endpoints: map[string]discoveryv1.Endpoint{}}
			groups[gk] = g
		}
		ep := c.podToEndpoint(pod, svc, ip)
		g.endpoints[endpointKey(ep)] = ep
	}
	return groups
}

// podToEndpoint is the endpoint of a pod (upstream: podToEndpoint).
func (c *Controller) podToEndpoint(pod *corev1.Pod, svc *corev1.Service, ip string) discoveryv1.Endpoint {
	serving := svc.Spec.PublishNotReadyAddresses || util.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	// A terminating pod is never ready, unless the Service publishes
	// not-ready addresses.
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses:  []string{ip},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		nodeName := pod.Spec.NodeName
		ep.NodeName = &nodeName
		if node, ok := c.nodeInformer.Get("", nodeName); ok {
			if zone := node.Labels[corev1.LabelTopologyZone]; zone != "" {
				ep.Zone = &zone
			}
		}
	}
	if util.ShouldSetHostname(pod, svc) {
		hostname := pod.Spec.Hostname
		ep.Hostname = &hostname
	}
	return ep
}

// endpointPorts resolves the Service's ports on a pod; a port the pod does
// not offer is left out.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	var out []discoveryv1.EndpointPort
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		port, err := util.FindPort(pod, sp)
		if err != nil {
			continue
		}
		name, protocol, number := sp.Name, sp.Protocol, int32(port)
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &number, Protocol: &protocol, AppProtocol: sp.AppProtocol})
	}
	return out
}

// addressTypeOf is the Service's IP family as an address type (kubetab is
// single-stack IPv4).
func addressTypeOf(svc *corev1.Service) discoveryv1.AddressType {
	if len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

func groupKey(t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	k := string(t)
	for _, p := range ports {
		k += "|" + deref(p.Name) + "/" + strconv.Itoa(int(deref(p.Port))) + "/" + string(deref(p.Protocol)) + "/" + deref(p.AppProtocol)
	}
	return k
}

func endpointKey(ep discoveryv1.Endpoint) string {
	k := fmt.Sprint(ep.Addresses)
	if ep.TargetRef != nil {
		k += "/" + string(ep.TargetRef.UID)
	}
	return k
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// reconcile updates the existing slices toward the desired endpoints,
// touching as few slices as it can: an endpoint that did not change stays
// where it is; removed endpoints leave room that new ones fill before any
// new slice is created; emptied slices are deleted.
func (c *Controller) reconcile(ctx context.Context, svc *corev1.Service, existing []*discoveryv1.EndpointSlice, desired map[string]*endpointGroup) error {
	sort.Slice(existing, func(i, j int) bool { return existing[i].Name < existing[j].Name })
	key := client.Key(svc)
	wantLabels := sliceLabels(svc)
	var toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice
	placeholders := map[discoveryv1.AddressType]*discoveryv1.EndpointSlice{}

	// Existing slices, by the group they belong to.
	byGroup := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) && len(s.Endpoints) == 0 && len(s.Ports) == 0 {
			placeholders[s.AddressType] = s
			continue
		}
		gk := groupKey(s.AddressType, s.Ports)
		if !ownedBy(s, svc) || desired[gk] == nil {
			toDelete = append(toDelete, s) // ports changed, or not ours: replace
			continue
		}
		byGroup[gk] = append(byGroup[gk], s)
	}
	keptSlices := 0
	gks := make([]string, 0, len(desired))
	for gk := range desired {
		gks = append(gks, gk)
	}
	sort.Strings(gks)
	for _, gk := range gks {
		g := desired[gk]
		remaining := map[string]discoveryv1.Endpoint{}
		for k, ep := range g.endpoints {
			remaining[k] = ep
		}
		var kept []*discoveryv1.EndpointSlice
		// 1. Keep the endpoints each slice still should have, updated.
		for _, s := range byGroup[gk] {
			var eps []discoveryv1.Endpoint
			for _, ep := range s.Endpoints {
				k := endpointKey(ep)
				if want, ok := remaining[k]; ok {
					eps = append(eps, want)
					delete(remaining, k)
				}
			}
			if len(eps) == 0 {
				toDelete = append(toDelete, s)
				continue
			}
			cp := s.DeepCopy()
			cp.Endpoints = eps
			cp.Labels = copyLabels(wantLabels)
			kept = append(kept, cp)
		}
		keptSlices += len(kept)
		// 2. New endpoints fill the room in kept slices, then new slices.
		keys := make([]string, 0, len(remaining))
		for k := range remaining {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, s := range kept {
			for len(keys) > 0 && len(s.Endpoints) < c.maxPer {
				s.Endpoints = append(s.Endpoints, remaining[keys[0]])
				keys = keys[1:]
			}
		}
		for len(keys) > 0 {
			n := min(len(keys), c.maxPer)
			s := newSlice(svc, g, wantLabels)
			for _, k := range keys[:n] {
				s.Endpoints = append(s.Endpoints, remaining[k])
			}
			keys = keys[n:]
			toCreate = append(toCreate, s)
		}
		for _, s := range kept {
			orig, _ := c.sliceInformer.Get(s.Namespace, s.Name)
			if orig == nil || !equality.Semantic.DeepEqual(orig.Endpoints, s.Endpoints) || !equality.Semantic.DeepEqual(orig.Labels, s.Labels) {
				toUpdate = append(toUpdate, s)
			}
		}
	}
	// A Service with no endpoints keeps one empty placeholder slice.
	addressType := addressTypeOf(svc)
	total := keptSlices + len(toCreate)
	for t, p := range placeholders {
		if t != addressType || total > 0 {
			toDelete = append(toDelete, p)
			continue
		}
		if !equality.Semantic.DeepEqual(p.Labels, wantLabels) {
			cp := p.DeepCopy()
			cp.Labels = copyLabels(wantLabels)
			toUpdate = append(toUpdate, cp)
		}
	}
	if total == 0 && placeholders[addressType] == nil {
		toCreate = append(toCreate, newSlice(svc, &endpointGroup{addressType: addressType}, wantLabels))
	}
	toCreate, toUpdate, toDelete = finalize(svc, toCreate, toUpdate, toDelete)
	return c.apply(ctx, key, toCreate, toUpdate, toDelete)
}

// finalize turns a create plus a delete into one update: a new slice takes
// the name of a slice that would be deleted, if that slice is the Service's
// own and has the same address type (addressType is immutable, and a slice
// of an old Service of the same name is the garbage collector's). So the
// empty placeholder a Service gets before it has endpoints is the slice
// that then receives them, and a watcher on it sees it fill instead of
// vanish. Upstream: the reconciler's finalize in
// staging/src/k8s.io/endpointslice/reconciler.go.
func finalize(svc *corev1.Service, toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice) (creates, updates, deletes []*discoveryv1.EndpointSlice) {
	for i := 0; i < len(toDelete) && len(toCreate) > 0; {
		old := toDelete[i]
		s := toCreate[len(toCreate)-1]
		if old.AddressType != s.AddressType || !ownedBy(old, svc) {
			i++
			continue
		}
		s.Name = old.Name
		s.GenerateName = old.GenerateName
		s.UID = old.UID
		s.ResourceVersion = old.ResourceVersion
		s.CreationTimestamp = old.CreationTimestamp
		toCreate = toCreate[:len(toCreate)-1]
		toUpdate = append(toUpdate, s)
		toDelete = append(toDelete[:i], toDelete[i+1:]...)
	}
	return toCreate, toUpdate, toDelete
}

// apply writes the changes, creating first and deleting last, so the
// Service never has fewer endpoints than before in between.
func (c *Controller) apply(ctx context.Context, key string, toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice) error {
	var errs []error
	for _, s := range toCreate {
		created, err := c.slices.Create(ctx, s)
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			errs = append(errs, fmt.Errorf("failed to create EndpointSlice for Service %s: %w", key, err))
			continue
		}
		c.tracker.wrote(key, created)
	}
	for _, s := range toUpdate {
		updated, err := c.slices.Update(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to update %s EndpointSlice for Service %s: %w", s.Name, key, err))
			continue
		}
		c.tracker.wrote(key, updated)
	}
	for _, s := range toDelete {
		err := c.slices.Delete(ctx, s.Namespace, s.Name, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("failed to delete %s EndpointSlice for Service %s: %w", s.Name, key, err))
			continue
		}
		c.tracker.deleted(key, s)
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		if svc, ok := c.serviceInformer.Get(controller.SplitKey(key)); ok {
			c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Service %s: %v", key, err)
		}
		return err
	}
	return nil
}

// sliceLabels are the labels of the Service's slices: the Service's own,
// the service-name and managed-by labels, and the headless label for a
// headless Service.
func sliceLabels(svc *corev1.Service) map[string]string {
	l := map[string]string{}
	for k, v := range svc.Labels {
		if k == discoveryv1.LabelServiceName || k == discoveryv1.LabelManagedBy || k == corev1.IsHeadlessService {
			continue
		}
		l[k] = v
	}
	l[discoveryv1.LabelServiceName] = svc.Name
	l[discoveryv1.LabelManagedBy] = ControllerName
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		l[corev1.IsHeadlessService] = ""
	}
	return l
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ownedBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	ref := metav1.GetControllerOfNoCopy(s)
	return ref != nil && ref.UID == svc.UID
}

func newSlice(svc *corev1.Service, g *endpointGroup, labels map[string]string) *discoveryv1.EndpointSlice {
	ref := metav1.NewControllerRef(svc, serviceKind)
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    svc.Name + "-",
			Namespace:       svc.Namespace,
			Labels:          copyLabels(labels),
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		AddressType: g.addressType,
		Ports:       g.ports,
	}
}

// sliceTracker remembers the resourceVersion of every slice the controller
// wrote, and the slices it deleted, per Service: a cache that has not
// caught up is stale, and a slice that changed without the controller is
// someone else's edit (upstream: endpointSliceTracker).
type sliceTracker struct {
	// mu guards written.
	mu sync.Mutex
	// written: service key → slice UID → resourceVersion written (0: deleted).
	written map[string]map[types.UID]int64
}

func newSliceTracker() *sliceTracker { return &sliceTracker{written: map[string]map[types.UID]int64{}} }

func rv(s *discoveryv1.EndpointSlice) int64 {
	n, _ := strconv.ParseInt(s.ResourceVersion, 10, 64)
	return n
}

func (t *sliceTracker) wrote(key string, s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written[key] == nil {
		t.written[key] = map[types.UID]int64{}
	}
	t.written[key][s.UID] = rv(s)
}

func (t *sliceTracker) deleted(key string, s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written[key] == nil {
		t.written[key] = map[types.UID]int64{}
	}
	t.written[key][s.UID] = 0
}

func (t *sliceTracker) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.written, key)
}

// stale reports whether the cached slices miss one of the controller's
// writes (a created or updated slice not seen at its version, a deleted
// one still there). Writes the cache has caught up with are forgotten.
func (t *sliceTracker) stale(key string, cached []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.written[key]
	if len(w) == 0 {
		return false
	}
	seen := map[types.UID]int64{}
	for _, s := range cached {
		seen[s.UID] = rv(s)
	}
	stale := false
	for uid, want := range w {
		got, ok := seen[uid]
		switch {
		case want == 0 && ok, want > 0 && (!ok || got < want):
			stale = true
		default:
			delete(w, uid) // caught up
		}
	}
	return stale
}

// changedByOthers reports whether a slice event is not the echo of the
// controller's own write.
func (t *sliceTracker) changedByOthers(key string, s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	want, ok := t.written[key][s.UID]
	return !ok || (want > 0 && rv(s) > want)
}
