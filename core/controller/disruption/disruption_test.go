package disruption_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/disruption"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func startController(t *testing.T, e *controllertest.Env) {
	t.Helper()
	dc, err := disruption.New(disruption.Config{Client: e.ClientFor(disruption.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("disruption", dc.Run)
}

func pdbs(e *controllertest.Env) client.Resource[*policyv1.PodDisruptionBudget] {
	return client.For[*policyv1.PodDisruptionBudget](e.Client, policyv1.GroupName, "poddisruptionbudgets")
}

// deploymentPods creates Deployment web with a ReplicaSet and n pods that
// run Ready (no deployment or replica set controller runs: the objects stay
// as created).
func deploymentPods(t *testing.T, e *controllertest.Env, n int32) []*corev1.Pod {
	t.Helper()
	d, err := e.Client.Deployments().Create(e.Ctx, controllertest.MakeDeployment("web").Replicas(n).Obj())
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	rs := controllertest.MakeReplicaSet("web-1").Replicas(n).Obj()
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}
	if rs, err = e.Client.ReplicaSets().Create(e.Ctx, rs); err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := range n {
		p := controllertest.MakePod(fmt.Sprintf("web-%d", i+1)).Label("app", "web").
			Owner(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}).Obj()
		p, err := e.Client.Pods().Create(e.Ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, e.SetPodStatus(p, corev1.PodRunning, true))
	}
	return pods
}

func createBudget(t *testing.T, e *controllertest.Env, spec policyv1.PodDisruptionBudgetSpec) {
	t.Helper()
	if spec.Selector == nil {
		spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}
	if _, err := pdbs(e).Create(e.Ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
}

// statusString prints what the tests compare.
func statusString(p *policyv1.PodDisruptionBudget) string {
	s := p.Status
	cond := "none"
	if c := apimeta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition); c != nil {
		cond = fmt.Sprintf("%s/%s", c.Status, c.Reason)
		if c.Message != "" {
			cond += ": " + c.Message
		}
	}
	return fmt.Sprintf("expected=%d desired=%d current=%d allowed=%d disrupted=%d observed=%d/%d %s",
		s.ExpectedPods, s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed, len(s.DisruptedPods), s.ObservedGeneration, p.Generation, cond)
}

func waitStatus(t *testing.T, e *controllertest.Env, want string) *policyv1.PodDisruptionBudget {
	t.Helper()
	var p *policyv1.PodDisruptionBudget
	e.Eventually("budget status "+want, func() (bool, string) {
		var err error
		if p, err = pdbs(e).Get(e.Ctx, "default", "web"); err != nil {
			return false, err.Error()
		}
		got := statusString(p)
		return got == want, got
	})
	return p
}

// The status follows the pods and the spec: Ready pods raise it, an
// unready one lowers it, a changed spec is observed under its generation.
func TestBudgetStatus(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	pods := deploymentPods(t, e, 3)
	two := intstr.FromInt32(2)
	createBudget(t, e, policyv1.PodDisruptionBudgetSpec{MinAvailable: &two})
	waitStatus(t, e, "expected=3 desired=2 current=3 allowed=1 disrupted=0 observed=1/1 True/SufficientPods")

	e.SetPodStatus(pods[0], corev1.PodRunning, false)
	waitStatus(t, e, "expected=3 desired=2 current=2 allowed=0 disrupted=0 observed=1/1 False/InsufficientPods")

	half := intstr.FromString("50%")
	controllertest.Update(e, func() (*policyv1.PodDisruptionBudget, error) { return pdbs(e).Get(e.Ctx, "default", "web") },
		func(p *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
			return pdbs(e).Update(e.Ctx, p)
		},
		func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, &half })
	// maxUnavailable 50% of the Deployment's 3: ⌈1.5⌉ = 2 may go, 1 must stay.
	waitStatus(t, e, "expected=3 desired=1 current=2 allowed=1 disrupted=0 observed=2/2 True/SufficientPods")
}

// An eviction records the pod in status.disruptedPods: it stops counting
// as healthy at once. If it is not deleted within DeletionTimeout, the
// entry goes, with a NotDeleted warning, and the pod counts again.
func TestDisruptedPodsExpire(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	deploymentPods(t, e, 3)
	two := intstr.FromInt32(2)
	createBudget(t, e, policyv1.PodDisruptionBudgetSpec{MinAvailable: &two})
	waitStatus(t, e, "expected=3 desired=2 current=3 allowed=1 disrupted=0 observed=1/1 True/SufficientPods")

	// What the eviction API writes (core/apiserver/eviction.go).
	controllertest.Update(e, func() (*policyv1.PodDisruptionBudget, error) { return pdbs(e).Get(e.Ctx, "default", "web") },
		func(p *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
			return pdbs(e).UpdateStatus(e.Ctx, p)
		},
		func(p *policyv1.PodDisruptionBudget) {
			p.Status.DisruptionsAllowed = 0
			p.Status.DisruptedPods = map[string]metav1.Time{"web-1": metav1.NewTime(e.Clock.Now())}
		})
	waitStatus(t, e, "expected=3 desired=2 current=2 allowed=0 disrupted=1 observed=1/1 False/InsufficientPods")

	e.Step = 30 * time.Second // web-1 is never deleted
	waitStatus(t, e, "expected=3 desired=2 current=3 allowed=1 disrupted=0 observed=1/1 True/SufficientPods")
	e.Eventually("NotDeleted event", func() (bool, string) {
		return e.HasEvent("default", "NotDeleted", "Pod was expected by PDB default/default to be deleted but it wasn't")
	})
}

// A percentage over pods whose controller has no scale cannot be computed:
// the controller fails closed (no disruptions allowed, SyncFailed).
func TestFailSafe(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	tmpl := controllertest.PodTemplate(map[string]string{"app": "web"}, "job")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	job, err := client.For[*batchv1.Job](e.Client, "batch", "jobs").Create(e.Ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "default"}, Spec: batchv1.JobSpec{Template: tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	p, err := e.Client.Pods().Create(e.Ctx, controllertest.MakePod("batch-1").Label("app", "web").
		Owner(metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: &yes}).Obj())
	if err != nil {
		t.Fatal(err)
	}
	e.SetPodStatus(p, corev1.PodRunning, true)
	half := intstr.FromString("50%")
	createBudget(t, e, policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &half})
	waitStatus(t, e, "expected=0 desired=0 current=0 allowed=0 disrupted=0 observed=0/1 False/SyncFailed: jobs.batch does not implement the scale subresource")
	e.Eventually("CalculateExpectedPodCountFailed event", func() (bool, string) {
		return e.HasEvent("default", "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource")
	})
}

// A budget that selects nothing allows nothing, and says so in an event.
func TestNoPods(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	one := intstr.FromInt32(1)
	createBudget(t, e, policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one})
	waitStatus(t, e, "expected=0 desired=0 current=0 allowed=0 disrupted=0 observed=1/1 False/InsufficientPods")
	e.Eventually("NoPods event", func() (bool, string) { return e.HasEvent("default", "NoPods", "No matching pods found") })
}

// A DisruptionTarget condition nobody acted on (the pod was never deleted)
// is set to False after StalePodDisruptionTimeout.
func TestStaleDisruptionTargetCleared(t *testing.T) {
	e := controllertest.NewEnv(t)
	startController(t, e)
	pods := deploymentPods(t, e, 1)
	controllertest.Update(e, func() (*corev1.Pod, error) { return e.Client.Pods().Get(e.Ctx, "default", pods[0].Name) },
		func(p *corev1.Pod) (*corev1.Pod, error) { return e.Client.Pods().UpdateStatus(e.Ctx, p) },
		func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(e.Clock.Now())})
		})
	e.Step = 20 * time.Second
	e.Eventually("DisruptionTarget False", func() (bool, string) {
		p, err := e.Client.Pods().Get(e.Ctx, "default", pods[0].Name)
		if err != nil {
			return false, err.Error()
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget {
				return c.Status == corev1.ConditionFalse, fmt.Sprintf("%+v", c)
			}
		}
		return false, "no DisruptionTarget condition"
	})
}
