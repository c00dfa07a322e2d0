package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/client"
)

// The kubelet's ConfigMap and Secret managers (upstream: pkg/kubelet/configmap
// and pkg/kubelet/secret) with the "Get" change detection strategy of
// pkg/kubelet/util/manager: the kubelet reads each ConfigMap and Secret a
// pod uses from the API server when it syncs the pod, so a changed
// ConfigMap reaches the pod's files at the pod's next sync (at most
// syncFrequency later: why a learner waits up to a minute to see an update
// in a mounted file, while environment variables never change in a running
// container).
//
// A kubelet may read only what the pods bound to its node use: the Node
// authorizer (core/apiserver/authz) refuses the rest, and every list or
// watch of all Secrets. Upstream's default "Watch" strategy keeps one watch
// per object a pod uses; a handful of pods in a tab do not need it.
//
// Errors carry upstream's wording, with the resource in the singular as the
// managers build them: `configmap "x" not found`, `secret "x" not found`.

func (kl *Kubelet) configMaps() client.Resource[*corev1.ConfigMap] {
	return client.For[*corev1.ConfigMap](kl.client, "", "configmaps")
}

func (kl *Kubelet) secrets() client.Resource[*corev1.Secret] {
	return client.For[*corev1.Secret](kl.client, "", "secrets")
}

// getConfigMap reads a ConfigMap from the API server.
func (kl *Kubelet) getConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm, err := kl.configMaps().Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
	}
	return cm, err
}

// getSecret is getConfigMap for Secrets.
func (kl *Kubelet) getSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s, err := kl.secrets().Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
	}
	return s, err
}
