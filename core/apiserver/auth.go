package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Authentication, impersonation and authorization: the first filters of
// kube-apiserver's chain (k8s.io/apiserver/pkg/server/filters and
// pkg/endpoints/filters: WithAuthentication, WithImpersonation,
// WithAuthorization), run on every HTTP request before it is routed.
//
// Who is asking is authn.go's answer: the user of the request's bearer
// token, or system:anonymous. The learner becomes someone else the way an
// administrator does, by impersonation (kubectl --as jane --as-group dev),
// which needs the "impersonate" verb on users, groups or serviceaccounts.
// Then the authorizers decide (package authz): system:masters may do
// anything, a kubelet what the Node authorizer allows, everyone else what
// RBAC allows.
//
// The in-process components (controllers, scheduler, kubelets, kube-proxy)
// do not come through HTTP: core/client hands their requests to the
// registry directly. They are authorized all the same, by the same
// authorizer (Server.Authorizer), each under its own identity
// (core/cluster gives them: system:kube-scheduler, system:node:<node>,
// system:serviceaccount:kube-system:<controller> ...), with the user in
// the request's context as an HTTP request's.

// Admin is the cluster's administrator: the user of the token `kubetab
// cluster` writes into its kubeconfig, in the group system:masters (what
// kind and kubeadm write into the first kubeconfig).
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

// Authorizer is the API server's authorizer (system:masters, then the
// Node authorizer, then RBAC), for the requests of in-process components.
func (s *Server) Authorizer() authz.Authorizer { return s.authorizer }

// authenticate finds the request's user, applies impersonation and
// authorizes the request. It answers the request itself (401, 400, 403)
// and returns false when it may not go on. A request of system:masters
// without impersonation costs a token check and no RBAC lookup.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	u, err := s.authenticateRequest(r)
	if err != nil {
		writeError(w, r, unauthorized())
		return r, false
	}
	if r.Header.Get(impersonateUserHeader) != "" || len(r.Header.Values(impersonateGroupHeader)) > 0 ||
		r.Header.Get(impersonateUIDHeader) != "" || hasExtraHeader(r.Header) {
		if u, err = s.impersonate(r.Context(), u, r.Header); err != nil {
			writeError(w, r, err)
			return r, false
		}
	}
	r = r.WithContext(authz.WithUser(r.Context(), u))
	if r.Header.Get("Authorization") != "" {
		// Nothing behind the API server sees the credential (a pod reached
		// through pods/proxy would).
		h := r.Header.Clone()
		h.Del("Authorization")
		r.Header = h
	}
	if u.InGroup(authz.GroupMasters) {
		return r, true // system:masters may do anything
	}
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

// registryPolicy is what the RBAC authorizer reads: the RBAC objects of
// the registry, held in memory as one snapshot that is rebuilt when an
// RBAC object has been written since (registry.PolicyGeneration). Upstream
// reads them from informers' caches; here a request sees every write that
// returned before it, and asking costs a few map lookups.
type registryPolicy struct {
	reg *registry.Registry

	mu   sync.Mutex
	snap *policySnapshot
}

// policySnapshot is the RBAC objects at one policy generation. Its
// objects are shared by every request: read only.
type policySnapshot struct {
	gen          uint64
	clusterRoles map[string]*rbacv1.ClusterRole
	roles        map[string]*rbacv1.Role // by namespace/name
	crbs         []*rbacv1.ClusterRoleBinding
	rbs          map[string][]*rbacv1.RoleBinding // by namespace
	err          error
}

var _ authz.Policy = (*registryPolicy)(nil)

func newRegistryPolicy(reg *registry.Registry) *registryPolicy { return &registryPolicy{reg: reg} }

// snapshot returns the current snapshot, rebuilding it if the policy has
// changed. The generation is read before the objects, so a write during
// the rebuild makes the next request rebuild again.
func (p *registryPolicy) snapshot(ctx context.Context) *policySnapshot {
	gen := p.reg.PolicyGeneration()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.snap != nil && p.snap.gen == gen {
		return p.snap
	}
	snap := &policySnapshot{gen: gen, clusterRoles: map[string]*rbacv1.ClusterRole{}, roles: map[string]*rbacv1.Role{}, rbs: map[string][]*rbacv1.RoleBinding{}}
	visit := func(resource string, fn func(runtime.Object)) {
		st, ok := p.reg.Lookup(schema.GroupResource{Group: rbacv1.GroupName, Resource: resource})
		if !ok {
			snap.err = fmt.Errorf("%s.%s is not served", resource, rbacv1.GroupName)
			return
		}
		if err := st.VisitShared("", func(obj runtime.Object) bool { fn(obj); return true }); err != nil {
			snap.err = err
		}
	}
	visit("clusterroles", func(obj runtime.Object) {
		if cr, ok := obj.(*rbacv1.ClusterRole); ok {
			snap.clusterRoles[cr.Name] = cr
		}
	})
	visit("roles", func(obj runtime.Object) {
		if r, ok := obj.(*rbacv1.Role); ok {
			snap.roles[r.Namespace+"/"+r.Name] = r
		}
	})
	visit("clusterrolebindings", func(obj runtime.Object) {
		if b, ok := obj.(*rbacv1.ClusterRoleBinding); ok {
			snap.crbs = append(snap.crbs, b)
		}
	})
	visit("rolebindings", func(obj runtime.Object) {
		if b, ok := obj.(*rbacv1.RoleBinding); ok {
			snap.rbs[b.Namespace] = append(snap.rbs[b.Namespace], b)
		}
	})
	p.snap = snap
	return snap
}

func (p *registryPolicy) ClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	s := p.snapshot(ctx)
	return s.crbs, s.err
}

func (p *registryPolicy) RoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	s := p.snapshot(ctx)
	return s.rbs[namespace], s.err
}

func (p *registryPolicy) ClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	if cr, ok := p.snapshot(ctx).clusterRoles[name]; ok {
		return cr, nil
	}
	return nil, fmt.Errorf("clusterrole.rbac.authorization.k8s.io %q not found", name)
}

func (p *registryPolicy) Role(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	if r, ok := p.snapshot(ctx).roles[namespace+"/"+name]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("role.rbac.authorization.k8s.io %q not found", name)
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

// registryPods reads pods for the Node authorizer, from the registry's
// decoded cache (no copies).
type registryPods struct{ reg *registry.Registry }

func (p registryPods) VisitPods(ctx context.Context, namespace string, visit func(*corev1.Pod) bool) error {
	return p.reg.MustLookup("", "pods").VisitShared(namespace, func(obj runtime.Object) bool {
		pod, ok := obj.(*corev1.Pod)
		return !ok || visit(pod)
	})
}

func (p registryPods) Pod(ctx context.Context, namespace, name string) *corev1.Pod {
	obj, err := p.reg.MustLookup("", "pods").GetShared(namespace, name)
	if err != nil {
		return nil
	}
	pod, _ := obj.(*corev1.Pod)
	return pod
}
