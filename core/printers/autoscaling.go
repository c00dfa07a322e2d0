package printers

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HorizontalPodAutoscalers and ResourceQuotas, as upstream prints them.
//
//	NAME   REFERENCE        TARGETS       MINPODS   MAXPODS   REPLICAS   AGE
//	web    Deployment/web   cpu: 42%/50%  1         5         3          2m
//
//	NAME   AGE   REQUEST                     LIMIT
//	q      1m    pods: 2/2, requests.cpu: 200m/1   limits.cpu: 400m/2

var hpaColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Reference", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
	{Name: "Targets", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
	{Name: "MinPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
	{Name: "MaxPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
	{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var resourceQuotaColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
	{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
}

func init() {
	Register(&autoscalingv2.HorizontalPodAutoscaler{}, hpaColumns, printHPA)
	// The v1 view has the same columns; its metrics are converted first.
	Register(&autoscalingv1.HorizontalPodAutoscaler{}, hpaColumns, func(obj runtime.Object, now time.Time) ([]any, error) {
		return printHPA(hpaV1ToV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)), now)
	})
	Register(&corev1.ResourceQuota{}, resourceQuotaColumns, printResourceQuota)
}

// hpaV1ToV2 keeps what the columns show: the cpu target and its current value.
func hpaV1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas: in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: in.Status.CurrentReplicas}}
	if u := in.Spec.TargetCPUUtilizationPercentage; u != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: u}}}}
	}
	if u := in.Status.CurrentCPUUtilizationPercentage; u != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: u}}}}
	}
	return out
}

func printHPA(obj runtime.Object, now time.Time) ([]any, error) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
	}
	return []any{h.Name, ref, formatHPAMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
		int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), Age(h.CreationTimestamp, now)}, nil
}

// formatHPAMetrics is upstream's: "cpu: 42%/50%", the current value
// <unknown> until the controller has read it, two metrics at most and
// "+ N more...". (A nil quantity prints "<nil>", as upstream's does.)
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	const maximum = 2
	percent := func(u *int32) string { return fmt.Sprintf("%d%%", *u) }
	for i, spec := range specs {
		var st autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = statuses[i]
		}
		cur := "<unknown>"
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			if t := spec.External.Target; t.AverageValue != nil {
				if st.External != nil && st.External.Current.AverageValue != nil {
					cur = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", cur, t.AverageValue.String()))
			} else {
				if st.External != nil {
					cur = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", cur, t.Value.String()))
			}
		case autoscalingv2.PodsMetricSourceType:
			if st.Pods != nil {
				cur = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", cur, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			if t := spec.Object.Target; t.AverageValue != nil {
				if st.Object != nil && st.Object.Current.AverageValue != nil {
					cur = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", cur, t.AverageValue.String()))
			} else {
				if st.Object != nil {
					cur = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", cur, t.Value.String()))
			}
		case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
			name, target := corev1.ResourceName(""), autoscalingv2.MetricTarget{}
			var current *autoscalingv2.MetricValueStatus
			if spec.Type == autoscalingv2.ResourceMetricSourceType {
				name, target = spec.Resource.Name, spec.Resource.Target
				if st.Resource != nil {
					current = &st.Resource.Current
				}
			} else {
				name, target = spec.ContainerResource.Name, spec.ContainerResource.Target
				if st.ContainerResource != nil {
					current = &st.ContainerResource.Current
				}
			}
			if target.AverageValue != nil {
				if current != nil {
					cur = current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", name, cur, target.AverageValue.String()))
			} else {
				if current != nil && current.AverageUtilization != nil {
					cur = percent(current.AverageUtilization)
				}
				tgt := "<auto>"
				if target.AverageUtilization != nil {
					tgt = percent(target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", name, cur, tgt))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > maximum {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:maximum], ", "), len(list)-maximum)
	}
	return strings.Join(list, ", ")
}

// printResourceQuota is upstream's: "used/hard" of each resource, the
// limits.* ones in LIMIT and the rest in REQUEST.
func printResourceQuota(obj runtime.Object, now time.Time) ([]any, error) {
	q := obj.(*corev1.ResourceQuota)
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var req, lim bytes.Buffer
	for _, n := range names {
		w := &req
		if p := strings.Split(n, "."); len(p) > 1 && p[0] == "limits" {
			w = &lim
		}
		used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
		fmt.Fprintf(w, "%s: %s/%s, ", n, used.String(), hard.String())
	}
	return []any{q.Name, Age(q.CreationTimestamp, now), strings.TrimSuffix(req.String(), ", "), strings.TrimSuffix(lim.String(), ", ")}, nil
}
