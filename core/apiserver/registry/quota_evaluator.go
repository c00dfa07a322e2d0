package registry

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// Quota evaluators (upstream: pkg/quota/v1/evaluator/core and
// k8s.io/apiserver/pkg/quota/v1/generic): what one object costs a
// ResourceQuota. The admission plugin charges a new object with them; the
// resource quota controller (core/controller/resourcequota) adds up every
// object of a namespace with the same functions, so both agree.
//
//	pods       pods, count/pods, cpu = requests.cpu, memory = requests.memory,
//	           limits.cpu, limits.memory, ephemeral-storage ... (the pod's
//	           requests: the sum of its containers, or its largest init
//	           container if more, plus overhead). A pod that has finished
//	           (Succeeded, Failed), or whose deletion grace has passed, costs
//	           only count/pods.
//	services   services, count/services, services.nodeports (one per port of
//	           a NodePort or LoadBalancer Service), services.loadbalancers
//	anything   count/<resource>[.<group>] (count/deployments.apps), and the
//	           old names configmaps, secrets, replicationcontrollers,
//	           resourcequotas, persistentvolumeclaims

// QuotaEvaluator measures one resource's objects for quota.
type QuotaEvaluator struct {
	GroupResource schema.GroupResource
	// Resources are the quota resource names it can charge.
	Resources []corev1.ResourceName
	// Usage is what one object costs.
	Usage func(obj runtime.Object, now time.Time) corev1.ResourceList
	// Scoped reports whether quota scopes (BestEffort, Terminating ...)
	// apply to its objects: only to pods.
	Scoped bool
	// OnUpdate: an update can change the cost (a Service's type), so it
	// is charged the difference; otherwise only creates are charged.
	OnUpdate bool
}

// Matching returns the names of hard that the evaluator charges
// (upstream: MatchingResources), in hard's order.
func (e *QuotaEvaluator) Matching(hard corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for name := range hard {
		if e.charges(name) {
			out = append(out, name)
		}
	}
	return out
}

func (e *QuotaEvaluator) charges(name corev1.ResourceName) bool {
	for _, r := range e.Resources {
		if r == name {
			return true
		}
	}
	// Pods also carry hugepages-* and requests.<extended resource>.
	return e.Scoped && (strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix))
}

// ObjectCountName is upstream's ObjectCountQuotaResourceNameFor:
// count/pods, count/deployments.apps.
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCountNames are the object counts that had a name before count/*.
var legacyCountNames = map[string]corev1.ResourceName{
	"configmaps": "configmaps", "secrets": "secrets", "replicationcontrollers": "replicationcontrollers",
	"resourcequotas": "resourcequotas", "persistentvolumeclaims": "persistentvolumeclaims",
}

// QuotaEvaluatorFor returns the evaluator of a resource: pods and services
// have their own, every other resource is counted.
func QuotaEvaluatorFor(gr schema.GroupResource) *QuotaEvaluator {
	count := ObjectCountName(gr)
	one := func(names ...corev1.ResourceName) corev1.ResourceList {
		l := corev1.ResourceList{}
		for _, n := range names {
			l[n] = *resource.NewQuantity(1, resource.DecimalSI)
		}
		return l
	}
	switch {
	case gr.Group == "" && gr.Resource == "pods":
		return &QuotaEvaluator{
			GroupResource: gr, Scoped: true,
			Resources: []corev1.ResourceName{count, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
				corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
				corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods},
			Usage: func(obj runtime.Object, now time.Time) corev1.ResourceList {
				return PodQuotaUsage(obj.(*corev1.Pod), now)
			},
		}
	case gr.Group == "" && gr.Resource == "services":
		return &QuotaEvaluator{
			GroupResource: gr, OnUpdate: true,
			Resources: []corev1.ResourceName{count, corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers},
			Usage: func(obj runtime.Object, _ time.Time) corev1.ResourceList {
				svc := obj.(*corev1.Service)
				u := one(count, corev1.ResourceServices)
				ports := *resource.NewQuantity(int64(len(svc.Spec.Ports)), resource.DecimalSI)
				zero := *resource.NewQuantity(0, resource.DecimalSI)
				u[corev1.ResourceServicesNodePorts], u[corev1.ResourceServicesLoadBalancers] = zero, zero
				switch svc.Spec.Type {
				case corev1.ServiceTypeNodePort:
					u[corev1.ResourceServicesNodePorts] = ports
				case corev1.ServiceTypeLoadBalancer:
					u[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
					if svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts {
						u[corev1.ResourceServicesNodePorts] = ports
					}
				}
				return u
			},
		}
	}
	names := []corev1.ResourceName{count}
	if legacy, ok := legacyCountNames[gr.Resource]; ok && gr.Group == "" {
		names = append(names, legacy)
	}
	return &QuotaEvaluator{
		GroupResource: gr, Resources: names,
		Usage: func(runtime.Object, time.Time) corev1.ResourceList { return one(names...) },
	}
}

// PodQuotaUsage is upstream's PodUsageFunc.
func PodQuotaUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	u := corev1.ResourceList{"count/pods": *resource.NewQuantity(1, resource.DecimalSI)}
	if !PodCountsForQuota(pod, now) {
		return u
	}
	requests, limits := PodRequestsAndLimits(pod)
	for k, v := range podComputeUsage(requests, limits) {
		u[k] = v
	}
	return u
}

// PodCountsForQuota is upstream's QuotaV1Pod: finished pods, and pods whose
// deletion grace has passed (a lost node's), cost no compute quota.
func PodCountsForQuota(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// podComputeUsage is upstream's podComputeUsageHelper: requests and
// limits under their quota names (a request of cpu counts as both cpu and
// requests.cpu).
func podComputeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	u := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := requests[r]; ok {
			u[r] = q
			u["requests."+r] = q
		}
		if q, ok := limits[r]; ok {
			u["limits."+r] = q
		}
	}
	for r, q := range requests {
		if strings.HasPrefix(string(r), corev1.ResourceHugePagesPrefix) {
			u[r] = q
			u["requests."+r] = q
		} else if !isNativeResource(r) {
			u["requests."+r] = q
		}
	}
	return u
}

// isNativeResource: unprefixed or in kubernetes.io/.
func isNativeResource(r corev1.ResourceName) bool {
	s := string(r)
	return !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
}

// PodRequestsAndLimits are a pod's effective requests and limits (upstream
// k8s.io/component-helpers/resource PodRequests and PodLimits): the sum of
// its containers, raised to any single init container that needs more
// (init containers run one at a time, before the others; a sidecar, an init
// container that keeps running, adds to everything after it), plus the
// pod's overhead.
func PodRequestsAndLimits(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	return podAggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }),
		podAggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits })
}

func podAggregate(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	sum := corev1.ResourceList{}
	add := func(dst, src corev1.ResourceList) {
		for k, v := range src {
			q := dst[k]
			q.Add(v)
			dst[k] = q
		}
	}
	for i := range pod.Spec.Containers {
		add(sum, of(&pod.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(sidecars, of(c))
			continue
		}
		// A plain init container runs beside the sidecars started before it.
		need := corev1.ResourceList{}
		add(need, sidecars)
		add(need, of(c))
		for k, v := range need {
			if cur, ok := initMax[k]; !ok || v.Cmp(cur) > 0 {
				initMax[k] = v
			}
		}
	}
	add(sum, sidecars)
	for k, v := range initMax {
		if cur, ok := sum[k]; !ok || v.Cmp(cur) > 0 {
			sum[k] = v
		}
	}
	if len(sum) > 0 || len(pod.Spec.Overhead) > 0 {
		add(sum, pod.Spec.Overhead)
	}
	return sum
}

// QuotaScopeSelectors are a quota's scopes and scopeSelector as one list
// of requirements (upstream helper.GetScopeSelectorsFromQuota).
func QuotaScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// QuotaMatches is upstream's generic.Matches: the quota charges at least
// one resource of the evaluator (in status.hard: a quota the controller
// has not seen yet charges nothing), and the object is in every scope.
// Scopes are about pods; a scoped quota matches nothing else.
func QuotaMatches(q *corev1.ResourceQuota, e *QuotaEvaluator, obj runtime.Object) bool {
	if len(e.Matching(q.Status.Hard)) == 0 {
		return false
	}
	for _, sel := range QuotaScopeSelectors(q) {
		if !e.Scoped || !podInScope(obj.(*corev1.Pod), sel) {
			return false
		}
	}
	return true
}

// podInScope is upstream's podMatchesScopeFunc.
func podInScope(pod *corev1.Pod, sel corev1.ScopedResourceSelectorRequirement) bool {
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
	case corev1.ResourceQuotaScopeNotTerminating:
		return pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds < 0
	case corev1.ResourceQuotaScopeBestEffort:
		return podIsBestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !podIsBestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != ""
		}
		op := map[corev1.ScopeSelectorOperator]selection.Operator{
			corev1.ScopeSelectorOpIn: selection.In, corev1.ScopeSelectorOpNotIn: selection.NotIn,
			corev1.ScopeSelectorOpDoesNotExist: selection.DoesNotExist,
		}[sel.Operator]
		req, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
		if err != nil {
			return false
		}
		set := labels.Set{}
		if pod.Spec.PriorityClassName != "" {
			set[string(sel.ScopeName)] = pod.Spec.PriorityClassName
		}
		return req.Matches(set)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		a := pod.Spec.Affinity
		if a == nil {
			return false
		}
		cross := func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
		for _, pa := range []*corev1.PodAffinity{a.PodAffinity} {
			if pa == nil {
				continue
			}
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				if cross(t) {
					return true
				}
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				if cross(t.PodAffinityTerm) {
					return true
				}
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				if cross(t) {
					return true
				}
			}
			for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				if cross(t.PodAffinityTerm) {
					return true
				}
			}
		}
	}
	return false
}

// podIsBestEffort: no container or init container requests or limits cpu
// or memory (the BestEffort QoS class).
func podIsBestEffort(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				for k, q := range l {
					if (k == corev1.ResourceCPU || k == corev1.ResourceMemory) && !q.IsZero() {
						return false
					}
				}
			}
		}
	}
	return true
}
