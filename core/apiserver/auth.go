package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Authentication, impersonation and authorization: the first filters of
// kube-apiserver's chain (k8s.io/apiserver/pkg/server/filters and
// pkg/endpoints/filters: WithAuthentication, WithImpersonation,
// WithAuthorization), run on every HTTP request before it is routed.
//
// Who is asking: kubetab serves its HTTP API on loopback only (and in the
// browser, to the page alone), and has no client certificates, so a
// request without credentials is the cluster's administrator, Admin, in
// the group system:masters: what `kind` or `kubeadm` write into the first
// kubeconfig. The learner becomes someone else the way an administrator
// does, by impersonation (kubectl --as jane --as-group dev), which needs
// the "impersonate" verb on users, groups or serviceaccounts.
//
// The in-process components (controllers, scheduler, kubelets) talk to the
// registry directly through core/client, not through HTTP; they are trusted
// as before and pay nothing for this.

// Admin is the user of a request that brings no credentials.
var Admin = &authz.User{Name: "kubetab-admin", Groups: []string{authz.GroupMasters, authz.GroupAuthenticated}}

// Impersonation headers (k8s.io/api/authentication/v1).
const (
	impersonateUserHeader       = "Impersonate-User"
	impersonateGroupHeader      = "Impersonate-Group"
	impersonateUIDHeader        = "Impersonate-Uid"
	impersonateExtraHeaderPrefx = "Impersonate-Extra-"
)

// userOf is the user of an authenticated request.
func userOf(r *http.Request) *authz.User {
	if u := authz.UserFrom(r.Context()); u != nil {
		return u
	}
	return Admin
}

// authenticate finds the request's user, applies impersonation and
// authorizes the request. It answers the request itself (400, 403) and
// returns false when it may not go on. A request as Admin without
// impersonation costs two header lookups.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.Header.Get(impersonateUserHeader) == "" && len(r.Header.Values(impersonateGroupHeader)) == 0 &&
		r.Header.Get(impersonateUIDHeader) == "" && !hasExtraHeader(r.Header) {
		return r, true // Admin may do anything: system:masters
	}
	u, err := s.impersonate(r.Context(), Admin, r.Header)
	if err != nil {
		writeError(w, r, err)
		return r, false
	}
	r = r.WithContext(authz.WithUser(r.Context(), u))
	a := requestAttributes(r, u)
	if dec, reason, err := s.authorizer.Authorize(r.Context(), a); dec != authz.DecisionAllow {
		writeError(w, r, authz.Forbidden(a, denyReason(reason, err)))
		return r, false
	}
	return r, true
}

// denyReason is what a 403 appends to its message: the authorizers' reasons
// and evaluation error, if any (RBAC gives none).
func denyReason(reason string, err error) string {
	if err != nil {
		if reason != "" {
			reason += ", "
		}
		reason += err.Error()
	}
	return reason
}

func hasExtraHeader(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(k, impersonateExtraHeaderPrefx) {
			return true
		}
	}
	return false
}

// impersonate is upstream's WithImpersonation: each thing asked for (the
// user or ServiceAccount, every group, the uid, every extra value) must be
// allowed to who with the "impersonate" verb. The new user is in
// system:authenticated unless the groups asked for say otherwise.
func (s *Server) impersonate(ctx context.Context, who *authz.User, h http.Header) (*authz.User, error) {
	name := h.Get(impersonateUserHeader)
	groups := h.Values(impersonateGroupHeader)
	uid := h.Get(impersonateUIDHeader)
	if name == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %s without impersonating a user", describeImpersonation(groups, uid, h)))
	}
	check := func(a authz.Attributes) error {
		a.User, a.Verb, a.ResourceRequest = who, "impersonate", true
		if dec, reason, err := s.authorizer.Authorize(ctx, a); dec != authz.DecisionAllow {
			return authz.Forbidden(a, denyReason(reason, err))
		}
		return nil
	}
	u := &authz.User{Name: name, UID: uid}
	groupsGiven := len(groups) > 0
	if ns, sa, ok := strings.Cut(strings.TrimPrefix(name, authz.ServiceAccountPrefix), ":"); ok && strings.HasPrefix(name, authz.ServiceAccountPrefix) {
		if err := check(authz.Attributes{Resource: "serviceaccounts", Namespace: ns, Name: sa}); err != nil {
			return nil, err
		}
		if !groupsGiven {
			groups = append(groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
		}
	} else if err := check(authz.Attributes{Resource: "users", Name: name}); err != nil {
		return nil, err
	}
	for _, g := range h.Values(impersonateGroupHeader) {
		if err := check(authz.Attributes{Resource: "groups", Name: g}); err != nil {
			return nil, err
		}
	}
	if uid != "" {
		if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid}); err != nil {
			return nil, err
		}
	}
	for k, vs := range h {
		if !strings.HasPrefix(k, impersonateExtraHeaderPrefx) {
			continue
		}
		key := strings.ToLower(strings.TrimPrefix(k, impersonateExtraHeaderPrefx))
		for _, v := range vs {
			if err := check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: key, Name: v}); err != nil {
				return nil, err
			}
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[key] = append(u.Extra[key], v)
		}
	}
	special, marker := authz.GroupAuthenticated, authz.GroupUnauthenticated
	if name == authz.Anonymous {
		special = authz.GroupUnauthenticated
	}
	add := true
	for _, g := range groups {
		if g == special || (name != authz.Anonymous && g == marker) {
			add = false
		}
	}
	if add {
		groups = append(groups, special)
	}
	u.Groups = groups
	return u, nil
}

func describeImpersonation(groups []string, uid string, h http.Header) string {
	var parts []string
	for _, g := range groups {
		parts = append(parts, "group "+g)
	}
	if uid != "" {
		parts = append(parts, "uid "+uid)
	}
	if hasExtraHeader(h) {
		parts = append(parts, "extra")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// requestAttributes is upstream's RequestInfoResolver: a path under /api/
// or /apis/ that names a resource is a resource request; anything else
// (discovery, /version, /openapi/v3) is a non-resource request whose verb
// is the method in lower case.
func requestAttributes(r *http.Request, u *authz.User) authz.Attributes {
	a := authz.Attributes{User: u, Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	info, parts, err := parseRequest(r)
	if err != nil || len(parts) == 0 {
		return a
	}
	a.ResourceRequest = true
	a.Verb, a.APIGroup, a.APIVersion = info.Verb, info.GV.Group, info.GV.Version
	a.Resource, a.Subresource, a.Namespace, a.Name = info.Resource, info.Subresource, info.Namespace, info.Name
	if a.Resource == "namespaces" && a.Subresource == "" && a.Name != "" {
		a.Namespace = a.Name
	}
	switch a.Subresource {
	case "exec", "attach", "portforward":
		a.Verb = "create" // a websocket GET opens the same stream as a POST
	}
	// A list or watch of one object by name (kubectl get pod x --watch) is
	// a request for that name.
	if (a.Verb == "list" || a.Verb == "watch") && r.URL.Query().Get("fieldSelector") != "" {
		if sel, err := fields.ParseSelector(r.URL.Query().Get("fieldSelector")); err == nil {
			if name, ok := sel.RequiresExactMatch("metadata.name"); ok {
				a.Name = name
			}
		}
	}
	if a.Verb == "" {
		a.Verb = strings.ToLower(r.Method)
	}
	return a
}

// registryPolicy reads the RBAC objects from the registry for the RBAC
// authorizer.
type registryPolicy struct{ reg *registry.Registry }

var _ authz.Policy = registryPolicy{}

func (p registryPolicy) store(resource string) (*registry.Store, error) {
	st, ok := p.reg.Lookup(schema.GroupResource{Group: rbacv1.GroupName, Resource: resource})
	if !ok {
		return nil, fmt.Errorf("%s.%s is not served", resource, rbacv1.GroupName)
	}
	return st, nil
}

func listOf[T any](ctx context.Context, p registryPolicy, resource, namespace string) ([]T, error) {
	st, err := p.store(resource)
	if err != nil {
		return nil, err
	}
	list, err := st.List(ctx, namespace, registry.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []T
	switch l := list.(type) {
	case *rbacv1.ClusterRoleBindingList:
		for i := range l.Items {
			out = append(out, any(&l.Items[i]).(T))
		}
	case *rbacv1.RoleBindingList:
		for i := range l.Items {
			out = append(out, any(&l.Items[i]).(T))
		}
	}
	return out, nil
}

func (p registryPolicy) ClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return listOf[*rbacv1.ClusterRoleBinding](ctx, p, "clusterrolebindings", "")
}

func (p registryPolicy) RoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	return listOf[*rbacv1.RoleBinding](ctx, p, "rolebindings", namespace)
}

func (p registryPolicy) ClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	st, err := p.store("clusterroles")
	if err != nil {
		return nil, err
	}
	obj, err := st.Get(ctx, "", name)
	if err != nil {
		return nil, fmt.Errorf("clusterrole.rbac.authorization.k8s.io %q not found", name)
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (p registryPolicy) Role(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	st, err := p.store("roles")
	if err != nil {
		return nil, err
	}
	obj, err := st.Get(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("role.rbac.authorization.k8s.io %q not found", name)
	}
	return obj.(*rbacv1.Role), nil
}

// nodeRules are the system:node role's rules: what the Node authorizer
// lets every kubelet do (upstream: bootstrappolicy.NodeRules).
func nodeRules() []rbacv1.PolicyRule {
	for _, cr := range registry.BootstrapClusterRoles() {
		if cr.Name == "system:node" {
			return cr.Rules
		}
	}
	return nil
}

// registryPods lists a node's pods for the Node authorizer.
type registryPods struct{ reg *registry.Registry }

func (p registryPods) PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error) {
	list, err := p.reg.MustLookup("", "pods").List(ctx, "", registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node)})
	if err != nil {
		return nil, err
	}
	pods := list.(*corev1.PodList)
	out := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		out[i] = &pods.Items[i]
	}
	return out, nil
}
