package replicaset_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/replicaset"
)

func startController(t *testing.T, e *controllertest.Env) {
	t.Helper()
	rsc, err := replicaset.New(replicaset.Config{Client: e.ClientFor(replicaset.Component), Clock: e.Clock, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("replicaset", rsc.Run)
}

func createRS(t *testing.T, e *controllertest.Env, rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	t.Helper()
	out, err := e.Client.ReplicaSets().Create(e.Ctx, rs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scaleRS(t *testing.T, e *controllertest.Env, name string, n int32) {
	t.Helper()
	controllertest.Update(e,
		func() (*appsv1.ReplicaSet, error) { return e.Client.ReplicaSets().Get(e.Ctx, "default", name) },
		func(rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
			return e.Client.ReplicaSets().Update(e.Ctx, rs)
		},
		func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = &n })
}

// waitStatus waits until the ReplicaSet's status is as wanted and
// describes its current generation.
func waitStatus(t *testing.T, e *controllertest.Env, name string, want appsv1.ReplicaSetStatus) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	e.Eventually("status of "+name, func() (bool, string) {
		var err error
		rs, err = e.Client.ReplicaSets().Get(e.Ctx, "default", name)
		if err != nil {
			return false, err.Error()
		}
		s := rs.Status
		got := fmt.Sprintf("replicas=%d fullyLabeled=%d ready=%d available=%d observedGeneration=%d/%d",
			s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration, rs.Generation)
		return s.Replicas == want.Replicas && s.FullyLabeledReplicas == want.FullyLabeledReplicas &&
			s.ReadyReplicas == want.ReadyReplicas && s.AvailableReplicas == want.AvailableReplicas &&
			s.ObservedGeneration == rs.Generation, got
	})
	return rs
}

func activePodNames(e *controllertest.Env) []string {
	var names []string
	for _, p := range e.ActivePods("default") {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

func TestCreatesPodsFromTemplate(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	rs := createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(3).TemplateLabel("tier", "front").Obj())

	e.Eventually("3 pods", func() (bool, string) {
		n := len(e.Pods("default"))
		return n == 3, fmt.Sprintf("%d pods", n)
	})
	for _, p := range e.Pods("default") {
		if p.GenerateName != "web-" || !strings.HasPrefix(p.Name, "web-") || len(p.Name) != len("web-")+5 {
			t.Errorf("pod %q: generateName %q, want web- plus 5 characters", p.Name, p.GenerateName)
		}
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s: nodeName %q, want none (the scheduler sets it)", p.Name, p.Spec.NodeName)
		}
		if p.Labels["app"] != "web" || p.Labels["tier"] != "front" {
			t.Errorf("pod %s: labels %v, want the template's", p.Name, p.Labels)
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != rs.UID || ref.Kind != "ReplicaSet" || ref.APIVersion != "apps/v1" || ref.Name != "web" ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s: controller ref %+v, want ReplicaSet web (uid %s) blocking owner deletion", p.Name, ref, rs.UID)
		}
	}
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3})
	name := e.Pods("default")[0].Name
	e.Eventually("a SuccessfulCreate event", func() (bool, string) {
		for _, ev := range e.Events("default") {
			if ev.Reason == "SuccessfulCreate" && strings.HasPrefix(ev.Message, "Created pod: web-") &&
				ev.InvolvedObject.Kind == "ReplicaSet" && ev.InvolvedObject.Name == "web" && ev.Source.Component == "replicaset-controller" {
				return true, ""
			}
		}
		return false, "no event Created pod: web-… (for example " + name + ")"
	})
}

func TestReadyAndAvailableReplicas(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(2).MinReadySeconds(60).Obj())
	e.Eventually("2 pods", func() (bool, string) { n := len(e.Pods("default")); return n == 2, fmt.Sprint(n) })

	e.Step = 0 // this test moves time itself
	for _, p := range e.Pods("default") {
		e.SetPodStatus(p, corev1.PodRunning, true)
	}
	// Ready now, but not available until Ready for 60s.
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2})
	e.Clock.Step(61 * time.Second) // fires the controller's AddAfter(minReadySeconds)
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
}

func TestScaleDownRanking(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(5).Obj())
	e.Eventually("5 pods", func() (bool, string) { n := len(e.Pods("default")); return n == 5, fmt.Sprint(n) })
	pods := e.Pods("default")
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	// pods[0]: scheduled, Running, Ready      (most valuable)
	// pods[1]: scheduled, Running, not Ready
	// pods[2]: scheduled, Pending
	// pods[3], pods[4]: not scheduled         (go first)
	for i, p := range pods[:3] {
		if err := e.Client.Bind(e.Ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: "default"},
			Target: corev1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("node-%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.SetPodStatus(pods[0], corev1.PodRunning, true)
	e.SetPodStatus(pods[1], corev1.PodRunning, false)
	e.SetPodStatus(pods[2], corev1.PodPending, false)
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 5, FullyLabeledReplicas: 5, ReadyReplicas: 1, AvailableReplicas: 1})

	for _, step := range []struct {
		replicas int32
		keep     []*corev1.Pod
	}{
		{3, pods[:3]}, // the two unscheduled pods go
		{2, pods[:2]}, // then the Pending one
		{1, pods[:1]}, // then the one that is not Ready
	} {
		scaleRS(t, e, "web", step.replicas)
		var want []string
		for _, p := range step.keep {
			want = append(want, p.Name)
		}
		e.Eventually(fmt.Sprintf("scale to %d", step.replicas), func() (bool, string) {
			got := activePodNames(e)
			return slices.Equal(got, want), fmt.Sprintf("active pods %v, want %v", got, want)
		})
	}
	// Scheduled pods are deleted gracefully: they wait for their kubelet,
	// terminating, and no longer count.
	rs := waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1})
	if rs.Status.TerminatingReplicas == nil || *rs.Status.TerminatingReplicas != 2 {
		t.Errorf("terminatingReplicas = %v, want 2", rs.Status.TerminatingReplicas)
	}
	// Events about one object at the same instant share a name, so with a
	// fake clock only one of a sync's deletions is recorded; expect one.
	var deleted []string
	for _, p := range pods[1:] {
		if ok, _ := e.HasEvent("default", "SuccessfulDelete", "Deleted pod: "+p.Name); ok {
			deleted = append(deleted, p.Name)
		}
	}
	if len(deleted) == 0 {
		t.Error("no SuccessfulDelete event for the deleted pods")
	}
}

func TestReplacesPodBeingDeleted(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(2).Obj())
	e.Eventually("2 pods", func() (bool, string) { n := len(e.Pods("default")); return n == 2, fmt.Sprint(n) })
	victim := e.Pods("default")[0]
	if err := e.Client.Bind(e.Ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: "default"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Pods().Delete(e.Ctx, "default", victim.Name, nil); err != nil {
		t.Fatal(err)
	}
	// The victim waits for its kubelet (deletionTimestamp set); a
	// replacement is created at once.
	e.Eventually("a replacement", func() (bool, string) {
		all, active := len(e.Pods("default")), len(e.ActivePods("default"))
		return all == 3 && active == 2, fmt.Sprintf("%d pods, %d active", all, active)
	})
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2})
}

func TestAdoptsOrphansAndReleasesStrays(t *testing.T) {
	e := controllertest.NewEnv(t)
	// An orphan that matches the selector, created before the ReplicaSet.
	orphan, err := e.Client.Pods().Create(e.Ctx, controllertest.MakePod("orphan").Label("app", "web").Obj())
	if err != nil {
		t.Fatal(err)
	}
	// A pod of another owner that matches too: never stolen.
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid", Controller: ptr(true)}
	if _, err := e.Client.Pods().Create(e.Ctx, controllertest.MakePod("owned-elsewhere").Label("app", "web").Owner(other).Obj()); err != nil {
		t.Fatal(err)
	}
	startController(t, e)
	rs := createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(2).Obj())

	e.Eventually("adoption and one new pod", func() (bool, string) {
		p, err := e.Client.Pods().Get(e.Ctx, "default", orphan.Name)
		if err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == rs.UID && len(e.Pods("default")) == 3,
			fmt.Sprintf("orphan's controller %+v, %d pods", ref, len(e.Pods("default")))
	})
	stolen, _ := e.Client.Pods().Get(e.Ctx, "default", "owned-elsewhere")
	if ref := metav1.GetControllerOf(stolen); ref == nil || ref.UID != "other-uid" {
		t.Errorf("pod of another controller now has controller %+v", ref)
	}

	// Relabel the adopted pod: it stops matching, so the ReplicaSet
	// releases it (removes its ownerReference) and makes a new one.
	controllertest.Update(e, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, "default", "orphan") },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().Update(e.Ctx, p) },
		func(p *corev1.Pod) { p.Labels["app"] = "debug" })
	e.Eventually("release and replacement", func() (bool, string) {
		p, err := e.Client.Pods().Get(e.Ctx, "default", "orphan")
		if err != nil {
			return false, err.Error()
		}
		return len(p.OwnerReferences) == 0 && len(e.Pods("default")) == 4,
			fmt.Sprintf("released pod's owners %+v, %d pods", p.OwnerReferences, len(e.Pods("default")))
	})
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2})
}

func TestNoDoubleCreationUnderEventBursts(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(10).Obj())
	// A burst of events about the ReplicaSet and its pods while it creates them.
	for i := range 30 {
		controllertest.Update(e,
			func() (*appsv1.ReplicaSet, error) { return e.Client.ReplicaSets().Get(e.Ctx, "default", "web") },
			func(rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
				return e.Client.ReplicaSets().Update(e.Ctx, rs)
			},
			func(rs *appsv1.ReplicaSet) { metav1.SetMetaDataAnnotation(&rs.ObjectMeta, "poke", fmt.Sprint(i)) })
		for _, p := range e.Pods("default") {
			e.SetPodStatus(p, corev1.PodPending, i%2 == 0)
		}
	}
	waitStatus(t, e, "web", appsv1.ReplicaSetStatus{Replicas: 10, FullyLabeledReplicas: 10})
	if n := len(e.Pods("default")); n != 10 {
		t.Fatalf("%d pods, want 10", n)
	}
}

func TestFailedCreate(t *testing.T) {
	e := controllertest.NewEnv(t)
	// An admission check that refuses pods, like an exhausted quota.
	e.Registry.AddAdmission(func(ctx context.Context, op registry.Operation, res *registry.Resource, obj, old runtime.Object) error {
		if op == registry.Create && res.Resource == "pods" {
			return apierrors.NewForbidden(res.GroupResource(), "", fmt.Errorf("exceeded quota: compute"))
		}
		return nil
	})
	startController(t, e)
	createRS(t, e, controllertest.MakeReplicaSet("web").Replicas(3).Obj())
	e.Eventually("ReplicaFailure condition", func() (bool, string) {
		rs, err := e.Client.ReplicaSets().Get(e.Ctx, "default", "web")
		if err != nil {
			return false, err.Error()
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" &&
				strings.Contains(c.Message, "exceeded quota") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", rs.Status.Conditions)
	})
	e.Eventually("FailedCreate event", func() (bool, string) {
		return e.HasEvent("default", "FailedCreate", `Error creating: pods is forbidden: exceeded quota: compute`)
	})
}

func TestNewValidates(t *testing.T) {
	if _, err := replicaset.New(replicaset.Config{}); err == nil {
		t.Error("New without a client: no error")
	}
	e := controllertest.NewEnv(t)
	if _, err := replicaset.New(replicaset.Config{Client: e.Client, Workers: -1}); err == nil {
		t.Error("New with -1 workers: no error")
	}
}

func ptr[T any](v T) *T { return &v }
