package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/internal/podutil"
)

// The NodeRestriction admission plugin (upstream:
// plugin/pkg/admission/noderestriction). The Node authorizer decides what
// kind of request a kubelet may make (update nodes/status, create pods,
// ...); it cannot look inside the object, so on its own every kubelet
// could rewrite every Node and the status of every pod. NodeRestriction
// looks at the object and limits a kubelet (system:node:<node> in
// system:nodes) to what belongs to its own node:
//
//	nodes           only its own Node (create, update, status, delete); on
//	                create no spec.configSource and no label it may not set;
//	                on update no new configSource, no taint change, and no
//	                change to a label it may not set
//	pods            create: mirror pods only (the kubelet's copy of a static
//	                pod): annotated kubernetes.io/config.mirror, bound to
//	                itself, owned (as controller) by its Node, referencing
//	                no ServiceAccount, Secret, ConfigMap, ClusterTrustBundle
//	                or claim; delete: pods bound to itself; no other update
//	pods/status     pods bound to itself, with no label change
//	pods/eviction   pods bound to itself
//	leases          only its own heartbeat, in kube-node-lease
//
// The labels a kubelet may set on its Node are the well-known ones it
// sets itself (kubernetes.io/hostname, kubernetes.io/os, topology.kubernetes.io/zone
// ...) and any under kubelet.kubernetes.io/ or node.kubernetes.io/; any
// other kubernetes.io or k8s.io label, and anything under
// node-restriction.kubernetes.io/, is refused. So an administrator can mark
// a node with a node-restriction.kubernetes.io/ label that workloads rely
// on (a nodeSelector for a trusted pool) knowing that no compromised
// kubelet can put it on itself.
//
// A refusal is a 403 worded as upstream's:
//
//	nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"
//	pods "web-1" is forbidden: node "node-1" can only update pod status for pods with spec.nodeName set to itself
//
// Upstream runs the plugin among the mutating ones (it changes nothing).
// kubetab's subresource writes (nodes/status, pods/status) skip the
// mutating phase, so it runs first of the validating plugins, where every
// write passes, before ResourceQuota charges anything. PersistentVolumeClaims,
// ServiceAccount tokens and CSINodes, which upstream's plugin also
// restricts, are not served by kubetab.

// admitNodeRestriction is the plugin. Requests of users that are not
// kubelets, and of the in-process loopback (no user), pass.
func (r *Registry) admitNodeRestriction(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
	node, isNode := authz.NodeIdentity(authz.UserFrom(ctx))
	if !isNode {
		return nil
	}
	forbid := func(err error) error { return apierrors.NewForbidden(res.GroupResource(), nameOf(obj), err) }
	if node == "" {
		return forbid(fmt.Errorf("could not determine node from user %q", authz.UserFrom(ctx).Name))
	}
	sub := SubresourceOf(ctx)
	switch {
	case res.Group == "" && res.Resource == "pods":
		switch sub {
		case "":
			return r.admitNodePod(node, op, obj, forbid)
		case "status":
			return admitNodePodStatus(node, op, obj, old, forbid)
		case "eviction":
			return r.admitNodeEviction(node, op, obj, forbid)
		}
		return forbid(fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", sub))
	case res.Group == "" && res.Resource == "nodes":
		return admitNodeNode(node, op, obj, old, forbid)
	case res.Group == coordinationv1.GroupName && res.Resource == "leases":
		if l, ok := obj.(*coordinationv1.Lease); !ok || l.Namespace != corev1.NamespaceNodeLease {
			return forbid(fmt.Errorf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease))
		} else if l.Name != node {
			return forbid(fmt.Errorf("can only access node lease with the same name as the requesting node"))
		}
	}
	return nil
}

// nameOf is the name a refusal names: the object's (upstream takes the
// request's name, or the object's on a create, which here are the same).
func nameOf(obj runtime.Object) string {
	if acc, err := meta.Accessor(obj); err == nil {
		return acc.GetName()
	}
	return ""
}

// admitNodePod: a kubelet creates mirror pods and deletes pods bound to it.
func (r *Registry) admitNodePod(node string, op Operation, obj runtime.Object, forbid func(error) error) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return forbid(fmt.Errorf("unexpected type %T", obj))
	}
	switch op {
	case Delete:
		if pod.Spec.NodeName != node {
			return forbid(fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", node))
		}
		return nil
	case Create:
		return r.admitMirrorPod(node, pod, forbid)
	}
	return forbid(fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", op, node))
}

// admitMirrorPod checks a kubelet's create of a pod, in upstream's order.
func (r *Registry) admitMirrorPod(node string, pod *corev1.Pod, forbid func(error) error) error {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return forbid(fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, node))
	}
	if pod.Spec.NodeName != node {
		return forbid(fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node))
	}
	switch refs := pod.OwnerReferences; {
	case len(refs) > 1:
		return forbid(fmt.Errorf("node %q can only create pods with a single owner reference set to itself", node))
	case len(refs) == 0:
		return forbid(fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
	default:
		owner := refs[0]
		if owner.APIVersion != corev1.SchemeGroupVersion.String() || owner.Kind != "Node" || owner.Name != node {
			return forbid(fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
		}
		if owner.Controller == nil || !*owner.Controller {
			return forbid(fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", node))
		}
		if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
			return forbid(fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", node))
		}
		nodes, ok := r.Lookup(corev1.Resource("nodes"))
		if !ok {
			return forbid(fmt.Errorf("error looking up node %s to verify uid: nodes are not served", node))
		}
		n, err := nodes.getShared("", node)
		if apierrors.IsNotFound(err) {
			return err
		}
		if err != nil {
			return forbid(fmt.Errorf("error looking up node %s to verify uid: %v", node, err))
		}
		if uid := n.(*corev1.Node).UID; owner.UID != uid {
			return forbid(fmt.Errorf("node %s UID mismatch: expected %s got %s", node, owner.UID, uid))
		}
	}
	// A mirror pod must not reach other API objects through its node.
	if pod.Spec.ServiceAccountName != "" {
		return forbid(fmt.Errorf("node %q can not create pods that reference a service account", node))
	}
	if !podutil.VisitPodSecretNames(pod, func(string) bool { return false }) {
		return forbid(fmt.Errorf("node %q can not create pods that reference secrets", node))
	}
	if !podutil.VisitPodConfigmapNames(pod, func(string) bool { return false }) {
		return forbid(fmt.Errorf("node %q can not create pods that reference configmaps", node))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ClusterTrustBundle != nil {
				return forbid(fmt.Errorf("node %q can not create pods that reference clustertrustbundles", node))
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return forbid(fmt.Errorf("node %q can not create pods that reference persistentvolumeclaims", node))
		}
	}
	return nil
}

// admitNodePodStatus: a kubelet writes the status of its own pods, and
// cannot relabel them on the way.
func admitNodePodStatus(node string, op Operation, obj, old runtime.Object, forbid func(error) error) error {
	if op != Update {
		return forbid(fmt.Errorf("unexpected operation %q", op))
	}
	oldPod, ok := old.(*corev1.Pod)
	if !ok {
		return forbid(fmt.Errorf("unexpected type %T", old))
	}
	if oldPod.Spec.NodeName != node {
		return forbid(fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return forbid(fmt.Errorf("unexpected type %T", obj))
	}
	if !labels.Equals(oldPod.Labels, pod.Labels) {
		return forbid(fmt.Errorf("node %q cannot update labels through pod status", node))
	}
	if !claimStatusesEqual(oldPod.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		return forbid(fmt.Errorf("node %q cannot update resource claim statues", node)) // sic, upstream's wording
	}
	return nil
}

// claimStatusesEqual compares the claims' names, which the kubelet must
// not change (the resource claim controller writes them).
func claimStatusesEqual(a, b []corev1.PodResourceClaimStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
		x, y := a[i].ResourceClaimName, b[i].ResourceClaimName
		if (x == nil) != (y == nil) || x != nil && *x != *y {
			return false
		}
	}
	return true
}

// admitNodeEviction: a kubelet evicts only pods bound to itself. obj is the
// Eviction; the pod is read from the store.
func (r *Registry) admitNodeEviction(node string, op Operation, obj runtime.Object, forbid func(error) error) error {
	if op != Create {
		return forbid(fmt.Errorf("unexpected operation %s", op))
	}
	ev, ok := obj.(*policyv1.Eviction)
	if !ok {
		return forbid(fmt.Errorf("unexpected type %T", obj))
	}
	if ev.Name == "" {
		return forbid(fmt.Errorf("could not determine pod from request data"))
	}
	pods, ok := r.Lookup(corev1.Resource("pods"))
	if !ok {
		return nil
	}
	p, err := pods.getShared(ev.Namespace, ev.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbid(err)
	}
	if p.(*corev1.Pod).Spec.NodeName != node {
		return forbid(fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", node))
	}
	return nil
}

// admitNodeNode: a kubelet writes its own Node only, and not the parts of
// it that would steer workloads to it or widen what it may read.
func admitNodeNode(node string, op Operation, obj, old runtime.Object, forbid func(error) error) error {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return forbid(fmt.Errorf("unexpected type %T", obj))
	}
	if n.Name != node {
		return forbid(fmt.Errorf("node %q is not allowed to modify node %q", node, n.Name))
	}
	switch op {
	case Create:
		if n.Spec.ConfigSource != nil {
			return forbid(fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", node)) // sic
		}
		if bad := forbiddenNodeLabels(n.Labels, nil); len(bad) > 0 {
			return forbid(fmt.Errorf("node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", ")))
		}
	case Update:
		o, ok := old.(*corev1.Node)
		if !ok {
			return forbid(fmt.Errorf("unexpected type %T", old))
		}
		if n.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(n.Spec.ConfigSource, o.Spec.ConfigSource) {
			return forbid(fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", node))
		}
		if !apiequality.Semantic.DeepEqual(n.Spec.Taints, o.Spec.Taints) {
			return forbid(fmt.Errorf("node %q is not allowed to modify taints", node))
		}
		if bad := forbiddenNodeLabels(n.Labels, o.Labels); len(bad) > 0 {
			return forbid(fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", "))) // upstream names no node here
		}
	}
	return nil
}

// forbiddenNodeLabels returns, sorted, the keys that differ between a and b
// (added, removed or changed) that a kubelet may not set.
func forbiddenNodeLabels(a, b map[string]string) []string {
	var bad []string
	check := func(k string) {
		if !KubeletMaySetLabel(k) && (len(bad) == 0 || !hasString(bad, k)) {
			bad = append(bad, k)
		}
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			check(k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			check(k)
		}
	}
	sort.Strings(bad)
	return bad
}

// kubeletLabels are the well-known labels a kubelet sets on its own Node
// (upstream: k8s.io/kubelet/pkg/apis KubeletLabels).
var kubeletLabels = []string{
	corev1.LabelHostname,
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelInstanceType, corev1.LabelInstanceTypeStable,
	corev1.LabelOSStable, corev1.LabelArchStable,
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
}

// kubeletLabelNamespaces are the label prefixes a kubelet may use freely
// (KubeletLabelNamespaces).
var kubeletLabelNamespaces = []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode}

// KubeletLabels lists, sorted, the well-known labels a kubelet may set on
// its own Node; KubeletLabelNamespaces the prefixes under which it may set
// any. The kubelet refuses other kubernetes.io and k8s.io labels in
// --node-labels with these lists in its message.
func KubeletLabels() []string {
	out := append([]string(nil), kubeletLabels...)
	sort.Strings(out)
	return out
}

// KubeletLabelNamespaces: see KubeletLabels.
func KubeletLabelNamespaces() []string {
	return append([]string(nil), kubeletLabelNamespaces...)
}

// IsKubernetesLabel reports whether key is in the kubernetes.io or k8s.io
// namespaces (or a subdomain of one).
func IsKubernetesLabel(key string) bool {
	ns := labelNamespace(key)
	return inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")
}

// KubeletMaySetLabel reports whether NodeRestriction lets a kubelet add,
// change or remove the label key on its own Node: not under
// node-restriction.kubernetes.io/, and, in the kubernetes.io and k8s.io
// namespaces, only the kubelet's own labels.
func KubeletMaySetLabel(key string) bool {
	ns := labelNamespace(key)
	if inNamespace(ns, corev1.LabelNamespaceNodeRestriction) {
		return false
	}
	if !IsKubernetesLabel(key) {
		return true
	}
	if hasString(kubeletLabels, key) {
		return true
	}
	for _, allowed := range kubeletLabelNamespaces {
		if inNamespace(ns, allowed) {
			return true
		}
	}
	return false
}

// inNamespace: ns is domain or a subdomain of it.
func inNamespace(ns, domain string) bool {
	return ns == domain || strings.HasSuffix(ns, "."+domain)
}

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}
