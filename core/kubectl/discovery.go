package kubectl

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// apiResource is one served resource as discovery describes it (upstream:
// a metav1.APIResource plus its group/version, what a RESTMapping holds).
type apiResource struct {
	Group, Version string
	Name           string // plural: "pods"
	Singular, Kind string
	ShortNames     []string
	Categories     []string
	Verbs          []string
	Namespaced     bool
	Subresources   []string // "status", "scale", "log" ...
}

// GroupVersion returns the resource's group/version ("v1", "apps/v1").
func (r apiResource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// kindName is how kubectl names the kind in messages: "pod",
// "deployment.apps" (lower-case kind, dot, group).
func (r apiResource) kindName() string {
	k := strings.ToLower(r.Kind)
	if r.Group != "" {
		k += "." + r.Group
	}
	return k
}

// groupResource names the resource in API errors: "pods", "deployments.apps".
func (r apiResource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Name}
}

func (r apiResource) hasSubresource(sub string) bool {
	for _, s := range r.Subresources {
		if s == sub {
			return true
		}
	}
	return false
}

// path returns the REST path of the resource in namespace ("" for all
// namespaces or a cluster-scoped resource), of one object if name is set,
// and of its subresource if sub is set:
//
//	/api/v1/namespaces/default/pods/web/log
//	/apis/apps/v1/namespaces/default/deployments
//	/api/v1/nodes/node-1
func (r apiResource) path(namespace, name, sub string) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/" + r.Version)
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	if r.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(namespace))
	}
	b.WriteString("/" + r.Name)
	if name != "" {
		b.WriteString("/" + url.PathEscape(name))
		if sub != "" {
			b.WriteString("/" + sub)
		}
	}
	return b.String()
}

// discover asks the server which resources it serves (GET /api, /api/v1,
// /apis, /apis/<group>/<preferred version>), once per command. Like
// kubectl's ServerPreferredResources it keeps only each group's preferred
// version.
func (s *session) discover() ([]apiResource, error) {
	if s.resources != nil {
		return s.resources, nil
	}
	var gvs []string
	var legacy metav1.APIVersions
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/api"}, &legacy); err != nil {
		return nil, err
	}
	gvs = append(gvs, legacy.Versions...)
	var groups metav1.APIGroupList
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: "/apis"}, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		gvs = append(gvs, g.PreferredVersion.GroupVersion)
	}
	var out []apiResource
	for _, gv := range gvs {
		path := "/apis/" + gv
		if !strings.Contains(gv, "/") {
			path = "/api/" + gv
		}
		var list metav1.APIResourceList
		if err := s.client.into(s.ctx, request{method: http.MethodGet, path: path}, &list); err != nil {
			return nil, err
		}
		parsed, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		subs := map[string][]string{}
		for _, r := range list.APIResources {
			if main, sub, ok := strings.Cut(r.Name, "/"); ok {
				subs[main] = append(subs[main], sub)
			}
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			out = append(out, apiResource{
				Group: parsed.Group, Version: parsed.Version, Name: r.Name, Singular: r.SingularName, Kind: r.Kind,
				ShortNames: r.ShortNames, Categories: r.Categories, Verbs: r.Verbs, Namespaced: r.Namespaced,
				Subresources: subs[r.Name],
			})
		}
	}
	s.resources = out
	return out, nil
}

// resolve maps what a user typed to a resource, like kubectl's RESTMapper:
// the plural ("pods"), the singular ("pod"), a short name ("po"), the kind
// ("Pod"), each optionally qualified by group ("deployments.apps") or
// version and group ("deployments.v1.apps"). Matching ignores case.
func (s *session) resolve(arg string) (apiResource, error) {
	all, err := s.discover()
	if err != nil {
		return apiResource{}, err
	}
	name, qual, _ := strings.Cut(strings.ToLower(arg), ".")
	var version, group string
	if qual != "" {
		if v, g, ok := strings.Cut(qual, "."); ok && looksLikeVersion(v) {
			version, group = v, g
		} else {
			group = qual
		}
	}
	for _, r := range all {
		if group != "" && r.Group != group {
			continue
		}
		if version != "" && r.Version != version {
			continue
		}
		if name == r.Name || name == r.Singular || name == strings.ToLower(r.Kind) || contains(r.ShortNames, name) {
			return r, nil
		}
	}
	if version != "" {
		if r, ok := s.otherVersion(schema.GroupVersion{Group: group, Version: version}, func(r apiResource) bool {
			return name == r.Name || name == r.Singular || name == strings.ToLower(r.Kind) || contains(r.ShortNames, name)
		}); ok {
			return r, nil
		}
	}
	return apiResource{}, &noResourceError{resource: arg}
}

// forKind finds the resource serving apiVersion/kind (for manifests).
func (s *session) forKind(gvk schema.GroupVersionKind) (apiResource, bool, error) {
	all, err := s.discover()
	if err != nil {
		return apiResource{}, false, err
	}
	for _, r := range all {
		if r.Group == gvk.Group && r.Version == gvk.Version && r.Kind == gvk.Kind {
			return r, true, nil
		}
	}
	if r, ok := s.otherVersion(gvk.GroupVersion(), func(r apiResource) bool { return r.Kind == gvk.Kind }); ok {
		return r, true, nil
	}
	return apiResource{}, false, nil
}

// category expands a category such as "all" into its resources, in
// discovery order (kubectl get all: pods, then deployments, replicasets).
func (s *session) category(name string) ([]apiResource, error) {
	all, err := s.discover()
	if err != nil {
		return nil, err
	}
	var out []apiResource
	for _, r := range all {
		if contains(r.Categories, name) {
			out = append(out, r)
		}
	}
	return out, nil
}

func looksLikeVersion(v string) bool {
	return len(v) >= 2 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9'
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
