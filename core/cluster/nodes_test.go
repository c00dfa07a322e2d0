package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/controller/podgc"
	"github.com/kubetab/kubetab/wasm/images"
)

// waitNode waits for a Node object to be Ready and returns it.
func waitNode(t *testing.T, cl *client.Client, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	var node *corev1.Node
	eventually(t, time.Minute, "node "+name+" Ready", func() (bool, string) {
		n, err := cl.Nodes().Get(ctx, "", name)
		if err != nil {
			return false, err.Error()
		}
		node = n
		return nodeReady(n) == corev1.ConditionTrue, string(nodeReady(n))
	})
	return node
}

// Config.NodeSpecs are the nodes: each kubelet registers its Node with its
// capacity, its labels beside the well-known ones, and its taints.
func TestNodeSpecs(t *testing.T) {
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), NodeSpecs: []cluster.NodeSpec{
		{Name: "big", CPU: resource.MustParse("16"), Memory: resource.MustParse("32Gi"),
			Labels: map[string]string{"disktype": "ssd"}, Taints: []corev1.Taint{gpu}},
		{Name: "small.example", CPU: resource.MustParse("500m")},
	}})
	cl := c.Client("test")
	big := waitNode(t, cl, ctx, "big")
	if cpu := big.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "16" {
		t.Errorf("big cpu = %s", cpu.String())
	}
	if mem := big.Status.Capacity[corev1.ResourceMemory]; mem.String() != "32Gi" {
		t.Errorf("big memory = %s", mem.String())
	}
	if big.Labels["disktype"] != "ssd" || big.Labels[corev1.LabelHostname] != "big" {
		t.Errorf("big labels = %v", big.Labels)
	}
	if len(big.Spec.Taints) != 1 || big.Spec.Taints[0].Key != "dedicated" || big.Spec.Taints[0].Value != "gpu" || big.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("big taints = %v", big.Spec.Taints)
	}
	small := waitNode(t, cl, ctx, "small.example")
	if cpu := small.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "500m" {
		t.Errorf("small cpu = %s", cpu.String())
	}
	if mem := small.Status.Capacity[corev1.ResourceMemory]; mem.String() != cluster.DefaultNodeMemory {
		t.Errorf("small memory = %s (the default)", mem.String())
	}
	if len(small.Spec.Taints) != 0 || small.Spec.PodCIDR == big.Spec.PodCIDR {
		t.Errorf("small taints %v, podCIDR %s (big's %s)", small.Spec.Taints, small.Spec.PodCIDR, big.Spec.PodCIDR)
	}
	nodes, _, _ := cl.Nodes().List(ctx, "", client.ListOptions{})
	if len(nodes) != 2 {
		t.Errorf("%d nodes, want 2", len(nodes))
	}
	if got := c.Nodes(); len(got) != 2 || got[0].Name != "big" || got[1].Name != "small.example" {
		t.Errorf("Nodes() = %v", got)
	}
}

// Bad node specs are refused with a message that names what is wrong,
// before anything runs.
func TestNodeSpecValidation(t *testing.T) {
	tests := []struct {
		name string
		spec cluster.NodeSpec
		want string
	}{
		{"no name", cluster.NodeSpec{}, "a node needs a name"},
		{"bad name", cluster.NodeSpec{Name: "Node_1"}, `invalid node name "Node_1": a lowercase RFC 1123 subdomain`},
		{"negative cpu", cluster.NodeSpec{Name: "n", CPU: resource.MustParse("-1")}, "node n: cpu -1 must not be negative"},
		{"negative memory", cluster.NodeSpec{Name: "n", Memory: resource.MustParse("-1Gi")}, "node n: memory -1Gi must not be negative"},
		{"bad label key", cluster.NodeSpec{Name: "n", Labels: map[string]string{"a b": "c"}}, `node n: invalid label key "a b"`},
		{"bad label value", cluster.NodeSpec{Name: "n", Labels: map[string]string{"a": "b c"}}, `node n: invalid label value "b c" for a`},
		{"label the kubelet may not set", cluster.NodeSpec{Name: "n", Labels: map[string]string{"node-role.kubernetes.io/worker": "", "node-restriction.kubernetes.io/pool": "a", "topology.kubernetes.io/zone": "z"}},
			"node n: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [node-restriction.kubernetes.io/pool node-role.kubernetes.io/worker]\n" +
				"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set " +
				"(beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, " +
				"kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)"},
		{"bad taint key", cluster.NodeSpec{Name: "n", Taints: []corev1.Taint{{Key: "", Effect: corev1.TaintEffectNoSchedule}}}, `node n: invalid taint key ""`},
		{"bad taint effect", cluster.NodeSpec{Name: "n", Taints: []corev1.Taint{{Key: "k", Effect: "Never"}}},
			`node n: invalid taint effect "Never" for k: must be NoSchedule, PreferNoSchedule or NoExecute`},
		{"taint twice", cluster.NodeSpec{Name: "n", Taints: []corev1.Taint{{Key: "k", Effect: "NoSchedule"}, {Key: "k", Value: "v", Effect: "NoSchedule"}}},
			"node n: taint k:NoSchedule given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
			if _, err := cluster.New(cluster.Config{Images: images.New(), NodeSpecs: []cluster.NodeSpec{tt.spec}}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want %q", err, tt.want)
			}
		})
	}
	_, err := cluster.New(cluster.Config{Images: images.New(), NodeSpecs: []cluster.NodeSpec{{Name: "a"}, {Name: "a"}}})
	if err == nil || !strings.Contains(err.Error(), `node "a" already exists`) {
		t.Errorf("two nodes named a: %v", err)
	}
}

// A pod that fits no node stays Pending; once a node big enough joins,
// the scheduler binds it there and the new node's kubelet runs it, with an
// IP from the new node's podCIDR.
func TestAddNodeSchedulesAPendingPod(t *testing.T) {
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), NodeSpecs: []cluster.NodeSpec{{Name: "node-1", CPU: resource.MustParse("1")}}})
	cl := c.Client("test")
	waitNode(t, cl, ctx, "node-1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "hello", Image: "hello", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}}}
	if _, err := cl.Pods().Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the pod unschedulable", func() (bool, string) {
		p, err := cl.Pods().Get(ctx, "default", "big")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				return strings.Contains(cond.Message, "Insufficient cpu"), cond.Message
			}
		}
		return false, fmt.Sprint(p.Status.Conditions)
	})
	if err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-2", CPU: resource.MustParse("4")}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-2"}); err == nil || !strings.Contains(err.Error(), `node "node-2" already exists`) {
		t.Errorf("adding node-2 again: %v", err)
	}
	node := waitNode(t, cl, ctx, "node-2")
	eventually(t, time.Minute, "the pod Running on node-2", func() (bool, string) {
		p, err := cl.Pods().Get(ctx, "default", "big")
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName == "node-2" && p.Status.Phase == corev1.PodRunning, p.Spec.NodeName + " " + string(p.Status.Phase)
	})
	p, _ := cl.Pods().Get(ctx, "default", "big")
	prefix := strings.TrimSuffix(node.Spec.PodCIDR, "0/24")
	if !strings.HasPrefix(p.Status.PodIP, prefix) || node.Spec.PodCIDR == "" {
		t.Errorf("pod IP %s is not in node-2's podCIDR %s", p.Status.PodIP, node.Spec.PodCIDR)
	}
	if _, ok := c.Proxier("node-2"); !ok {
		t.Error("node-2 has no kube-proxy")
	}
	if !c.NodeRunning("node-2") {
		t.Error("node-2's kubelet is not running")
	}
}

// Removing a node stops its kubelet and deletes its Node; the pod garbage
// collector then deletes its pods (bound to a node that no longer exists)
// after its quarantine, and the ReplicaSet makes new ones on the others.
func TestRemoveNode(t *testing.T) {
	f := startFakeCluster(t)
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	_, err := f.cl.Deployments().Create(f.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.until("3 available", f.rolledOut("web", 3))
	victim := f.pods("default", sel)[0].Spec.NodeName
	removed := f.clk.Now()
	if err := f.RemoveNode(f.ctx, victim); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveNode(f.ctx, victim); !errors.Is(err, cluster.ErrNoSuchNode) {
		t.Errorf("removing %s again: %v, want ErrNoSuchNode", victim, err)
	}
	if _, err := f.cl.Nodes().Get(f.ctx, "", victim); !apierrors.IsNotFound(err) {
		t.Errorf("the Node %s after RemoveNode: %v, want NotFound", victim, err)
	}
	if f.NodeRunning(victim) {
		t.Error("the kubelet still runs")
	}
	if _, ok := f.Proxier(victim); ok {
		t.Error("the kube-proxy is still there")
	}
	f.until("the pods on "+victim+" gone and 3 available elsewhere", func() (bool, string) {
		on := 0
		for _, p := range f.pods("default", sel) {
			if p.Spec.NodeName == victim {
				on++
			}
		}
		ok, msg := f.rolledOut("web", 3)()
		return on == 0 && ok, fmt.Sprintf("%d pods on %s; %s", on, victim, msg)
	})
	// The pod GC waited out its quarantine: the path upstream takes.
	if waited := f.clk.Since(removed); waited < podgc.QuarantineTime {
		t.Errorf("the pods went %v after the node, before the pod GC's quarantine", waited)
	}
	nodes, _, _ := f.cl.Nodes().List(f.ctx, "", client.ListOptions{})
	if len(nodes) != 2 || len(f.Nodes()) != 2 {
		t.Errorf("%d Node objects, %d nodes; want 2", len(nodes), len(f.Nodes()))
	}
}

// WaitForCacheSync waits for the nodes there are: one that joined, and not
// one that left.
func TestWaitForCacheSyncAfterNodesChange(t *testing.T) {
	c, ctx := startClusterWith(t, cluster.Config{Images: images.New(), Nodes: 2})
	if err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-3"}); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(ctx, "node-1"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.WaitForCacheSync(wctx); err != nil {
		t.Fatalf("WaitForCacheSync after a node left: %v", err)
	}
	kl, ok := c.Kubelet("node-3")
	if !ok || !kl.HasSynced() {
		t.Error("node-3's kubelet is not synced after WaitForCacheSync")
	}
}
