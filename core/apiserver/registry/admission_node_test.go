package registry

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/authz"
)

// asNode is the context of a kubelet's request: system:node:<name> in
// system:nodes.
func asNode(name string) context.Context {
	return authz.WithUser(context.Background(), &authz.User{Name: authz.NodeUserPrefix + name, Groups: []string{authz.NodesGroup, authz.GroupAuthenticated}})
}

// nodeRestrictionFixture: nodes n1 and n2, a pod bound to each, the
// loopback writes them (no user: nothing restricted).
func nodeRestrictionFixture(t *testing.T) *Registry {
	t.Helper()
	reg := newRegistry(t)
	for _, n := range []string{"n1", "n2"} {
		mustCreate(t, reg, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"kubernetes.io/hostname": n}}})
		mustCreate(t, reg, pod("on-"+n, func(p *corev1.Pod) { p.Spec.NodeName = n; p.Labels = map[string]string{"app": "web"} }))
	}
	return reg
}

func TestNodeRestrictionNodes(t *testing.T) {
	reg := nodeRestrictionFixture(t)
	nodes := storeOf(t, reg, "", "nodes")
	n1 := asNode("n1")
	getNode := func(name string) *corev1.Node { return get(t, reg, &corev1.Node{}, "", name) }

	// Its own status: allowed; another node's (status or object): refused,
	// and nothing is written.
	own := getNode("n1")
	own.Status.Phase = corev1.NodeRunning
	if _, err := nodes.Update(n1, own, UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatalf("own status: %v", err)
	}
	other := getNode("n2")
	rv := other.ResourceVersion
	other.Status.Phase = corev1.NodeRunning
	_, err := nodes.Update(n1, other, UpdateOptions{Subresource: "status"})
	wantStatus(t, err, 403, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	if getNode("n2").ResourceVersion != rv {
		t.Error("a refused status update was stored")
	}
	other = getNode("n2")
	other.Labels["x"] = "y"
	_, err = nodes.Update(n1, other, UpdateOptions{})
	wantStatus(t, err, 403, `node "n1" is not allowed to modify node "n2"`)
	_, _, err = nodes.Delete(n1, "", "n2", nil)
	wantStatus(t, err, 403, `node "n1" is not allowed to modify node "n2"`)

	// Labels on its own Node: its own well-known ones and the kubelet
	// namespaces pass; node-restriction.kubernetes.io and other
	// kubernetes.io labels do not, added or removed.
	for _, tc := range []struct {
		name, key string
		remove    bool
		want      string
	}{
		{"zone", "topology.kubernetes.io/zone", false, ""},
		{"node namespace", "feature.node.kubernetes.io/gpu", false, ""},
		{"kubelet namespace", "kubelet.kubernetes.io/x", false, ""},
		{"own label", "team", false, ""},
		{"restricted", "node-restriction.kubernetes.io/pool", false, "is not allowed to modify labels: node-restriction.kubernetes.io/pool"},
		{"restricted subdomain", "a.node-restriction.kubernetes.io/pool", false, "is not allowed to modify labels: a.node-restriction.kubernetes.io/pool"},
		{"role", "node-role.kubernetes.io/control-plane", false, "is not allowed to modify labels: node-role.kubernetes.io/control-plane"},
		{"k8s.io", "example.k8s.io/x", false, "is not allowed to modify labels: example.k8s.io/x"},
		{"removing one", "kubernetes.io/hostname", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := getNode("n1")
			if tc.remove {
				delete(n.Labels, tc.key)
			} else {
				n.Labels[tc.key] = "v"
			}
			_, err := nodes.Update(n1, n, UpdateOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("update: %v", err)
				}
				return
			}
			wantStatus(t, err, 403, `nodes "n1" is forbidden: `+tc.want)
		})
	}
	// Removing a restricted label an administrator set is refused too.
	n := getNode("n1")
	n.Labels["node-restriction.kubernetes.io/pool"] = "trusted"
	mustUpdate(t, reg, n)
	n = getNode("n1")
	delete(n.Labels, "node-restriction.kubernetes.io/pool")
	_, err = nodes.Update(n1, n, UpdateOptions{})
	wantStatus(t, err, 403, "is not allowed to modify labels: node-restriction.kubernetes.io/pool")

	// Taints are the administrator's and the node controller's.
	n = getNode("n1")
	n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	_, err = nodes.Update(n1, n, UpdateOptions{})
	wantStatus(t, err, 403, `node "n1" is not allowed to modify taints`)

	// Registering: its own name, no restricted labels (sorted in the
	// message), no configSource.
	_, err = nodes.Create(asNode("n3"), "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n4"}}, CreateOptions{})
	wantStatus(t, err, 403, `nodes "n4" is forbidden: node "n3" is not allowed to modify node "n4"`)
	_, err = nodes.Create(asNode("n3"), "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3", Labels: map[string]string{
		"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "wasip1", "node-restriction.kubernetes.io/a": "b"}}}, CreateOptions{})
	wantStatus(t, err, 403, `node "n3" is not allowed to set the following labels: node-restriction.kubernetes.io/a, node-role.kubernetes.io/worker`)
	_, err = nodes.Create(asNode("n3"), "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"},
		Spec: corev1.NodeSpec{ConfigSource: &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Name: "c", Namespace: "kube-system", KubeletConfigKey: "k"}}}}, CreateOptions{})
	wantStatus(t, err, 403, `node "n3" is not allowed to create pods with a non-nil configSource`)
	if _, err := nodes.Create(asNode("n3"), "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3", Labels: map[string]string{"kubernetes.io/os": "wasip1"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}}}, CreateOptions{}); err != nil {
		t.Fatalf("registering with its own labels and taints: %v", err)
	}

	// Someone else (the administrator, a controller) is not restricted.
	admin := authz.WithUser(context.Background(), &authz.User{Name: "admin", Groups: []string{authz.GroupMasters}})
	n = getNode("n2")
	n.Labels["node-role.kubernetes.io/worker"] = ""
	if _, err := nodes.Update(admin, n, UpdateOptions{}); err != nil {
		t.Fatalf("admin labels a node: %v", err)
	}
	// A user in system:nodes whose name names no node is refused.
	nameless := authz.WithUser(context.Background(), &authz.User{Name: authz.NodeUserPrefix, Groups: []string{authz.NodesGroup}})
	_, err = nodes.Update(nameless, getNode("n1"), UpdateOptions{Subresource: "status"})
	wantStatus(t, err, 403, `could not determine node from user "system:node:"`)
}

func TestNodeRestrictionPods(t *testing.T) {
	reg := nodeRestrictionFixture(t)
	pods := storeOf(t, reg, "", "pods")
	n1 := asNode("n1")
	getPod := func(name string) *corev1.Pod { return get(t, reg, &corev1.Pod{}, "default", name) }

	// pods/status: its own pods, without relabelling them.
	p := getPod("on-n1")
	p.Status.Phase = corev1.PodRunning
	if _, err := pods.Update(n1, p, UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatalf("own pod's status: %v", err)
	}
	p = getPod("on-n2")
	rv := p.ResourceVersion
	p.Status.Phase = corev1.PodRunning
	_, err := pods.Update(n1, p, UpdateOptions{Subresource: "status"})
	wantStatus(t, err, 403, `pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`)
	if getPod("on-n2").ResourceVersion != rv {
		t.Error("a refused pod status was stored")
	}
	p = getPod("on-n1")
	p.Labels["app"] = "db"
	_, err = pods.Update(n1, p, UpdateOptions{Subresource: "status"})
	wantStatus(t, err, 403, `node "n1" cannot update labels through pod status`)

	// The pod itself: no updates; deletes of its own pods only.
	p = getPod("on-n1")
	p.Annotations = map[string]string{"a": "b"}
	_, err = pods.Update(n1, p, UpdateOptions{})
	wantStatus(t, err, 403, `unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`)
	_, _, err = pods.Delete(n1, "default", "on-n2", nil)
	wantStatus(t, err, 403, `pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`)
	if _, _, err := pods.Delete(n1, "default", "on-n1", metav1.NewDeleteOptions(0)); err != nil {
		t.Fatalf("deleting its own pod: %v", err)
	}

	// pods/eviction: its own pods only.
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "on-n2", Namespace: "default"}}
	wantStatus(t, pods.Admit(n1, Create, "eviction", ev, nil), 403, `pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`)
	if err := pods.Admit(asNode("n2"), Create, "eviction", ev, nil); err != nil {
		t.Fatalf("n2 evicting its own pod: %v", err)
	}
	wantStatus(t, pods.Admit(n1, Create, "binding", &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "on-n2", Namespace: "default"}}, nil), 403,
		`unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`)

	// Creating: mirror pods bound to itself, owned by its Node, reaching
	// no other object.
	node := get(t, reg, &corev1.Node{}, "", "n1")
	yes, no := true, false
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n1", UID: node.UID, Controller: &yes}
	mirror := func(mods ...func(*corev1.Pod)) *corev1.Pod {
		return pod("static-n1", append([]func(*corev1.Pod){func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
			p.Spec.NodeName = "n1"
			p.OwnerReferences = []metav1.OwnerReference{owner}
		}}, mods...)...)
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"not a mirror pod", pod("plain", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
			`pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"another node", mirror(func(p *corev1.Pod) { p.Spec.NodeName = "n2" }), `node "n1" can only create pods with spec.nodeName set to itself`},
		{"no owner", mirror(func(p *corev1.Pod) { p.OwnerReferences = nil }), `node "n1" can only create pods with an owner reference set to itself`},
		{"two owners", mirror(func(p *corev1.Pod) {
			p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "u"})
		}),
			`node "n1" can only create pods with a single owner reference set to itself`},
		{"owned by another node", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].Name = "n2" }), `node "n1" can only create pods with an owner reference set to itself`},
		{"not controller", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].Controller = &no }), `node "n1" can only create pods with a controller owner reference set to itself`},
		{"blocks deletion", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = &yes }), `node "n1" must not set blockOwnerDeletion on an owner reference`},
		{"stale uid", mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "old" }), `node n1 UID mismatch: expected old got ` + string(node.UID)},
		{"service account", mirror(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" }), `node "n1" can not create pods that reference a service account`},
		{"secret env", mirror(func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}
		}), `node "n1" can not create pods that reference secrets`},
		{"configmap volume", mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}}}
		}), `node "n1" can not create pods that reference configmaps`},
		{"claim", mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
		}), `node "n1" can not create pods that reference persistentvolumeclaims`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pods.Create(n1, "default", tc.pod, CreateOptions{})
			wantStatus(t, err, 403, tc.want)
		})
	}
	if _, err := pods.Create(n1, "default", mirror(), CreateOptions{}); err != nil {
		t.Fatalf("a mirror pod: %v", err)
	}
}

func TestNodeRestrictionLeases(t *testing.T) {
	reg := nodeRestrictionFixture(t)
	leases := storeOf(t, reg, "coordination.k8s.io", "leases")
	lease := func(ns, name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	n1 := asNode("n1")
	_, err := leases.Create(n1, "default", lease("default", "n1"), CreateOptions{})
	wantStatus(t, err, 403, `leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace`)
	_, err = leases.Create(n1, corev1.NamespaceNodeLease, lease(corev1.NamespaceNodeLease, "n2"), CreateOptions{})
	wantStatus(t, err, 403, "can only access node lease with the same name as the requesting node")
	if _, err := leases.Create(n1, corev1.NamespaceNodeLease, lease(corev1.NamespaceNodeLease, "n1"), CreateOptions{}); err != nil {
		t.Fatalf("own lease: %v", err)
	}
	mustCreate(t, reg, lease(corev1.NamespaceNodeLease, "n2"))
	_, _, err = leases.Delete(n1, corev1.NamespaceNodeLease, "n2", nil)
	wantStatus(t, err, 403, "can only access node lease with the same name as the requesting node")
}

// A status write ResourceQuota makes while it admits a pod is a status
// write, not the pod's create: the subresource travels with each write.
func TestSubresourceOf(t *testing.T) {
	reg := newRegistry(t)
	var seen []string
	reg.AddAdmission(func(ctx context.Context, op Operation, res *Resource, obj, old runtime.Object) error {
		seen = append(seen, res.Resource+"/"+SubresourceOf(ctx))
		return nil
	})
	mustCreate(t, reg, &corev1.ResourceQuota{ObjectMeta: objMeta("q"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}}})
	q := get(t, reg, &corev1.ResourceQuota{}, "default", "q")
	q.Status.Hard = q.Spec.Hard
	q.Status.Used = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}
	if _, err := storeOf(t, reg, "", "resourcequotas").Update(context.Background(), q, UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
	seen = nil
	mustCreate(t, reg, pod("p"))
	want := []string{"resourcequotas/status", "pods/"}
	if len(seen) != len(want) || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("admission saw %v, want %v", seen, want)
	}
}
