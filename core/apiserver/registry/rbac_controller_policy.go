package registry

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The controllers' roles (upstream: bootstrappolicy/controller_policy.go).
//
// kube-controller-manager started with --use-service-account-credentials
// (what kubeadm, kind and most clusters do) runs each controller as its
// own ServiceAccount in kube-system, with a ClusterRole of its own:
//
//	deployment-controller ──acts as──▶ system:serviceaccount:kube-system:deployment-controller
//	                                   ClusterRoleBinding system:controller:deployment-controller
//	                                   ──▶ ClusterRole system:controller:deployment-controller
//	                                       (get/list/watch/update deployments, replicasets ..., pods ...)
//
// so a controller can do what its job needs and nothing more: the
// replicaset controller may create pods, but not read Secrets. The rules
// below are upstream's, for the controllers kubetab runs; where kubetab's
// controller writes with an update where upstream's patches, the rule
// says so. The ServiceAccounts themselves are made by the controller
// manager when it starts (core/cluster), as upstream's client builder does.

// ControllerRolePrefix starts the name of every controller's ClusterRole
// (and of its binding); the rest is the controller's ServiceAccount.
const ControllerRolePrefix = "system:controller:"

var (
	legacyAndEvents = []string{"", "events.k8s.io"}
	appsGroups      = []string{"apps", "extensions"}
)

// eventsRule lets a controller record events (both Event APIs).
func eventsRule() rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{"create", "update", "patch"}, APIGroups: legacyAndEvents, Resources: []string{"events"}}
}

func groupsRule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func verbs(v ...string) []string { return v }

// readThenUpdate is the rule kubetab's controllers need where upstream's
// patch: kubetab's client has no patch, so a controller that adopts a
// pod, drops its finalizer or marks it failed reads it and updates it.
func readThenUpdate(resources ...string) rbacv1.PolicyRule {
	return rule(verbs("get", "update"), "", resources...)
}

// controllerRoles are the controllers' ClusterRoles, each named
// system:controller:<service account>.
func controllerRoles() []*rbacv1.ClusterRole {
	role := func(sa string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: bootstrapMeta(ControllerRolePrefix+sa, nil), Rules: rules}
	}
	return []*rbacv1.ClusterRole{
		role("clusterrole-aggregation-controller",
			// it must be able to write any rule into a ClusterRole
			rule(verbs("escalate", "get", "list", "watch", "update", "patch"), rbacv1.GroupName, "clusterroles")),
		role("cronjob-controller",
			rule(verbs("get", "list", "watch", "update"), "batch", "cronjobs"),
			rule(verbs("get", "list", "watch", "create", "update", "delete", "patch"), "batch", "jobs"),
			rule(verbs("update"), "batch", "cronjobs/status"),
			rule(verbs("update"), "batch", "cronjobs/finalizers"),
			rule(verbs("list", "watch", "delete"), "", "pods"),
			eventsRule()),
		role("daemon-set-controller",
			groupsRule(verbs("get", "list", "watch"), appsGroups, "daemonsets"),
			groupsRule(verbs("update"), appsGroups, "daemonsets/status"),
			groupsRule(verbs("update"), appsGroups, "daemonsets/finalizers"),
			rule(verbs("list", "watch"), "", "nodes"),
			rule(verbs("list", "watch", "create", "delete", "patch"), "", "pods"),
			readThenUpdate("pods"),
			rule(verbs("create"), "", "pods/binding"),
			rule(verbs("get", "list", "watch", "create", "delete", "update", "patch"), "apps", "controllerrevisions"),
			eventsRule()),
		role("deployment-controller",
			groupsRule(verbs("get", "list", "watch", "update"), appsGroups, "deployments"),
			groupsRule(verbs("update"), appsGroups, "deployments/status"),
			groupsRule(verbs("update"), appsGroups, "deployments/finalizers"),
			groupsRule(verbs("get", "list", "watch", "create", "update", "patch", "delete"), appsGroups, "replicasets"),
			rule(verbs("get", "list", "watch", "update"), "", "pods"),
			eventsRule()),
		role("disruption-controller",
			groupsRule(verbs("get", "list", "watch"), appsGroups, "deployments"),
			groupsRule(verbs("get", "list", "watch"), appsGroups, "replicasets"),
			rule(verbs("get", "list", "watch"), "", "replicationcontrollers"),
			rule(verbs("get", "list", "watch"), "policy", "poddisruptionbudgets"),
			rule(verbs("get", "list", "watch"), "apps", "statefulsets"),
			rule(verbs("update"), "policy", "poddisruptionbudgets/status"),
			rule(verbs("patch", "update"), "", "pods/status"),
			rule(verbs("get"), "*", "*/scale"),
			eventsRule()),
		role("endpoint-controller",
			rule(verbs("get", "list", "watch"), "", "services", "pods"),
			rule(verbs("get", "list", "watch", "create", "update", "delete"), "", "endpoints"),
			rule(verbs("create"), "", "endpoints/restricted"),
			eventsRule()),
		role("endpointslice-controller",
			rule(verbs("get", "list", "watch"), "", "services", "pods", "nodes"),
			rule(verbs("update"), "", "services/finalizers"),
			rule(verbs("get", "list", "watch", "create", "update", "delete"), "discovery.k8s.io", "endpointslices"),
			eventsRule()),
		role("generic-garbage-collector",
			// list and watch everything, delete dependents, update owner references
			rule(verbs("get", "list", "watch", "patch", "update", "delete"), "*", "*"),
			eventsRule()),
		role("horizontal-pod-autoscaler",
			rule(verbs("get", "list", "watch"), "autoscaling", "horizontalpodautoscalers"),
			rule(verbs("update"), "autoscaling", "horizontalpodautoscalers/status"),
			rule(verbs("get", "update"), "*", "*/scale"),
			rule(verbs("list"), "", "pods"),
			// its metrics client reads the resource, custom and external
			// metrics APIs under this account (client.ListPodMetrics)
			rule(verbs("list"), "metrics.k8s.io", "pods"),
			rule(verbs("get", "list"), "custom.metrics.k8s.io", "*"),
			rule(verbs("get", "list"), "external.metrics.k8s.io", "*"),
			eventsRule()),
		role("job-controller",
			rule(verbs("get", "list", "watch", "update", "patch"), "batch", "jobs"),
			rule(verbs("update"), "batch", "jobs/status"),
			rule(verbs("update"), "batch", "jobs/finalizers"),
			rule(verbs("list", "watch", "create", "delete", "patch"), "", "pods"),
			readThenUpdate("pods"),
			eventsRule()),
		role("namespace-controller",
			rule(verbs("get", "list", "watch", "delete"), "", "namespaces"),
			rule(verbs("update"), "", "namespaces/finalize", "namespaces/status"),
			// it empties a namespace of every kind of object
			rule(verbs("get", "list", "watch", "delete", "deletecollection"), "*", "*")),
		role("node-controller",
			rule(verbs("get", "list", "watch", "update", "delete", "patch"), "", "nodes"),
			rule(verbs("patch", "update"), "", "nodes/status"),
			rule(verbs("patch", "update"), "", "pods/status"),
			rule(verbs("list", "watch", "get", "delete"), "", "pods"),
			eventsRule()),
		role("pod-garbage-collector",
			rule(verbs("list", "watch", "delete"), "", "pods"),
			rule(verbs("get", "list", "watch"), "", "nodes"),
			rule(verbs("patch"), "", "pods/status"),
			readThenUpdate("pods", "pods/status")),
		role("replicaset-controller",
			groupsRule(verbs("get", "list", "watch", "update"), []string{"apps", "extensions"}, "replicasets"),
			groupsRule(verbs("update"), []string{"apps", "extensions"}, "replicasets/status"),
			groupsRule(verbs("update"), []string{"apps", "extensions"}, "replicasets/finalizers"),
			rule(verbs("list", "watch", "patch", "create", "delete"), "", "pods"),
			readThenUpdate("pods"),
			eventsRule()),
		role("replication-controller",
			rule(verbs("get", "list", "watch", "update"), "", "replicationcontrollers"),
			rule(verbs("update"), "", "replicationcontrollers/status"),
			rule(verbs("update"), "", "replicationcontrollers/finalizers"),
			rule(verbs("list", "watch", "patch", "create", "delete"), "", "pods"),
			readThenUpdate("pods"),
			eventsRule()),
		role("resourcequota-controller",
			// it counts objects of every kind
			rule(verbs("list", "watch"), "*", "*"),
			rule(verbs("update"), "", "resourcequotas/status"),
			eventsRule()),
		role("root-ca-cert-publisher",
			rule(verbs("create", "update"), "", "configmaps"),
			eventsRule()),
		role("service-account-controller",
			rule(verbs("create"), "", "serviceaccounts"),
			eventsRule()),
		role("statefulset-controller",
			rule(verbs("list", "watch"), "", "pods"),
			rule(verbs("get", "list", "watch"), "apps", "statefulsets"),
			rule(verbs("update"), "apps", "statefulsets/status"),
			rule(verbs("update"), "apps", "statefulsets/finalizers"),
			rule(verbs("get", "create", "delete", "update", "patch"), "", "pods"),
			rule(verbs("get", "create", "delete", "update", "patch", "list", "watch"), "apps", "controllerrevisions"),
			rule(verbs("get", "create", "list", "watch"), "", "persistentvolumeclaims"),
			rule(verbs("update", "delete"), "", "persistentvolumeclaims"),
			rule(verbs("update"), "", "pods/finalizers"),
			eventsRule()),
	}
}

// controllerRoleBindings bind each controller's role to its ServiceAccount
// in kube-system, under the role's name.
func controllerRoleBindings() []*rbacv1.ClusterRoleBinding {
	var out []*rbacv1.ClusterRoleBinding
	for _, r := range controllerRoles() {
		sa := r.Name[len(ControllerRolePrefix):]
		out = append(out, bindingOf(r.Name, r.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: metav1.NamespaceSystem}))
	}
	return out
}
