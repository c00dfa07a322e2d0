package clientgo_test

import (
	"context"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// TestQuotaAndHPAInformersSync: client-go's shared informers for
// ResourceQuotas, LimitRanges and HorizontalPodAutoscalers (both v2 and
// v1, one storage) list and watch kubetab in protobuf, and see what the
// controllers write: a quota's status.used, an HPA's conditions.
func TestQuotaAndHPAInformersSync(t *testing.T) {
	tc := startCluster(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(tc.cs, 0)
	quotas := f.Core().V1().ResourceQuotas()
	limits := f.Core().V1().LimitRanges()
	hpas := f.Autoscaling().V2().HorizontalPodAutoscalers()
	hpasV1 := f.Autoscaling().V1().HorizontalPodAutoscalers()
	synced := []cache.InformerSynced{quotas.Informer().HasSynced, limits.Informer().HasSynced, hpas.Informer().HasSynced, hpasV1.Informer().HasSynced}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	if _, err := tc.cs.CoreV1().ResourceQuotas("default").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/deployments.apps": resource.MustParse("5")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.cs.CoreV1().LimitRanges("default").Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "lr"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fifty := int32(50)
	if _, err := tc.cs.AutoscalingV1().HorizontalPodAutoscalers("default").Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3, TargetCPUUtilizationPercentage: &fifty,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "missing"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the quota's status.used", func() bool {
		q, err := quotas.Lister().ResourceQuotas("default").Get("q")
		if err != nil {
			return false
		}
		used, ok := q.Status.Used["count/deployments.apps"]
		return ok && used.IsZero()
	})
	waitFor(t, "the LimitRange's defaulted request", func() bool {
		lr, err := limits.Lister().LimitRanges("default").Get("lr")
		return err == nil && lr.Spec.Limits[0].DefaultRequest.Cpu().String() == "200m"
	})
	// The target does not exist: the controller says so in AbleToScale,
	// which the v1 view carries in its conditions annotation.
	waitFor(t, "the HPA's AbleToScale condition", func() bool {
		h, err := hpas.Lister().HorizontalPodAutoscalers("default").Get("web")
		if err != nil || len(h.Spec.Metrics) != 1 {
			return false
		}
		for _, c := range h.Status.Conditions {
			if c.Type == autoscalingv2.AbleToScale && c.Status == corev1.ConditionFalse && c.Reason == "FailedGetScale" {
				return true
			}
		}
		return false
	})
	waitFor(t, "the v1 view's conditions annotation", func() bool {
		h, err := hpasV1.Lister().HorizontalPodAutoscalers("default").Get("web")
		return err == nil && h.Annotations["autoscaling.alpha.kubernetes.io/conditions"] != ""
	})
}
