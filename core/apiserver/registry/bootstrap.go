package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The objects every cluster starts with, which kube-apiserver creates
// itself in post-start hooks (pkg/controlplane/controller/...):
//
//	namespaces       default, kube-system, kube-public, kube-node-lease
//	                 (each gets its "default" ServiceAccount and its
//	                 kube-root-ca.crt ConfigMap)
//	priorityclasses  system-node-critical, system-cluster-critical
//	clusterroles, clusterrolebindings  the default RBAC policy (rbac_bootstrap.go)
//	services         default/kubernetes: the API server at the first IP of
//	                 the service CIDR (10.96.0.1:443), with its Endpoints and
//	                 EndpointSlice pointing at the API server's own address

// BootstrapConfig says where the API server is, for the "kubernetes"
// Service's endpoints.
type BootstrapConfig struct {
	// APIServerIP is the API server's address on the cluster network;
	// default DefaultAPIServerIP. It may not be a loopback address
	// (endpoints may not point at 127.0.0.0/8).
	APIServerIP string
	// APIServerPort is its secure port; default 6443.
	APIServerPort int32
}

// DefaultAPIServerIP is the control plane's address on kubetab's simulated
// node network (the nodes are 172.18.0.2 and up, like a kind cluster's).
const DefaultAPIServerIP = "172.18.0.1"

// BootstrapNamespaces are the namespaces every cluster has.
var BootstrapNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// Bootstrap creates the objects of a new cluster; what exists already is
// left alone, so it may run on every start (after a restored snapshot too).
func (r *Registry) Bootstrap(ctx context.Context, cfg BootstrapConfig) error {
	if cfg.APIServerIP == "" {
		cfg.APIServerIP = DefaultAPIServerIP
	}
	if cfg.APIServerPort == 0 {
		cfg.APIServerPort = 6443
	}
	for _, ns := range BootstrapNamespaces {
		if err := r.ensure(ctx, corev1.SchemeGroupVersion.WithResource("namespaces").GroupResource(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
		// A namespace restored from a snapshot taken before its account was.
		if err := r.ensureDefaultServiceAccount(ctx, ns); err != nil {
			return fmt.Errorf("registry: bootstrap serviceaccount %s/default: %w", ns, err)
		}
		if err := r.ensureRootCAConfigMap(ctx, ns); err != nil {
			return fmt.Errorf("registry: bootstrap configmap %s/%s: %w", ns, RootCAConfigMapName, err)
		}
	}
	if err := r.BootstrapPriorityClasses(ctx); err != nil {
		return err
	}
	if err := r.BootstrapRBAC(ctx); err != nil {
		return err
	}
	return r.BootstrapKubernetesService(ctx, cfg)
}

// BootstrapPriorityClasses creates the system priority classes.
func (r *Registry) BootstrapPriorityClasses(ctx context.Context) error {
	for _, pc := range SystemPriorityClasses() {
		if err := r.ensure(ctx, schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, pc); err != nil {
			return err
		}
	}
	return nil
}

// KubernetesServiceName is the Service in "default" that fronts the API
// server.
const KubernetesServiceName = "kubernetes"

// BootstrapKubernetesService creates the "kubernetes" Service at the first
// IP of the service CIDR, and its Endpoints and EndpointSlice.
func (r *Registry) BootstrapKubernetesService(ctx context.Context, cfg BootstrapConfig) error {
	if cfg.APIServerIP == "" {
		cfg.APIServerIP = DefaultAPIServerIP
	}
	if cfg.APIServerPort == 0 {
		cfg.APIServerPort = 6443
	}
	ns := metav1.NamespaceDefault
	labels := map[string]string{"component": "apiserver", "provider": "kubernetes"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: KubernetesServiceName, Namespace: ns, Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: r.serviceIPs.FirstIP(),
			Ports: []corev1.ServicePort{{
				Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(cfg.APIServerPort),
			}},
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	if err := r.ensure(ctx, corev1.SchemeGroupVersion.WithResource("services").GroupResource(), svc); err != nil {
		return err
	}
	port := corev1.EndpointPort{Name: "https", Port: cfg.APIServerPort, Protocol: corev1.ProtocolTCP}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: KubernetesServiceName, Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: cfg.APIServerIP}}, Ports: []corev1.EndpointPort{port}}},
	}
	if err := r.ensure(ctx, corev1.SchemeGroupVersion.WithResource("endpoints").GroupResource(), ep); err != nil {
		return err
	}
	ready, name, proto := true, "https", corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: KubernetesServiceName, Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: KubernetesServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{cfg.APIServerIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &cfg.APIServerPort, Protocol: &proto}},
	}
	return r.ensure(ctx, schema.GroupResource{Group: discoveryv1.GroupName, Resource: "endpointslices"}, slice)
}

// ensure creates obj unless an object of that name exists.
func (r *Registry) ensure(ctx context.Context, gr schema.GroupResource, obj runtime.Object) error {
	st, ok := r.Lookup(gr)
	if !ok {
		return nil
	}
	acc, err := metaAccessor(obj)
	if err != nil {
		return err
	}
	if _, err := st.Create(ctx, acc.GetNamespace(), obj, CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registry: bootstrap %s %s: %w", gr, acc.GetName(), err)
	}
	return nil
}
