package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/client"
)

// The kubelet's ConfigMap and Secret managers (upstream:
// pkg/kubelet/configmap and pkg/kubelet/secret, with the default
// "Watch" change detection strategy of pkg/kubelet/util/manager): the
// kubelet keeps the ConfigMaps and Secrets its pods use current by watching
// them, so a pod sync never waits for an API call to read them, and a
// changed ConfigMap reaches the pod's files at the pod's next sync (at most
// syncFrequency later: why a learner waits up to a minute to see an update in
// a mounted file, while environment variables never change in a running
// container).
//
// Upstream watches only the objects its pods reference, one watch each, and
// the node authorizer lets it read nothing else. kubetab has no
// authorization: each kubelet runs one informer per kind over every
// namespace, which a few nodes in a tab can afford.
//
// Errors carry upstream's wording, with the resource in the singular as the
// managers build them: `configmap "x" not found`, `secret "x" not found`.

func (kl *Kubelet) configMaps() client.Resource[*corev1.ConfigMap] {
	return client.For[*corev1.ConfigMap](kl.client, "", "configmaps")
}

func (kl *Kubelet) secrets() client.Resource[*corev1.Secret] {
	return client.For[*corev1.Secret](kl.client, "", "secrets")
}

// getConfigMap returns a ConfigMap from the kubelet's watch cache, or from the
// API server while the kubelet is not running.
func (kl *Kubelet) getConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	kl.mu.Lock()
	inf := kl.cmInformer
	kl.mu.Unlock()
	if inf != nil && inf.HasSynced() {
		if cm, ok := inf.Get(namespace, name); ok {
			return cm, nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
	}
	cm, err := kl.configMaps().Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
	}
	return cm, err
}

// getSecret is getConfigMap for Secrets.
func (kl *Kubelet) getSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	kl.mu.Lock()
	inf := kl.secretInformer
	kl.mu.Unlock()
	if inf != nil && inf.HasSynced() {
		if s, ok := inf.Get(namespace, name); ok {
			return s, nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
	}
	s, err := kl.secrets().Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
	}
	return s, err
}
