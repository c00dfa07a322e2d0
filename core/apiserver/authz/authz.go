// Package authz decides whether a request may be done: who is asking
// (a User), what they ask for (Attributes), and the RBAC authorizer that
// answers from the cluster's Roles, ClusterRoles and bindings.
//
// Upstream counterparts: k8s.io/apiserver/pkg/authorization/authorizer
// (Attributes, Decision, the union of authorizers),
// k8s.io/apiserver/pkg/authentication/user (the user and its well-known
// groups), and k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac (rbac.go,
// the authorizer; the rule matching of pkg/apis/rbac/v1/evaluation_helpers.go)
// with pkg/registry/rbac/validation/rule.go (collecting the rules that
// apply to a user).
//
// Every request to kube-apiserver goes through the same three steps:
//
//	authenticate  → User{Name: "jane", Groups: [system:authenticated]}
//	impersonate   (only with Impersonate-User: the new user, if allowed)
//	authorize     Attributes{User, Verb: "list", Resource: "pods", Namespace: "dev"}
//	              ├─ system:masters?          allow (no RBAC lookup at all)
//	              ├─ a kubelet (system:node:<node>)?  the Node authorizer (node.go)
//	              └─ RBAC: every ClusterRoleBinding, then every RoleBinding
//	                 of "dev", whose subjects include jane or her groups:
//	                 does one rule of its role match?  allow : 403 Forbidden
//
// RBAC only ever allows; nothing denies. A rule matches when its verbs,
// apiGroups and resources each contain the request's (or "*"), its
// resourceNames are empty or contain the object's name, and, for requests
// that are not for a resource (GET /healthz), one of its nonResourceURLs is
// the path or a prefix ending in "*".
package authz

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Well-known users and groups (k8s.io/apiserver/pkg/authentication/user).
const (
	GroupMasters         = "system:masters"
	GroupAuthenticated   = "system:authenticated"
	GroupUnauthenticated = "system:unauthenticated"
	Anonymous            = "system:anonymous"
	// ServiceAccountPrefix starts a ServiceAccount's user name:
	// system:serviceaccount:<namespace>:<name>.
	ServiceAccountPrefix = "system:serviceaccount:"
)

// User is an authenticated identity (upstream: user.Info).
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether u is in group g.
func (u *User) InGroup(g string) bool {
	for _, have := range u.Groups {
		if have == g {
			return true
		}
	}
	return false
}

type userKey struct{}

// WithUser returns ctx carrying u; UserFrom reads it back (nil when none).
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user of a request's context, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// Attributes describe one request (upstream: authorizer.AttributesRecord).
// A resource request names APIGroup, Resource and so on; any other request
// (discovery, /healthz, /version) names its Path.
type Attributes struct {
	User            *User
	Verb            string
	ResourceRequest bool
	Path            string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// NoAllowReason says the caller will not read why a request was
	// allowed (an in-process component's call), so RBAC need not write it.
	NoAllowReason bool
}

// Decision is an authorizer's answer.
type Decision int

const (
	// DecisionNoOpinion: nothing allows it (RBAC never denies outright).
	DecisionNoOpinion Decision = iota
	// DecisionAllow: the request may go on.
	DecisionAllow
)

// Authorizer answers for one request: the decision and, when it allows,
// why (for SubjectAccessReview's status.reason).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// Privileged is upstream's privileged-groups authorizer, the first of
// kube-apiserver's chain: members of system:masters may do anything,
// whatever the RBAC objects say (so a broken policy cannot lock the
// administrator out).
type Privileged struct{ Next Authorizer }

// Authorize allows system:masters and asks Next otherwise.
func (p Privileged) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	if a.User != nil && a.User.InGroup(GroupMasters) {
		return DecisionAllow, "", nil
	}
	if p.Next == nil {
		return DecisionNoOpinion, "", nil
	}
	return p.Next.Authorize(ctx, a)
}

// Forbidden is the 403 a denied request gets, worded as k8s.io/apiserver's
// responsewriters.Forbidden:
//
//	pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"
//	nodes "node-1" is forbidden: User "jane" cannot get resource "nodes" in API group "" at the cluster scope
//	forbidden: User "jane" cannot get path "/healthz"
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	msg := forbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, fmt.Errorf("%s", msg))
}

func forbiddenMessage(a Attributes) string {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, resource, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, resource, a.APIGroup)
}

// RuleAllows reports whether rule grants the request a (upstream's
// RuleAllows in pkg/apis/rbac/v1/evaluation_helpers.go). Resources are
// matched as "resource/subresource": "pods" does not grant "pods/log";
// "*/log" grants every resource's log, and "pods/*" every pod subresource.
func RuleAllows(a Attributes, rule *rbacv1.PolicyRule) bool {
	if !hasOrStar(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule.NonResourceURLs, a.Path)
	}
	if !hasOrStar(rule.APIGroups, a.APIGroup) || !resourceMatches(rule, a.Resource, a.Subresource) {
		return false
	}
	return len(rule.ResourceNames) == 0 || has(rule.ResourceNames, a.Name)
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasOrStar(list []string, s string) bool {
	for _, x := range list {
		if x == s || x == rbacv1.VerbAll {
			return true
		}
	}
	return false
}

func resourceMatches(rule *rbacv1.PolicyRule, resource, sub string) bool {
	for _, r := range rule.Resources {
		switch {
		case r == rbacv1.ResourceAll:
			return true
		case sub == "":
			if r == resource {
				return true
			}
		case isPair(r, resource, sub), isPair(r, "*", sub), isPair(r, resource, "*"):
			return true
		}
	}
	return false
}

// isPair reports whether r is a+"/"+b, without building it: every
// request of a component checks its rules.
func isPair(r, a, b string) bool {
	return len(r) == len(a)+1+len(b) && r[len(a)] == '/' && strings.HasPrefix(r, a) && strings.HasSuffix(r, b)
}

func nonResourceURLMatches(urls []string, path string) bool {
	for _, u := range urls {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*")) {
			return true
		}
	}
	return false
}
