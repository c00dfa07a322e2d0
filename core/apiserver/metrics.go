package apiserver

import (
	"fmt"
	"net/http"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// metrics.k8s.io is not stored: in a real cluster metrics-server serves it
// behind the API server (an aggregated API) from the kubelets' summaries.
// Here the registry's MetricsAPI reads the kubelets' samples, and this file
// mounts it: discovery, and get and list of nodes and pods, which is what
// `kubectl top` asks for.

func (s *Server) metricsServed() bool { return s.reg.Metrics() != nil }

func isMetricsGV(gv schema.GroupVersion) bool { return gv == registry.MetricsGroupVersion }

// metricsResources is the APIResourceList entries of metrics.k8s.io/v1beta1.
func metricsResources() []metav1.APIResource {
	var out []metav1.APIResource
	for _, m := range registry.MetricsResources {
		out = append(out, metav1.APIResource{Name: m.Resource, SingularName: m.Singular, Namespaced: m.Namespaced, Kind: m.Kind, Verbs: metav1.Verbs{"get", "list"}})
	}
	return out
}

// metricsDiscovery is the aggregated discovery entry of metrics.k8s.io.
func metricsDiscovery() apidiscoveryv2.APIGroupDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: registry.MetricsGroupVersion.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, m := range registry.MetricsResources {
		scope := apidiscoveryv2.ScopeCluster
		if m.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		v.Resources = append(v.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource: m.Resource, ResponseKind: &metav1.GroupVersionKind{Kind: m.Kind},
			Scope: scope, SingularResource: m.Singular, Verbs: []string{"get", "list"},
		})
	}
	return apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: registry.MetricsGroupVersion.Group},
		Versions:   []apidiscoveryv2.APIVersionDiscovery{v},
	}
}

// serveMetrics answers get and list of metrics.k8s.io nodes and pods.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request, info requestInfo) {
	api := s.reg.Metrics()
	if api == nil {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.GV.Group, Resource: info.Resource}, r.Method))
		return
	}
	if info.Subresource != "" {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	ls, fs, err := parseSelectors(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ctx := r.Context()
	var obj runtime.Object
	switch {
	case info.Resource == "nodes" && info.Namespace == "" && info.Name != "":
		obj, err = api.GetNode(ctx, info.Name)
	case info.Resource == "nodes" && info.Namespace == "":
		obj, err = api.ListNodes(ctx, ls, fs)
	case info.Resource == "pods" && info.Name != "":
		obj, err = api.GetPod(ctx, info.Namespace, info.Name)
	case info.Resource == "pods":
		obj, err = api.ListPods(ctx, info.Namespace, ls, fs)
	default:
		err = notFoundPath(r.URL.Path)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// parseSelectors reads labelSelector and fieldSelector (metadata fields
// only, as metrics-server).
func parseSelectors(r *http.Request) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	var ls labels.Selector
	var fs fields.Selector
	if v := q.Get("labelSelector"); v != "" {
		sel, err := labels.Parse(v)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		ls = sel
	}
	if v := q.Get("fieldSelector"); v != "" {
		sel, err := fields.ParseSelector(v)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		for _, req := range sel.Requirements() {
			if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		fs = sel
	}
	return ls, fs, nil
}
