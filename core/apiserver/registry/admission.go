package registry

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// The admission plugins kube-apiserver enables by default that matter to
// kubetab, in upstream's order. Mutating plugins run on the object as the
// client sent it, before defaults and validation; validating ones after.
//
//	mutating:   NamespaceLifecycle, ServiceAccount, Priority, LimitRanger
//	validating: NodeRestriction, Priority (PriorityClasses), ResourceQuota
//
// NamespaceLifecycle is in core_namespace.go, Priority in scheduling.go,
// NodeRestriction in admission_node.go, LimitRanger and ResourceQuota in
// admission_quota.go.

// ServiceAccount token volume, as upstream's ServiceAccount admission plugin
// mounts it (plugin/pkg/admission/serviceaccount).
const (
	// ServiceAccountVolumeName prefixes the token volume: kube-api-access-xxxxx.
	ServiceAccountVolumeName = "kube-api-access"
	// DefaultAPITokenMountPath is where every container finds its token.
	DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is WarnOnlyBoundTokenExpirationSeconds.
	tokenExpirationSeconds = int64(3607)
)

// admitServiceAccount is the ServiceAccount admission plugin: a new pod runs
// as "default" unless it names an account, the account must exist, and its
// token is mounted into every container unless automounting is off.
//
// The "default" account of each namespace is created with the namespace
// (see namespaceStrategy.BeginCreate).
func (r *Registry) admitServiceAccount(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	if op != Create || res.Group != "" || res.Resource != "pods" {
		return nil
	}
	pod := obj.(*corev1.Pod)
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil // the kubelet's static pods: their spec must not change
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = pod.Spec.DeprecatedServiceAccount
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	sas, ok := r.Lookup(corev1.SchemeGroupVersion.WithResource("serviceaccounts").GroupResource())
	if !ok {
		return nil
	}
	saObj, err := sas.getShared(pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			err = apierrors.NewNotFound(corev1.Resource("serviceaccount"), pod.Spec.ServiceAccountName)
		}
		return apierrors.NewForbidden(res.GroupResource(), pod.Name,
			fmt.Errorf("error looking up service account %s/%s: %v", pod.Namespace, pod.Spec.ServiceAccountName, err))
	}
	sa := saObj.(*corev1.ServiceAccount)
	if shouldAutomount(sa, pod) {
		mountServiceAccountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 {
		for _, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s.Name})
		}
	}
	return nil
}

// shouldAutomount: the pod's preference wins, then the account's; the
// default is to mount.
func shouldAutomount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountServiceAccountToken adds the projected kube-api-access volume (token,
// ca.crt, namespace) and mounts it read-only at DefaultAPITokenMountPath in
// every container that has nothing mounted there.
func mountServiceAccountToken(pod *corev1.Pod) {
	name := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, ServiceAccountVolumeName+"-") {
			name = v.Name
			break
		}
	}
	has := name != ""
	if !has {
		name = ServiceAccountVolumeName + "-" + utilrand.String(5)
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				mounted = mounted || m.MountPath == DefaultAPITokenMountPath
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if has || !needed {
		return
	}
	mode := corev1.ProjectedVolumeSourceDefaultMode
	expiry := tokenExpirationSeconds
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: &mode,
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
					Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}}}},
			},
		}},
	})
}
