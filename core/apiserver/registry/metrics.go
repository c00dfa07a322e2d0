package registry

import (
	"context"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The metrics.k8s.io/v1beta1 API: NodeMetrics and PodMetrics, what
// `kubectl top` and the HorizontalPodAutoscaler read.
//
// Upstream this API is not kube-apiserver's: metrics-server serves it
// through the aggregation layer, from the usage it scrapes off every
// kubelet's /metrics/resource endpoint and keeps in memory. Nothing of it is
// in etcd, so it is not a registry Resource: it is served read-only (get and
// list; no watch) from a MetricsProvider that the kubelets fill.
//
//	kubelet ──SetPodMetrics/SetNodeMetrics──▶ MetricsStore (the provider)
//	                                             │
//	kubectl top ──GET /apis/metrics.k8s.io/v1beta1/...──▶ Registry.Metrics()

// MetricsGroupVersion is the served group and version.
var MetricsGroupVersion = metricsv1beta1.SchemeGroupVersion

// MetricsProvider supplies the latest usage samples.
type MetricsProvider interface {
	// NodeMetrics returns every node's sample.
	NodeMetrics(ctx context.Context) ([]metricsv1beta1.NodeMetrics, error)
	// PodMetrics returns the samples of the pods of namespace ("" for all).
	PodMetrics(ctx context.Context, namespace string) ([]metricsv1beta1.PodMetrics, error)
}

// MetricsResource describes one served metrics resource, for discovery.
type MetricsResource struct {
	Resource, Singular, Kind string
	Namespaced               bool
}

// MetricsResources are the resources of metrics.k8s.io/v1beta1, with the
// verbs get and list.
var MetricsResources = []MetricsResource{
	{Resource: "nodes", Singular: "", Kind: "NodeMetrics"},
	{Resource: "pods", Singular: "", Kind: "PodMetrics", Namespaced: true},
}

// MetricsAPI serves metrics.k8s.io from the registry's provider.
type MetricsAPI struct {
	provider MetricsProvider
}

// Metrics returns the metrics API, or nil when the registry has no
// MetricsProvider (then metrics.k8s.io is not served).
func (r *Registry) Metrics() *MetricsAPI {
	if r.metrics == nil {
		return nil
	}
	return &MetricsAPI{provider: r.metrics}
}

func metricsMatch(m metav1.ObjectMeta, ls labels.Selector, fs fields.Selector) bool {
	if ls != nil && !ls.Matches(labels.Set(m.Labels)) {
		return false
	}
	if fs != nil && !fs.Matches(metaFields(&m)) {
		return false
	}
	return true
}

// ListNodes returns the NodeMetrics matching the selectors (nil: all).
func (a *MetricsAPI) ListNodes(ctx context.Context, ls labels.Selector, fs fields.Selector) (*metricsv1beta1.NodeMetricsList, error) {
	all, err := a.provider.NodeMetrics(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	list := &metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{APIVersion: MetricsGroupVersion.String(), Kind: "NodeMetricsList"}}
	for _, m := range all {
		if metricsMatch(m.ObjectMeta, ls, fs) {
			m.TypeMeta = metav1.TypeMeta{}
			list.Items = append(list.Items, m)
		}
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list, nil
}

// GetNode returns one node's metrics: 404 "nodemetrics.metrics.k8s.io ... not
// found" when there is no sample.
func (a *MetricsAPI) GetNode(ctx context.Context, name string) (*metricsv1beta1.NodeMetrics, error) {
	list, err := a.ListNodes(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if m := &list.Items[i]; m.Name == name {
			m.TypeMeta = metav1.TypeMeta{APIVersion: MetricsGroupVersion.String(), Kind: "NodeMetrics"}
			return m, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: MetricsGroupVersion.Group, Resource: "nodemetrics"}, name)
}

// ListPods returns the PodMetrics of namespace ("" for all) matching the
// selectors.
func (a *MetricsAPI) ListPods(ctx context.Context, namespace string, ls labels.Selector, fs fields.Selector) (*metricsv1beta1.PodMetricsList, error) {
	all, err := a.provider.PodMetrics(ctx, namespace)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	list := &metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{APIVersion: MetricsGroupVersion.String(), Kind: "PodMetricsList"}}
	for _, m := range all {
		if (namespace == "" || m.Namespace == namespace) && metricsMatch(m.ObjectMeta, ls, fs) {
			m.TypeMeta = metav1.TypeMeta{}
			list.Items = append(list.Items, m)
		}
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
	})
	return list, nil
}

// GetPod returns one pod's metrics: 404 `podmetrics.metrics.k8s.io
// "default/web" not found` (metrics-server's wording) without a sample.
func (a *MetricsAPI) GetPod(ctx context.Context, namespace, name string) (*metricsv1beta1.PodMetrics, error) {
	list, err := a.ListPods(ctx, namespace, nil, nil)
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if m := &list.Items[i]; m.Name == name {
			m.TypeMeta = metav1.TypeMeta{APIVersion: MetricsGroupVersion.String(), Kind: "PodMetrics"}
			return m, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: MetricsGroupVersion.Group, Resource: "podmetrics"}, namespace+"/"+name)
}

// MetricsStore is a MetricsProvider the kubelets write their samples into,
// like metrics-server's in-memory storage.
type MetricsStore struct {
	mu    sync.RWMutex // guards nodes and pods
	nodes map[string]metricsv1beta1.NodeMetrics
	pods  map[string]metricsv1beta1.PodMetrics // by namespace/name
}

var _ MetricsProvider = (*MetricsStore)(nil)

// NewMetricsStore returns an empty store.
func NewMetricsStore() *MetricsStore {
	return &MetricsStore{nodes: map[string]metricsv1beta1.NodeMetrics{}, pods: map[string]metricsv1beta1.PodMetrics{}}
}

// SetNodeMetrics records a node's latest sample.
func (s *MetricsStore) SetNodeMetrics(m metricsv1beta1.NodeMetrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[m.Name] = *m.DeepCopy()
}

// SetPodMetrics records a pod's latest sample.
func (s *MetricsStore) SetPodMetrics(m metricsv1beta1.PodMetrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[m.Namespace+"/"+m.Name] = *m.DeepCopy()
}

// DeleteNodeMetrics forgets a node.
func (s *MetricsStore) DeleteNodeMetrics(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, name)
}

// DeletePodMetrics forgets a pod.
func (s *MetricsStore) DeletePodMetrics(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, namespace+"/"+name)
}

// NodeMetrics implements MetricsProvider.
func (s *MetricsStore) NodeMetrics(ctx context.Context) ([]metricsv1beta1.NodeMetrics, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]metricsv1beta1.NodeMetrics, 0, len(s.nodes))
	for _, m := range s.nodes {
		out = append(out, *m.DeepCopy())
	}
	return out, nil
}

// PodMetrics implements MetricsProvider.
func (s *MetricsStore) PodMetrics(ctx context.Context, namespace string) ([]metricsv1beta1.PodMetrics, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]metricsv1beta1.PodMetrics, 0, len(s.pods))
	for _, m := range s.pods {
		if namespace == "" || m.Namespace == namespace {
			out = append(out, *m.DeepCopy())
		}
	}
	return out, nil
}
