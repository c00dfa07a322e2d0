package podautoscaler

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/authz"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/store"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// env is a registry with a metrics store, the clock, and helpers that play
// the kubelets (pods Running and Ready, their usage samples).
type env struct {
	t       *testing.T
	ctx     context.Context
	clk     *testingclock.FakeClock
	reg     *registry.Registry
	c       *client.Client
	metrics *registry.MetricsStore
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	ms := registry.NewMetricsStore()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk, Metrics: ms})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, clk: clk, reg: reg, c: client.New(reg, "test"), metrics: ms}
	if _, err := e.c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	_, err = e.c.Deployments().Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cpu", Image: "cpu"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// readyPod creates a Running, Ready pod of web that started 10 minutes
// ago and requests 100m of cpu.
func (e *env) readyPod(name string) {
	e.t.Helper()
	p, err := e.c.Pods().Create(e.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cpu", Image: "cpu", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}})
	if err != nil {
		e.t.Fatal(err)
	}
	started := metav1.NewTime(e.clk.Now().Add(-10 * time.Minute))
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}
	if _, err := e.c.Pods().UpdateStatus(e.ctx, p); err != nil {
		e.t.Fatal(err)
	}
}

// usage sets every web pod's cpu sample to milli millicores.
func (e *env) usage(milli int64, pods ...string) {
	for _, name := range pods {
		e.metrics.SetPodMetrics(metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
			Timestamp:  metav1.NewTime(e.clk.Now()), Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "cpu", Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}},
		})
	}
}

func (e *env) replicas() int32 {
	d, err := e.c.Deployments().Get(e.ctx, "default", "web")
	if err != nil {
		e.t.Fatal(err)
	}
	return *d.Spec.Replicas
}

func (e *env) hpa() *autoscalingv2.HorizontalPodAutoscaler {
	h, err := client.For[*autoscalingv2.HorizontalPodAutoscaler](e.c, "autoscaling", "horizontalpodautoscalers").Get(e.ctx, "default", "web")
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func condition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range h.Status.Conditions {
		if c.Type == t {
			return fmt.Sprintf("%s %s %s", c.Status, c.Reason, c.Message)
		}
	}
	return "<none>"
}

// until steps the fake clock one second at a time (the controller syncs
// every 15 s of it) until cond holds, within a real-time deadline.
func (e *env) until(what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s (clock +%v): %s", what, e.clk.Since(t0), msg)
		}
		time.Sleep(2 * time.Millisecond)
		e.clk.Step(time.Second)
	}
}

func (e *env) hasEvent(reason, message string) (bool, string) {
	evs, _, err := e.c.Events().List(e.ctx, "default", client.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	var seen []string
	for _, ev := range evs {
		if ev.Reason == reason && ev.Message == message && ev.Source.Component == Component {
			return true, ""
		}
		seen = append(seen, ev.Reason+": "+ev.Message)
	}
	return false, fmt.Sprint(seen)
}

// TestScaleUpAndDown is the whole story on a fake clock: busy pods scale
// the Deployment up at once; idle ones scale it down only after the
// downscale stabilization window.
func TestScaleUpAndDown(t *testing.T) {
	e := newEnv(t)
	e.readyPod("web-a")
	e.usage(200, "web-a") // 200 % of its request, target 50 %
	ctl, err := New(Config{Client: client.New(e.reg, Component), Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	go ctl.Run(e.ctx)
	fifty := int32(50)
	one := int32(1)
	_, err = client.For[*autoscalingv2.HorizontalPodAutoscaler](e.c, "autoscaling", "horizontalpodautoscalers").Create(e.ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &one, MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &fifty}}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	// ratio 4 × 1 pod: 4 (also the most one step may reach from 1).
	e.until("scale up to 4", func() (bool, string) {
		return e.replicas() == 4, fmt.Sprint(e.replicas(), " ", condition(e.hpa(), "ScalingActive"))
	})
	e.until("SuccessfulRescale", func() (bool, string) {
		return e.hasEvent("SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
	})
	h := e.hpa()
	if got := condition(h, autoscalingv2.ScalingActive); got != "True ValidMetricFound the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" {
		t.Errorf("ScalingActive %s", got)
	}
	if got := condition(h, autoscalingv2.AbleToScale); got != "True SucceededRescale the HPA controller was able to update the target scale to 4" {
		t.Errorf("AbleToScale %s", got)
	}
	if h.Status.DesiredReplicas != 4 || h.Status.LastScaleTime == nil || *h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != 200 {
		t.Errorf("status %+v", h.Status)
	}
	scaledUp := e.clk.Now()

	// The ReplicaSet's new pods arrive; the load spreads: 52 % is within
	// the tolerance of 50 %, nothing changes.
	pods := []string{"web-a", "web-b", "web-c", "web-d"}
	for _, p := range pods[1:] {
		e.readyPod(p)
	}
	e.usage(52, pods...)
	e.until("within tolerance", func() (bool, string) {
		h := e.hpa()
		cur := h.Status.CurrentMetrics
		return len(cur) == 1 && cur[0].Resource.Current.AverageUtilization != nil && *cur[0].Resource.Current.AverageUtilization == 52, fmt.Sprint(cur)
	})
	if e.replicas() != 4 {
		t.Fatalf("replicas %d within the tolerance", e.replicas())
	}

	// Idle: the recommendation is 1, but 4 was recommended less than 5
	// minutes ago.
	e.usage(5, pods...)
	e.until("ScaleDownStabilized", func() (bool, string) {
		got := condition(e.hpa(), autoscalingv2.AbleToScale)
		return got == "True ScaleDownStabilized recent recommendations were higher than current one, applying the highest recent recommendation", got
	})
	if e.replicas() != 4 || e.clk.Since(scaledUp) >= DefaultDownscaleStabilization {
		t.Fatalf("replicas %d at +%v", e.replicas(), e.clk.Since(scaledUp))
	}
	e.until("scale down to 1", func() (bool, string) {
		e.usage(5, pods...)
		return e.replicas() == 1, fmt.Sprint(e.replicas())
	})
	if waited := e.clk.Since(scaledUp); waited < DefaultDownscaleStabilization {
		t.Errorf("scaled down after %v, before the window of %v", waited, DefaultDownscaleStabilization)
	}
	e.until("SuccessfulRescale down", func() (bool, string) {
		return e.hasEvent("SuccessfulRescale", "New size: 1; reason: All metrics below target")
	})
}

func TestReplicaCalculator(t *testing.T) {
	now := t0
	started := metav1.NewTime(now.Add(-10 * time.Minute))
	pod := func(name string, phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			Status: corev1.PodStatus{Phase: phase, StartTime: &started, Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}}}
	}
	sample := func(name string, milli int64) metricsv1beta1.PodMetrics {
		return metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.NewTime(now), Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "c", Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}}}
	}
	running := corev1.PodRunning
	cases := []struct {
		name    string
		current int32
		pods    []*corev1.Pod
		samples []metricsv1beta1.PodMetrics
		want    int32
		wantErr string
	}{
		{"double", 2, []*corev1.Pod{pod("a", running, "True"), pod("b", running, "True")}, []metricsv1beta1.PodMetrics{sample("a", 100), sample("b", 100)}, 4, ""},
		{"tolerance", 2, []*corev1.Pod{pod("a", running, "True"), pod("b", running, "True")}, []metricsv1beta1.PodMetrics{sample("a", 54), sample("b", 54)}, 2, ""},
		// A missing pod counts as idle on a scale up: 2 × 100 % + 0 over 3
		// pods is 66 %, ceil(1.33 × 3) = 4.
		{"missing on scale up", 3, []*corev1.Pod{pod("a", running, "True"), pod("b", running, "True"), pod("c", running, "True")},
			[]metricsv1beta1.PodMetrics{sample("a", 100), sample("b", 100)}, 4, ""},
		// On a scale down a missing pod counts as using all it requested:
		// (10 + 10 + 100) / 300 = 40 % of a 50 % target, ceil(0.8 × 3) = 3
		// = no change.
		{"missing on scale down", 3, []*corev1.Pod{pod("a", running, "True"), pod("b", running, "True"), pod("c", running, "True")},
			[]metricsv1beta1.PodMetrics{sample("a", 10), sample("b", 10)}, 3, ""},
		// Unready pods are left out (b's 500 % is not believed) and then
		// count as idle on a scale up: (200 + 0) / 200 = 100 % of 50 %,
		// 2 × 2 pods = 4.
		{"unready", 2, []*corev1.Pod{pod("a", running, "True"), pod("b", corev1.PodPending, "False")},
			[]metricsv1beta1.PodMetrics{sample("a", 200), sample("b", 500)}, 4, ""},
		{"no metrics", 1, []*corev1.Pod{pod("a", running, "True")}, nil, 0, "unable to get metrics for resource cpu: no metrics returned from resource metrics API"},
		{"no request", 1, []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}, Status: corev1.PodStatus{Phase: running}}},
			[]metricsv1beta1.PodMetrics{sample("a", 1)}, 0, "missing request for cpu in container c of Pod a"},
	}
	rc := replicaCalculator{tolerance: DefaultTolerance, cpuInitializationPeriod: DefaultCPUInitializationPeriod, delayOfInitialReadinessStatus: DefaultInitialReadinessDelay}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _, err := rc.resourceReplicas(tc.current, 50, 0, corev1.ResourceCPU, "", tc.pods, tc.samples, now)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("replicas %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

// TestBehaviorPolicies: with spec.behavior the scale-up policies bound each
// step (Pods 1 per 60 s here), and the scale down window is the
// behavior's.
func TestBehaviorPolicies(t *testing.T) {
	zero, one := int32(0), int32(60)
	pods := autoscalingv2.PodsScalingPolicy
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: []autoscalingv2.HPAScalingPolicy{{Type: pods, Value: 1, PeriodSeconds: one}}},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero},
	}
	e := newEnv(t)
	ctl, err := New(Config{Client: client.New(e.reg, Component), Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10, Behavior: b}}
	got := ctl.normalizeDesiredReplicasWithBehaviors(h, "default/h", 2, 8, 1)
	if got != 3 || condition(h, autoscalingv2.ScalingLimited) != "True ScaleUpLimit the desired replica count is increasing faster than the maximum scale rate" {
		t.Errorf("first step %d, %s", got, condition(h, autoscalingv2.ScalingLimited))
	}
	ctl.storeScaleEvent(b, "default/h", 2, 3)
	e.clk.Step(30 * time.Second)
	if got := ctl.normalizeDesiredReplicasWithBehaviors(h, "default/h", 3, 8, 1); got != 3 {
		t.Errorf("within the period: %d, want 3", got)
	}
	e.clk.Step(31 * time.Second)
	if got := ctl.normalizeDesiredReplicasWithBehaviors(h, "default/h", 3, 8, 1); got != 4 {
		t.Errorf("after the period: %d, want 4", got)
	}
	// No scale-down window: 100 % per 15 s lets it fall at once.
	if got := ctl.normalizeDesiredReplicasWithBehaviors(h, "default/h", 4, 1, 1); got != 1 {
		t.Errorf("scale down with a zero window: %d", got)
	}
}

// refuseMetrics is an authorizer that allows everything but the resource
// metrics API.
type refuseMetrics struct{}

func (refuseMetrics) Authorize(ctx context.Context, a authz.Attributes) (authz.Decision, string, error) {
	if a.APIGroup == registry.MetricsGroupVersion.Group {
		return authz.DecisionNoOpinion, "", nil
	}
	return authz.DecisionAllow, "", nil
}

// The metrics reads are the controller's own requests, authorized like
// the others: refused, the HPA says so in ScalingActive.
func TestMetricsReadsAreAuthorized(t *testing.T) {
	e := newEnv(t)
	e.readyPod("web-a")
	e.usage(200, "web-a")
	u := &authz.User{Name: "system:serviceaccount:kube-system:horizontal-pod-autoscaler", Groups: []string{authz.GroupAuthenticated}}
	ctl, err := New(Config{Client: client.New(e.reg, Component).As(client.Identity{User: u, Authorizer: refuseMetrics{}}), Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	go ctl.Run(e.ctx)
	fifty, one := int32(50), int32(1)
	_, err = client.For[*autoscalingv2.HorizontalPodAutoscaler](e.c, "autoscaling", "horizontalpodautoscalers").Create(e.ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &one, MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &fifty}}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := `False FailedGetResourceMetric the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: ` +
		`unable to fetch metrics from resource metrics API: pods.metrics.k8s.io is forbidden: User "system:serviceaccount:kube-system:horizontal-pod-autoscaler" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"`
	e.until("ScalingActive False", func() (bool, string) {
		got := condition(e.hpa(), autoscalingv2.ScalingActive)
		return got == want, got
	})
	if e.replicas() != 1 {
		t.Errorf("scaled to %d without metrics", e.replicas())
	}
}
