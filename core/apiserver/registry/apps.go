package registry

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

func (deploymentStrategy) Validate(obj runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	errs := validateMeta(d, true)
	return append(errs, validateWorkload(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template, field.NewPath("spec"))...)
}

func (s deploymentStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	d, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	errs := validateMetaUpdate(d, o, true)
	errs = append(errs, validateWorkload(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template, field.NewPath("spec"))...)
	if !equalJSON(d.Spec.Selector, o.Spec.Selector) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), d.Spec.Selector, "field is immutable"))
	}
	return errs
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

func (replicaSetStrategy) Validate(obj runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	errs := validateMeta(rs, true)
	return append(errs, validateWorkload(rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template, field.NewPath("spec"))...)
}

func (replicaSetStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	rs, o := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	errs := validateMetaUpdate(rs, o, true)
	errs = append(errs, validateWorkload(rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template, field.NewPath("spec"))...)
	if !equalJSON(rs.Spec.Selector, o.Spec.Selector) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), rs.Spec.Selector, "field is immutable"))
	}
	return errs
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

func validateNonNegative(v int64, p *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(p, v, "must be greater than or equal to 0")}
	}
	return nil
}

// validateWorkload checks what Deployments and ReplicaSets share: replicas,
// a selector that matches the template's labels, and a valid pod template.
func validateWorkload(replicas *int32, sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if replicas != nil {
		errs = append(errs, validateNonNegative(int64(*replicas), p.Child("replicas"))...)
	}
	if sel == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		selector, err := metav1.LabelSelectorAsSelector(sel)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("selector"), sel, err.Error()))
		case selector.Empty():
			errs = append(errs, field.Invalid(p.Child("selector"), sel, "empty selector is invalid for deployment"))
		case !selector.Matches(labels.Set(tmpl.Labels)):
			errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
		}
	}
	errs = append(errs, ValidatePodSpec(&tmpl.Spec, p.Child("template", "spec"))...)
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	return errs
}

// GetScale returns the scale subresource (autoscaling/v1 Scale) of a
// Deployment or ReplicaSet.
func (s *Store) GetScale(ctx context.Context, namespace, name string) (*autoscalingv1.Scale, error) {
	obj, err := s.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
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
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	}
	updated, err := s.Update(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	return scaleOf(updated)
}
