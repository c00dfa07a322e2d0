package registry

import (
	"context"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// quotaWithStatus creates a quota and writes its status as the resource
// quota controller would.
func quotaWithStatus(t *testing.T, reg *Registry, name string, hard, used corev1.ResourceList) {
	t.Helper()
	q := mustCreate(t, reg, &corev1.ResourceQuota{ObjectMeta: objMeta(name), Spec: corev1.ResourceQuotaSpec{Hard: hard}})
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if _, err := storeFor(t, reg, q).Update(context.Background(), q, UpdateOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
}

func withResources(req, lim corev1.ResourceList) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: req, Limits: lim}
	}
}

func TestResourceQuotaAdmission(t *testing.T) {
	reg := newRegistry(t)
	quotaWithStatus(t, reg, "q", rl("pods", "2"), rl("pods", "0"))
	// A dry run is checked but charges nothing.
	if _, err := storeFor(t, reg, &corev1.Pod{}).Create(context.Background(), "default", pod("dry"), CreateOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if q := get(t, reg, &corev1.ResourceQuota{}, "default", "q"); q.Status.Used.Pods().String() != "0" {
		t.Fatalf("used after a dry run: %v", q.Status.Used)
	}
	mustCreate(t, reg, pod("a"))
	mustCreate(t, reg, pod("b"))
	// Each admitted pod is charged at once.
	if q := get(t, reg, &corev1.ResourceQuota{}, "default", "q"); q.Status.Used.Pods().String() != "2" {
		t.Fatalf("used after two pods: %v", q.Status.Used)
	}
	_, err := create(t, reg, pod("x"))
	wantStatus(t, err, 403, `pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`)
	// Nothing was stored, nothing more charged.
	if _, err := storeFor(t, reg, &corev1.Pod{}).Get(context.Background(), "default", "x"); err == nil {
		t.Error("pod x was stored")
	}
	if q := get(t, reg, &corev1.ResourceQuota{}, "default", "q"); q.Status.Used.Pods().String() != "2" {
		t.Errorf("used after the refusal: %v", q.Status.Used)
	}
	// Another namespace is not limited.
	mustCreate(t, reg, pod("x", func(p *corev1.Pod) { p.Namespace = "kube-system" }))
}

func TestResourceQuotaComputeAdmission(t *testing.T) {
	cases := []struct {
		name     string
		hard     corev1.ResourceList
		used     corev1.ResourceList
		pod      *corev1.Pod
		want     string // "" admitted
		wantUsed corev1.ResourceList
		noStatus bool
	}{
		{name: "limits required", hard: rl("limits.cpu", "2"), used: rl("limits.cpu", "0"), pod: pod("p"),
			want: `pods "p" is forbidden: failed quota: q: must specify limits.cpu for: app`},
		{name: "both required, sorted", hard: rl("limits.cpu", "2", "requests.memory", "1Gi"), used: rl("limits.cpu", "0", "requests.memory", "0"),
			pod:  pod("p", withResources(nil, rl("cpu", "1"))),
			want: `pods "p" is forbidden: failed quota: q: must specify requests.memory for: app`},
		{name: "cpu exceeded", hard: rl("requests.cpu", "1", "pods", "10"), used: rl("requests.cpu", "800m", "pods", "3"),
			pod:  pod("p", withResources(rl("cpu", "300m"), nil)),
			want: `pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1`},
		{name: "within", hard: rl("requests.cpu", "1", "limits.cpu", "2", "pods", "10"), used: rl("requests.cpu", "500m", "limits.cpu", "0", "pods", "3"),
			pod:      pod("p", withResources(rl("cpu", "250m"), rl("cpu", "500m"))),
			wantUsed: rl("requests.cpu", "750m", "limits.cpu", "500m", "pods", "4")},
		{name: "status unknown", hard: rl("pods", "1"), noStatus: true, pod: pod("p")},
		{name: "used missing", hard: rl("pods", "1", "requests.cpu", "1"), used: rl("pods", "0"),
			pod: pod("p", withResources(rl("cpu", "1"), nil)), want: `pods "p" is forbidden: status unknown for quota: q, resources: requests.cpu`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			if tc.noStatus {
				// The controller has not filled status.hard: nothing is limited yet.
				mustCreate(t, reg, &corev1.ResourceQuota{ObjectMeta: objMeta("q"), Spec: corev1.ResourceQuotaSpec{Hard: tc.hard}})
			} else {
				quotaWithStatus(t, reg, "q", tc.hard, tc.used)
			}
			_, err := create(t, reg, tc.pod)
			if tc.want != "" {
				wantStatus(t, err, 403, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantUsed != nil {
				q := get(t, reg, &corev1.ResourceQuota{}, "default", "q")
				for k, v := range tc.wantUsed {
					if got := q.Status.Used[k]; got.Cmp(v) != 0 {
						t.Errorf("used %s = %s, want %s", k, got.String(), v.String())
					}
				}
			}
		})
	}
}

func TestResourceQuotaObjectCounts(t *testing.T) {
	reg := newRegistry(t)
	quotaWithStatus(t, reg, "q", rl("configmaps", "3", "count/services", "0"), rl("configmaps", "2", "count/services", "0"))
	// kube-root-ca.crt is not counted here (the status says 2: the test's
	// own accounting); one more fits, the next does not.
	mustCreate(t, reg, &corev1.ConfigMap{ObjectMeta: objMeta("one")})
	_, err := create(t, reg, &corev1.ConfigMap{ObjectMeta: objMeta("two")})
	wantStatus(t, err, 403, `configmaps "two" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3`)
	_, err = create(t, reg, &corev1.Service{ObjectMeta: objMeta("svc"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	wantStatus(t, err, 403, `services "svc" is forbidden: exceeded quota: q, requested: count/services=1, used: count/services=0, limited: count/services=0`)
}

func TestResourceQuotaValidation(t *testing.T) {
	cases := []struct {
		hard corev1.ResourceList
		want string
	}{
		{rl("pods", "-1"), `spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0`},
		{rl("pods", "1500m"), `spec.hard[pods]: Invalid value: "1500m": must be an integer`},
		{rl("widgets", "1"), `spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota`},
	}
	for _, tc := range cases {
		reg := newRegistry(t)
		_, err := create(t, reg, &corev1.ResourceQuota{ObjectMeta: objMeta("q"), Spec: corev1.ResourceQuotaSpec{Hard: tc.hard}})
		wantStatus(t, err, 422, tc.want)
	}
	reg := newRegistry(t)
	mustCreate(t, reg, &corev1.ResourceQuota{ObjectMeta: objMeta("ok"), Spec: corev1.ResourceQuotaSpec{Hard: rl("count/deployments.apps", "3", "requests.nvidia.com/gpu", "1")}})
}

func TestLimitRanger(t *testing.T) {
	reg := newRegistry(t)
	lr := mustCreate(t, reg, &corev1.LimitRange{ObjectMeta: objMeta("limits"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Max: rl("cpu", "1"), DefaultRequest: rl("memory", "64Mi"), Default: rl("memory", "128Mi"),
		MaxLimitRequestRatio: rl("cpu", "4"),
	}}}})
	// SetDefaults_LimitRangeItem: the default limit of cpu is its max, and
	// the default request is the default limit.
	if d, r := lr.Spec.Limits[0].Default[corev1.ResourceCPU], lr.Spec.Limits[0].DefaultRequest[corev1.ResourceCPU]; d.String() != "1" || r.String() != "1" {
		t.Errorf("defaulted cpu: default %s, defaultRequest %s", d.String(), r.String())
	}
	p := mustCreate(t, reg, pod("defaults"))
	res := p.Spec.Containers[0].Resources
	if res.Limits.Cpu().String() != "1" || res.Requests.Cpu().String() != "1" || res.Limits.Memory().String() != "128Mi" || res.Requests.Memory().String() != "64Mi" {
		t.Errorf("resources after LimitRanger: %+v", res)
	}
	if got := p.Annotations[limitRangerAnnotation]; got != "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app" {
		t.Errorf("annotation %q", got)
	}
	// A limit without a request gets the limit as its request first.
	p = mustCreate(t, reg, pod("limit-only", withResources(nil, rl("cpu", "500m"))))
	if r := p.Spec.Containers[0].Resources.Requests.Cpu(); r.String() != "500m" {
		t.Errorf("request of a limit-only container: %s", r.String())
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"over max", pod("big", withResources(nil, rl("cpu", "2"))), `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"ratio", pod("ratio", withResources(rl("cpu", "100m"), rl("cpu", "1"))),
			`pods "ratio" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000`},
	}
	for _, tc := range cases {
		_, err := create(t, reg, tc.pod)
		wantStatus(t, err, 403, tc.want)
	}
	mustCreate(t, reg, &corev1.LimitRange{ObjectMeta: objMeta("mins"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypePod, Min: rl("memory", "100Mi"),
	}}}})
	_, err := create(t, reg, pod("small", withResources(rl("memory", "50Mi"), nil)))
	wantStatus(t, err, 403, `pods "small" is forbidden: minimum memory usage per Pod is 100Mi, but request is 50Mi`)
}

func TestLimitRangeValidation(t *testing.T) {
	cases := []struct {
		item corev1.LimitRangeItem
		want string
	}{
		{corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("cpu", "2"), Max: rl("cpu", "1")}, "min value 2 is greater than max value 1"},
		{corev1.LimitRangeItem{Type: corev1.LimitTypePod, Default: rl("cpu", "1")}, "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"},
		{corev1.LimitRangeItem{Type: "Node"}, `spec.limits[0].type: Unsupported value: "Node": supported values: "Container", "PersistentVolumeClaim", "Pod"`},
		{corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "500m")}, "ratio 500m is less than 1"},
	}
	for _, tc := range cases {
		reg := newRegistry(t)
		_, err := create(t, reg, &corev1.LimitRange{ObjectMeta: objMeta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{tc.item}}})
		wantStatus(t, err, 422, tc.want)
	}
}

func TestHPAVersions(t *testing.T) {
	reg := newRegistry(t)
	fifty := int32(50)
	v1 := mustCreate(t, reg, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: objMeta("web"), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MaxReplicas:    5, TargetCPUUtilizationPercentage: &fifty,
	}})
	if v1.Spec.MinReplicas == nil || *v1.Spec.MinReplicas != 1 {
		t.Errorf("v1 minReplicas %v", v1.Spec.MinReplicas)
	}
	// Stored once, as v2.
	v2 := get(t, reg, &autoscalingv2.HorizontalPodAutoscaler{}, "default", "web")
	if len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 {
		t.Fatalf("v2 view: %+v", v2.Spec.Metrics)
	}
	if v2.ResourceVersion != v1.ResourceVersion {
		t.Errorf("resourceVersion v1 %s, v2 %s", v1.ResourceVersion, v2.ResourceVersion)
	}
	// What v1 cannot say goes into its annotations, and back.
	v2.Spec.Metrics = append(v2.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(100<<20, resource.BinarySI)}}})
	v2.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	v2 = mustUpdate(t, reg, v2)
	if b := v2.Spec.Behavior; b.ScaleUp == nil || len(b.ScaleUp.Policies) != 2 || b.ScaleDown.StabilizationWindowSeconds != nil {
		t.Errorf("defaulted behavior %+v", b)
	}
	v1 = get(t, reg, &autoscalingv1.HorizontalPodAutoscaler{}, "default", "web")
	want := `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]`
	if got := v1.Annotations[hpaMetricsAnnotation]; got != want {
		t.Errorf("metrics annotation %s, want %s", got, want)
	}
	if _, ok := v1.Annotations[hpaBehaviorAnnotation]; !ok {
		t.Error("no behavior annotation")
	}
	// A v1 write keeps them: the round trip loses nothing.
	v1.Spec.MaxReplicas = 7
	mustUpdate(t, reg, v1)
	v2 = get(t, reg, &autoscalingv2.HorizontalPodAutoscaler{}, "default", "web")
	if v2.Spec.MaxReplicas != 7 || len(v2.Spec.Metrics) != 2 || v2.Spec.Behavior == nil || len(v2.Annotations) != 0 {
		t.Errorf("after a v1 update: max %d metrics %d behavior %v annotations %v", v2.Spec.MaxReplicas, len(v2.Spec.Metrics), v2.Spec.Behavior, v2.Annotations)
	}
}

func TestHPAValidation(t *testing.T) {
	zero := int32(0)
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	cases := []struct {
		spec autoscalingv2.HorizontalPodAutoscalerSpec
		want string
	}{
		{autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MinReplicas: &zero, MaxReplicas: 3}, "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"},
		{autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 0}, "spec.maxReplicas: Invalid value: 0: must be greater than 0"},
		{autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Name: "web"}, MaxReplicas: 3}, "spec.scaleTargetRef.kind: Required value"},
		{autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Percent", Value: 10, PeriodSeconds: 1801}}}}},
			"spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be greater than zero and less than or equal to 1800"},
	}
	for _, tc := range cases {
		reg := newRegistry(t)
		_, err := create(t, reg, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default"}, Spec: tc.spec})
		wantStatus(t, err, 422, tc.want)
	}
}
