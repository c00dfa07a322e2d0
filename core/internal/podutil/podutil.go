// Package podutil holds the helpers on Pods that the API server, the
// scheduler and the controllers share, so each rule lives in one place.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/api/v1/pod (podutil), whose
// UpdatePodCondition the eviction handler, the scheduler and the disruption
// and pod GC controllers all call.
package podutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetPodCondition returns the condition of type t, or nil.
func GetPodCondition(status *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// UpdatePodCondition adds c to status, or replaces the condition of its
// type, and reports whether anything changed. The transition time is now
// when the condition's status changes and kept when it does not. Upstream
// reads the wall clock; here now comes from the component's clock, cut to
// the second a stored time keeps, so a condition read back compares equal.
func UpdatePodCondition(status *corev1.PodStatus, c corev1.PodCondition, now time.Time) bool {
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	old := GetPodCondition(status, c.Type)
	if old == nil {
		status.Conditions = append(status.Conditions, c)
		return true
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	same := old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
		old.LastProbeTime.Equal(&c.LastProbeTime) && old.LastTransitionTime.Equal(&c.LastTransitionTime)
	*old = c
	return !same
}

// VisitContainers calls visit with every container of spec: init
// containers, then containers, then ephemeral containers (upstream's
// AllContainers mask), until it returns false. It reports whether it
// visited them all.
func VisitContainers(spec *corev1.PodSpec, visit func(*corev1.Container) bool) bool {
	for i := range spec.InitContainers {
		if !visit(&spec.InitContainers[i]) {
			return false
		}
	}
	for i := range spec.Containers {
		if !visit(&spec.Containers[i]) {
			return false
		}
	}
	for i := range spec.EphemeralContainers {
		if !visit((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)) {
			return false
		}
	}
	return true
}

// VisitPodSecretNames calls visit with the name of every Secret the pod
// uses directly, until it returns false: image pull secrets, env and
// envFrom of every container, and the volumes that name a secret (secret,
// projected, and the secretRef of the storage plugins). References through
// other objects (pod → claim → volume → secret) are not followed; empty
// names are skipped. It reports whether it visited them all (upstream:
// pkg/api/v1/pod VisitPodSecretNames, which the Node authorizer's graph and
// the NodeRestriction admission plugin use).
func VisitPodSecretNames(pod *corev1.Pod, visit func(name string) bool) bool {
	v := func(name string) bool { return name == "" || visit(name) }
	for _, r := range pod.Spec.ImagePullSecrets {
		if !v(r.Name) {
			return false
		}
	}
	if !VisitContainers(&pod.Spec, func(c *corev1.Container) bool {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && !v(e.SecretRef.Name) {
				return false
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !v(e.ValueFrom.SecretKeyRef.Name) {
				return false
			}
		}
		return true
	}) {
		return false
	}
	ref := func(r *corev1.LocalObjectReference) bool { return r == nil || v(r.Name) }
	for i := range pod.Spec.Volumes {
		s := &pod.Spec.Volumes[i].VolumeSource
		ok := true
		switch {
		case s.Secret != nil:
			ok = v(s.Secret.SecretName)
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.Secret != nil && !v(src.Secret.Name) {
					return false
				}
			}
		case s.AzureFile != nil:
			ok = v(s.AzureFile.SecretName)
		case s.CephFS != nil:
			ok = ref(s.CephFS.SecretRef)
		case s.Cinder != nil:
			ok = ref(s.Cinder.SecretRef)
		case s.FlexVolume != nil:
			ok = ref(s.FlexVolume.SecretRef)
		case s.RBD != nil:
			ok = ref(s.RBD.SecretRef)
		case s.ScaleIO != nil:
			ok = ref(s.ScaleIO.SecretRef)
		case s.ISCSI != nil:
			ok = ref(s.ISCSI.SecretRef)
		case s.StorageOS != nil:
			ok = s.StorageOS.SecretRef == nil || v(s.StorageOS.SecretRef.Name)
		case s.CSI != nil:
			ok = ref(s.CSI.NodePublishSecretRef)
		}
		if !ok {
			return false
		}
	}
	return true
}

// VisitPodConfigmapNames calls visit with the name of every ConfigMap the
// pod uses directly (env and envFrom of every container, configMap and
// projected volumes), until it returns false; empty names are skipped
// (upstream: VisitPodConfigmapNames).
func VisitPodConfigmapNames(pod *corev1.Pod, visit func(name string) bool) bool {
	v := func(name string) bool { return name == "" || visit(name) }
	if !VisitContainers(&pod.Spec, func(c *corev1.Container) bool {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil && !v(e.ConfigMapRef.Name) {
				return false
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && !v(e.ValueFrom.ConfigMapKeyRef.Name) {
				return false
			}
		}
		return true
	}) {
		return false
	}
	for i := range pod.Spec.Volumes {
		s := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case s.ConfigMap != nil:
			if !v(s.ConfigMap.Name) {
				return false
			}
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.ConfigMap != nil && !v(src.ConfigMap.Name) {
					return false
				}
			}
		}
	}
	return true
}
