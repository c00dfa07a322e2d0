// Package endpoint is the Endpoints controller: for every Service with a
// selector it keeps an Endpoints object of the same name listing the pods
// the selector picks, by IP and port.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/endpoint
// (endpoints_controller.go) and pkg/api/v1/endpoints (RepackSubsets).
//
// For a Service
//
//	selector: {app: web}
//	ports: [{name: http, port: 80, targetPort: http}]
//
// and pods web-1 (Ready, 10.244.1.2, containerPort http: 8080) and web-2
// (not Ready yet, 10.244.2.2) the Endpoints are
//
//	subsets:
//	- addresses:         [{ip: 10.244.1.2, nodeName: node-1, targetRef: Pod web-1}]
//	  notReadyAddresses: [{ip: 10.244.2.2, nodeName: node-2, targetRef: Pod web-2}]
//	  ports: [{name: http, port: 8080, protocol: TCP}]
//
// Only ready addresses receive traffic (kube-proxy reads them, or the
// EndpointSlices that package endpointslice writes). A named targetPort is
// resolved on each pod, so pods may listen on different numbers; pods are
// grouped into subsets by the ports they offer. Pods without an IP, pods
// that finished, and pods being deleted are left out (unless the Service
// sets publishNotReadyAddresses). The Endpoints object is deleted with its
// Service.
//
// Endpoints is the original API (deprecated in favour of EndpointSlices
// since Kubernetes 1.33, but still maintained); `kubectl get endpoints`
// shows it.
package endpoint

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/endpointslice/util"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

const (
	// DefaultWorkers is --concurrent-endpoint-syncs.
	DefaultWorkers = 5
	// Component is the event source and user agent.
	Component = "endpoint-controller"
	// maxRetries: a failing Service is retried this often, then dropped
	// until its next event.
	maxRetries = 15
	// MaxCapacity is the most addresses an Endpoints object holds; beyond
	// it, it is truncated and annotated endpoints.kubernetes.io/over-capacity.
	MaxCapacity = 1000
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is the number of Services synced at once (default 5).
	Workers int
}

// Controller is the Endpoints controller.
type Controller struct {
	client    *client.Client
	endpoints client.Resource[*corev1.Endpoints]
	workers   int
	queue     *client.Queue[string]
	recorder  *client.Recorder

	serviceInformer   *client.Informer[*corev1.Service]
	podInformer       *client.Informer[*corev1.Pod]
	endpointsInformer *client.Informer[*corev1.Endpoints]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("endpoint", cfg.Client, &cfg.Workers, DefaultWorkers, &cfg.Clock); err != nil {
		return nil, err
	}
	services := client.For[*corev1.Service](cfg.Client, "", "services")
	endpoints := client.For[*corev1.Endpoints](cfg.Client, "", "endpoints")
	e := &Controller{
		client:            cfg.Client,
		endpoints:         endpoints,
		workers:           cfg.Workers,
		queue:             client.NewQueue[string](cfg.Clock),
		recorder:          client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		serviceInformer:   client.NewInformer(services, "", client.ListOptions{}),
		podInformer:       client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		endpointsInformer: client.NewInformer(endpoints, "", client.ListOptions{}),
	}
	e.serviceInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Service])
	e.podInformer.AddIndex(controller.NamespaceIndex, controller.IndexByNamespace[*corev1.Pod])
	e.serviceInformer.AddHandler(client.Handler[*corev1.Service]{
		OnAdd:    e.enqueue,
		OnUpdate: func(_, s *corev1.Service) { e.enqueue(s) },
		OnDelete: e.enqueue,
	})
	e.podInformer.AddHandler(client.Handler[*corev1.Pod]{
		OnAdd:    e.addPod,
		OnUpdate: e.updatePod,
		OnDelete: e.addPod,
	})
	// Endpoints deleted by someone else come back; Endpoints left from a
	// Service deleted while the controller was down go (checkLeftover).
	e.endpointsInformer.AddHandler(client.Handler[*corev1.Endpoints]{
		OnAdd:    func(ep *corev1.Endpoints) { e.queue.Add(client.Key(ep)) },
		OnDelete: func(ep *corev1.Endpoints) { e.queue.Add(client.Key(ep)) },
	})
	return e, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (e *Controller) HasSynced() bool { return controller.Synced(e.informers()...) }

func (e *Controller) informers() []controller.Informer {
	return []controller.Informer{e.serviceInformer, e.podInformer, e.endpointsInformer}
}

// Run watches Services, pods and Endpoints and syncs Endpoints until ctx is
// done.
func (e *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, e.informers(),
		controller.Worker[string]{Queue: e.queue, Workers: e.workers, Reconcile: e.Reconcile, MaxRetries: maxRetries})
}

func (e *Controller) enqueue(s *corev1.Service) { e.queue.Add(client.Key(s)) }

func (e *Controller) addPod(pod *corev1.Pod) {
	for key := range util.PodServiceMemberships(e.serviceInformer.ByIndex(controller.NamespaceIndex, pod.Namespace), pod) {
		e.queue.Add(key)
	}
}

func (e *Controller) updatePod(old, cur *corev1.Pod) {
	for key := range util.ServicesToUpdateOnPodChange(e.serviceInformer.ByIndex(controller.NamespaceIndex, cur.Namespace), old, cur) {
		e.queue.Add(key)
	}
}

// Reconcile writes the Endpoints of the Service "namespace/name" (upstream:
// syncService): deleted with the Service; left alone for ExternalName
// Services and Services without a selector (their Endpoints are written by
// hand).
func (e *Controller) Reconcile(ctx context.Context, key string) error {
	namespace, name := controller.SplitKey(key)
	svc, ok := e.serviceInformer.Get(namespace, name)
	if !ok {
		err := e.endpoints.Delete(ctx, namespace, name, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	var subsets []corev1.EndpointSubset
	for _, pod := range e.podInformer.ByIndex(controller.NamespaceIndex, namespace) {
		if !util.ServiceSelects(svc, pod) || !util.ShouldPodBeInEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		ip := util.PodIP(pod)
		if ip == "" {
			continue
		}
		nodeName := pod.Spec.NodeName
		addr := corev1.EndpointAddress{IP: ip, NodeName: &nodeName,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		if util.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := svc.Spec.PublishNotReadyAddresses || util.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			// A headless Service may have no ports: addresses only.
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				subsets = append(subsets, subset(addr, nil, ready))
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			port, err := util.FindPort(pod, sp)
			if err != nil {
				continue // this pod does not offer this port
			}
			subsets = append(subsets, subset(addr, &corev1.EndpointPort{
				Name: sp.Name, Port: int32(port), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol,
			}, ready))
		}
	}
	subsets = RepackSubsets(subsets)

	current, exists := e.endpointsInformer.Get(namespace, name)
	if !exists {
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: svc.Labels}}
	}
	wantLabels := copyLabels(svc.Labels)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		wantLabels[corev1.IsHeadlessService] = ""
	}
	over := countAddresses(subsets) > MaxCapacity
	_, annotated := current.Annotations[corev1.EndpointsOverCapacity]
	if exists && equalSubsetsIgnoringResourceVersion(current.Subsets, subsets) &&
		equality.Semantic.DeepEqual(copyLabels(current.Labels), wantLabels) && over == annotated {
		return nil
	}
	ep := current.DeepCopy()
	ep.Subsets = subsets
	ep.Labels = wantLabels
	if over {
		truncateEndpoints(ep)
		if ep.Annotations == nil {
			ep.Annotations = map[string]string{}
		}
		ep.Annotations[corev1.EndpointsOverCapacity] = "truncated"
	} else {
		delete(ep.Annotations, corev1.EndpointsOverCapacity)
	}
	var err error
	if exists {
		_, err = e.endpoints.Update(ctx, ep)
	} else {
		_, err = e.endpoints.Create(ctx, ep)
	}
	switch {
	case err == nil:
		return nil
	case !exists && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil // creations will keep failing: the namespace is going
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return err // the cache is behind: retry
	case !exists:
		e.recorder.Eventf(ep, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", namespace, name, err)
	default:
		e.recorder.Eventf(ep, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", namespace, name, err)
	}
	return err
}

func subset(addr corev1.EndpointAddress, port *corev1.EndpointPort, ready bool) corev1.EndpointSubset {
	s := corev1.EndpointSubset{}
	if port != nil {
		s.Ports = []corev1.EndpointPort{*port}
	}
	if ready {
		s.Addresses = []corev1.EndpointAddress{addr}
	} else {
		s.NotReadyAddresses = []corev1.EndpointAddress{addr}
	}
	return s
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func countAddresses(subsets []corev1.EndpointSubset) int {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	return n
}

// equalSubsetsIgnoringResourceVersion compares subsets, ignoring the pods'
// resourceVersions in targetRefs (a pod's annotation change is no news).
func equalSubsetsIgnoringResourceVersion(a, b []corev1.EndpointSubset) bool {
	strip := func(in []corev1.EndpointSubset) []corev1.EndpointSubset {
		out := make([]corev1.EndpointSubset, len(in))
		for i, s := range in {
			s = *s.DeepCopy()
			for _, list := range [][]corev1.EndpointAddress{s.Addresses, s.NotReadyAddresses} {
				for j := range list {
					if list[j].TargetRef != nil {
						list[j].TargetRef.ResourceVersion = ""
					}
				}
			}
			out[i] = s
		}
		return out
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// truncateEndpoints keeps MaxCapacity addresses, ready ones first, each
// subset keeping its share (upstream: truncateEndpoints).
func truncateEndpoints(ep *corev1.Endpoints) {
	totalReady, totalNotReady := 0, 0
	for _, s := range ep.Subsets {
		totalReady += len(s.Addresses)
		totalNotReady += len(s.NotReadyAddresses)
	}
	truncateReady := totalReady > MaxCapacity
	limit, total := MaxCapacity-totalReady, totalNotReady
	if truncateReady {
		limit, total = MaxCapacity, totalReady
	}
	left := limit
	for i := range ep.Subsets {
		s := &ep.Subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		take := min(int(math.Ceil(float64(n)/float64(total)*float64(limit))), left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(take, len(s.Addresses))]
			s.NotReadyAddresses = nil
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(take, len(s.NotReadyAddresses))]
			left -= len(s.NotReadyAddresses)
		}
	}
}

// RepackSubsets regroups subsets of one address and one port each into the
// fewest subsets: addresses offering the same set of ports share a subset.
// An address ready in one subset and not ready in another counts as ready.
// The result is sorted, so equal inputs give equal outputs (upstream:
// endpoints.RepackSubsets).
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid string
	}
	addrs := map[addrKey]corev1.EndpointAddress{}
	ready := map[addrKey]bool{}
	// portsOf: the ports each address offers, by portSetKey (an
	// EndpointPort holds a pointer, so it is no map key); "" marks
	// port-less subsets.
	portsOf := map[addrKey]map[string]*corev1.EndpointPort{}
	note := func(a corev1.EndpointAddress, isReady bool, ports []corev1.EndpointPort) {
		k := addrKey{a.IP, ""}
		if a.TargetRef != nil {
			k.uid = string(a.TargetRef.UID)
		}
		if _, ok := addrs[k]; !ok {
			addrs[k] = a
		}
		ready[k] = ready[k] || isReady
		if portsOf[k] == nil {
			portsOf[k] = map[string]*corev1.EndpointPort{}
		}
		if len(ports) == 0 {
			portsOf[k][""] = nil
		}
		for i := range ports {
			portsOf[k][portSetKey(ports[i:i+1])] = &ports[i]
		}
	}
	for _, s := range subsets {
		for _, a := range s.Addresses {
			note(a, true, s.Ports)
		}
		for _, a := range s.NotReadyAddresses {
			note(a, false, s.Ports)
		}
	}
	// Group the addresses by their port set.
	groups := map[string]*corev1.EndpointSubset{}
	for k, ports := range portsOf {
		var list []corev1.EndpointPort
		for _, p := range ports {
			if p != nil {
				list = append(list, *p)
			}
		}
		sort.Slice(list, func(i, j int) bool { return portLess(list[i], list[j]) })
		id := portSetKey(list)
		g := groups[id]
		if g == nil {
			g = &corev1.EndpointSubset{Ports: list}
			groups[id] = g
		}
		if ready[k] {
			g.Addresses = append(g.Addresses, addrs[k])
		} else {
			g.NotReadyAddresses = append(g.NotReadyAddresses, addrs[k])
		}
	}
	out := make([]corev1.EndpointSubset, 0, len(groups))
	for _, g := range groups {
		sortAddresses(g.Addresses)
		sortAddresses(g.NotReadyAddresses)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return subsetKey(out[i]) < subsetKey(out[j]) })
	return out
}

func portLess(a, b corev1.EndpointPort) bool {
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	if a.Port != b.Port {
		return a.Port < b.Port
	}
	return a.Protocol < b.Protocol
}

func portSetKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		app := ""
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		fmt.Fprintf(&b, "%s/%d/%s/%s;", p.Name, p.Port, p.Protocol, app)
	}
	return b.String()
}

func sortAddresses(a []corev1.EndpointAddress) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].IP != a[j].IP {
			return a[i].IP < a[j].IP
		}
		var ui, uj string
		if a[i].TargetRef != nil {
			ui = string(a[i].TargetRef.UID)
		}
		if a[j].TargetRef != nil {
			uj = string(a[j].TargetRef.UID)
		}
		return ui < uj
	})
}

func subsetKey(s corev1.EndpointSubset) string {
	first := ""
	switch {
	case len(s.Addresses) > 0:
		first = s.Addresses[0].IP
	case len(s.NotReadyAddresses) > 0:
		first = s.NotReadyAddresses[0].IP
	}
	return portSetKey(s.Ports) + "|" + first
}
