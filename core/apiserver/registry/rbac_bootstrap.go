package registry

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The default RBAC policy (upstream: plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy/policy.go and controller_policy.go), which kube-apiserver's
// "rbac/bootstrap-roles" post-start hook reconciles into the store on every
// start: what is missing is created; what a user changed is left alone.
//
//	cluster-admin      everything, bound to the group system:masters
//	admin, edit, view  the user-facing roles; empty themselves, filled by
//	                   aggregation from system:aggregate-to-{admin,edit,view}
//	                   and any ClusterRole labelled
//	                   rbac.authorization.k8s.io/aggregate-to-view: "true" ...
//	system:basic-user  may ask "what can I do?" (self reviews), bound to
//	                   system:authenticated
//	system:discovery   GET /api, /apis, /version, /openapi ...
//	system:public-info-viewer   GET /version, /healthz ... (unauthenticated too)
//	system:kube-scheduler, system:kube-controller-manager, system:node,
//	system:node-proxier
//	                   the components' own roles, bound to the users
//	                   system:kube-scheduler, system:kube-controller-manager
//	                   and system:kube-proxy (kubelets get system:node's
//	                   rules from the Node authorizer)
//	system:controller:<name>
//	                   one per controller, bound to its ServiceAccount
//	                   kube-system/<name> (rbac_controller_policy.go)
//
// Every bootstrap object carries the label kubernetes.io/bootstrapping:
// rbac-defaults and the annotation rbac.authorization.kubernetes.io/autoupdate:
// "true", as upstream's.

// Aggregation labels of the user-facing roles.
const (
	AggregateToAdminLabel = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEditLabel  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToViewLabel  = "rbac.authorization.k8s.io/aggregate-to-view"

	// The groups every authenticated (and every anonymous) request has, and
	// the group that is all-powerful.
	GroupAuthenticated   = "system:authenticated"
	GroupUnauthenticated = "system:unauthenticated"
	GroupMasters         = "system:masters"
	GroupNodes           = "system:nodes"
)

var (
	readVerbs      = []string{"get", "list", "watch"}
	writeVerbs     = []string{"create", "update", "patch", "delete", "deletecollection"}
	readWriteVerbs = append(append([]string{}, readVerbs...), writeVerbs...)
)

// rule builds a resource rule: verbs on resources of one API group.
func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func bootstrapMeta(name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}
	for k, v := range labels {
		l[k] = v
	}
	return metav1.ObjectMeta{Name: name, Labels: l,
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}}
}

func aggregated(label string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}
}

// BootstrapClusterRoles returns the default ClusterRoles, as upstream's
// ClusterRoles() and ControllerRoles(), for the components kubetab runs.
// The aggregated roles have no rules yet; the aggregation controller fills
// them.
func BootstrapClusterRoles() []*rbacv1.ClusterRole {
	return append(clusterRoles(), controllerRoles()...)
}

func clusterRoles() []*rbacv1.ClusterRole {
	get := []string{"get"}
	t := "true"
	return []*rbacv1.ClusterRole{
		{
			ObjectMeta: bootstrapMeta("cluster-admin", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"*"}, "*", "*"),
				urlRule([]string{"*"}, "*"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:discovery", nil),
			Rules: []rbacv1.PolicyRule{urlRule(get,
				"/readyz", "/healthz", "/livez", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")},
		},
		{
			ObjectMeta: bootstrapMeta("system:public-info-viewer", nil),
			Rules:      []rbacv1.PolicyRule{urlRule(get, "/readyz", "/healthz", "/livez", "/version", "/version/")},
		},
		{
			ObjectMeta: bootstrapMeta("system:basic-user", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"create"}, "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
				rule([]string{"create"}, "authentication.k8s.io", "selfsubjectreviews"),
			},
		},
		{
			ObjectMeta:      bootstrapMeta("admin", nil),
			AggregationRule: aggregated(AggregateToAdminLabel),
		},
		{
			ObjectMeta:      bootstrapMeta("edit", map[string]string{AggregateToAdminLabel: t}),
			AggregationRule: aggregated(AggregateToEditLabel),
		},
		{
			ObjectMeta:      bootstrapMeta("view", map[string]string{AggregateToEditLabel: t}),
			AggregationRule: aggregated(AggregateToViewLabel),
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-admin", map[string]string{AggregateToAdminLabel: t}),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"create"}, "authorization.k8s.io", "localsubjectaccessreviews"),
				rule(readWriteVerbs, "rbac.authorization.k8s.io", "rolebindings", "roles"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-edit", map[string]string{AggregateToEditLabel: t}),
			Rules: []rbacv1.PolicyRule{
				rule(readVerbs, "", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"),
				rule([]string{"impersonate"}, "", "serviceaccounts"),
				rule(writeVerbs, "", "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
				rule([]string{"create"}, "", "pods/eviction"),
				rule(writeVerbs, "", "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
					"replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"),
				rule([]string{"create"}, "", "serviceaccounts/token"),
				rule(writeVerbs, "apps", "daemonsets", "deployments", "deployments/rollback", "deployments/scale",
					"replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
				rule(writeVerbs, "autoscaling", "horizontalpodautoscalers"),
				rule(writeVerbs, "batch", "cronjobs", "jobs"),
				rule(writeVerbs, "policy", "poddisruptionbudgets"),
				rule(writeVerbs, "networking.k8s.io", "ingresses", "networkpolicies"),
				rule(readWriteVerbs, "coordination.k8s.io", "leases"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-view", map[string]string{AggregateToViewLabel: t}),
			Rules: []rbacv1.PolicyRule{
				rule(readVerbs, "", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
					"pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"),
				rule(readVerbs, "", "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
					"replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
				rule(readVerbs, "", "namespaces"),
				rule(readVerbs, "discovery.k8s.io", "endpointslices"),
				rule(readVerbs, "apps", "controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
					"deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status",
					"statefulsets", "statefulsets/scale", "statefulsets/status"),
				rule(readVerbs, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
				rule(readVerbs, "batch", "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
				rule(readVerbs, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
				rule(readVerbs, "networking.k8s.io", "ingresses", "ingresses/status", "networkpolicies"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:kube-scheduler", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"create", "patch", "update"}, "", "events"),
				rule([]string{"create", "patch", "update"}, "events.k8s.io", "events"),
				rule([]string{"create"}, "coordination.k8s.io", "leases"),
				{Verbs: []string{"get", "update"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"kube-scheduler"}},
				rule([]string{"get", "list", "watch"}, "", "nodes"),
				rule([]string{"delete", "get", "list", "watch"}, "", "pods"),
				rule([]string{"create"}, "", "bindings", "pods/binding"),
				rule([]string{"patch", "update"}, "", "pods/status"),
				rule(readVerbs, "", "replicationcontrollers", "services"),
				rule(readVerbs, "apps", "replicasets", "statefulsets"),
				rule(readVerbs, "policy", "poddisruptionbudgets"),
				rule(readVerbs, "", "namespaces", "persistentvolumeclaims", "persistentvolumes"),
				rule(readVerbs, "storage.k8s.io", "csinodes", "csidrivers", "csistoragecapacities", "storageclasses"),
				rule([]string{"create"}, "authentication.k8s.io", "tokenreviews"),
				rule([]string{"create"}, "authorization.k8s.io", "subjectaccessreviews"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:kube-controller-manager", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"create", "patch", "update"}, "", "events"),
				rule([]string{"create", "patch", "update"}, "events.k8s.io", "events"),
				rule([]string{"create"}, "coordination.k8s.io", "leases"),
				{Verbs: []string{"get", "update"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"kube-controller-manager"}},
				rule([]string{"create"}, "", "secrets", "serviceaccounts"),
				{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"secrets"}},
				{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"extension-apiserver-authentication"}},
				rule([]string{"get", "update"}, "", "secrets", "serviceaccounts"),
				rule([]string{"create"}, "authentication.k8s.io", "tokenreviews"),
				rule([]string{"create"}, "authorization.k8s.io", "subjectaccessreviews"),
				// what its shared informers watch
				rule([]string{"list", "watch"}, "*", "*"),
				rule([]string{"create"}, "", "serviceaccounts/token"),
			},
		},
		{
			// kube-proxy: the Services and their endpoints it programs
			ObjectMeta: bootstrapMeta("system:node-proxier", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"list", "watch"}, "", "services", "endpoints"),
				rule(readVerbs, "", "nodes"),
				eventsRule(),
				rule([]string{"list", "watch"}, "discovery.k8s.io", "endpointslices"),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:node", nil),
			Rules: []rbacv1.PolicyRule{
				rule([]string{"create"}, "authentication.k8s.io", "tokenreviews"),
				rule([]string{"create"}, "authorization.k8s.io", "localsubjectaccessreviews", "subjectaccessreviews"),
				rule(readVerbs, "", "services"),
				rule([]string{"create", "get", "list", "watch"}, "", "nodes"),
				rule([]string{"patch", "update"}, "", "nodes/status"),
				rule([]string{"patch", "update"}, "", "nodes"),
				rule([]string{"create", "patch", "update"}, "", "events"),
				rule(readVerbs, "", "pods"),
				rule([]string{"create", "delete"}, "", "pods"),
				rule([]string{"patch", "update"}, "", "pods/status"),
				rule([]string{"create"}, "", "pods/eviction"),
				rule([]string{"get"}, "", "configmaps", "secrets"),
				rule([]string{"get"}, "", "persistentvolumeclaims", "persistentvolumes"),
				rule([]string{"get"}, "", "endpoints"),
				rule([]string{"get", "list", "watch"}, "discovery.k8s.io", "endpointslices"),
				rule([]string{"create"}, "", "serviceaccounts/token"),
				rule([]string{"create", "delete", "get", "patch", "update"}, "coordination.k8s.io", "leases"),
				rule(readVerbs, "node.k8s.io", "runtimeclasses"),
			},
		},
	}
}

func bindingOf(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: bootstrapMeta(name, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

// BootstrapClusterRoleBindings are upstream's ClusterRoleBindings() for the
// roles above. system:node is bound to nobody: kubelets get their rights from
// the Node authorizer (core/apiserver/authz).
func BootstrapClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return append([]*rbacv1.ClusterRoleBinding{
		bindingOf("cluster-admin", "cluster-admin", group(GroupMasters)),
		bindingOf("system:discovery", "system:discovery", group(GroupAuthenticated)),
		bindingOf("system:basic-user", "system:basic-user", group(GroupAuthenticated)),
		bindingOf("system:public-info-viewer", "system:public-info-viewer", group(GroupAuthenticated), group(GroupUnauthenticated)),
		bindingOf("system:kube-scheduler", "system:kube-scheduler", user("system:kube-scheduler")),
		bindingOf("system:kube-controller-manager", "system:kube-controller-manager", user("system:kube-controller-manager")),
		bindingOf("system:node", "system:node"),
		bindingOf("system:node-proxier", "system:node-proxier", user("system:kube-proxy")),
	}, controllerRoleBindings()...)
}

// BootstrapRBAC creates the default ClusterRoles and ClusterRoleBindings
// that are missing (upstream's reconcile also adds missing rules to roles
// marked autoupdate; kubetab only creates).
func (r *Registry) BootstrapRBAC(ctx context.Context) error {
	roles := schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}
	bindings := schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrolebindings"}
	for _, cr := range BootstrapClusterRoles() {
		if err := r.ensure(ctx, roles, cr); err != nil {
			return fmt.Errorf("rbac/bootstrap-roles: %w", err)
		}
	}
	for _, b := range BootstrapClusterRoleBindings() {
		if err := r.ensure(ctx, bindings, b); err != nil {
			return fmt.Errorf("rbac/bootstrap-roles: %w", err)
		}
	}
	return nil
}
