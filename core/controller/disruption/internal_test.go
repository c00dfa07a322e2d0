package disruption

import (
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

// world creates, in an env with no other controllers running:
//
//	Deployment web (3 replicas) with ReplicaSets web-old (pod web-old-1)
//	  and web-new (pods web-new-1, web-new-2), mid-rollout; labels app=web,tier=front
//	StatefulSet db (5 replicas), pods db-1..db-4; app=db
//	ReplicaSet cache (4 replicas, no Deployment), pods cache-1..4; app=cache,tier=front
//	Job batch, pods batch-1, batch-2; app=batch
//	pod stray-1, no controller; app=stray
//	pod widget-1, controlled by an example.com/v1 Widget; app=widget
//	pod ghost-1, controlled by a ReplicaSet that does not exist; app=ghost
func world(t *testing.T, e *controllertest.Env) {
	t.Helper()
	ctx := e.Ctx
	create := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ref := func(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
		yes := true
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}
	}
	pod := func(name string, owner *metav1.OwnerReference, labels ...string) {
		t.Helper()
		w := controllertest.MakePod(name)
		for i := 0; i+1 < len(labels); i += 2 {
			w.Label(labels[i], labels[i+1])
		}
		if owner != nil {
			w.Owner(*owner)
		}
		_, err := e.Client.Pods().Create(ctx, w.Obj())
		create(err)
	}

	d, err := e.Client.Deployments().Create(ctx, controllertest.MakeDeployment("web").Replicas(3).Obj())
	create(err)
	dref := ref("apps/v1", "Deployment", "web", d.UID)
	for _, name := range []string{"web-old", "web-new"} {
		rs := controllertest.MakeReplicaSet(name).Obj()
		rs.OwnerReferences = []metav1.OwnerReference{dref}
		rs, err := e.Client.ReplicaSets().Create(ctx, rs)
		create(err)
		n := 1
		if name == "web-new" {
			n = 2
		}
		for i := 1; i <= n; i++ {
			r := ref("apps/v1", "ReplicaSet", name, rs.UID)
			pod(fmt.Sprintf("%s-%d", name, i), &r, "app", "web", "tier", "front")
		}
	}

	l := map[string]string{"app": "db"}
	five := int32(5)
	ss, err := client.For[*appsv1.StatefulSet](e.Client, "apps", "statefulsets").Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{Replicas: &five, ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: controllertest.PodTemplate(l, "hello")},
	})
	create(err)
	for i := 1; i <= 4; i++ {
		r := ref("apps/v1", "StatefulSet", "db", ss.UID)
		pod(fmt.Sprintf("db-%d", i), &r, "app", "db")
	}

	rs, err := e.Client.ReplicaSets().Create(ctx, controllertest.MakeReplicaSet("cache").Replicas(4).Obj())
	create(err)
	for i := 1; i <= 4; i++ {
		r := ref("apps/v1", "ReplicaSet", "cache", rs.UID)
		pod(fmt.Sprintf("cache-%d", i), &r, "app", "cache", "tier", "front")
	}

	tmpl := controllertest.PodTemplate(map[string]string{"app": "batch"}, "job")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	job, err := client.For[*batchv1.Job](e.Client, "batch", "jobs").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "default"}, Spec: batchv1.JobSpec{Template: tmpl},
	})
	create(err)
	for i := 1; i <= 2; i++ {
		r := ref("batch/v1", "Job", "batch", job.UID)
		pod(fmt.Sprintf("batch-%d", i), &r, "app", "batch")
	}

	pod("stray-1", nil, "app", "stray")
	widget := ref("example.com/v1", "Widget", "w", "w-uid")
	pod("widget-1", &widget, "app", "widget")
	ghost := ref("apps/v1", "ReplicaSet", "ghost", "ghost-uid")
	pod("ghost-1", &ghost, "app", "ghost")
}

// startInformers fills dc's caches without starting its workers.
func startInformers(t *testing.T, e *controllertest.Env, dc *Controller) {
	t.Helper()
	infs := []controller.Informer{dc.podInformer, dc.pdbInformer, dc.rsInformer, dc.dInformer, dc.ssInformer}
	for _, inf := range infs {
		go inf.Run(e.Ctx)
	}
	e.Eventually("caches synced", func() (bool, string) {
		for _, inf := range infs {
			if !inf.HasSynced() {
				return false, "not yet"
			}
		}
		return true, ""
	})
}

// TestExpectedPodCount is the controller's arithmetic: which pods and which
// scale a budget counts, and how percentages round (always up).
func TestExpectedPodCount(t *testing.T) {
	e := controllertest.NewEnv(t)
	world(t, e)
	dc, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	startInformers(t, e, dc)

	matchLabels := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	in := func(k string, vs ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: k, Operator: metav1.LabelSelectorOpIn, Values: vs}}}
	}
	val := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	for _, tc := range []struct {
		name                     string
		selector                 *metav1.LabelSelector
		minAvailable, maxUnavail string
		expected, desired        int32
		unmanaged                []string
		err                      string
	}{
		{name: "minAvailable number counts the selected pods", selector: matchLabels("app", "web"), minAvailable: "2", expected: 3, desired: 2},
		{name: "minAvailable 50% of 3 rounds up to 2", selector: matchLabels("app", "web"), minAvailable: "50%", expected: 3, desired: 2},
		{name: "maxUnavailable 50% of 3 rounds up to 2", selector: matchLabels("app", "web"), maxUnavail: "50%", expected: 3, desired: 1},
		{name: "maxUnavailable 33% of 3 rounds up to 1", selector: matchLabels("app", "web"), maxUnavail: "33%", expected: 3, desired: 2},
		{name: "maxUnavailable 0", selector: matchLabels("app", "web"), maxUnavail: "0", expected: 3, desired: 3},
		{name: "maxUnavailable above the scale", selector: matchLabels("app", "web"), maxUnavail: "5", expected: 3, desired: 0},
		{name: "maxUnavailable number uses the StatefulSet's scale, not its pods", selector: matchLabels("app", "db"), maxUnavail: "1", expected: 5, desired: 4},
		{name: "minAvailable 50% of 5 rounds up to 3", selector: matchLabels("app", "db"), minAvailable: "50%", expected: 5, desired: 3},
		{name: "minAvailable number counts pods, not scale", selector: matchLabels("app", "db"), minAvailable: "4", expected: 4, desired: 4},
		{name: "ReplicaSet without a Deployment", selector: matchLabels("app", "cache"), minAvailable: "100%", expected: 4, desired: 4},
		{name: "two controllers add up", selector: matchLabels("tier", "front"), maxUnavail: "10%", expected: 7, desired: 6},
		{name: "unmanaged pods are left out", selector: in("app", "web", "stray"), minAvailable: "50%", expected: 3, desired: 2, unmanaged: []string{"stray-1"}},
		{name: "neither set", selector: matchLabels("app", "web"), expected: 0, desired: 0},
		{name: "no pods", selector: matchLabels("app", "nothing"), maxUnavail: "1", expected: 0, desired: 0},
		{name: "minAvailable number needs no scale", selector: matchLabels("app", "batch"), minAvailable: "1", expected: 2, desired: 1},
		{name: "a Job has no scale", selector: matchLabels("app", "batch"), maxUnavail: "1", err: "jobs.batch does not implement the scale subresource"},
		{name: "a kind the server does not serve", selector: matchLabels("app", "widget"), minAvailable: "50%", err: `no matches for kind "Widget" in version "example.com/v1"`},
		{name: "a controller that is gone", selector: matchLabels("app", "ghost"), minAvailable: "50%", err: `found no controllers for pod "ghost-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"},
				Spec: policyv1.PodDisruptionBudgetSpec{Selector: tc.selector}}
			if tc.minAvailable != "" {
				pdb.Spec.MinAvailable = val(tc.minAvailable)
			}
			if tc.maxUnavail != "" {
				pdb.Spec.MaxUnavailable = val(tc.maxUnavail)
			}
			pods, err := dc.getPodsForPdb(pdb)
			if err != nil {
				t.Fatal(err)
			}
			expected, desired, unmanaged, err := dc.getExpectedPodCount(e.Ctx, pdb, pods)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if expected != tc.expected || desired != tc.desired || !slices.Equal(unmanaged, tc.unmanaged) {
				t.Errorf("expected %d desired %d unmanaged %v; want %d %d %v", expected, desired, unmanaged, tc.expected, tc.desired, tc.unmanaged)
			}
		})
	}
}

func TestDisruptionsAllowed(t *testing.T) {
	for _, tc := range []struct {
		current, desired, expected, want int32
	}{
		{3, 2, 3, 1},
		{3, 3, 3, 0},
		{2, 3, 3, 0}, // never negative
		{5, 0, 5, 5},
		{2, 0, 0, 0}, // no pods expected yet: safe
	} {
		if got := disruptionsAllowed(tc.current, tc.desired, tc.expected); got != tc.want {
			t.Errorf("disruptionsAllowed(current %d, desired %d, expected %d) = %d, want %d", tc.current, tc.desired, tc.expected, got, tc.want)
		}
	}
}

func TestCountHealthyPods(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	ready := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	}
	deleting := ready("deleting")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	notReady := ready("not-ready")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	pods := []*corev1.Pod{ready("a"), ready("evicted"), ready("evicted-long-ago"), deleting, notReady}
	disrupted := map[string]metav1.Time{
		"evicted":          metav1.NewTime(now.Add(-time.Minute)),
		"evicted-long-ago": metav1.NewTime(now.Add(-DeletionTimeout - time.Second)),
	}
	// a and evicted-long-ago count: the eviction of the latter did not happen.
	if got := countHealthyPods(pods, disrupted, now); got != 2 {
		t.Errorf("countHealthyPods = %d, want 2", got)
	}
}
