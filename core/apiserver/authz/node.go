package authz

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/internal/podutil"
)

// The Node authorizer (upstream: plugin/pkg/auth/authorizer/node), which
// kube-apiserver runs before RBAC for kubelets: a user named
// system:node:<node> in the group system:nodes. It gives a kubelet what
// its node needs and no more:
//
//	secrets, configmaps            get (or list and watch of one name), and
//	persistentvolumeclaims (get)   only those a pod bound to its node uses
//	                               (volumes, env, envFrom, imagePullSecrets)
//	everything else                the rules of the system:node role
//
// Upstream keeps a graph of pods, nodes and what they reference, fed by
// informers. kubetab finds the relationship when it is asked, walking the
// pods of the object's namespace, and remembers which pod proved it: the
// next request for the same object only checks that this pod is still
// bound to the node (a pod's volumes and env cannot change), so a kubelet
// reading a ConfigMap on every pod sync costs one lookup.

// NodesGroup is the group of every kubelet.
const NodesGroup = "system:nodes"

// NodeUserPrefix starts a kubelet's user name: system:node:<node>.
const NodeUserPrefix = "system:node:"

// Pods reads the pods the Node authorizer checks. The pods it hands out
// are shared: the authorizer only reads them.
type Pods interface {
	// VisitPods calls visit with each pod of namespace until it returns false.
	VisitPods(ctx context.Context, namespace string, visit func(*corev1.Pod) bool) error
	// Pod returns the pod namespace/name, or nil if there is none.
	Pod(ctx context.Context, namespace, name string) *corev1.Pod
}

// Node is the Node authorizer; requests of other users go to Next. Use
// NewNode.
type Node struct {
	pods Pods
	// rules are what every kubelet may do besides (the system:node role).
	rules []rbacv1.PolicyRule
	next  Authorizer

	mu     sync.Mutex
	proofs map[nodeObject]proof // bounded by maxProofs
}

// nodeObject is one object a node asked for.
type nodeObject struct{ node, resource, namespace, name string }

// proof is the pod that related a node to an object when last asked.
type proof struct {
	pod string
	uid types.UID
}

const maxProofs = 4096

// NewNode returns the Node authorizer over pods, with rules for what
// every kubelet may do, asking next about what it does not allow.
func NewNode(pods Pods, rules []rbacv1.PolicyRule, next Authorizer) *Node {
	return &Node{pods: pods, rules: rules, next: next, proofs: map[nodeObject]proof{}}
}

// Authorize allows a kubelet's request by the rules above; what it does
// not allow is Next's to decide (RBAC may still allow it), and a denial
// carries both reasons, as upstream's union of authorizers.
func (n *Node) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	dec, reason, err := n.authorizeNode(ctx, a)
	if dec == DecisionAllow || n.next == nil {
		return dec, reason, err
	}
	next, nextReason, nextErr := n.next.Authorize(ctx, a)
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

func (n *Node) authorizeNode(ctx context.Context, a Attributes) (Decision, string, error) {
	node, ok := nodeName(a.User)
	if !ok {
		return DecisionNoOpinion, "", nil
	}
	if a.ResourceRequest && a.APIGroup == "" && a.Subresource == "" {
		switch a.Resource {
		case "secrets", "configmaps", "persistentvolumeclaims":
			if a.Resource == "persistentvolumeclaims" && a.Verb != "get" {
				return DecisionNoOpinion, "can only get individual resources of this type", nil
			}
			if a.Verb != "get" && a.Verb != "list" && a.Verb != "watch" {
				return DecisionNoOpinion, "can only read resources of this type", nil
			}
			if a.Name == "" {
				return DecisionNoOpinion, "No Object name found", nil
			}
			return n.related(ctx, node, a)
		}
	}
	for i := range n.rules {
		if RuleAllows(a, &n.rules[i]) {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

// related allows a when a pod bound to node uses the object.
func (n *Node) related(ctx context.Context, node string, a Attributes) (Decision, string, error) {
	key := nodeObject{node, a.Resource, a.Namespace, a.Name}
	n.mu.Lock()
	pr, ok := n.proofs[key]
	n.mu.Unlock()
	if ok {
		if p := n.pods.Pod(ctx, a.Namespace, pr.pod); p != nil && p.UID == pr.uid && p.Spec.NodeName == node {
			return DecisionAllow, "", nil
		}
	}
	var found *corev1.Pod
	err := n.pods.VisitPods(ctx, a.Namespace, func(p *corev1.Pod) bool {
		if p.Spec.NodeName == node && references(p, a.Resource, a.Name) {
			found = p
			return false
		}
		return true
	})
	if err != nil {
		return DecisionNoOpinion, "", err
	}
	if found == nil {
		return DecisionNoOpinion, "no relationship found between node '" + node + "' and this object", nil
	}
	n.mu.Lock()
	if len(n.proofs) >= maxProofs {
		clear(n.proofs)
	}
	n.proofs[key] = proof{pod: found.Name, uid: found.UID}
	n.mu.Unlock()
	return DecisionAllow, "", nil
}

func nodeName(u *User) (string, bool) {
	name, ok := NodeIdentity(u)
	return name, ok && name != ""
}

// NodeIdentity reports whether u is a kubelet, a user named
// system:node:<node> in the group system:nodes, and the node it names
// (upstream: pkg/auth/nodeidentifier). A kubelet whose name is empty
// ("system:node:") is still a kubelet: the Node authorizer gives it
// nothing, and NodeRestriction refuses its writes.
func NodeIdentity(u *User) (node string, isNode bool) {
	if u == nil || !strings.HasPrefix(u.Name, NodeUserPrefix) || !u.InGroup(NodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, NodeUserPrefix), true
}

// references reports whether pod uses the named secret, configmap or
// claim: the edges upstream's graph draws from a pod (podutil's visitors).
func references(pod *corev1.Pod, resource, name string) bool {
	found := false
	match := func(n string) bool { found = n == name; return !found }
	switch resource {
	case "secrets":
		podutil.VisitPodSecretNames(pod, match)
	case "configmaps":
		podutil.VisitPodConfigmapNames(pod, match)
	case "persistentvolumeclaims":
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
				return true
			}
		}
	}
	return found
}
