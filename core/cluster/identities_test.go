package cluster_test

import (
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/trace"
	"github.com/kubetab/kubetab/wasm/images"
)

// actingAs is a client of c acting as u, that records its refusals.
func actingAs(c *cluster.Cluster, agent string, u *authz.User) (*client.Client, func() []string) {
	var mu sync.Mutex
	var refused []string
	cl := c.Client(agent).As(client.Identity{User: u, Authorizer: c.API.Authorizer(), Denied: func(component string, err error) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, component+": "+err.Error())
	}})
	return cl, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), refused...)
	}
}

// Each component is authorized like any client: the kubelet by the Node
// authorizer, the scheduler and the controllers by RBAC over the bootstrap
// policy. A refusal is upstream's 403, is reported to Identity.Denied and
// shows in the trace.
func TestComponentIdentitiesAreAuthorized(t *testing.T) {
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Nodes: 2})
	admin := c.Client("test")
	for _, name := range []string{"used", "other"} {
		if _, err := secrets(admin).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, node, secret string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "hello"}},
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		}}
	}
	for _, p := range []*corev1.Pod{pod("on-1", "node-1", "used"), pod("on-2", "node-2", "other")} {
		if _, err := admin.Pods().Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	kubelet, kubeletRefused := actingAs(c, "kubelet/node-1", &authz.User{Name: "system:node:node-1", Groups: []string{authz.NodesGroup, authz.GroupAuthenticated}})
	if _, err := secrets(kubelet).Get(ctx, "default", "used"); err != nil {
		t.Errorf("kubelet: its pod's secret: %v", err)
	}
	_, err := secrets(kubelet).Get(ctx, "default", "other")
	if want := `secrets "other" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node-1' and this object`; err == nil || err.Error() != want {
		t.Errorf("kubelet: another node's pod's secret:\n got %v\nwant %s", err, want)
	}
	if _, _, err := secrets(kubelet).List(ctx, "default", client.ListOptions{}); err == nil || !strings.Contains(err.Error(), "No Object name found") {
		t.Errorf("kubelet: list secrets: %v", err)
	}
	if _, _, err := secrets(kubelet).List(ctx, "default", client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "used")}); err != nil {
		t.Errorf("kubelet: list its pod's secret by name: %v", err)
	}
	if _, _, err := kubelet.Pods().List(ctx, "", client.ListOptions{}); err != nil {
		t.Errorf("kubelet: list pods (system:node's rules): %v", err)
	}
	if got := kubeletRefused(); len(got) != 2 || !strings.HasPrefix(got[0], "kubelet/node-1: secrets \"other\" is forbidden") {
		t.Errorf("refusals reported: %q", got)
	}

	sched, _ := actingAs(c, "kube-scheduler", &authz.User{Name: "system:kube-scheduler", Groups: []string{authz.GroupAuthenticated}})
	unbound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "to-bind", Namespace: "default"}, Spec: corev1.PodSpec{
		SchedulerName: "none", Containers: []corev1.Container{{Name: "c", Image: "hello"}}}}
	if _, err := admin.Pods().Create(ctx, unbound); err != nil {
		t.Fatal(err)
	}
	if err := sched.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "to-bind", Namespace: "default"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-2"}}); err != nil {
		t.Errorf("scheduler: bind: %v", err)
	}
	err = sched.Namespaces().Delete(ctx, "", "default", nil)
	if want := `namespaces "default" is forbidden: User "system:kube-scheduler" cannot delete resource "namespaces" in API group "" in the namespace "default"`; err == nil || err.Error() != want {
		t.Errorf("scheduler: delete a namespace:\n got %v\nwant %s", err, want)
	}

	rs, _ := actingAs(c, "replicaset-controller", &authz.User{Name: "system:serviceaccount:kube-system:replicaset-controller",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", authz.GroupAuthenticated}})
	if _, err := rs.Pods().Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "rs-", Namespace: "default"},
		Spec: corev1.PodSpec{SchedulerName: "none", Containers: []corev1.Container{{Name: "c", Image: "hello"}}}}); err != nil {
		t.Errorf("replicaset controller: create a pod: %v", err)
	}
	if _, err := secrets(rs).Get(ctx, "default", "used"); err == nil || !strings.Contains(err.Error(), `User "system:serviceaccount:kube-system:replicaset-controller" cannot get resource "secrets"`) {
		t.Errorf("replicaset controller: get a secret: %v", err)
	}

	// The refusal is a 403 response in the trace.
	found := false
	hops, _, _ := c.Trace.Since(0)
	for _, h := range hops {
		if h.Kind == trace.Response && h.To == "kube-scheduler" && h.Code == 403 && strings.Contains(h.Detail, "cannot delete resource \"namespaces\"") {
			found = true
		}
	}
	if !found {
		t.Error("the scheduler's 403 is not in the trace")
	}
}

func secrets(c *client.Client) client.Resource[*corev1.Secret] {
	return client.For[*corev1.Secret](c, "", "secrets")
}

// The HPA controller reads metrics.k8s.io under its own ServiceAccount,
// through the authorizer, as upstream's metrics client does: its role
// allows it, and a client whose own user may not is refused even when its
// lists and watches (ListWatchAs) go as one that may.
func TestHPAMetricsReadsAreAuthorized(t *testing.T) {
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Nodes: 1})
	hpaUser := &authz.User{Name: "system:serviceaccount:kube-system:horizontal-pod-autoscaler",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", authz.GroupAuthenticated}}
	cm := &authz.User{Name: "system:kube-controller-manager", Groups: []string{authz.GroupAuthenticated}}
	hpa := c.Client("horizontal-pod-autoscaler").As(client.Identity{User: hpaUser, ListWatchAs: cm, Authorizer: c.API.Authorizer()})
	if _, err := hpa.ListPodMetrics(ctx, "default", labels.Everything()); err != nil {
		t.Fatalf("the HPA's account: %v", err)
	}
	nobody := &authz.User{Name: "system:serviceaccount:default:default", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", authz.GroupAuthenticated}}
	other := c.Client("other").As(client.Identity{User: nobody, ListWatchAs: hpaUser, Authorizer: c.API.Authorizer()})
	_, err := other.ListPodMetrics(ctx, "default", labels.Everything())
	if want := `pods.metrics.k8s.io is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"`; err == nil || err.Error() != want {
		t.Fatalf("an account without the rule:\n got %v\nwant %s", err, want)
	}
}
