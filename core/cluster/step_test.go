package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/kubectl"
)

const flowAPI = "/apis/flow.kubetab.dev/v1alpha1/"

// flowCall sends one request to the cluster's API handler, as the native
// curl or kubectl would, and decodes the answer into out.
func flowCall(t *testing.T, h http.Handler, method, path, ctype, body string, out any) int {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if out != nil && rec.Code < 300 {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, rec.Body)
		}
	}
	if rec.Code >= 300 && out != nil {
		t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec.Code
}

// writeLine is how the test states a held write.
func writeLine(p flowv1alpha1.PendingWriteSpec) string {
	name := p.Object.Name
	return fmt.Sprintf("%s %s %s %s", p.Component, p.Verb, p.Object.Resource, name)
}

func TestStepModeWalksADeployment(t *testing.T) {
	f := startFakeCluster(t)
	h := f.Handler()
	stepMode := func() flowv1alpha1.StepMode {
		var sm flowv1alpha1.StepMode
		flowCall(t, h, "GET", flowAPI+"stepmodes/cluster", "", "", &sm)
		return sm
	}
	// settled waits until the held writes and the store stay the same over
	// a few polls: every component has either asked for its next write or
	// has nothing to do.
	settled := func() flowv1alpha1.StepMode {
		t.Helper()
		var last string
		same := 0
		deadline := time.Now().Add(acceptanceTimeout)
		for time.Now().Before(deadline) {
			sm := stepMode()
			key := fmt.Sprint(f.Store.Revision(), sm.Status.Pending)
			if key == last {
				if same++; same == 10 {
					return sm
				}
			} else {
				last, same = key, 0
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the cluster did not settle")
		return flowv1alpha1.StepMode{}
	}
	settled()
	var sm flowv1alpha1.StepMode
	flowCall(t, h, "PATCH", flowAPI+"stepmodes/cluster", "application/merge-patch+json", `{"spec":{"enabled":true}}`, &sm)
	if !sm.Spec.Enabled || !sm.Status.ClockPaused {
		t.Fatalf("step mode on: %+v", sm)
	}
	frozen := sm.Status.Time

	// The learner's kubectl is not held.
	var out, errb bytes.Buffer
	if code := kubectl.Run(f.ctx, []string{"create", "deployment", "web", "--image=hello", "--replicas=3"}, kubectl.IOStreams{Out: &out, ErrOut: &errb}, kubectl.InProcessTransport(h)); code != 0 {
		t.Fatalf("kubectl create deployment: %d %s", code, errb.String())
	}
	var released []flowv1alpha1.PendingWriteSpec
	var firstPending []string // what waited when the ReplicaSet was released
	for i := 0; ; i++ {
		if i == 300 {
			t.Fatal("more than 300 writes for one Deployment")
		}
		sm := settled()
		rev := f.Store.Revision()
		if !sm.Status.Time.Equal(&frozen) {
			t.Fatalf("the clock moved in step mode: %v, then %v", frozen, sm.Status.Time)
		}
		if len(sm.Status.Pending) == 0 {
			break
		}
		// Time passes outside (the fake clock under the paused one), and
		// nothing moves while nothing is released: no timer fires (no
		// lease renewal, no heartbeat), no write is stored.
		f.clk.Step(10 * time.Second)
		if again := settled(); f.Store.Revision() != rev || fmt.Sprint(again.Status.Pending) != fmt.Sprint(sm.Status.Pending) {
			t.Fatalf("the cluster moved with no write released: revision %d -> %d, pending %v -> %v", rev, f.Store.Revision(), sm.Status.Pending, again.Status.Pending)
		}
		if i == 0 {
			for _, p := range sm.Status.Pending {
				firstPending = append(firstPending, writeLine(p))
			}
		}
		released = append(released, sm.Status.Pending[0])
		flowCall(t, h, "POST", flowAPI+"stepmodes/cluster/step", "", "", &sm)
		if sm.Status.Released == 0 {
			t.Fatal("step released nothing")
		}
	}
	var lines []string
	for _, p := range released {
		lines = append(lines, writeLine(p))
	}
	t.Logf("%d writes released one by one:\n%s", len(lines), strings.Join(lines, "\n"))

	// The seeds' path, from what the components do:
	//  1. the deployment controller creates the ReplicaSet, and nothing
	//     else waits (the Deployment itself was the learner's, not held);
	//  2. the ReplicaSet controller creates 3 pods (generateName, no node);
	//  3. the scheduler binds each (pods/binding) and records Scheduled;
	//  4. each pod's kubelet reports its status (pods/status) after the
	//     binding, from the node it was bound to;
	// with the controllers' status updates and events in between, and
	// nothing from any other component or on a timer (no Lease, no Node).
	pods, _, _ := f.cl.Pods().List(f.ctx, "default", client.ListOptions{})
	if len(pods) != 3 {
		t.Fatalf("%d pods", len(pods))
	}
	rsName := pods[0].OwnerReferences[0].Name
	if want := []string{"deployment-controller create replicasets.apps " + rsName}; fmt.Sprint(firstPending) != fmt.Sprint(want) {
		t.Fatalf("first held writes %v, want %v", firstPending, want)
	}
	index := map[string][]int{}
	for i, l := range lines {
		index[l] = append(index[l], i)
	}
	count := func(line string) int { return len(index[line]) }
	if n := count("replicaset-controller create pods " + rsName + "-"); n != 3 {
		t.Errorf("%d pod creates by the ReplicaSet controller, want 3", n)
	}
	firstPodCreate := index["replicaset-controller create pods "+rsName+"-"][0]
	if firstPodCreate < 1 {
		t.Errorf("a pod was created before the ReplicaSet")
	}
	allowed := map[string]bool{"deployment-controller": true, "replicaset-controller": true, "kube-scheduler": true}
	for _, p := range released {
		if !allowed[p.Component] && !strings.HasPrefix(p.Component, "kubelet/") {
			t.Errorf("unexpected writer: %s", writeLine(p))
		}
		if r := p.Object.Resource; r == "leases.coordination.k8s.io" || strings.HasPrefix(r, "nodes") {
			t.Errorf("a write on a timer in step mode: %s", writeLine(p))
		}
	}
	scheduled := 0
	for _, p := range released {
		if p.Component == "kube-scheduler" && p.Object.Resource == "events" {
			scheduled++
		}
	}
	if scheduled != 3 {
		t.Errorf("%d events by the scheduler, want 3 (Scheduled)", scheduled)
	}
	for _, pod := range pods {
		bind := index["kube-scheduler create pods/binding "+pod.Name]
		status := index["kubelet/"+pod.Spec.NodeName+" update pods/status "+pod.Name]
		switch {
		case len(bind) != 1:
			t.Errorf("pod %s bound %d times", pod.Name, len(bind))
		case bind[0] < firstPodCreate:
			t.Errorf("pod %s bound before any pod was created", pod.Name)
		case len(status) == 0 || status[0] < bind[0]:
			t.Errorf("pod %s: status by kubelet/%s at %v, binding at %d", pod.Name, pod.Spec.NodeName, status, bind[0])
		}
		if pod.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s after every write was released", pod.Name, pod.Status.Phase)
		}
	}
	flowCall(t, h, "POST", flowAPI+"stepmodes/cluster/continue", "", "", &sm)
	if sm.Spec.Enabled || sm.Status.ClockPaused {
		t.Fatalf("after continue: %+v", sm)
	}
}
