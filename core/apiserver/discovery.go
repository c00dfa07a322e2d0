package apiserver

import (
	"net/http"
	"sort"
	"strings"

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

// legacyVersions serves /api: the versions of the legacy core group.
func (s *Server) legacyVersions(w http.ResponseWriter, r *http.Request) {
	addr := s.cfg.ExternalAddress
	if addr == "" {
		addr = r.Host
	}
	writeJSON(w, http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: addr},
		},
	})
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
		}
		if !hasString(versions[g], st.Resource.Version) {
			versions[g] = append(versions[g], st.Resource.Version)
		}
	}
	return order, versions
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
	order, versions := s.groupVersions()
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, g := range order {
		list.Groups = append(list.Groups, s.apiGroup(g, versions[g]))
	}
	writeJSON(w, http.StatusOK, list)
}

// resourceList serves /api/v1 and /apis/<group>/<version>.
func (s *Server) resourceList(w http.ResponseWriter, gv schema.GroupVersion) {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
	}
	for _, st := range s.reg.Resources() {
		res := st.Resource
		if res.Group != gv.Group || res.Version != gv.Version {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs:      metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			ShortNames: res.ShortNames, Categories: res.Categories,
		})
		for _, sub := range res.Subresources {
			list.APIResources = append(list.APIResources, subresourceInfo(res, sub))
		}
	}
	if len(list.APIResources) == 0 {
		writeError(w, nil, notFoundPath("/apis/"+gv.String()))
		return
	}
	sort.SliceStable(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
	writeJSON(w, http.StatusOK, list)
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
