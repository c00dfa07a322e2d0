package kubectl

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// otherVersion finds a resource in a version that is not its group's
// preferred one (hpa.v1.autoscaling, a manifest of apiVersion
// autoscaling/v1), as kubectl's RESTMapper does: discovery keeps only the
// preferred versions, so the group version asked for is listed on demand.
// match picks the resource; ok is false when that version does not serve
// one.
func (s *session) otherVersion(gv schema.GroupVersion, match func(apiResource) bool) (apiResource, bool) {
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	var list metav1.APIResourceList
	if err := s.client.into(s.ctx, request{method: http.MethodGet, path: path}, &list); err != nil {
		return apiResource{}, false
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
		res := apiResource{Group: gv.Group, Version: gv.Version, Name: r.Name, Singular: r.SingularName, Kind: r.Kind,
			ShortNames: r.ShortNames, Categories: r.Categories, Verbs: r.Verbs, Namespaced: r.Namespaced, Subresources: subs[r.Name]}
		if match(res) {
			return res, true
		}
	}
	return apiResource{}, false
}
