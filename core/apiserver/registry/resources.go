package registry

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Default returns a registry with every resource kubetab serves and the
// admission plugins kube-apiserver enables by default that matter here.
func Default(cfg Config) (*Registry, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	for _, res := range DefaultResources() {
		r.Register(res)
	}
	r.AddAdmission(r.namespaceLifecycle)
	return r, nil
}

// DefaultResources lists the served resources, in discovery order.
func DefaultResources() []*Resource {
	return []*Resource{
		{
			Version: "v1", Kind: "Namespace", Resource: "namespaces", Singular: "namespace",
			ShortNames: []string{"ns"}, KeyPrefix: "/registry/namespaces",
			Subresources: []string{"status", "finalize"},
			New:          func() runtime.Object { return &corev1.Namespace{} },
			NewList:      func() runtime.Object { return &corev1.NamespaceList{} },
			Strategy:     namespaceStrategy{},
		},
		{
			Version: "v1", Kind: "Node", Resource: "nodes", Singular: "node",
			ShortNames: []string{"no"}, KeyPrefix: "/registry/minions",
			Subresources: []string{"status"},
			New:          func() runtime.Object { return &corev1.Node{} },
			NewList:      func() runtime.Object { return &corev1.NodeList{} },
			Strategy:     nodeStrategy{},
		},
		{
			Version: "v1", Kind: "Pod", Resource: "pods", Singular: "pod", Namespaced: true,
			ShortNames: []string{"po"}, Categories: []string{"all"}, KeyPrefix: "/registry/pods",
			Subresources: []string{"binding", "status", "log"},
			New:          func() runtime.Object { return &corev1.Pod{} },
			NewList:      func() runtime.Object { return &corev1.PodList{} },
			Strategy:     podStrategy{},
		},
		{
			Version: "v1", Kind: "Event", Resource: "events", Singular: "event", Namespaced: true,
			ShortNames: []string{"ev"}, KeyPrefix: "/registry/events",
			New:      func() runtime.Object { return &corev1.Event{} },
			NewList:  func() runtime.Object { return &corev1.EventList{} },
			Strategy: eventStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Singular: "deployment",
			Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"},
			KeyPrefix: "/registry/deployments", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &appsv1.Deployment{} },
			NewList:  func() runtime.Object { return &appsv1.DeploymentList{} },
			Strategy: deploymentStrategy{},
		},
		{
			Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", Singular: "replicaset",
			Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"},
			KeyPrefix: "/registry/replicasets", Subresources: []string{"status", "scale"},
			New:      func() runtime.Object { return &appsv1.ReplicaSet{} },
			NewList:  func() runtime.Object { return &appsv1.ReplicaSetList{} },
			Strategy: replicaSetStrategy{},
		},
	}
}

// namespaceLifecycle is the NamespaceLifecycle admission plugin: nothing is
// created in a namespace that does not exist or is being deleted.
func (r *Registry) namespaceLifecycle(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	if op != Create || !res.Namespaced {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	nsStore, ok := r.Lookup(schema.GroupResource{Resource: "namespaces"})
	if !ok {
		return nil
	}
	nsObj, err := nsStore.Get(ctx, "", acc.GetNamespace())
	if err != nil {
		return err // namespaces "x" not found
	}
	ns := nsObj.(*corev1.Namespace)
	if ns.Status.Phase == corev1.NamespaceTerminating && res.Resource != "events" {
		return apierrors.NewForbidden(res.GroupResource(), acc.GetName(),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
	}
	return nil
}
