package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- namespaces (pkg/registry/core/namespace/strategy.go and storage) ---
//
// A namespace's life:
//
//	create ──▶ Active ──delete──▶ Terminating ──finalize: spec.finalizers=[]──▶ gone
//	           (spec.finalizers   (deletionTimestamp set;   (the namespace controller
//	            ["kubernetes"])    nothing new may be        empties the namespace first,
//	                               created in it)            then calls /finalize)

type namespaceStrategy struct{}

func (namespaceStrategy) PrepareForCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	found := false
	for _, f := range ns.Spec.Finalizers {
		found = found || f == corev1.FinalizerKubernetes
	}
	if !found {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	setLabel(&ns.ObjectMeta, corev1.LabelMetadataName, ns.Name)
}

func (namespaceStrategy) PrepareForUpdate(obj, old runtime.Object) {
	ns, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = o.Spec.Finalizers // changed only through /finalize
	ns.Status = o.Status
	setLabel(&ns.ObjectMeta, corev1.LabelMetadataName, ns.Name)
}

func (namespaceStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

// PrepareForFinalize: namespaces/{name}/finalize writes spec, never status.
func (namespaceStrategy) PrepareForFinalize(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
}

func (namespaceStrategy) Validate(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	errs := apivalidation.ValidateObjectMetaAccessor(ns, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
	return append(errs, validateNamespaceFinalizers(ns)...)
}

func validateNamespaceFinalizers(ns *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "finalizers")
	for i, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), p.Index(i))...)
	}
	return errs
}

func (s namespaceStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace), field.NewPath("metadata"))
}

func (s namespaceStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	ns, o := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	errs := s.ValidateUpdate(obj, old)
	if o.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			errs = append(errs, field.Invalid(field.NewPath("status", "Phase"), ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		errs = append(errs, field.Invalid(field.NewPath("status", "Phase"), ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return errs
}

// ValidateFinalize is upstream's ValidateNamespaceFinalizeUpdate.
func (s namespaceStrategy) ValidateFinalize(obj, old runtime.Object) field.ErrorList {
	errs := s.ValidateUpdate(obj, old)
	return append(errs, validateNamespaceFinalizers(obj.(*corev1.Namespace))...)
}

func (namespaceStrategy) Fields(obj runtime.Object) fields.Set {
	ns := obj.(*corev1.Namespace)
	f := metaFields(ns)
	f["status.phase"] = string(ns.Status.Phase)
	return f
}

// Terminate implements Terminator: the first delete turns a namespace
// Terminating (upstream: namespace REST.Delete).
func (namespaceStrategy) Terminate(obj runtime.Object) {
	obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating
}

// Finalized implements Terminator: a namespace goes once its spec.finalizers
// are empty (upstream: ShouldDeleteNamespaceDuringUpdate).
func (namespaceStrategy) Finalized(obj runtime.Object) bool {
	return len(obj.(*corev1.Namespace).Spec.Finalizers) == 0
}

// BeginCreate implements CreateHook: once a namespace is stored, it gets its
// "default" ServiceAccount, which the ServiceAccount admission plugin needs
// before any pod can be created there, and the kube-root-ca.crt ConfigMap
// that every pod's kube-api-access volume projects.
//
// Upstream these come only from two controllers of kube-controller-manager,
// the serviceaccounts-controller (pkg/controller/serviceaccount) and the
// root-ca-cert-publisher (pkg/controller/certificates/rootcacertpublisher),
// a few milliseconds after the namespace. kubetab runs both controllers too
// (core/controller/serviceaccount and rootcacertpublisher: they recreate
// the objects when they are deleted) and also creates the objects here, in
// the same request, so that a pod created right after its namespace (a
// lesson's next line) is not refused for a ServiceAccount that is a moment
// away.
func (namespaceStrategy) BeginCreate(ctx context.Context, reg *Registry, obj runtime.Object, dryRun bool) (FinishFunc, error) {
	name := obj.(*corev1.Namespace).Name
	return func(ctx context.Context, ok bool) {
		if !ok || dryRun {
			return
		}
		_ = reg.ensureDefaultServiceAccount(ctx, name)
		_ = reg.ensureRootCAConfigMap(ctx, name)
	}, nil
}

// RootCAConfigMapName is the ConfigMap in every namespace that holds the
// CA bundle of the API server.
const RootCAConfigMapName = "kube-root-ca.crt"

// The kube-root-ca.crt ConfigMap's key and its one annotation, as
// upstream's root-ca-cert-publisher writes them.
const (
	RootCAKey                   = "ca.crt"
	RootCADescriptionAnnotation = "kubernetes.io/description"
	RootCADescription           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// RootCA is the PEM bundle published in every namespace's kube-root-ca.crt.
func (r *Registry) RootCA() string { return r.rootCA }

// ensureRootCAConfigMap creates a namespace's kube-root-ca.crt unless it
// exists.
func (r *Registry) ensureRootCAConfigMap(ctx context.Context, namespace string) error {
	cms, ok := r.Lookup(corev1.SchemeGroupVersion.WithResource("configmaps").GroupResource())
	if !ok {
		return nil
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMapName, Namespace: namespace, Annotations: map[string]string{
			RootCADescriptionAnnotation: RootCADescription,
		}},
		Data: map[string]string{RootCAKey: r.rootCA},
	}
	_, err := cms.Create(ctx, namespace, cm, CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ensureDefaultServiceAccount creates the "default" ServiceAccount of a
// namespace unless it exists.
func (r *Registry) ensureDefaultServiceAccount(ctx context.Context, namespace string) error {
	sas, ok := r.Lookup(corev1.SchemeGroupVersion.WithResource("serviceaccounts").GroupResource())
	if !ok {
		return nil
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceAccountName, Namespace: namespace}}
	_, err := sas.Create(ctx, namespace, sa, CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// immortalNamespaces may not be deleted (upstream: NamespaceLifecycle's
// immortalNamespaces).
var immortalNamespaces = map[string]bool{
	metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true,
}

// namespaceLifecycle is the NamespaceLifecycle admission plugin
// (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle): nothing is
// created in a namespace that does not exist or is being deleted, and the
// system namespaces may not be deleted.
func (r *Registry) namespaceLifecycle(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	acc, err := metaAccessor(obj)
	if err != nil {
		return err
	}
	if op == Delete && res.Group == "" && res.Resource == "namespaces" && immortalNamespaces[acc.GetName()] {
		return apierrors.NewForbidden(res.GroupResource(), acc.GetName(), fmt.Errorf("this namespace may not be deleted"))
	}
	if op != Create || !res.Namespaced {
		return nil
	}
	nsStore, ok := r.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces").GroupResource())
	if !ok {
		return nil
	}
	nsObj, err := nsStore.getShared("", acc.GetNamespace())
	if err != nil {
		return err // namespaces "x" not found
	}
	ns := nsObj.(*corev1.Namespace)
	// Events may still be written into a terminating namespace (upstream
	// exempts them: the controllers emptying it report what they do).
	if ns.Status.Phase == corev1.NamespaceTerminating && res.Resource != "events" {
		return apierrors.NewForbidden(res.GroupResource(), acc.GetName(),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
	}
	return nil
}
