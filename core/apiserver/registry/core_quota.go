package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- core/v1 ResourceQuotas and LimitRanges (pkg/registry/core/resourcequota,
// pkg/registry/core/limitrange, pkg/apis/core/validation) ---
//
// Both are a namespace's budget, kept by two admission plugins
// (admission_quota.go):
//
//	ResourceQuota  spec.hard    {pods: 2, requests.cpu: 1, count/deployments.apps: 3}
//	               status.hard  the same, copied by the resource quota
//	                            controller (core/controller/resourcequota),
//	               status.used  what the namespace holds now: the controller
//	                            recounts it, and the admission plugin adds each
//	                            admitted object at once, so two creates in a
//	                            row cannot both take the last pod.
//	LimitRange     spec.limits  per Container (default, defaultRequest, min,
//	                            max, maxLimitRequestRatio) or per Pod (min,
//	                            max, ratio): the LimitRanger plugin fills a
//	                            container's missing requests and limits from
//	                            the defaults, then rejects what breaks a bound.

type resourceQuotaStrategy struct{}

// PrepareForCreate clears the status: the controller and the quota
// admission plugin write it.
func (resourceQuotaStrategy) PrepareForCreate(obj runtime.Object) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

func (resourceQuotaStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
}

func (resourceQuotaStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func (resourceQuotaStrategy) Validate(obj runtime.Object) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	errs := validateMeta(q, true)
	errs = append(errs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	return append(errs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

// ValidateUpdate: spec.hard may change; the scopes may not (upstream:
// ValidateResourceQuotaUpdate, "field is immutable").
func (s resourceQuotaStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	q, o := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	errs := validateMetaUpdate(q, o, true)
	errs = append(errs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	errs = append(errs, immutable(q.Spec.Scopes, o.Spec.Scopes, field.NewPath("spec", "scopes"))...)
	return errs
}

func (resourceQuotaStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	q, o := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	errs := validateMetaUpdate(q, o, true)
	return append(errs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

func (resourceQuotaStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.ResourceQuota))
}

// standardQuotaResources are upstream's standardQuotaResources (with the
// standard resources that are not counts): what a quota may name without a
// "/" (anything with one, count/deployments.apps, must be a qualified name).
var standardQuotaResources = []string{
	"cpu", "memory", "ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
	"configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}

// integerQuotaResources must be whole numbers (upstream's
// integerResources): counts of objects.
var integerQuotaResources = []string{
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
	"configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}

// validateQuotaResourceName is upstream's validateResourceQuotaResourceName.
func validateQuotaResourceName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 || strings.Contains(name, "/") {
		return errs
	}
	if hasString(standardQuotaResources, name) || strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(name, corev1.ResourceRequestsHugePagesPrefix) || strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "must be a standard resource for quota")}
}

// validateQuantityValue is upstream's ValidateResourceQuantityValue:
// non-negative, and whole for counts.
func validateQuantityValue(name string, q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, q.String(), apivalidation.IsNegativeErrorMsg)}
	}
	isCount := hasString(integerQuotaResources, name) || strings.HasPrefix(name, "count/")
	if isCount && q.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be an integer")}
	}
	return nil
}

func validateResourceList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		kp := p.Key(string(name))
		errs = append(errs, validateQuotaResourceName(string(name), kp)...)
		errs = append(errs, validateQuantityValue(string(name), q, kp)...)
	}
	return errs
}

// quotaScopes are the scopes upstream knows, sorted as its error lists them.
var quotaScopes = []string{"BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating", "VolumeAttributesClass"}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, p *field.Path) field.ErrorList {
	errs := validateResourceList(spec.Hard, p.Child("hard"))
	seen := map[corev1.ResourceQuotaScope]bool{}
	for i, sc := range spec.Scopes {
		if !hasString(quotaScopes, string(sc)) {
			errs = append(errs, field.NotSupported(p.Child("scopes").Index(i), sc, quotaScopes))
		}
		seen[sc] = true
	}
	if spec.ScopeSelector != nil {
		for i, req := range spec.ScopeSelector.MatchExpressions {
			ip := p.Child("scopeSelector", "matchExpressions").Index(i)
			if !hasString(quotaScopes, string(req.ScopeName)) {
				errs = append(errs, field.NotSupported(ip.Child("scopeName"), req.ScopeName, quotaScopes))
			}
			switch req.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(req.Values) == 0 {
					errs = append(errs, field.Required(ip.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(req.Values) != 0 {
					errs = append(errs, field.Invalid(ip.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				errs = append(errs, field.Invalid(ip.Child("operator"), req.Operator, "not a valid selector operator"))
			}
			seen[req.ScopeName] = true
		}
	}
	if (seen[corev1.ResourceQuotaScopeTerminating] && seen[corev1.ResourceQuotaScopeNotTerminating]) ||
		(seen[corev1.ResourceQuotaScopeBestEffort] && seen[corev1.ResourceQuotaScopeNotBestEffort]) {
		errs = append(errs, field.Invalid(p.Child("scopes"), spec.Scopes, "conflicting scopes"))
	}
	// A BestEffort quota may only count pods (upstream: isBestEffortResource).
	if seen[corev1.ResourceQuotaScopeBestEffort] {
		for name := range spec.Hard {
			if name != corev1.ResourcePods && name != "count/pods" {
				errs = append(errs, field.Invalid(p.Child("hard").Key(string(name)), string(name), "unsupported scope applied to resource"))
			}
		}
	}
	return errs
}

func validateResourceQuotaStatus(st *corev1.ResourceQuotaStatus, p *field.Path) field.ErrorList {
	errs := validateResourceList(st.Hard, p.Child("hard"))
	return append(errs, validateResourceList(st.Used, p.Child("used"))...)
}

// --- limitranges ---

type limitRangeStrategy struct{}

// PrepareForCreate applies upstream's SetDefaults_LimitRangeItem to every
// Container limit: an unset default limit is the max, an unset default
// request is the default limit, else the min.
func (limitRangeStrategy) PrepareForCreate(obj runtime.Object) {
	defaultLimitRange(obj.(*corev1.LimitRange))
}

func (limitRangeStrategy) PrepareForUpdate(obj, old runtime.Object) {
	defaultLimitRange(obj.(*corev1.LimitRange))
}

func defaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		l := &lr.Spec.Limits[i]
		if l.Type != corev1.LimitTypeContainer {
			continue
		}
		fill := func(dst *corev1.ResourceList, src corev1.ResourceList) {
			for k, v := range src {
				if *dst == nil {
					*dst = corev1.ResourceList{}
				}
				if _, ok := (*dst)[k]; !ok {
					(*dst)[k] = v.DeepCopy()
				}
			}
		}
		fill(&l.Default, l.Max)
		fill(&l.DefaultRequest, l.Default)
		fill(&l.DefaultRequest, l.Min)
	}
}

func (limitRangeStrategy) Validate(obj runtime.Object) field.ErrorList {
	lr := obj.(*corev1.LimitRange)
	return append(validateMeta(lr, true), validateLimitRangeSpec(&lr.Spec, field.NewPath("spec", "limits"))...)
}

func (limitRangeStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	lr, o := obj.(*corev1.LimitRange), old.(*corev1.LimitRange)
	return append(validateMetaUpdate(lr, o, true), validateLimitRangeSpec(&lr.Spec, field.NewPath("spec", "limits"))...)
}

func (limitRangeStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*corev1.LimitRange))
}

var limitTypes = []string{string(corev1.LimitTypeContainer), string(corev1.LimitTypePersistentVolumeClaim), string(corev1.LimitTypePod)}

// validateLimitRangeSpec is upstream's ValidateLimitRange: one item per
// type, and for each resource min <= defaultRequest <= default <= max and
// a ratio of at least 1 that max/min can reach.
func validateLimitRangeSpec(spec *corev1.LimitRangeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.LimitType]bool{}
	for i := range spec.Limits {
		l := &spec.Limits[i]
		ip := p.Index(i)
		if seen[l.Type] {
			errs = append(errs, field.Duplicate(ip.Child("type"), l.Type))
		}
		seen[l.Type] = true
		if !hasString(limitTypes, string(l.Type)) {
			errs = append(errs, field.NotSupported(ip.Child("type"), l.Type, limitTypes))
		}
		lists := []struct {
			name string
			list corev1.ResourceList
		}{{"max", l.Max}, {"min", l.Min}, {"default", l.Default}, {"defaultRequest", l.DefaultRequest}, {"maxLimitRequestRatio", l.MaxLimitRequestRatio}}
		for _, ls := range lists {
			for name, q := range ls.list {
				kp := ip.Child(ls.name).Key(string(name))
				errs = append(errs, validateLimitResourceName(string(name), kp)...)
				if q.Sign() < 0 {
					errs = append(errs, field.Invalid(kp, q.String(), apivalidation.IsNegativeErrorMsg))
				}
			}
		}
		if l.Type == corev1.LimitTypePod {
			if len(l.Default) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(l.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		}
		errs = append(errs, validateLimitBounds(l, ip)...)
	}
	return errs
}

// validateLimitResourceName: a LimitRange names standard container
// resources (cpu, memory, ephemeral-storage, storage, hugepages-*) or
// qualified extended ones.
func validateLimitResourceName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 || strings.Contains(name, "/") {
		return errs
	}
	switch {
	case name == "cpu", name == "memory", name == "ephemeral-storage", name == "storage",
		strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "must be a standard limit type or fully qualified")}
}

func validateLimitBounds(l *corev1.LimitRangeItem, ip *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[corev1.ResourceName]bool{}
	for _, list := range []corev1.ResourceList{l.Max, l.Min, l.Default, l.DefaultRequest, l.MaxLimitRequestRatio} {
		for k := range list {
			names[k] = true
		}
	}
	for k := range names {
		kp := func(what string) *field.Path { return ip.Child(what).Key(string(k)) }
		maxQ, hasMax := l.Max[k]
		minQ, hasMin := l.Min[k]
		defQ, hasDef := l.Default[k]
		reqQ, hasReq := l.DefaultRequest[k]
		ratio, hasRatio := l.MaxLimitRequestRatio[k]
		if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
			errs = append(errs, field.Invalid(kp("min"), minQ.String(), fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
		}
		if hasReq && hasMin && minQ.Cmp(reqQ) > 0 {
			errs = append(errs, field.Invalid(kp("defaultRequest"), reqQ.String(), fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
		}
		if hasReq && hasMax && reqQ.Cmp(maxQ) > 0 {
			errs = append(errs, field.Invalid(kp("defaultRequest"), reqQ.String(), fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
		}
		if hasReq && hasDef && reqQ.Cmp(defQ) > 0 {
			errs = append(errs, field.Invalid(kp("defaultRequest"), reqQ.String(), fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
		}
		if hasDef && hasMin && minQ.Cmp(defQ) > 0 {
			errs = append(errs, field.Invalid(kp("default"), minQ.String(), fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
		}
		if hasDef && hasMax && defQ.Cmp(maxQ) > 0 {
			errs = append(errs, field.Invalid(kp("default"), maxQ.String(), fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
		}
		if hasRatio {
			if ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
				errs = append(errs, field.Invalid(kp("maxLimitRequestRatio"), ratio.String(), fmt.Sprintf("ratio %s is less than 1", ratio.String())))
			}
			if hasMin && hasMax && minQ.MilliValue() > 0 {
				if r := float64(maxQ.MilliValue()) / float64(minQ.MilliValue()); float64(ratio.MilliValue())/1000 > r {
					errs = append(errs, field.Invalid(kp("maxLimitRequestRatio"), ratio.String(), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), r)))
				}
			}
		}
	}
	return errs
}

func resourceQuotaResource() *Resource {
	return &Resource{
		Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", Singular: "resourcequota", Namespaced: true,
		ShortNames: []string{"quota"}, KeyPrefix: "/registry/resourcequotas", NoGeneration: true,
		Subresources: []string{"status"},
		New:          func() runtime.Object { return &corev1.ResourceQuota{} },
		NewList:      func() runtime.Object { return &corev1.ResourceQuotaList{} },
		Strategy:     resourceQuotaStrategy{},
	}
}

func limitRangeResource() *Resource {
	return &Resource{
		Version: "v1", Kind: "LimitRange", Resource: "limitranges", Singular: "limitrange", Namespaced: true,
		ShortNames: []string{"limits"}, KeyPrefix: "/registry/limitranges", NoGeneration: true,
		New:      func() runtime.Object { return &corev1.LimitRange{} },
		NewList:  func() runtime.Object { return &corev1.LimitRangeList{} },
		Strategy: limitRangeStrategy{},
	}
}
