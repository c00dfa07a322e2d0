package apiserver

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Version is what /version reports. kubetab serves the API of the
// k8s.io/api release it is built with.
var Version = version.Info{
	Major: "1", Minor: "37", GitVersion: "v1.37.2-kubetab", GitCommit: "kubetab",
	GitTreeState: "clean", BuildDate: "2026-11-29T00:00:00Z", GoVersion: "go1.26", Compiler: "gc", Platform: "kubetab",
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Version)
}

// Discovery
//
// kubectl learns what the server serves before it does anything else. It asks
// /api and /apis with an Accept header that prefers aggregated discovery:
//
//	Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...,application/json
//
// and gets every group, version and resource in two answers (an
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList, upstream:
// k8s.io/apiserver/pkg/endpoints/discovery/aggregated). It knows it got them
// from the Content-Type, which names the same g, v and as. A client that asks
// for plain JSON gets the legacy documents instead and walks /api/v1 and
// /apis/<group>/<version> one by one (endpoints/discovery).

// discoveryContentType marks an aggregated discovery answer.
const discoveryContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// legacyVersions serves /api: the versions of the legacy core group.
func (s *Server) legacyVersions(w http.ResponseWriter, r *http.Request) {
	out, err := s.discoveryRequest(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if out.shape == shapeDiscovery {
		s.writeAggregated(w, r, s.aggregated(true))
		return
	}
	addr := s.cfg.ExternalAddress
	if addr == "" {
		addr = r.Host
	}
	writeEncoded(w, out, http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: addr},
		},
	})
}

// discoveryRequest checks the method and negotiates a discovery answer.
func (s *Server) discoveryRequest(w http.ResponseWriter, r *http.Request) (output, error) {
	if r.Method != http.MethodGet {
		return output{}, methodNotAllowed()
	}
	return negotiate(r, shapeDiscovery)
}

// groupVersions returns the named groups and their versions, in the order
// their resources were registered.
func (s *Server) groupVersions() (order []string, versions map[string][]string) {
	versions = map[string][]string{}
	for _, st := range s.reg.Resources() {
		g := st.Resource.Group
		if g == "" {
			continue
		}
		if _, ok := versions[g]; !ok {
			order = append(order, g)
			if g == "apps" {
				order = append(order, s.reviewGroupVersions(versions)...)
			}
		}
		if !hasString(versions[g], st.Resource.Version) {
			versions[g] = append(versions[g], st.Resource.Version)
		}
	}
	if _, ok := versions[reviewAPIs[0].gv.Group]; !ok { // no apps: first
		order = append(s.reviewGroupVersions(versions), order...)
	}
	if s.metricsServed() {
		g := registry.MetricsGroupVersion
		order = append(order, g.Group)
		versions[g.Group] = []string{g.Version}
	}
	if s.flowServed() {
		order = append(order, flowGV.Group)
		versions[flowGV.Group] = []string{flowGV.Version}
	}
	return order, versions
}

// reviewGroupVersions adds the review groups (review.go) to versions and
// returns their names.
func (s *Server) reviewGroupVersions(versions map[string][]string) []string {
	var names []string
	for _, g := range reviewAPIs {
		names = append(names, g.gv.Group)
		versions[g.gv.Group] = []string{g.gv.Version}
	}
	return names
}

func (s *Server) apiGroup(name string, versions []string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

// groups serves /apis: every named API group.
func (s *Server) groups(w http.ResponseWriter, r *http.Request) {
	out, err := s.discoveryRequest(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if out.shape == shapeDiscovery {
		s.writeAggregated(w, r, s.aggregated(false))
		return
	}
	order, versions := s.groupVersions()
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, g := range order {
		list.Groups = append(list.Groups, s.apiGroup(g, versions[g]))
	}
	writeEncoded(w, out, http.StatusOK, list)
}

// groupDocument serves /apis/<group>.
func (s *Server) groupDocument(w http.ResponseWriter, r *http.Request, group string) {
	out, err := negotiate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	order, versions := s.groupVersions()
	for _, g := range order {
		if g == group {
			grp := s.apiGroup(g, versions[g])
			grp.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeEncoded(w, out, http.StatusOK, &grp)
			return
		}
	}
	writeError(w, r, notFoundPath(r.URL.Path))
}

// resourceList serves /api/v1 and /apis/<group>/<version>.
func (s *Server) resourceList(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) {
	out, err := negotiate(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
	}
	if isMetricsGV(gv) && s.metricsServed() {
		list.APIResources = metricsResources()
	}
	if gv == flowGV {
		list.APIResources = s.flowAPIResources()
	}
	list.APIResources = append(list.APIResources, reviewResources(gv)...)
	for _, st := range s.reg.Resources() {
		res := st.Resource
		if res.Group != gv.Group || res.Version != gv.Version {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs:      resourceVerbs,
			ShortNames: res.ShortNames, Categories: res.Categories,
		})
		for _, sub := range res.Subresources {
			list.APIResources = append(list.APIResources, subresourceInfo(res, sub))
		}
	}
	if len(list.APIResources) == 0 {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	sort.SliceStable(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
	writeEncoded(w, out, http.StatusOK, list)
}

// resourceVerbs are the verbs of every served resource.
var resourceVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// aggregated builds the aggregated discovery document of the core group
// (/api) or of the named groups (/apis).
func (s *Server) aggregated(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	groupIndex := map[string]int{}
	for _, st := range s.reg.Resources() {
		res := st.Resource
		if (res.Group == "") != core {
			continue
		}
		gi, ok := groupIndex[res.Group]
		if !ok {
			gi = len(list.Items)
			groupIndex[res.Group] = gi
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: res.Group}})
			if res.Group == "apps" {
				for _, g := range reviewAPIs {
					list.Items = append(list.Items, reviewDiscovery(g.gv, g.resources))
				}
			}
		}
		grp := &list.Items[gi]
		vi := -1
		for i := range grp.Versions {
			if grp.Versions[i].Version == res.Version {
				vi = i
			}
		}
		if vi < 0 {
			vi = len(grp.Versions)
			grp.Versions = append(grp.Versions, apidiscoveryv2.APIVersionDiscovery{Version: res.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent})
		}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		rd := apidiscoveryv2.APIResourceDiscovery{
			Resource: res.Resource, ResponseKind: &metav1.GroupVersionKind{Kind: res.Kind},
			Scope: scope, SingularResource: res.Singular, Verbs: resourceVerbs,
			ShortNames: res.ShortNames, Categories: res.Categories,
		}
		for _, sub := range res.Subresources {
			info := subresourceInfo(res, sub)
			sd := apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub, Verbs: info.Verbs,
				ResponseKind: &metav1.GroupVersionKind{Group: info.Group, Version: info.Version, Kind: info.Kind},
			}
			rd.Subresources = append(rd.Subresources, sd)
		}
		grp.Versions[vi].Resources = append(grp.Versions[vi].Resources, rd)
	}
	if _, apps := groupIndex["apps"]; !core && !apps {
		var reviews []apidiscoveryv2.APIGroupDiscovery
		for _, g := range reviewAPIs {
			reviews = append(reviews, reviewDiscovery(g.gv, g.resources))
		}
		list.Items = append(reviews, list.Items...)
	}
	if !core && s.metricsServed() {
		list.Items = append(list.Items, metricsDiscovery())
	}
	if !core && s.flowServed() {
		list.Items = append(list.Items, s.flowDiscovery())
	}
	for gi := range list.Items {
		for vi := range list.Items[gi].Versions {
			rs := list.Items[gi].Versions[vi].Resources
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].Resource < rs[j].Resource })
		}
	}
	return list
}

// writeAggregated answers with an aggregated discovery document, with the
// Content-Type that tells client-go what it got and an ETag (a client that
// sends it back in If-None-Match gets 304 Not Modified).
func (s *Server) writeAggregated(w http.ResponseWriter, r *http.Request, list *apidiscoveryv2.APIGroupDiscoveryList) {
	data, err := json.Marshal(list)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	sum := sha512.Sum512(data)
	etag := `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	w.Header().Set("Vary", "Accept")
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", discoveryContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

func subresourceInfo(res *registry.Resource, sub string) metav1.APIResource {
	info := metav1.APIResource{Name: res.Resource + "/" + sub, Namespaced: res.Namespaced, Kind: res.Kind}
	switch sub {
	case "status":
		info.Verbs = metav1.Verbs{"get", "patch", "update"}
	case "binding":
		info.Kind, info.Verbs = "Binding", metav1.Verbs{"create"}
	case "log":
		info.Verbs = metav1.Verbs{"get"}
	case "scale":
		info.Group, info.Version, info.Kind = "autoscaling", "v1", "Scale"
		info.Verbs = metav1.Verbs{"get", "patch", "update"}
	case "eviction":
		info.Group, info.Version, info.Kind = "policy", "v1", "Eviction"
		info.Verbs = metav1.Verbs{"create"}
	case "finalize":
		info.Verbs = metav1.Verbs{"update"}
	}
	return info
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func groupResource(resource string) schema.GroupResource {
	if i := strings.IndexByte(resource, '.'); i >= 0 {
		return schema.GroupResource{Resource: resource[:i], Group: resource[i+1:]}
	}
	return schema.GroupResource{Resource: resource}
}
