package cluster_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubetab/kubetab/core/apiserver"
)

// TestTopAndExec: what `kubectl top pods|nodes` reads (the registry's
// metrics.k8s.io API, served from the kubelets' samples; the API server's
// HTTP routes and discovery for it are not wired yet) and `kubectl exec`
// through the API server's handler (pods/exec, run by the pod's kubelet).
func TestTopAndExec(t *testing.T) {
	c, ctx := startCluster(t)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	cl := c.Client("test")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hi", Namespace: "default", Labels: map[string]string{"app": "hi"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "hello", Image: "hello",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}},
		}}},
	}
	if _, err := cl.Pods().Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the pod Running", func() (bool, string) {
		p, err := cl.Pods().Get(ctx, "default", "hi")
		return err == nil && p.Status.Phase == corev1.PodRunning, fmt.Sprint(err)
	})

	metrics := c.Registry.Metrics()
	if metrics == nil {
		t.Fatal("the registry serves no metrics")
	}
	var pods *metricsv1beta1.PodMetricsList
	eventually(t, 30*time.Second, "the pod's metrics", func() (bool, string) {
		var err error
		pods, err = metrics.ListPods(ctx, "default", nil, nil)
		return err == nil && len(pods.Items) == 1, fmt.Sprint(pods, err)
	})
	pm := pods.Items[0]
	if pm.Name != "hi" || pm.Labels["app"] != "hi" || len(pm.Containers) != 1 || pm.Containers[0].Name != "hello" ||
		pm.Containers[0].Usage.Memory().Value() <= 0 {
		t.Errorf("pod metrics = %+v", pm)
	}
	nodes, err := metrics.ListNodes(ctx, nil, nil)
	if err != nil || len(nodes.Items) != 3 || nodes.Items[0].Name != "node-1" {
		t.Errorf("node metrics = %+v, %v", nodes, err)
	}

	exec := func(query string) (int, apiserver.ExecResult, string) {
		resp, err := http.Post(srv.URL+"/api/v1/namespaces/default/pods/hi/exec?"+query, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var res apiserver.ExecResult
		_ = json.Unmarshal(b, &res)
		return resp.StatusCode, res, string(b)
	}
	code, res, body := exec("command=hello&command=--ticks=0&command=--exit=2")
	if code != 200 || !strings.Contains(res.Stdout, "Hello from hi!") || res.ExitCode != 2 || res.Status.Reason != "NonZeroExitCode" {
		t.Errorf("exec = %d %s", code, body)
	}
	if code, _, body := exec("container=nope&command=ls"); code != 400 || !strings.Contains(body, "container nope is not valid for pod hi") {
		t.Errorf("exec into an unknown container = %d %s", code, body)
	}

	// A stopped node's kubelet answers neither.
	p, err = cl.Pods().Get(ctx, "default", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StopNode(p.Spec.NodeName); err != nil {
		t.Fatal(err)
	}
	nodes, _ = metrics.ListNodes(ctx, nil, nil)
	pods, _ = metrics.ListPods(ctx, "", nil, nil)
	if len(nodes.Items) != 2 || len(pods.Items) != 0 {
		t.Errorf("with %s stopped: %d node metrics, %d pod metrics", p.Spec.NodeName, len(nodes.Items), len(pods.Items))
	}
	if code, _, body := exec("command=hello"); code != 500 || !strings.Contains(body, "error dialing backend") {
		t.Errorf("exec on a stopped node = %d %s", code, body)
	}
}
