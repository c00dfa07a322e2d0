package authz

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The Node authorizer (upstream: plugin/pkg/auth/authorizer/node), which
// kube-apiserver runs before RBAC for kubelets: a user named
// system:node:<node> in the group system:nodes. It gives a kubelet what
// its node needs and no more:
//
//	secrets, configmaps,           get, and only those a pod bound to its
//	persistentvolumeclaims         node uses (volumes, env, envFrom,
//	                               imagePullSecrets)
//	everything else                the rules of the system:node role
//
// Upstream keeps a graph of pods, nodes and what they reference; kubetab
// asks its Pods for the pods bound to the node on each such request.
// kubetab's own kubelets run in-process and do not go through HTTP, so
// this applies when someone acts as a kubelet: kubectl --as
// system:node:node-1 --as-group system:nodes.

// NodesGroup is the group of every kubelet.
const NodesGroup = "system:nodes"

// NodeUserPrefix starts a kubelet's user name: system:node:<node>.
const NodeUserPrefix = "system:node:"

// Pods lists the pods bound to a node.
type Pods interface {
	PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error)
}

// Node is the Node authorizer; requests of other users go to Next.
type Node struct {
	Pods Pods
	// Rules are what every kubelet may do besides (the system:node role).
	Rules []rbacv1.PolicyRule
	Next  Authorizer
}

// Authorize allows a kubelet's request by the rules above; what it does
// not allow is Next's to decide (RBAC may still allow it), and a denial
// carries both reasons, as upstream's union of authorizers.
func (n Node) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	dec, reason, err := n.authorizeNode(ctx, a)
	if dec == DecisionAllow || n.Next == nil {
		return dec, reason, err
	}
	next, nextReason, nextErr := n.Next.Authorize(ctx, a)
	if next == DecisionAllow {
		return next, nextReason, nil
	}
	if nextReason != "" {
		if reason != "" {
			reason += ", "
		}
		reason += nextReason
	}
	if err == nil {
		err = nextErr
	}
	return DecisionNoOpinion, reason, err
}

func (n Node) authorizeNode(ctx context.Context, a Attributes) (Decision, string, error) {
	node, ok := nodeName(a.User)
	if !ok {
		return DecisionNoOpinion, "", nil
	}
	if a.ResourceRequest && a.APIGroup == "" && a.Subresource == "" {
		switch a.Resource {
		case "secrets", "configmaps", "persistentvolumeclaims":
			if a.Verb != "get" || a.Name == "" {
				return DecisionNoOpinion, "can only get individual resources of this type", nil
			}
			pods, err := n.Pods.PodsOnNode(ctx, node)
			if err != nil {
				return DecisionNoOpinion, "", err
			}
			for _, p := range pods {
				if p.Namespace == a.Namespace && references(p, a.Resource, a.Name) {
					return DecisionAllow, "", nil
				}
			}
			return DecisionNoOpinion, "no relationship found between node '" + node + "' and this object", nil
		}
	}
	for i := range n.Rules {
		if RuleAllows(a, &n.Rules[i]) {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

func nodeName(u *User) (string, bool) {
	if u == nil || !u.InGroup(NodesGroup) || !strings.HasPrefix(u.Name, NodeUserPrefix) {
		return "", false
	}
	name := strings.TrimPrefix(u.Name, NodeUserPrefix)
	return name, name != ""
}

// references reports whether pod uses the named secret, configmap or claim.
func references(pod *corev1.Pod, resource, name string) bool {
	if resource == "secrets" {
		for _, s := range pod.Spec.ImagePullSecrets {
			if s.Name == name {
				return true
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case resource == "secrets" && v.Secret != nil && v.Secret.SecretName == name,
			resource == "configmaps" && v.ConfigMap != nil && v.ConfigMap.Name == name,
			resource == "persistentvolumeclaims" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name:
			return true
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if resource == "secrets" && src.Secret != nil && src.Secret.Name == name ||
					resource == "configmaps" && src.ConfigMap != nil && src.ConfigMap.Name == name {
					return true
				}
			}
		}
	}
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if resource == "secrets" && e.SecretRef != nil && e.SecretRef.Name == name ||
				resource == "configmaps" && e.ConfigMapRef != nil && e.ConfigMapRef.Name == name {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if resource == "secrets" && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name ||
				resource == "configmaps" && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name == name {
				return true
			}
		}
	}
	return false
}
