package registry

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The apps/v1 group: Deployments, ReplicaSets, DaemonSets and StatefulSets
// (pkg/registry/apps/*/strategy.go, pkg/apis/apps/v1/defaults.go,
// pkg/apis/apps/validation/validation.go).

// validateWorkloadTemplate checks what every apps/v1 workload asks of its pod
// template: valid, selected by the selector, restartPolicy Always, and no
// activeDeadlineSeconds. kind names it in the messages ("ReplicaSet").
func validateWorkloadTemplate(sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, what, kind string, forbidDeadline bool, p *field.Path) field.ErrorList {
	errs := validateSelectorMatchesTemplate(sel, tmpl.Labels, what, p)
	errs = append(errs, validatePodTemplate(tmpl, p.Child("template"))...)
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if d := tmpl.Spec.ActiveDeadlineSeconds; d != nil {
		msg := "activeDeadlineSeconds in " + kind + " is not Supported"
		if forbidDeadline {
			errs = append(errs, field.Forbidden(p.Child("template", "spec", "activeDeadlineSeconds"), msg))
		} else {
			errs = append(errs, field.Invalid(p.Child("template", "spec", "activeDeadlineSeconds"), d, msg))
		}
	}
	return errs
}

func validateReplicas(replicas *int32, p *field.Path) field.ErrorList {
	if replicas == nil {
		return nil
	}
	return validateNonNegative(int64(*replicas), p.Child("replicas"))
}

func validateRevisionHistoryLimit(l *int32, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	return validateNonNegative(int64(*l), p.Child("revisionHistoryLimit"))
}

// --- deployments (pkg/registry/apps/deployment/strategy.go) ---

type deploymentStrategy struct{}

func (deploymentStrategy) PrepareForCreate(obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	d.Status = appsv1.DeploymentStatus{}
	defaultDeployment(d)
}

func (deploymentStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultDeployment(obj.(*appsv1.Deployment))
}

func (deploymentStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	// Upstream keeps spec and labels; annotations may change with status
	// (the deployment controller writes its revision annotation this way).
	d.Spec = o.Spec
	d.Labels = o.Labels
}

func defaultDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		one := int32(1)
		d.Spec.Replicas = &one
	}
	if d.Spec.Strategy.Type == "" {
		d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if d.Spec.Strategy.RollingUpdate == nil {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = &quarter
		}
		if d.Spec.Strategy.RollingUpdate.MaxSurge == nil {
			q := quarter
			d.Spec.Strategy.RollingUpdate.MaxSurge = &q
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		ten := int32(10)
		d.Spec.RevisionHistoryLimit = &ten
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		six := int32(600)
		d.Spec.ProgressDeadlineSeconds = &six
	}
	DefaultPodSpec(&d.Spec.Template.Spec)
}

func validateDeploymentSpec(s *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	errs := validateReplicas(s.Replicas, p)
	errs = append(errs, validateWorkloadTemplate(s.Selector, &s.Template, "deployment", "ReplicaSet", false, p)...)
	sp := p.Child("strategy")
	switch s.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.Strategy.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(sp.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if ru := s.Strategy.RollingUpdate; ru == nil {
			errs = append(errs, field.Required(sp.Child("rollingUpdate"), "this should be defaulted and never be nil"))
		} else {
			rp := sp.Child("rollingUpdate")
			errs = append(errs, validatePositiveIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
			errs = append(errs, validatePositiveIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
			if intOrPercentValue(ru.MaxUnavailable) == 0 && intOrPercentValue(ru.MaxSurge) == 0 {
				errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
			}
			errs = append(errs, notMoreThan100Percent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		}
	default:
		errs = append(errs, field.NotSupported(sp, s.Strategy, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	errs = append(errs, validateNonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateRevisionHistoryLimit(s.RevisionHistoryLimit, p)...)
	if pd := s.ProgressDeadlineSeconds; pd != nil {
		errs = append(errs, validateNonNegative(int64(*pd), p.Child("progressDeadlineSeconds"))...)
		if *pd <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), *pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func (deploymentStrategy) Validate(obj runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	return append(validateMeta(d, true), validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
}

func (s deploymentStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	errs := validateMetaUpdate(d, o, true)
	errs = append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
	return append(errs, immutable(d.Spec.Selector, o.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func (deploymentStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	errs := validateMetaUpdate(d, old.(*appsv1.Deployment), true)
	return append(errs, validateNonNegative(int64(d.Status.Replicas), field.NewPath("status", "replicas"))...)
}

func (deploymentStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*appsv1.Deployment))
}

// --- replicasets (pkg/registry/apps/replicaset/strategy.go) ---

type replicaSetStrategy struct{}

func (replicaSetStrategy) PrepareForCreate(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	rs.Status = appsv1.ReplicaSetStatus{}
	defaultReplicaSet(rs)
}

func (replicaSetStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultReplicaSet(obj.(*appsv1.ReplicaSet))
}

func (replicaSetStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	rs, o := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	rs.Spec = o.Spec
	rs.Labels = o.Labels
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		one := int32(1)
		rs.Spec.Replicas = &one
	}
	DefaultPodSpec(&rs.Spec.Template.Spec)
}

func validateReplicaSetSpec(s *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	errs := validateReplicas(s.Replicas, p)
	errs = append(errs, validateNonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	// "for deployment" is upstream's wording for ReplicaSets too.
	return append(errs, validateWorkloadTemplate(s.Selector, &s.Template, "deployment", "ReplicaSet", false, p)...)
}

func (replicaSetStrategy) Validate(obj runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	return append(validateMeta(rs, true), validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func (replicaSetStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	rs, o := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	errs := validateMetaUpdate(rs, o, true)
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	return append(errs, immutable(rs.Spec.Selector, o.Spec.Selector, field.NewPath("spec", "selector"))...)
}

func (replicaSetStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	errs := validateMetaUpdate(rs, old.(*appsv1.ReplicaSet), true)
	return append(errs, validateNonNegative(int64(rs.Status.Replicas), field.NewPath("status", "replicas"))...)
}

func (replicaSetStrategy) Fields(obj runtime.Object) fields.Set {
	rs := obj.(*appsv1.ReplicaSet)
	f := metaFields(rs)
	f["status.replicas"] = fmt.Sprint(rs.Status.Replicas)
	return f
}

// --- daemonsets (pkg/registry/apps/daemonset/strategy.go) ---

type daemonSetStrategy struct{}

// templateGenerationAnnotation is how apps/v1 shows the internal
// templateGeneration counter (upstream's v1 conversion).
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	u := &ds.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			one := intstr.FromInt32(1)
			u.RollingUpdate.MaxUnavailable = &one
		}
		if u.RollingUpdate.MaxSurge == nil {
			zero := intstr.FromInt32(0)
			u.RollingUpdate.MaxSurge = &zero
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ten := int32(10)
		ds.Spec.RevisionHistoryLimit = &ten
	}
	DefaultPodSpec(&ds.Spec.Template.Spec)
}

func (daemonSetStrategy) PrepareForCreate(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	ds.Status = appsv1.DaemonSetStatus{}
	defaultDaemonSet(ds)
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	if g, err := strconv.ParseInt(ds.Annotations[templateGenerationAnnotation], 10, 64); err != nil || g < 1 {
		ds.Annotations[templateGenerationAnnotation] = "1"
	}
}

func (daemonSetStrategy) PrepareForUpdate(obj, old runtime.Object) {
	ds, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	ds.Status = o.Status
	defaultDaemonSet(ds)
	g, _ := strconv.ParseInt(o.Annotations[templateGenerationAnnotation], 10, 64)
	if !apiequality.Semantic.DeepEqual(ds.Spec.Template, o.Spec.Template) {
		g++
	}
	if g > 0 {
		if ds.Annotations == nil {
			ds.Annotations = map[string]string{}
		}
		ds.Annotations[templateGenerationAnnotation] = strconv.FormatInt(g, 10)
	}
}

func (daemonSetStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

func validateDaemonSetSpec(s *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	errs := validateWorkloadTemplate(s.Selector, &s.Template, "daemonset", "DaemonSet", false, p)
	errs = append(errs, validateNonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := s.UpdateStrategy.RollingUpdate
		if ru == nil {
			errs = append(errs, field.Required(up.Child("rollingUpdate"), ""))
			break
		}
		rp := up.Child("rollingUpdate")
		errs = append(errs, validatePositiveIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, validatePositiveIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(ru.MaxSurge, rp.Child("maxSurge"))...)
		unavailable, surge := intOrPercentValue(ru.MaxUnavailable) != 0, intOrPercentValue(ru.MaxSurge) != 0
		switch {
		case unavailable && surge:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), ru.MaxSurge, "may not be set when maxUnavailable is non-zero"))
		case !unavailable && !surge:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(up, s.UpdateStrategy, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	return append(errs, validateRevisionHistoryLimit(s.RevisionHistoryLimit, p)...)
}

func (daemonSetStrategy) Validate(obj runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	return append(validateMeta(ds, true), validateDaemonSetSpec(&ds.Spec, field.NewPath("spec"))...)
}

func (daemonSetStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	ds, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	errs := validateMetaUpdate(ds, o, true)
	errs = append(errs, immutable(ds.Spec.Selector, o.Spec.Selector, field.NewPath("spec", "selector"))...)
	return append(errs, validateDaemonSetSpec(&ds.Spec, field.NewPath("spec"))...)
}

func (daemonSetStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	errs := validateMetaUpdate(ds, old.(*appsv1.DaemonSet), true)
	sp := field.NewPath("status")
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"currentNumberScheduled", ds.Status.CurrentNumberScheduled}, {"numberMisscheduled", ds.Status.NumberMisscheduled},
		{"desiredNumberScheduled", ds.Status.DesiredNumberScheduled}, {"numberReady", ds.Status.NumberReady},
		{"updatedNumberScheduled", ds.Status.UpdatedNumberScheduled}, {"numberAvailable", ds.Status.NumberAvailable},
		{"numberUnavailable", ds.Status.NumberUnavailable},
	} {
		errs = append(errs, validateNonNegative(int64(f.v), sp.Child(f.name))...)
	}
	return errs
}

func (daemonSetStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*appsv1.DaemonSet))
}

// --- statefulsets (pkg/registry/apps/statefulset/strategy.go) ---

type statefulSetStrategy struct{}

func defaultStatefulSet(ss *appsv1.StatefulSet) {
	if ss.Spec.PodManagementPolicy == "" {
		ss.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if ss.Spec.UpdateStrategy.Type == "" {
		ss.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if ss.Spec.UpdateStrategy.RollingUpdate == nil {
			ss.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := ss.Spec.UpdateStrategy.RollingUpdate; ss.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil && ru.Partition == nil {
		zero := int32(0)
		ru.Partition = &zero
	}
	if ss.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		ss.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if ss.Spec.Replicas == nil {
		one := int32(1)
		ss.Spec.Replicas = &one
	}
	if ss.Spec.RevisionHistoryLimit == nil {
		ten := int32(10)
		ss.Spec.RevisionHistoryLimit = &ten
	}
	DefaultPodSpec(&ss.Spec.Template.Spec)
	for i := range ss.Spec.VolumeClaimTemplates {
		if c := &ss.Spec.VolumeClaimTemplates[i]; c.Spec.VolumeMode == nil {
			fs := corev1.PersistentVolumeFilesystem
			c.Spec.VolumeMode = &fs
		}
	}
}

func (statefulSetStrategy) PrepareForCreate(obj runtime.Object) {
	ss := obj.(*appsv1.StatefulSet)
	ss.Status = appsv1.StatefulSetStatus{}
	defaultStatefulSet(ss)
}

func (statefulSetStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultStatefulSet(obj.(*appsv1.StatefulSet))
}

func (statefulSetStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

var retentionPolicies = []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}

func validateStatefulSetSpec(s *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), s.PodManagementPolicy, fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(up, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(up.Child("rollingUpdate"), s.UpdateStrategy.RollingUpdate, fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			if ru.Partition != nil {
				errs = append(errs, validateNonNegative(int64(*ru.Partition), up.Child("rollingUpdate", "partition"))...)
			}
			if ru.MaxUnavailable != nil {
				mp := up.Child("rollingUpdate", "maxUnavailable")
				errs = append(errs, validatePositiveIntOrPercent(ru.MaxUnavailable, mp)...)
				if intOrPercentValue(ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(mp, ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(ru.MaxUnavailable, mp)...)
			}
		}
	default:
		errs = append(errs, field.Invalid(up, s.UpdateStrategy, fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if rp := s.PersistentVolumeClaimRetentionPolicy; rp != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		if !hasString(retentionPolicies, string(rp.WhenDeleted)) {
			errs = append(errs, field.NotSupported(pp.Child("whenDeleted"), rp.WhenDeleted, retentionPolicies))
		}
		if !hasString(retentionPolicies, string(rp.WhenScaled)) {
			errs = append(errs, field.NotSupported(pp.Child("whenScaled"), rp.WhenScaled, retentionPolicies))
		}
	}
	errs = append(errs, validateReplicas(s.Replicas, p)...)
	errs = append(errs, validateNonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, validateNonNegative(int64(s.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	errs = append(errs, validateWorkloadTemplate(s.Selector, &s.Template, "statefulset", "StatefulSet", true, p)...)
	return append(errs, validateRevisionHistoryLimit(s.RevisionHistoryLimit, p)...)
}

func (statefulSetStrategy) Validate(obj runtime.Object) field.ErrorList {
	ss := obj.(*appsv1.StatefulSet)
	return append(validateMeta(ss, true), validateStatefulSetSpec(&ss.Spec, field.NewPath("spec"))...)
}

// ValidateUpdate is ValidateStatefulSetUpdate: only some of the spec may
// change.
func (statefulSetStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	ss, o := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	errs := validateMetaUpdate(ss, o, true)
	clone := ss.Spec.DeepCopy()
	clone.Replicas = o.Spec.Replicas
	clone.Template = o.Spec.Template
	clone.UpdateStrategy = o.Spec.UpdateStrategy
	clone.MinReadySeconds = o.Spec.MinReadySeconds
	clone.PersistentVolumeClaimRetentionPolicy = o.Spec.PersistentVolumeClaimRetentionPolicy
	clone.RevisionHistoryLimit = o.Spec.RevisionHistoryLimit
	clone.Ordinals = o.Spec.Ordinals
	if !apiequality.Semantic.DeepEqual(*clone, o.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return append(errs, validateStatefulSetSpec(&ss.Spec, field.NewPath("spec"))...)
}

func (statefulSetStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	ss := obj.(*appsv1.StatefulSet)
	errs := validateMetaUpdate(ss, old.(*appsv1.StatefulSet), true)
	sp := field.NewPath("status")
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"replicas", ss.Status.Replicas}, {"readyReplicas", ss.Status.ReadyReplicas},
		{"currentReplicas", ss.Status.CurrentReplicas}, {"updatedReplicas", ss.Status.UpdatedReplicas},
		{"availableReplicas", ss.Status.AvailableReplicas},
	} {
		errs = append(errs, validateNonNegative(int64(f.v), sp.Child(f.name))...)
	}
	return errs
}

func (statefulSetStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*appsv1.StatefulSet))
}

// --- the scale subresource (pkg/registry/apps/*/storage/storage.go ScaleREST) ---

// GetScale returns the scale subresource (autoscaling/v1 Scale) of a
// Deployment, ReplicaSet, StatefulSet or ReplicationController.
func (s *Store) GetScale(ctx context.Context, namespace, name string) (*autoscalingv1.Scale, error) {
	obj, err := s.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return s.scaleOf(obj)
}

// ScaleStrategy is implemented by strategies whose scale subresource is not
// one of the built-in kinds': a custom resource's, whose CRD names the JSON
// paths of its replicas (upstream: apiextensions-apiserver's ScaleREST).
type ScaleStrategy interface {
	// Scale reads the Scale of obj.
	Scale(obj runtime.Object) (*autoscalingv1.Scale, error)
	// SetReplicas sets the desired replicas of obj.
	SetReplicas(obj runtime.Object, replicas int32) error
}

func (s *Store) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	if ss, ok := s.Resource.Strategy.(ScaleStrategy); ok {
		return ss.Scale(obj)
	}
	return scaleOf(obj)
}

func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	var (
		m        metav1.ObjectMeta
		replicas *int32
		status   int32
		sel      *metav1.LabelSelector
	)
	switch o := obj.(type) {
	case *appsv1.Deployment:
		m, replicas, status, sel = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	case *appsv1.ReplicaSet:
		m, replicas, status, sel = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	case *appsv1.StatefulSet:
		m, replicas, status, sel = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	case *corev1.ReplicationController:
		m, replicas, status, sel = o.ObjectMeta, o.Spec.Replicas, o.Status.Replicas, &metav1.LabelSelector{MatchLabels: o.Spec.Selector}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%T has no scale subresource", obj))
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			CreationTimestamp: m.CreationTimestamp,
		},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector.String()},
	}
	if replicas != nil {
		sc.Spec.Replicas = *replicas
	}
	return sc, nil
}

// UpdateScale sets spec.replicas through the scale subresource.
func (s *Store) UpdateScale(ctx context.Context, sc *autoscalingv1.Scale, opts UpdateOptions) (*autoscalingv1.Scale, error) {
	ctx, err := s.hold(ctx, "update", "scale", sc.Namespace, sc.Name)
	if err != nil {
		return nil, err
	}
	obj, err := s.Get(ctx, sc.Namespace, sc.Name)
	if err != nil {
		return nil, err
	}
	if sc.ResourceVersion != "" {
		setRV(obj, sc.ResourceVersion)
	}
	if sc.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), sc.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	n := sc.Spec.Replicas
	if ss, ok := s.Resource.Strategy.(ScaleStrategy); ok {
		if err := ss.SetReplicas(obj, n); err != nil {
			return nil, err
		}
		updated, err := s.Update(ctx, obj, opts)
		if err != nil {
			return nil, err
		}
		return s.scaleOf(updated)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &n
	case *corev1.ReplicationController:
		o.Spec.Replicas = &n
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%T has no scale subresource", obj))
	}
	updated, err := s.Update(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	return scaleOf(updated)
}
