package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/kubetab/kubetab/core/scheduler/apis/v1alpha1"
)

const queuesPath = "/apis/scheduling.kubetab.dev/v1alpha1/schedulingqueues"

type queueList struct {
	Metadata metav1.ListMeta                 `json:"metadata"`
	Items    []schedv1alpha1.SchedulingQueue `json:"items"`
}

// The scheduler's queue through the API server: a pod no node fits waits in
// unschedulablePods with the FailedScheduling message and the plugin that
// rejected it; a watch from the list's resourceVersion sees it leave when
// it is deleted; a resourceVersion from the future is refused.
func TestSchedulingQueueResource(t *testing.T) {
	c, ctx := startCluster(t)
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	get := func(path string) (int, []byte) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		return res.StatusCode, []byte(b.String())
	}
	cl := c.Client("test")
	if _, err := cl.Pods().Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "hello", Image: "hello",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}},
		}}},
	}); err != nil {
		t.Fatal(err)
	}
	var list queueList
	var big schedv1alpha1.QueuedPod
	eventually(t, 30*time.Second, "big in unschedulablePods", func() (bool, string) {
		code, body := get(queuesPath)
		if code != http.StatusOK {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		list = queueList{}
		if err := json.Unmarshal(body, &list); err != nil || len(list.Items) != 1 {
			return false, fmt.Sprint(err, string(body))
		}
		for _, p := range list.Items[0].Pods {
			if p.Name == "big" && p.Queue == schedv1alpha1.QueueUnschedulable {
				big = p
				return true, ""
			}
		}
		return false, string(body)
	})
	q := list.Items[0]
	if q.Name != "default-scheduler" || q.ResourceVersion == "" || q.ResourceVersion != list.Metadata.ResourceVersion {
		t.Errorf("queue %q rv %q, list rv %q", q.Name, q.ResourceVersion, list.Metadata.ResourceVersion)
	}
	if !strings.HasPrefix(q.Summary, "activeQ:0; backoffQ:0; unschedulablePods:1") {
		t.Errorf("summary %q", q.Summary)
	}
	if big.Attempts < 1 || big.LastResult != schedv1alpha1.ResultUnschedulable ||
		!strings.HasPrefix(big.Message, "0/3 nodes are available: 3 Insufficient cpu.") ||
		strings.Join(big.UnschedulablePlugins, ",") != "NodeResourcesFit" || big.BackoffExpiration == nil {
		t.Errorf("big: %+v", big)
	}
	if code, body := get(queuesPath + "/default-scheduler"); code != http.StatusOK || !strings.Contains(string(body), `"name":"big"`) {
		t.Errorf("get: %d %s", code, body)
	}
	if code, _ := get(queuesPath + "/nobody"); code != http.StatusNotFound {
		t.Errorf("get of another scheduler: %d, want 404", code)
	}

	// Watch from the list's resourceVersion; deleting big is one MODIFIED
	// without it, at a later resourceVersion.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, srv.URL+queuesPath+"?watch=1&resourceVersion="+list.Metadata.ResourceVersion, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("watch: %d", res.StatusCode)
	}
	if err := cl.Pods().Delete(ctx, "default", "big", nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for {
		if !sc.Scan() {
			t.Fatalf("the watch ended before big left the queue: %v", sc.Err())
		}
		var ev struct {
			Type   string                        `json:"type"`
			Object schedv1alpha1.SchedulingQueue `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != "MODIFIED" || ev.Object.ResourceVersion <= "" {
			t.Fatalf("event %s", sc.Bytes())
		}
		if !strings.Contains(sc.Text(), `"name":"big"`) {
			var from, to int
			fmt.Sscan(list.Metadata.ResourceVersion, &from)
			fmt.Sscan(ev.Object.ResourceVersion, &to)
			if to <= from {
				t.Errorf("event at rv %d, not after %d", to, from)
			}
			break
		}
	}

	for _, tc := range []struct {
		path string
		code int
	}{
		{queuesPath + "?resourceVersion=99999999", http.StatusGatewayTimeout},
		{queuesPath + "?watch=1&resourceVersion=99999999", http.StatusGatewayTimeout},
		{queuesPath + "?resourceVersion=1&resourceVersionMatch=Exact", http.StatusGone},
		{queuesPath + "/default-scheduler/status", http.StatusNotFound},
	} {
		if code, body := get(tc.path); code != tc.code {
			t.Errorf("GET %s: %d %s, want %d", tc.path, code, body, tc.code)
		}
	}
	req, _ = http.NewRequest(http.MethodDelete, srv.URL+queuesPath+"/default-scheduler", nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", res.StatusCode)
	}
}
