package kubectl

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// `kubectl describe hpa` and `describe quota`, laid out as upstream's
// HorizontalPodAutoscalerDescriber (its v2 form) and ResourceQuotaDescriber.

func (d *describer) hpa(h *autoscalingv2.HorizontalPodAutoscaler) (string, error) {
	var events *corev1.EventList
	if d.events {
		events = d.searchEvents("HorizontalPodAutoscaler", h.Namespace, h.Name, string(h.UID))
	}
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", h.Name)
		w.Write(level0, "Namespace:\t%s\n", h.Namespace)
		printLabels(w, "Labels", h.Labels)
		printAnnotations(w, "Annotations", h.Annotations)
		w.Write(level0, "CreationTimestamp:\t%s\n", h.CreationTimestamp.Time.Format(time.RFC1123Z))
		w.Write(level0, "Reference:\t%s/%s\n", h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
		w.Write(level0, "Metrics:\t( current / target )\n")
		for i, m := range h.Spec.Metrics {
			var cur autoscalingv2.MetricStatus
			if i < len(h.Status.CurrentMetrics) {
				cur = h.Status.CurrentMetrics[i]
			}
			switch m.Type {
			case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
				name, target, prefix := corev1.ResourceName(""), autoscalingv2.MetricTarget{}, "resource %s on pods"
				var value *autoscalingv2.MetricValueStatus
				if m.Resource != nil {
					name, target = m.Resource.Name, m.Resource.Target
					if cur.Resource != nil {
						value = &cur.Resource.Current
					}
				} else {
					name, target = m.ContainerResource.Name, m.ContainerResource.Target
					prefix = "resource %s of container \"" + m.ContainerResource.Container + "\" on pods"
					if cur.ContainerResource != nil {
						value = &cur.ContainerResource.Current
					}
				}
				w.Write(level1, prefix, name)
				current := "<unknown>"
				if target.AverageValue != nil {
					if value != nil {
						current = value.AverageValue.String()
					}
					w.Write(level0, ":\t%s / %s\n", current, target.AverageValue.String())
					continue
				}
				if value != nil && value.AverageUtilization != nil {
					current = fmt.Sprintf("%d%% (%s)", *value.AverageUtilization, value.AverageValue.String())
				}
				tgt := "<auto>"
				if target.AverageUtilization != nil {
					tgt = fmt.Sprintf("%d%%", *target.AverageUtilization)
				}
				w.Write(level1, "(as a percentage of request):\t%s / %s\n", current, tgt)
			case autoscalingv2.PodsMetricSourceType:
				current := "<unknown>"
				if cur.Pods != nil {
					current = cur.Pods.Current.AverageValue.String()
				}
				w.Write(level1, "%q on pods:\t%s / %s\n", m.Pods.Metric.Name, current, m.Pods.Target.AverageValue.String())
			default:
				w.Write(level1, "<unknown metric type %q>\n", string(m.Type))
			}
		}
		min := "<unset>"
		if h.Spec.MinReplicas != nil {
			min = fmt.Sprintf("%d", *h.Spec.MinReplicas)
		}
		w.Write(level0, "Min replicas:\t%s\n", min)
		w.Write(level0, "Max replicas:\t%d\n", h.Spec.MaxReplicas)
		if b := h.Spec.Behavior; b != nil {
			w.Write(level0, "Behavior:\n")
			describeScalingRules(w, "Scale Up", b.ScaleUp)
			describeScalingRules(w, "Scale Down", b.ScaleDown)
		}
		w.Write(level0, "%s pods:\t%d current / %d desired\n", h.Spec.ScaleTargetRef.Kind, h.Status.CurrentReplicas, h.Status.DesiredReplicas)
		if len(h.Status.Conditions) > 0 {
			w.Write(level0, "Conditions:\n")
			w.Write(level1, "Type\tStatus\tReason\tMessage\n")
			w.Write(level1, "----\t------\t------\t-------\n")
			for _, c := range h.Status.Conditions {
				w.Write(level1, "%v\t%v\t%v\t%v\n", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		if events != nil {
			d.describeEvents(w, events)
		}
		return nil
	})
}

func describeScalingRules(w *prefixWriter, direction string, r *autoscalingv2.HPAScalingRules) {
	if r == nil {
		return
	}
	w.Write(level1, "%s:\n", direction)
	if r.StabilizationWindowSeconds != nil {
		w.Write(level2, "Stabilization Window: %d seconds\n", *r.StabilizationWindowSeconds)
	}
	if len(r.Policies) > 0 {
		sel := autoscalingv2.MaxChangePolicySelect
		if r.SelectPolicy != nil {
			sel = *r.SelectPolicy
		}
		w.Write(level2, "Select Policy: %s\n", sel)
		w.Write(level2, "Policies:\n")
		for _, p := range r.Policies {
			w.Write(level3, "- Type: %s\tValue: %d\tPeriod: %d seconds\n", p.Type, p.Value, p.PeriodSeconds)
		}
	}
}

func (d *describer) resourceQuota(q *corev1.ResourceQuota) (string, error) {
	return tabbedString(func(out io.Writer) error {
		w := &prefixWriter{out}
		w.Write(level0, "Name:\t%s\n", q.Name)
		w.Write(level0, "Namespace:\t%s\n", q.Namespace)
		if len(q.Spec.Scopes) > 0 {
			scopes := make([]string, 0, len(q.Spec.Scopes))
			for _, s := range q.Spec.Scopes {
				scopes = append(scopes, string(s))
			}
			sort.Strings(scopes)
			w.Write(level0, "Scopes:\t%s\n", strings.Join(scopes, ", "))
			for _, s := range scopes {
				if help := quotaScopeHelp[s]; help != "" {
					w.Write(level0, " * %s\n", help)
				}
			}
		}
		w.Write(level0, "Resource\tUsed\tHard\n")
		w.Write(level0, "--------\t----\t----\n")
		names := make([]string, 0, len(q.Status.Hard))
		for n := range q.Status.Hard {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			hard, used := q.Status.Hard[corev1.ResourceName(n)], q.Status.Used[corev1.ResourceName(n)]
			if hard.Format != used.Format {
				used = *resource.NewQuantity(used.Value(), hard.Format)
			}
			w.Write(level0, "%v\t%v\t%v\n", n, used.String(), hard.String())
		}
		return nil
	})
}

// quotaScopeHelp is upstream's helpTextForResourceQuotaScope.
var quotaScopeHelp = map[string]string{
	"Terminating":    "Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.",
	"NotTerminating": "Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.",
	"BestEffort":     "Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.",
	"NotBestEffort":  "Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.",
}
