package kubectl

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWaitEventsRolloutDiff: wait, events, rollout and diff over a cluster
// left as the controllers would leave it, and api-versions.
func TestWaitEventsRolloutDiff(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"}}
	e.setStatus(d)
	e.files["web.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: hello\n        image: hello:1.0\n"
	e.files["same.yaml"] = strings.Replace(e.files["web.yaml"], "replicas: 3", "replicas: 2", 1)
	e.files["new.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: brand-new\n"
	e.takeWrites()
	out := e.transcript(
		"api-versions",
		"events",
		"events --for deployment/web",
		"events -A --types=Warning",
		"events --types=Bogus",
		"events --for web",
		"wait --for=condition=Available deployment/web --timeout=0",
		"wait --for=condition=Available=false deployment/web --timeout=0",
		"wait --for=jsonpath={.spec.replicas}=2 deployment/web --timeout=0",
		"wait --for=jsonpath='{.status.readyReplicas}' deployment/web --timeout=0",
		"wait --for=delete pod/nope --timeout=0",
		"wait --for=condition=Ready pod/nope --timeout=0",
		"wait --for=bogus deployment/web",
		"wait --for=jsonpath= deployment/web",
		"wait deployment/web",
		"rollout status deployment/web --watch=false",
		"rollout status pod/web-7d4b9-x2x8q",
		"rollout history deployment/web",
		"rollout undo deployment/web",
		"rollout pause deployment/web",
		"rollout pause deployment/web",
		"rollout restart deployment/web",
		"rollout resume deployment/web",
		"diff -f same.yaml",
		"diff -f web.yaml",
		"diff -f new.yaml",
		"diff -f missing.yaml",
		"diff",
	)
	golden(t, "wait-events-rollout-diff", out)
	for _, w := range e.takeWrites() {
		if !strings.HasPrefix(w, "PATCH /apis/apps/v1/namespaces/default/deployments/web") && !strings.HasPrefix(w, "POST /api/v1/namespaces") {
			t.Errorf("unexpected write %s", w)
		}
	}
	if d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment); *d.Spec.Replicas != 2 || d.Spec.Paused {
		t.Errorf("diff changed the deployment, or resume did not: replicas %d, paused %v", *d.Spec.Replicas, d.Spec.Paused)
	}
}

// TestWaitWatches: wait blocks until a watched change meets the condition.
func TestWaitWatches(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	done := make(chan string, 1)
	go func() {
		out, errs, code := e.runCtx(context.Background(), "wait --for=condition=Available deployment/web --timeout=1m", "")
		done <- strings.TrimSpace(out+errs) + " exit " + string(rune('0'+code))
	}()
	// Make the deployment available once the waiter is watching: retry
	// the status write until the waiter reports (a bounded loop, no sleeps
	// that assert timing).
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case got := <-done:
			if got != "deployment.apps/web condition met exit 0" {
				t.Fatalf("wait: %s", got)
			}
			return
		case <-deadline:
			t.Fatal("wait never returned")
		case <-tick.C:
			d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: metav1.Now()}}
			e.setStatus(d)
		}
	}
}
