// Package rootcacertpublisher keeps a kube-root-ca.crt ConfigMap in every
// namespace: the CA bundle a pod uses to check that it talks to the real
// API server.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/certificates/
// rootcacertpublisher (publisher.go), a controller of
// kube-controller-manager.
//
// Every pod gets a projected volume, kube-api-access-xxxxx, with its
// ServiceAccount token and this ConfigMap's ca.crt (the ServiceAccount
// admission plugin adds it: core/apiserver/registry/admission.go). A pod
// whose ConfigMap is missing cannot start: its kubelet waits for the volume
// and the pod stays ContainerCreating. So the publisher watches namespaces
// and ConfigMaps, and whenever a namespace is added or changes, or its
// kube-root-ca.crt is deleted or edited, it writes the ConfigMap back:
//
//	kubectl delete configmap kube-root-ca.crt   # or: delete cm --all
//	  -> the informer's delete event queues the namespace
//	  -> syncNamespace finds no ConfigMap in its cache and creates it
//
// The ConfigMap's data is exactly {"ca.crt": <bundle>}, with a description
// annotation; other data is overwritten. A namespace being deleted is left
// alone (a create there is refused anyway).
package rootcacertpublisher

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Component is the controller's name and user agent.
const Component = "root-ca-cert-publisher"

// Config configures the publisher.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// RootCA is the PEM bundle to publish; empty means the registry's.
	RootCA string
	// Clock times the queue's retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is how many namespaces sync at once; 0 means 1.
	Workers int
}

// Publisher is the controller.
type Publisher struct {
	client  *client.Client
	rootCA  string
	workers int
	queue   *client.Queue[string] // namespace names

	nsInformer *client.Informer[*corev1.Namespace]
	cmInformer *client.Informer[*corev1.ConfigMap]
}

// New returns a publisher; call Run to start it.
func New(cfg Config) (*Publisher, error) {
	if err := controller.CheckConfig("rootcacertpublisher", cfg.Client, &cfg.Workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	if cfg.RootCA == "" {
		cfg.RootCA = cfg.Client.Registry().RootCA()
	}
	p := &Publisher{
		client:     cfg.Client,
		rootCA:     cfg.RootCA,
		workers:    cfg.Workers,
		queue:      client.NewQueue[string](cfg.Clock),
		nsInformer: client.NewInformer(cfg.Client.Namespaces(), "", client.ListOptions{}),
		cmInformer: client.NewInformer(client.For[*corev1.ConfigMap](cfg.Client, "", "configmaps"), "", client.ListOptions{}),
	}
	p.nsInformer.AddHandler(client.Handler[*corev1.Namespace]{
		OnAdd:    p.namespaceChanged,
		OnUpdate: func(_, ns *corev1.Namespace) { p.namespaceChanged(ns) },
	})
	p.cmInformer.AddHandler(client.Handler[*corev1.ConfigMap]{
		OnUpdate: func(_, cm *corev1.ConfigMap) { p.configMapChanged(cm) },
		OnDelete: p.configMapChanged,
	})
	return p, nil
}

func (p *Publisher) namespaceChanged(ns *corev1.Namespace) {
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return
	}
	p.queue.Add(ns.Name)
}

func (p *Publisher) configMapChanged(cm *corev1.ConfigMap) {
	if cm.Name == registry.RootCAConfigMapName {
		p.queue.Add(cm.Namespace)
	}
}

// HasSynced reports whether the caches hold their first lists.
func (p *Publisher) HasSynced() bool { return controller.Synced(p.informers()...) }

func (p *Publisher) informers() []controller.Informer {
	return []controller.Informer{p.nsInformer, p.cmInformer}
}

// Run syncs namespaces until ctx is done.
func (p *Publisher) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, p.informers(),
		controller.Worker[string]{Queue: p.queue, Workers: p.workers, Reconcile: p.syncNamespace})
}

// syncNamespace creates or corrects the namespace's kube-root-ca.crt.
func (p *Publisher) syncNamespace(ctx context.Context, namespace string) error {
	configMaps := client.For[*corev1.ConfigMap](p.client, "", "configmaps")
	data := map[string]string{registry.RootCAKey: p.rootCA}
	cm, ok := p.cmInformer.Get(namespace, registry.RootCAConfigMapName)
	if !ok {
		_, err := configMaps.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: registry.RootCAConfigMapName, Namespace: namespace,
				Annotations: map[string]string{registry.RootCADescriptionAnnotation: registry.RootCADescription},
			},
			Data: data,
		})
		// Not again for a namespace that is gone or going, nor for one the
		// cache had not caught up with.
		if apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		return err
	}
	if maps.Equal(cm.Data, data) && cm.Annotations[registry.RootCADescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[registry.RootCADescriptionAnnotation] = registry.RootCADescription
	_, err := configMaps.Update(ctx, cm)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event queues us again
	}
	return err
}
