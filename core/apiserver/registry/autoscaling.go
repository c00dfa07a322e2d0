package registry

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- autoscaling HorizontalPodAutoscalers (pkg/registry/autoscaling/
// horizontalpodautoscaler, pkg/apis/autoscaling/validation, and the
// conversions of pkg/apis/autoscaling/v1) ---
//
// One storage, two versions. kube-apiserver stores every HPA as
// autoscaling/v2 and serves it as v1 too; v1 can say only "keep the CPU at
// N % of the requests", so what else a v2 object holds travels in v1's
// annotations (and comes back from them when a v1 client writes):
//
//	autoscaling/v2                        autoscaling/v1
//	spec.metrics[cpu Utilization]     <-> spec.targetCPUUtilizationPercentage
//	spec.metrics[the others]          <-> autoscaling.alpha.kubernetes.io/metrics
//	spec.behavior                     <-> autoscaling.alpha.kubernetes.io/behavior
//	status.currentMetrics[cpu]        <-> status.currentCPUUtilizationPercentage
//	status.currentMetrics[the others] <-> autoscaling.alpha.kubernetes.io/current-metrics
//	status.conditions                 <-> autoscaling.alpha.kubernetes.io/conditions
//
// `kubectl autoscale` (v1.32) writes v1; `kubectl get hpa` reads v2.
// The controller is core/controller/podautoscaler.

// The annotations of the v1 view.
const (
	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaBehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
)

// DefaultCPUUtilization is the target of an HPA that names no metric.
const DefaultCPUUtilization = 80

func hpaResource() *Resource {
	return &Resource{
		Group: autoscalingv2.GroupName, Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
		Singular: "horizontalpodautoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"},
		KeyPrefix: "/registry/horizontalpodautoscalers", Subresources: []string{"status"},
		New:      func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		NewList:  func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		Strategy: hpaStrategy{},
	}
}

// hpaV1Resource serves the same objects as autoscaling/v1.
func hpaV1Resource() *Resource {
	return &Resource{
		Group: autoscalingv1.GroupName, Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers",
		Singular: "horizontalpodautoscaler", Namespaced: true, ShortNames: []string{"hpa"}, Categories: []string{"all"},
		KeyPrefix: "/registry/horizontalpodautoscalers", Subresources: []string{"status"},
		New:      func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
		NewList:  func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
		Strategy: hpaV1Strategy{},
		Codec: &Codec{
			Storage:     autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
			NewStorage:  func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			ToStorage:   func(obj runtime.Object) runtime.Object { return HPAToV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)) },
			FromStorage: func(obj runtime.Object) runtime.Object { return HPAToV1(obj.(*autoscalingv2.HorizontalPodAutoscaler)) },
		},
	}
}

type hpaStrategy struct{}

// PrepareForCreate sets upstream's v2 defaults and clears the status.
func (hpaStrategy) PrepareForCreate(obj runtime.Object) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	DefaultHPA(h)
}

func (hpaStrategy) PrepareForUpdate(obj, old runtime.Object) {
	DefaultHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler))
	CopyField(obj, old, "Status")
}

func (hpaStrategy) PrepareForStatusUpdate(obj, old runtime.Object) { CopyField(obj, old, "Spec") }

func (hpaStrategy) Validate(obj runtime.Object) field.ErrorList {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	return append(validateMeta(h, true), validateHPASpec(&h.Spec, field.NewPath("spec"))...)
}

func (hpaStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	h, o := obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler)
	return append(validateMetaUpdate(h, o, true), validateHPASpec(&h.Spec, field.NewPath("spec"))...)
}

// ValidateStatusUpdate is upstream's ValidateHorizontalPodAutoscalerStatusUpdate.
func (hpaStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	h, o := obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler)
	p := field.NewPath("status")
	errs := validateMetaUpdate(h, o, true)
	errs = append(errs, validateNonNegative(int64(h.Status.CurrentReplicas), p.Child("currentReplicas"))...)
	return append(errs, validateNonNegative(int64(h.Status.DesiredReplicas), p.Child("desiredReplicas"))...)
}

func (hpaStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*autoscalingv2.HorizontalPodAutoscaler))
}

// hpaV1Strategy runs the v2 rules on the converted object, so both
// versions validate alike (upstream validates the internal type).
type hpaV1Strategy struct{}

func v2of(obj runtime.Object) *autoscalingv2.HorizontalPodAutoscaler {
	return HPAToV2(obj.(*autoscalingv1.HorizontalPodAutoscaler))
}

func (hpaV1Strategy) PrepareForCreate(obj runtime.Object) {
	h := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Status = autoscalingv1.HorizontalPodAutoscalerStatus{}
	delete(h.Annotations, hpaCurrentMetricsAnnotation)
	delete(h.Annotations, hpaConditionsAnnotation)
	if h.Spec.MinReplicas == nil {
		one := int32(1)
		h.Spec.MinReplicas = &one
	}
}

func (hpaV1Strategy) PrepareForUpdate(obj, old runtime.Object) {
	h, o := obj.(*autoscalingv1.HorizontalPodAutoscaler), old.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Status = o.Status
	for _, a := range []string{hpaCurrentMetricsAnnotation, hpaConditionsAnnotation} {
		if v, ok := o.Annotations[a]; ok {
			if h.Annotations == nil {
				h.Annotations = map[string]string{}
			}
			h.Annotations[a] = v
		} else {
			delete(h.Annotations, a)
		}
	}
}

func (hpaV1Strategy) PrepareForStatusUpdate(obj, old runtime.Object) { CopyField(obj, old, "Spec") }

func (hpaV1Strategy) Validate(obj runtime.Object) field.ErrorList {
	return hpaStrategy{}.Validate(v2of(obj))
}

func (hpaV1Strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return hpaStrategy{}.ValidateUpdate(v2of(obj), v2of(old))
}

func (hpaV1Strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return hpaStrategy{}.ValidateStatusUpdate(v2of(obj), v2of(old))
}

func (hpaV1Strategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*autoscalingv1.HorizontalPodAutoscaler))
}

// DefaultHPA is upstream's SetDefaults_HorizontalPodAutoscaler (v2):
// minReplicas 1, the CPU at 80 % when no metric is named, and a behavior's
// unset rules filled from the defaults the controller uses anyway.
func DefaultHPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		one := int32(1)
		h.Spec.MinReplicas = &one
	}
	if len(h.Spec.Metrics) == 0 {
		u := int32(DefaultCPUUtilization)
		h.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(u)}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = ScaleUpRules(b.ScaleUp)
		b.ScaleDown = ScaleDownRules(b.ScaleDown)
	}
}

func cpuUtilizationMetric(u int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u},
	}}
}

// ScaleUpRules is upstream's GenerateHPAScaleUpRules: no stabilization, and
// per 15 s at most 4 pods or 100 %, whichever is more.
func ScaleUpRules(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	zero := int32(0)
	max := autoscalingv2.MaxChangePolicySelect
	def := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: &zero, SelectPolicy: &max,
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
	return mergeRules(r, def)
}

// ScaleDownRules is upstream's GenerateHPAScaleDownRules: 100 % per 15 s;
// the stabilization window is left to the controller's
// --horizontal-pod-autoscaler-downscale-stabilization (5 min).
func ScaleDownRules(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	max := autoscalingv2.MaxChangePolicySelect
	def := &autoscalingv2.HPAScalingRules{
		SelectPolicy: &max,
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
	return mergeRules(r, def)
}

func mergeRules(r, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return def
	}
	out := r.DeepCopy()
	if out.StabilizationWindowSeconds == nil {
		out.StabilizationWindowSeconds = def.StabilizationWindowSeconds
	}
	if out.SelectPolicy == nil {
		out.SelectPolicy = def.SelectPolicy
	}
	if out.Policies == nil {
		out.Policies = def.Policies
	}
	return out
}

var (
	hpaMetricTypes   = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}
	hpaTargetTypes   = []string{"AverageValue", "Utilization", "Value"}
	hpaPolicyTypes   = []string{"Percent", "Pods"}
	hpaSelectPolicys = []string{"Disabled", "Max", "Min"}
)

// validateHPASpec is upstream's validateHorizontalPodAutoscalerSpec.
func validateHPASpec(s *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinReplicas != nil && *s.MinReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 1"))
	}
	if s.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionRef(s.ScaleTargetRef, p.Child("scaleTargetRef"))...)
	for i := range s.Metrics {
		errs = append(errs, validateHPAMetric(&s.Metrics[i], p.Child("metrics").Index(i))...)
	}
	if b := s.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateCrossVersionRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

// validateHPAMetric checks one metric: its type names the one source that
// is set, and the target fits the source.
func validateHPAMetric(m *autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := map[string]bool{"Object": m.Object != nil, "Pods": m.Pods != nil, "Resource": m.Resource != nil,
		"ContainerResource": m.ContainerResource != nil, "External": m.External != nil}
	n := 0
	for _, v := range set {
		if v {
			n++
		}
	}
	switch {
	case m.Type == "":
		return append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	case !hasString(hpaMetricTypes, string(m.Type)):
		return append(errs, field.NotSupported(p.Child("type"), m.Type, hpaMetricTypes))
	case !set[string(m.Type)]:
		return append(errs, field.Required(p, "must populate information for the given metric source"))
	case n > 1:
		return append(errs, field.Forbidden(p, "must populate the given metric source only"))
	}
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		rp := p.Child("resource")
		if m.Resource.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), "must specify a resource name"))
		}
		errs = append(errs, validateMetricTarget(m.Resource.Target, rp.Child("target"), true)...)
	case autoscalingv2.ContainerResourceMetricSourceType:
		rp := p.Child("containerResource")
		if m.ContainerResource.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), "must specify a resource name"))
		}
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(rp.Child("container"), "must specify a container"))
		}
		errs = append(errs, validateMetricTarget(m.ContainerResource.Target, rp.Child("target"), true)...)
	case autoscalingv2.PodsMetricSourceType:
		errs = append(errs, validateMetricIdentifier(m.Pods.Metric, p.Child("pods", "metric"))...)
		errs = append(errs, validateMetricTarget(m.Pods.Target, p.Child("pods", "target"), false)...)
	case autoscalingv2.ObjectMetricSourceType:
		errs = append(errs, validateCrossVersionRef(m.Object.DescribedObject, p.Child("object", "describedObject"))...)
		errs = append(errs, validateMetricIdentifier(m.Object.Metric, p.Child("object", "metric"))...)
		errs = append(errs, validateMetricTarget(m.Object.Target, p.Child("object", "target"), false)...)
	case autoscalingv2.ExternalMetricSourceType:
		errs = append(errs, validateMetricIdentifier(m.External.Metric, p.Child("external", "metric"))...)
		errs = append(errs, validateMetricTarget(m.External.Target, p.Child("external", "target"), false)...)
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if id.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a metric name"))
	} else {
		for _, msg := range path.IsValidPathSegmentName(id.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
		}
	}
	if id.Selector != nil {
		errs = append(errs, metavalidation.ValidateLabelSelector(id.Selector, metavalidation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	return errs
}

// validateMetricTarget is upstream's validateMetricTarget.
func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path, utilizationOK bool) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	} else if !hasString(hpaTargetTypes, string(t.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, hpaTargetTypes))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		if !utilizationOK {
			errs = append(errs, field.NotSupported(p.Child("type"), t.Type, []string{"AverageValue", "Value"}))
		} else if t.AverageUtilization == nil {
			errs = append(errs, field.Required(p.Child("averageUtilization"), "must set averageUtilization when type is Utilization"))
		}
	case autoscalingv2.AverageValueMetricType:
		if t.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("averageValue"), "must set averageValue when type is AverageValue"))
		}
	case autoscalingv2.ValueMetricType:
		if t.Value == nil {
			errs = append(errs, field.Required(p.Child("value"), "must set value when type is Value"))
		}
	}
	return errs
}

// validateScalingRules is upstream's validateScalingRules.
func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > 3600) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero and less than or equal to 3600"))
	}
	if sp := r.SelectPolicy; sp != nil && !hasString(hpaSelectPolicys, string(*sp)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, hpaSelectPolicys))
	}
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		ip := p.Child("policies").Index(i)
		if !hasString(hpaPolicyTypes, string(pol.Type)) {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, hpaPolicyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > 1800 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero and less than or equal to 1800"))
		}
	}
	return errs
}

// isCPUUtilization: the metric v1 says as targetCPUUtilizationPercentage.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil
}

// HPAToV1 converts a stored v2 HPA to autoscaling/v1.
func HPAToV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	annotate := func(key string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			return
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(data)
	}
	var others []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) && out.Spec.TargetCPUUtilizationPercentage == nil {
			u := *m.Resource.Target.AverageUtilization
			out.Spec.TargetCPUUtilizationPercentage = &u
			continue
		}
		others = append(others, metricToV1(m))
	}
	if len(others) > 0 {
		annotate(hpaMetricsAnnotation, others)
	}
	var current []autoscalingv1.MetricStatus
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil && out.Status.CurrentCPUUtilizationPercentage == nil {
			u := *m.Resource.Current.AverageUtilization
			out.Status.CurrentCPUUtilizationPercentage = &u
			continue
		}
		current = append(current, metricStatusToV1(m))
	}
	if len(current) > 0 {
		annotate(hpaCurrentMetricsAnnotation, current)
	}
	if len(in.Status.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
		for i, c := range in.Status.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
		}
		annotate(hpaConditionsAnnotation, conds)
	}
	if in.Spec.Behavior != nil {
		annotate(hpaBehaviorAnnotation, in.Spec.Behavior)
	}
	return out
}

// HPAToV2 converts an autoscaling/v1 HPA to the stored v2, taking back what
// the annotations carry (and removing them).
func HPAToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: *in.ObjectMeta.DeepCopy(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	ann := out.Annotations
	take := func(key string, v any) {
		if s, ok := ann[key]; ok {
			_ = json.Unmarshal([]byte(s), v)
			delete(ann, key)
		}
	}
	if u := in.Spec.TargetCPUUtilizationPercentage; u != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuUtilizationMetric(*u))
	}
	var others []autoscalingv1.MetricSpec
	take(hpaMetricsAnnotation, &others)
	for _, m := range others {
		out.Spec.Metrics = append(out.Spec.Metrics, metricToV2(m))
	}
	if u := in.Status.CurrentCPUUtilizationPercentage; u != nil {
		v := *u
		out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, autoscalingv2.MetricStatus{
			Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &v}},
		})
	}
	var current []autoscalingv1.MetricStatus
	take(hpaCurrentMetricsAnnotation, &current)
	for _, m := range current {
		out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusToV2(m))
	}
	var conds []autoscalingv1.HorizontalPodAutoscalerCondition
	take(hpaConditionsAnnotation, &conds)
	for _, c := range conds {
		out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
			Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	if _, ok := ann[hpaBehaviorAnnotation]; ok {
		out.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		take(hpaBehaviorAnnotation, out.Spec.Behavior)
	}
	if len(ann) == 0 {
		out.Annotations = nil
	}
	return out
}

// metricToV1 and the three below convert the metrics v1 keeps in its
// annotations (v1's v2beta1-shaped MetricSpec: a target per source).
func metricToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: m.Resource.Name,
			TargetAverageUtilization: m.Resource.Target.AverageUtilization, TargetAverageValue: m.Resource.Target.AverageValue}
	case m.ContainerResource != nil:
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
			TargetAverageUtilization: m.ContainerResource.Target.AverageUtilization, TargetAverageValue: m.ContainerResource.Target.AverageValue}
	case m.Pods != nil:
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector}
		if v := m.Pods.Target.AverageValue; v != nil {
			out.Pods.TargetAverageValue = *v
		}
	case m.Object != nil:
		out.Object = &autoscalingv1.ObjectMetricSource{Target: autoscalingv1.CrossVersionObjectReference(m.Object.DescribedObject),
			MetricName: m.Object.Metric.Name, Selector: m.Object.Metric.Selector, AverageValue: m.Object.Target.AverageValue}
		if v := m.Object.Target.Value; v != nil {
			out.Object.TargetValue = *v
		}
	case m.External != nil:
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: m.External.Metric.Name, MetricSelector: m.External.Metric.Selector,
			TargetValue: m.External.Target.Value, TargetAverageValue: m.External.Target.AverageValue}
	}
	return out
}

func metricToV2(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	target := func(util *int32, avg *resource.Quantity) autoscalingv2.MetricTarget {
		if util != nil {
			return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: util}
		}
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: avg}
	}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: m.Resource.Name, Target: target(m.Resource.TargetAverageUtilization, m.Resource.TargetAverageValue)}
	case m.ContainerResource != nil:
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
			Target: target(m.ContainerResource.TargetAverageUtilization, m.ContainerResource.TargetAverageValue)}
	case m.Pods != nil:
		v := m.Pods.TargetAverageValue
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v}}
	case m.Object != nil:
		v := m.Object.TargetValue
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &v}
		if m.Object.AverageValue != nil {
			t = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: m.Object.AverageValue}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{DescribedObject: autoscalingv2.CrossVersionObjectReference(m.Object.Target),
			Metric: autoscalingv2.MetricIdentifier{Name: m.Object.MetricName, Selector: m.Object.Selector}, Target: t}
	case m.External != nil:
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: m.External.TargetValue}
		if m.External.TargetAverageValue != nil {
			t = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: m.External.TargetAverageValue}
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: m.External.MetricName, Selector: m.External.MetricSelector}, Target: t}
	}
	return out
}

func metricStatusToV1(m autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: m.Resource.Name, CurrentAverageUtilization: m.Resource.Current.AverageUtilization}
		if v := m.Resource.Current.AverageValue; v != nil {
			out.Resource.CurrentAverageValue = *v
		}
	case m.ContainerResource != nil:
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
			CurrentAverageUtilization: m.ContainerResource.Current.AverageUtilization}
		if v := m.ContainerResource.Current.AverageValue; v != nil {
			out.ContainerResource.CurrentAverageValue = *v
		}
	case m.Pods != nil:
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector}
		if v := m.Pods.Current.AverageValue; v != nil {
			out.Pods.CurrentAverageValue = *v
		}
	}
	return out
}

func metricStatusToV2(m autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
	switch {
	case m.Resource != nil:
		v := m.Resource.CurrentAverageValue
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: m.Resource.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: m.Resource.CurrentAverageUtilization, AverageValue: &v}}
	case m.ContainerResource != nil:
		v := m.ContainerResource.CurrentAverageValue
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: m.ContainerResource.CurrentAverageUtilization, AverageValue: &v}}
	case m.Pods != nil:
		v := m.Pods.CurrentAverageValue
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: &v}}
	}
	return out
}
