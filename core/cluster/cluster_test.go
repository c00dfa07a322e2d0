package cluster_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

func startCluster(t *testing.T) (*cluster.Cluster, context.Context) {
	t.Helper()
	return startClusterWith(t, cluster.Config{Images: images.New()})
}

// startClusterWith starts a cluster of cfg that stops when the test ends.
func startClusterWith(t *testing.T, cfg cluster.Config) (*cluster.Cluster, context.Context) {
	t.Helper()
	c, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// eventually polls cond until it holds or the deadline passes; the cluster
// runs on the real clock here, so this waits for real work, not for a timer.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last state: %s", what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func int32p(n int32) *int32 { return &n }

// A Deployment of 3 hello replicas becomes one ReplicaSet with the
// pod-template-hash label and 3 Running pods, each bound to a node, with an IP
// in that node's podCIDR, whose logs greet with the pod's own name.
func TestDeploymentBecomesRunningContainers(t *testing.T) {
	c, ctx := startCluster(t)
	cl := c.Client("test")
	labelsWeb := map[string]string{"app": "web"}
	_, err := cl.Deployments().Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: int32p(3),
			Selector: &metav1.LabelSelector{MatchLabels: labelsWeb},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labelsWeb},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "hello"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}

	var pods []*corev1.Pod
	eventually(t, 60*time.Second, "3 Running pods", func() (bool, string) {
		var err error
		pods, _, err = cl.Pods().List(ctx, "default", client.ListOptions{LabelSelector: labels.SelectorFromSet(labelsWeb)})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		var states []string
		for _, p := range pods {
			states = append(states, p.Name+"="+string(p.Status.Phase))
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 3 && len(pods) == 3, strings.Join(states, " ")
	})

	rss, _, err := cl.ReplicaSets().List(ctx, "default", client.ListOptions{})
	if err != nil || len(rss) != 1 {
		t.Fatalf("replica sets: %d %v", len(rss), err)
	}
	hash := rss[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if hash == "" || rss[0].Name != "web-"+hash {
		t.Fatalf("replica set %q labels %v: want web-<pod-template-hash>", rss[0].Name, rss[0].Labels)
	}
	for _, p := range pods {
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
			t.Errorf("pod %s lacks pod-template-hash=%s", p.Name, hash)
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != rss[0].Name {
			t.Errorf("pod %s owners %v", p.Name, p.OwnerReferences)
		}
		node, err := cl.Nodes().Get(ctx, "", p.Spec.NodeName)
		if err != nil {
			t.Fatalf("pod %s node %q: %v", p.Name, p.Spec.NodeName, err)
		}
		_, cidr, err := net.ParseCIDR(node.Spec.PodCIDR)
		if err != nil || !cidr.Contains(net.ParseIP(p.Status.PodIP)) {
			t.Errorf("pod %s IP %q not in %s's podCIDR %q", p.Name, p.Status.PodIP, node.Name, node.Spec.PodCIDR)
		}
		k, _ := c.Kubelet(p.Spec.NodeName)
		eventually(t, 20*time.Second, "greeting in logs of "+p.Name, func() (bool, string) {
			var buf bytes.Buffer
			err := k.PodLogs(ctx, p, &corev1.PodLogOptions{Container: "hello"}, &buf)
			return err == nil && strings.Contains(buf.String(), p.Name), buf.String()
		})
	}
}

// A pod that requests more CPU than any node has stays Pending with a
// FailedScheduling event in upstream's wording.
func TestUnschedulablePodStaysPending(t *testing.T) {
	c, ctx := startCluster(t)
	cl := c.Client("test")
	_, err := cl.Pods().Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "hello", Image: "hello",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = "0/3 nodes are available: 3 Insufficient cpu."
	eventually(t, 30*time.Second, "FailedScheduling event", func() (bool, string) {
		evs, _, _ := cl.Events().List(ctx, "default", client.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "big"),
		})
		var msgs []string
		for _, e := range evs {
			msgs = append(msgs, e.Reason+": "+e.Message)
			if e.Reason == "FailedScheduling" && strings.HasPrefix(e.Message, want) {
				return true, ""
			}
		}
		return false, strings.Join(msgs, "; ")
	})
	p, _ := cl.Pods().Get(ctx, "default", "big")
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod bound to %q phase %s", p.Spec.NodeName, p.Status.Phase)
	}
}

// With DataDir a new cluster on the same directory has the objects of the
// one before it (the crash test is core/store/wal's).
func TestDataDirKeepsObjects(t *testing.T) {
	dir := t.TempDir()
	c1, err := cluster.New(cluster.Config{Images: images.New(), Nodes: 1, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cms := client.For[*corev1.ConfigMap](c1.Client("test"), "", "configmaps")
	if _, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: "default"}, Data: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	rev := c1.Store.Revision()
	// The first cluster never ran: its log stays open, as after a kill -9.
	c2, err := cluster.New(cluster.Config{Images: images.New(), Nodes: 1, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := client.For[*corev1.ConfigMap](c2.Client("test"), "", "configmaps").Get(context.Background(), "default", "keep")
	if err != nil || cm.Data["a"] != "1" {
		t.Fatalf("after a restart: %v %v", cm, err)
	}
	if c2.Store.Revision() < rev {
		t.Fatalf("the revision went back: %d -> %d", rev, c2.Store.Revision())
	}
}

// WaitSettled returns once the start's own work is done: the clusterrole
// aggregation controller has filled admin, edit and view, so those writes
// are not among a learner's first hops.
func TestWaitSettled(t *testing.T) {
	c, ctx := startCluster(t)
	if err := c.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	roles := client.For[*rbacv1.ClusterRole](c.Client("test"), rbacv1.GroupName, "clusterroles")
	for _, name := range []string{"admin", "edit", "view"} {
		role, err := roles.Get(ctx, "", name)
		if err != nil {
			t.Fatal(err)
		}
		if len(role.Rules) == 0 {
			t.Errorf("clusterrole %s has no rules after WaitSettled: the aggregation had not run", name)
		}
	}
}
