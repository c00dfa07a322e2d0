package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Default returns a registry with every resource kubetab serves and the
// admission plugins kube-apiserver enables by default that matter here:
// NamespaceLifecycle, ServiceAccount, Priority, NodeRestriction, LimitRanger
// and ResourceQuota (see admission.go, admission_node.go and
// admission_quota.go), and RBAC's escalation check (rbac_escalation.go).
func Default(cfg Config) (*Registry, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	for _, res := range DefaultResources() {
		r.Register(res)
	}
	r.AddMutatingAdmission(r.namespaceLifecycle)
	r.AddMutatingAdmission(r.admitServiceAccount)
	r.AddMutatingAdmission(r.admitPodPriority)
	// NodeRestriction, first of the validating phase (admission_node.go).
	r.AddAdmission(r.admitNodeRestriction)
	r.AddAdmission(r.admitPriorityClass)
	// LimitRanger and ResourceQuota (admission_quota.go); quota runs last.
	r.AddMutatingAdmission(r.admitLimitRanger)
	r.AddAdmission(r.admitResourceQuota)
	// RBAC's escalation check, last of the mutating phase (rbac_escalation.go).
	r.AddMutatingAdmission(r.escalationCheck())
	return r, nil
}

// DefaultResources lists the served resources, in discovery order. Short
// names, categories, subresources and etcd key prefixes are upstream's.
//
//	core/v1                namespaces nodes pods events services endpoints
//	                       configmaps secrets serviceaccounts podtemplates
//	                       replicationcontrollers resourcequotas limitranges
//	apps/v1                deployments replicasets daemonsets statefulsets
//	                       controllerrevisions
//	batch/v1               jobs cronjobs
//	autoscaling/v2, v1     horizontalpodautoscalers (one storage, autoscaling.go)
//	policy/v1              poddisruptionbudgets
//	discovery.k8s.io/v1    endpointslices
//	events.k8s.io/v1       events (the core/v1 events, another shape)
//	coordination.k8s.io/v1 leases
//	scheduling.k8s.io/v1   priorityclasses
//	rbac.authorization.k8s.io/v1  clusterroles clusterrolebindings roles
//	                       rolebindings (rbac.go)
//
// metrics.k8s.io is served beside these, from a MetricsProvider (metrics.go).
func DefaultResources() []*Resource {
	all := []string{"all"}
	return append([]*Resource{
		{
			Version: "v1", Kind: "Namespace", Resource: "namespaces", Singular: "namespace",
			ShortNames: []string{"ns"}, KeyPrefix: "/registry/namespaces", NoGeneration: true,
			Subresources: []string{"status", "finalize"},
			New:          func() runtime.Object { return &corev1.Namespace{} },
			NewList:      func() runtime.Object { return &corev1.NamespaceList{} },
			Strategy:     namespaceStrategy{},
		},
		{
			Version: "v1", Kind: "Node", Resource: "nodes", Singular: "node",
			ShortNames: []string{"no"}, KeyPrefix: "/registry/minions", NoGeneration: true,
			Subresources: []string{"status"},
			New:          func() runtime.Object { return &corev1.Node{} },
			NewList:      func() runtime.Object { return &corev1.NodeList{} },
			Strategy:     nodeStrategy{},
		},
		{
			Version: "v1", Kind: "Pod", Resource: "pods", Singular: "pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: all, KeyPrefix: "/registry/pods",
			Subresources: []string{"binding", "status", "log", "eviction"},
			New:          func() runtime.Object { return &corev1.Pod{} },
			NewList:      func() runtime.Object { return &corev1.PodList{} },
			Strategy:     podStrategy{},
		},
		{
			Version: "v1", Kind: "Event", Resource: "events", Singular: "event", Namespaced: true,
			ShortNames: []string{"ev"}, KeyPrefix: "/registry/events", NoGeneration: true,
			New:      func() runtime.Object { return &corev1.Event{} },
			NewList:  func() runtime.Object { return &corev1.EventList{} },
			Strategy: eventStrategy{},
		},
		{
			Version: "v1", Kind: "Service", Resource: "services", Singular: "service", Namespaced: true,
			ShortNames: []string{"svc"}, Categories: all, KeyPrefix: "/registry/services/specs", NoGeneration: true,
			Subresources: []string{"status"},
			New:          func() runtime.Object { return &corev1.Service{} },
			NewList:      func() runtime.Object { return &corev1.ServiceList{} },
			Strategy:     serviceStrategy{},
		},
		{
			Version: "v1", Kind: "Endpoints", Resource: "endpoints", Singular: "endpoints", Namespaced: true,
			ShortNames: []string{"ep"}, KeyPrefix: "/registry/services/endpoints", NoGeneration: true,
			New:      func() runtime.Object { return &corev1.Endpoints{} },
			NewList:  func() runtime.Object { return &corev1.EndpointsList{} },
			Strategy: endpointsStrategy{},
		},
		{
			Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Singular: "configmap", Namespaced: true,
			ShortNames: []string{"cm"}, KeyPrefix: "/registry/configmaps", NoGeneration: true,
			New:      func() runtime.Object { return &corev1.ConfigMap{} },
			NewList:  func() runtime.Object { return &corev1.ConfigMapList{} },
			Strategy: configMapStrategy{},
		},
		{
			Version: "v1", Kind: "Secret", Resource: "secrets", Singular: "secret", Namespaced: true,
			KeyPrefix: "/registry/secrets", NoGeneration: true,
			New:      func() runtime.Object { return &corev1.Secret{} },
			NewList:  func() runtime.Object { return &corev1.SecretList{} },
			Strategy: secretStrategy{},
		},
		{
			Version: "v1", Kind: "ServiceAccount", Resource: "serviceaccounts", Singular: "serviceaccount", Namespaced: true,
			ShortNames: []string{"sa"}, KeyPrefix: "/registry/serviceaccounts", NoGeneration: true,
			New:      func() runtime.Object { return &corev1.ServiceAccount{} },
			NewList:  func() runtime.Object { return &corev1.ServiceAccountList{} },
			Strategy: serviceAccountStrategy{},
		},
		{
			Version: "v1", Kind: "PodTemplate", Resource: "podtemplates", Singular: "podtemplate", Namespaced: true,
			KeyPrefix: "/registry/podtemplates",
			New:       func() runtime.Object { return &corev1.PodTemplate{} },
			NewList:   func() runtime.Object { return &corev1.PodTemplateList{} },
			Strategy:  podTemplateStrategy{},
		},
		{
			Version: "v1", Kind: "ReplicationController", Resource: "replicationcontrollers", Singular: "replicationcontroller",
			Namespaced: true, ShortNames: []string{"rc"}, Categories: all,
			KeyPrefix: "/registry/controllers", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &corev1.ReplicationController{} },
			NewList:  func() runtime.Object { return &corev1.ReplicationControllerList{} },
			Strategy: replicationControllerStrategy{},
		},
		resourceQuotaResource(),
		limitRangeResource(),
		{
			Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Singular: "deployment",
			Namespaced: true, ShortNames: []string{"deploy"}, Categories: all,
			KeyPrefix: "/registry/deployments", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &appsv1.Deployment{} },
			NewList:  func() runtime.Object { return &appsv1.DeploymentList{} },
			Strategy: deploymentStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", Singular: "replicaset",
			Namespaced: true, ShortNames: []string{"rs"}, Categories: all,
			KeyPrefix: "/registry/replicasets", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &appsv1.ReplicaSet{} },
			NewList:  func() runtime.Object { return &appsv1.ReplicaSetList{} },
			Strategy: replicaSetStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "DaemonSet", Resource: "daemonsets", Singular: "daemonset",
			Namespaced: true, ShortNames: []string{"ds"}, Categories: all,
			KeyPrefix: "/registry/daemonsets", Subresources: []string{"status"},
			New:      func() runtime.Object { return &appsv1.DaemonSet{} },
			NewList:  func() runtime.Object { return &appsv1.DaemonSetList{} },
			Strategy: daemonSetStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "StatefulSet", Resource: "statefulsets", Singular: "statefulset",
			Namespaced: true, ShortNames: []string{"sts"}, Categories: all,
			KeyPrefix: "/registry/statefulsets", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &appsv1.StatefulSet{} },
			NewList:  func() runtime.Object { return &appsv1.StatefulSetList{} },
			Strategy: statefulSetStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "ControllerRevision", Resource: "controllerrevisions", Singular: "controllerrevision",
			Namespaced: true, KeyPrefix: "/registry/controllerrevisions", NoGeneration: true,
			New:      func() runtime.Object { return &appsv1.ControllerRevision{} },
			NewList:  func() runtime.Object { return &appsv1.ControllerRevisionList{} },
			Strategy: controllerRevisionStrategy{},
		},
		{
			Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Singular: "job",
			Namespaced: true, Categories: all,
			KeyPrefix: "/registry/jobs", Subresources: []string{"status"},
			New:      func() runtime.Object { return &batchv1.Job{} },
			NewList:  func() runtime.Object { return &batchv1.JobList{} },
			Strategy: jobStrategy{},
		},
		{
			Group: "batch", Version: "v1", Kind: "CronJob", Resource: "cronjobs", Singular: "cronjob",
			Namespaced: true, ShortNames: []string{"cj"}, Categories: all,
			KeyPrefix: "/registry/cronjobs", Subresources: []string{"status"},
			New:      func() runtime.Object { return &batchv1.CronJob{} },
			NewList:  func() runtime.Object { return &batchv1.CronJobList{} },
			Strategy: cronJobStrategy{},
		},
		{
			Group: policyv1.GroupName, Version: "v1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget",
			Namespaced: true, ShortNames: []string{"pdb"},
			KeyPrefix: "/registry/poddisruptionbudgets", Subresources: []string{"status"},
			New:      func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			NewList:  func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
			Strategy: podDisruptionBudgetStrategy{},
		},
		{
			Group: discoveryv1.GroupName, Version: "v1", Kind: "EndpointSlice", Resource: "endpointslices", Singular: "endpointslice",
			Namespaced: true, KeyPrefix: "/registry/endpointslices",
			New:      func() runtime.Object { return &discoveryv1.EndpointSlice{} },
			NewList:  func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
			Strategy: endpointSliceStrategy{},
		},
		eventsV1Resource(),
		hpaResource(),
		hpaV1Resource(),
		{
			Group: coordinationv1.GroupName, Version: "v1", Kind: "Lease", Resource: "leases", Singular: "lease",
			Namespaced: true, KeyPrefix: "/registry/leases", NoGeneration: true,
			New:      func() runtime.Object { return &coordinationv1.Lease{} },
			NewList:  func() runtime.Object { return &coordinationv1.LeaseList{} },
			Strategy: leaseStrategy{},
		},
		{
			Group: schedulingv1.GroupName, Version: "v1", Kind: "PriorityClass", Resource: "priorityclasses", Singular: "priorityclass",
			ShortNames: []string{"pc"}, KeyPrefix: "/registry/priorityclasses", NoGeneration: true,
			New:      func() runtime.Object { return &schedulingv1.PriorityClass{} },
			NewList:  func() runtime.Object { return &schedulingv1.PriorityClassList{} },
			Strategy: priorityClassStrategy{},
		},
	}, rbacResources()...)
}
