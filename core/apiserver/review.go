package apiserver

import (
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetab/kubetab/core/apiserver/authz"
)

// The review APIs: objects that are created and answered, never stored
// (upstream: pkg/registry/authorization/{selfsubjectaccessreview,
// subjectaccessreview,localsubjectaccessreview,selfsubjectrulesreview} and
// pkg/registry/authentication/selfsubjectreview).
//
//	kubectl auth can-i list pods    POST selfsubjectaccessreviews   → status.allowed
//	kubectl auth can-i --list       POST selfsubjectrulesreviews    → the rules that apply
//	kubectl auth whoami             POST selfsubjectreviews         → status.userInfo
//
// Creating one is itself authorized like any create; every authenticated
// user may create the self reviews (the system:basic-user ClusterRole).

func (s *Server) handleReviews() {
	authzGV := "/apis/" + authzv1.SchemeGroupVersion.String()
	authnGV := "/apis/" + authnv1.SchemeGroupVersion.String()
	for path, h := range map[string]http.HandlerFunc{
		authzGV + "/selfsubjectaccessreviews":                         s.selfSubjectAccessReview,
		authzGV + "/subjectaccessreviews":                             s.subjectAccessReview,
		authzGV + "/namespaces/{namespace}/localsubjectaccessreviews": s.subjectAccessReview,
		authzGV + "/selfsubjectrulesreviews":                          s.selfSubjectRulesReview,
		authnGV + "/selfsubjectreviews":                               s.selfSubjectReview,
	} {
		s.mux.HandleFunc("POST "+path, h)
		// Create is the only verb: any other method is 405, in the plain
		// text a route without that method answers with upstream (kubectl
		// words it: the server does not allow this method on the
		// requested resource (get selfsubjectaccessreviews...)).
		s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "405: Method Not Allowed", http.StatusMethodNotAllowed)
		})
	}
}

// reviewAPIs are the review resources in discovery, in upstream's order of
// groups (authentication.k8s.io, then authorization.k8s.io, both right
// after apps) and with its only verb, create. TokenReview is not served:
// kubetab has no tokens to review.
var reviewAPIs = []struct {
	gv        schema.GroupVersion
	resources []metav1.APIResource
}{
	{authnv1.SchemeGroupVersion, []metav1.APIResource{
		reviewResource("selfsubjectreviews", "SelfSubjectReview", false),
	}},
	{authzv1.SchemeGroupVersion, []metav1.APIResource{
		reviewResource("localsubjectaccessreviews", "LocalSubjectAccessReview", true),
		reviewResource("selfsubjectaccessreviews", "SelfSubjectAccessReview", false),
		reviewResource("selfsubjectrulesreviews", "SelfSubjectRulesReview", false),
		reviewResource("subjectaccessreviews", "SubjectAccessReview", false),
	}},
}

func reviewResource(name, kind string, namespaced bool) metav1.APIResource {
	return metav1.APIResource{Name: name, SingularName: strings.TrimSuffix(name, "s"), Namespaced: namespaced, Kind: kind, Verbs: metav1.Verbs{"create"}}
}

// reviewObject is a new review of kind, for OpenAPI (kubectl explain).
func reviewObject(kind string) runtime.Object {
	switch kind {
	case "SelfSubjectReview":
		return &authnv1.SelfSubjectReview{}
	case "LocalSubjectAccessReview":
		return &authzv1.LocalSubjectAccessReview{}
	case "SelfSubjectAccessReview":
		return &authzv1.SelfSubjectAccessReview{}
	case "SelfSubjectRulesReview":
		return &authzv1.SelfSubjectRulesReview{}
	}
	return &authzv1.SubjectAccessReview{}
}

// reviewResources returns the review resources of gv, or nil.
func reviewResources(gv schema.GroupVersion) []metav1.APIResource {
	for _, g := range reviewAPIs {
		if g.gv == gv {
			return g.resources
		}
	}
	return nil
}

// reviewDiscovery is the aggregated discovery entry of a review group.
func reviewDiscovery(gv schema.GroupVersion, resources []metav1.APIResource) apidiscoveryv2.APIGroupDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, r := range resources {
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		v.Resources = append(v.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, ResponseKind: &metav1.GroupVersionKind{Kind: r.Kind},
			Scope: scope, SingularResource: r.SingularName, Verbs: r.Verbs,
		})
	}
	return apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group}, Versions: []apidiscoveryv2.APIVersionDiscovery{v}}
}

// answerReview decodes a review of kind into obj, lets answer fill it,
// and writes it back with 201 Created, as upstream.
func (s *Server) answerReview(w http.ResponseWriter, r *http.Request, gvk schema.GroupVersionKind, obj runtime.Object, answer func() error) {
	out, err := negotiate(r)
	if err == nil {
		err = s.decode(w, r, gvk, obj)
	}
	if err == nil {
		err = answer()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	writeEncoded(w, out, http.StatusCreated, obj)
}

func resourceAttributes(u *authz.User, ra *authzv1.ResourceAttributes, na *authzv1.NonResourceAttributes) authz.Attributes {
	if ra != nil {
		return authz.Attributes{User: u, ResourceRequest: true, Verb: ra.Verb, APIGroup: ra.Group, APIVersion: ra.Version,
			Resource: ra.Resource, Subresource: ra.Subresource, Namespace: ra.Namespace, Name: ra.Name}
	}
	return authz.Attributes{User: u, Verb: na.Verb, Path: na.Path}
}

// validateAttributes is upstream's check shared by the access reviews:
// exactly one of resourceAttributes and nonResourceAttributes.
func validateAttributes(ra *authzv1.ResourceAttributes, na *authzv1.NonResourceAttributes) field.ErrorList {
	p := field.NewPath("spec")
	switch {
	case ra != nil && na != nil:
		return field.ErrorList{field.Invalid(p.Child("nonResourceAttributes"), na, "cannot be specified in combination with resourceAttributes")}
	case ra == nil && na == nil:
		return field.ErrorList{field.Invalid(p.Child("resourceAttributes"), na, "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

func (s *Server) decide(r *http.Request, a authz.Attributes) authzv1.SubjectAccessReviewStatus {
	dec, reason, err := s.authorizer.Authorize(r.Context(), a)
	st := authzv1.SubjectAccessReviewStatus{Allowed: dec == authz.DecisionAllow, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func (s *Server) selfSubjectAccessReview(w http.ResponseWriter, r *http.Request) {
	gvk := authzv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview")
	rev := &authzv1.SelfSubjectAccessReview{}
	s.answerReview(w, r, gvk, rev, func() error {
		if errs := validateAttributes(rev.Spec.ResourceAttributes, rev.Spec.NonResourceAttributes); len(errs) > 0 {
			return apierrors.NewInvalid(gvk.GroupKind(), "", errs)
		}
		rev.Status = s.decide(r, resourceAttributes(userOf(r), rev.Spec.ResourceAttributes, rev.Spec.NonResourceAttributes))
		return nil
	})
}

// subjectAccessReview answers SubjectAccessReview and, under a namespace,
// LocalSubjectAccessReview (whose spec must name that namespace).
func (s *Server) subjectAccessReview(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("namespace")
	kind := "SubjectAccessReview"
	if ns != "" {
		kind = "LocalSubjectAccessReview"
	}
	gvk := authzv1.SchemeGroupVersion.WithKind(kind)
	var spec *authzv1.SubjectAccessReviewSpec
	var status *authzv1.SubjectAccessReviewStatus
	var obj runtime.Object
	if ns != "" {
		l := &authzv1.LocalSubjectAccessReview{}
		obj, spec, status = l, &l.Spec, &l.Status
	} else {
		sar := &authzv1.SubjectAccessReview{}
		obj, spec, status = sar, &sar.Spec, &sar.Status
	}
	s.answerReview(w, r, gvk, obj, func() error {
		errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes)
		if spec.User == "" && len(spec.Groups) == 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified"))
		}
		if ns != "" {
			if spec.NonResourceAttributes != nil {
				errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), spec.NonResourceAttributes, "disallowed on this kind of request"))
			}
			if spec.ResourceAttributes != nil && spec.ResourceAttributes.Namespace != ns {
				return apierrors.NewBadRequest("spec.resourceAttributes.namespace must match namespace: " + ns)
			}
		}
		if len(errs) > 0 {
			return apierrors.NewInvalid(gvk.GroupKind(), "", errs)
		}
		u := &authz.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
		for k, v := range spec.Extra {
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[k] = v
		}
		*status = s.decide(r, resourceAttributes(u, spec.ResourceAttributes, spec.NonResourceAttributes))
		return nil
	})
}

// selfSubjectRulesReview lists the rules that apply to the user in
// spec.namespace. system:masters may do anything without a rule, but is
// also bound to cluster-admin, whose rules say so.
func (s *Server) selfSubjectRulesReview(w http.ResponseWriter, r *http.Request) {
	gvk := authzv1.SchemeGroupVersion.WithKind("SelfSubjectRulesReview")
	rev := &authzv1.SelfSubjectRulesReview{}
	s.answerReview(w, r, gvk, rev, func() error {
		rules, errs := s.rbac.RulesFor(r.Context(), userOf(r), rev.Spec.Namespace)
		st := authzv1.SubjectRulesReviewStatus{ResourceRules: []authzv1.ResourceRule{}, NonResourceRules: []authzv1.NonResourceRule{}}
		for _, rule := range rules {
			st.ResourceRules, st.NonResourceRules = appendRule(st.ResourceRules, st.NonResourceRules, rule)
		}
		if len(errs) > 0 {
			st.Incomplete = true
			msg := ""
			for i, e := range errs {
				if i > 0 {
					msg += ", "
				}
				msg += e.Error()
			}
			st.EvaluationError = msg
		}
		rev.Status = st
		return nil
	})
}

func appendRule(res []authzv1.ResourceRule, non []authzv1.NonResourceRule, rule rbacv1.PolicyRule) ([]authzv1.ResourceRule, []authzv1.NonResourceRule) {
	if len(rule.NonResourceURLs) > 0 {
		return res, append(non, authzv1.NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
	}
	return append(res, authzv1.ResourceRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames}), non
}

func (s *Server) selfSubjectReview(w http.ResponseWriter, r *http.Request) {
	gvk := authnv1.SchemeGroupVersion.WithKind("SelfSubjectReview")
	rev := &authnv1.SelfSubjectReview{}
	s.answerReview(w, r, gvk, rev, func() error {
		u := userOf(r)
		info := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		for k, v := range u.Extra {
			if info.Extra == nil {
				info.Extra = map[string]authnv1.ExtraValue{}
			}
			info.Extra[k] = v
		}
		rev.Status.UserInfo = info
		return nil
	})
}
