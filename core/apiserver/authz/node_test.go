package authz

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// references finds every way a pod uses a secret, configmap or claim.
func TestReferences(t *testing.T) {
	ref := corev1.LocalObjectReference{Name: "x"}
	for _, tc := range []struct {
		name, resource string
		spec           corev1.PodSpec
		want           bool
	}{
		{"secret volume", "secrets", corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}}}}}, true},
		{"configmap volume is not a secret", "secrets", corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref}}}}}, false},
		{"projected configmap", "configmaps", corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref}}}}}}}}, true},
		{"claim", "persistentvolumeclaims", corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "x"}}}}}, true},
		{"image pull secret", "secrets", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{ref}}, true},
		{"init container env", "configmaps", corev1.PodSpec{InitContainers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: "k"}}}}}}}, true},
		{"another name", "secrets", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "y"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := references(&corev1.Pod{Spec: tc.spec}, tc.resource, "x"); got != tc.want {
				t.Errorf("references = %v, want %v", got, tc.want)
			}
		})
	}
}
