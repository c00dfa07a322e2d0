// Package serviceaccount is the serviceaccounts controller: every active
// namespace has a ServiceAccount named "default".
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/serviceaccount
// (serviceaccounts_controller.go), a controller of kube-controller-manager.
//
// A pod runs as a ServiceAccount, "default" unless it names another, and
// the ServiceAccount admission plugin refuses a pod whose ServiceAccount
// does not exist ("error looking up service account default/default:
// serviceaccount \"default\" not found"). So after `kubectl delete sa
// default` no new pod could start in that namespace, until this controller,
// which watches namespaces and ServiceAccounts, puts it back:
//
//	ServiceAccount deleted  -> its namespace is queued
//	namespace added/updated -> queued
//	syncNamespace           -> create each missing ServiceAccount of the list
//
// The list is upstream's default, just "default". A namespace that is not
// Active (being deleted) is left alone.
//
// Upstream's token controller is its companion, here too
// (tokens_controller.go): it fills in the Secrets of type
// kubernetes.io/service-account-token and deletes them with their
// ServiceAccount.
package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Component is the controller's user agent.
const Component = "serviceaccount-controller"

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// ServiceAccounts are the names every namespace must have; empty means
	// upstream's default, ["default"].
	ServiceAccounts []string
	// Clock times the queue's retries; nil is the real clock.
	Clock clock.WithDelayedExecution
	// Workers is how many namespaces sync at once; 0 means 1.
	Workers int
}

// Controller is the serviceaccounts controller.
type Controller struct {
	client  *client.Client
	names   []string
	workers int
	queue   *client.Queue[string] // namespace names

	nsInformer *client.Informer[*corev1.Namespace]
	saInformer *client.Informer[*corev1.ServiceAccount]
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	if err := controller.CheckConfig("serviceaccount", cfg.Client, &cfg.Workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	if len(cfg.ServiceAccounts) == 0 {
		cfg.ServiceAccounts = []string{registry.DefaultServiceAccountName}
	}
	c := &Controller{
		client:     cfg.Client,
		names:      cfg.ServiceAccounts,
		workers:    cfg.Workers,
		queue:      client.NewQueue[string](cfg.Clock),
		nsInformer: client.NewInformer(cfg.Client.Namespaces(), "", client.ListOptions{}),
		saInformer: client.NewInformer(serviceAccounts(cfg.Client), "", client.ListOptions{}),
	}
	c.nsInformer.AddHandler(client.Handler[*corev1.Namespace]{
		OnAdd:    func(ns *corev1.Namespace) { c.queue.Add(ns.Name) },
		OnUpdate: func(_, ns *corev1.Namespace) { c.queue.Add(ns.Name) },
	})
	c.saInformer.AddHandler(client.Handler[*corev1.ServiceAccount]{
		OnDelete: func(sa *corev1.ServiceAccount) { c.queue.Add(sa.Namespace) },
	})
	return c, nil
}

func serviceAccounts(c *client.Client) client.Resource[*corev1.ServiceAccount] {
	return client.For[*corev1.ServiceAccount](c, "", "serviceaccounts")
}

// HasSynced reports whether the caches hold their first lists.
func (c *Controller) HasSynced() bool { return controller.Synced(c.informers()...) }

func (c *Controller) informers() []controller.Informer {
	return []controller.Informer{c.nsInformer, c.saInformer}
}

// Run syncs namespaces until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, c.informers(),
		controller.Worker[string]{Queue: c.queue, Workers: c.workers, Reconcile: c.syncNamespace})
}

// syncNamespace creates the namespace's missing ServiceAccounts.
func (c *Controller) syncNamespace(ctx context.Context, namespace string) error {
	ns, ok := c.nsInformer.Get("", namespace)
	if !ok || ns.Status.Phase != corev1.NamespaceActive {
		return nil
	}
	var firstErr error
	for _, name := range c.names {
		if _, ok := c.saInformer.Get(namespace, name); ok {
			continue
		}
		_, err := serviceAccounts(c.client).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}
