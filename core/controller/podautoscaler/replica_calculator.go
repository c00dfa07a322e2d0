package podautoscaler

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The replica calculator (upstream replica_calculator.go): from the pods'
// usage and their requests, how many replicas would bring the average to
// the target.
//
//	ratio    = current utilization / target utilization
//	desired  = ceil(ratio × ready pods)           (|1 − ratio| ≤ tolerance: no change)
//
// with the pods that cannot be trusted set aside first:
//
//	deleted or Failed           ignored
//	Pending                     unready
//	no sample yet               missing
//	cpu, and not Ready, or just started (within CPUInitializationPeriod,
//	before a whole sample window passed since it turned Ready)
//	                            unready
//
// and then put back pessimistically: on a scale up, missing and unready
// pods count as using nothing; on a scale down, missing pods count as using
// all they requested (or the target, when it is over 100 %). If that flips
// the direction, or lands within the tolerance, nothing changes.

// podMetric is one pod's usage: milli-units (of cpu, or bytes × 1000 of
// memory) summed over its containers, when and over which window.
type podMetric struct {
	value     int64
	timestamp time.Time
	window    time.Duration
}

// replicaCalculator holds the tunables of the controller's flags.
type replicaCalculator struct {
	tolerance                     float64
	cpuInitializationPeriod       time.Duration
	delayOfInitialReadinessStatus time.Duration
}

// podMetricsFor sums the containers of each pod sample (container "" for
// all of them).
func podMetricsFor(samples []metricsv1beta1.PodMetrics, res corev1.ResourceName, container string) map[string]podMetric {
	out := map[string]podMetric{}
	for _, s := range samples {
		var sum int64
		found := false
		for _, c := range s.Containers {
			if container != "" && c.Name != container {
				continue
			}
			if q, ok := c.Usage[res]; ok {
				sum += q.MilliValue()
				found = true
			}
		}
		if found {
			out[s.Name] = podMetric{value: sum, timestamp: s.Timestamp.Time, window: s.Window.Duration}
		}
	}
	return out
}

// groupPods is upstream's groupPods.
func (rc *replicaCalculator) groupPods(pods []*corev1.Pod, metrics map[string]podMetric, res corev1.ResourceName, now time.Time) (ready int, unready, missing, ignored map[string]bool) {
	unready, missing, ignored = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignored[pod.Name] = true
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			unready[pod.Name] = true
			continue
		}
		m, ok := metrics[pod.Name]
		if !ok {
			missing[pod.Name] = true
			continue
		}
		if res == corev1.ResourceCPU {
			var cond *corev1.PodCondition
			for i := range pod.Status.Conditions {
				if pod.Status.Conditions[i].Type == corev1.PodReady {
					cond = &pod.Status.Conditions[i]
				}
			}
			isUnready := false
			switch {
			case cond == nil || pod.Status.StartTime == nil:
				isUnready = true
			case pod.Status.StartTime.Add(rc.cpuInitializationPeriod).After(now):
				// Still starting: a sample taken before one whole window
				// passed since it turned Ready may hold its start-up burst.
				isUnready = cond.Status == corev1.ConditionFalse || m.timestamp.Before(cond.LastTransitionTime.Add(m.window))
			default:
				// Unready and never been ready.
				isUnready = cond.Status == corev1.ConditionFalse && pod.Status.StartTime.Add(rc.delayOfInitialReadinessStatus).After(cond.LastTransitionTime.Time)
			}
			if isUnready {
				unready[pod.Name] = true
				continue
			}
		}
		ready++
	}
	return ready, unready, missing, ignored
}

// podRequests is upstream's calculatePodRequests: each pod's request of the
// resource (of one container, or of all), in milli-units.
func podRequests(pods []*corev1.Pod, container string, res corev1.ResourceName) (map[string]int64, error) {
	out := map[string]int64{}
	for _, pod := range pods {
		var sum int64
		for _, c := range pod.Spec.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Resources.Requests[res]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", res, c.Name, pod.Name)
			}
			sum += q.MilliValue()
		}
		out[pod.Name] = sum
	}
	return out, nil
}

// utilizationRatio is upstream's GetResourceUtilizationRatio.
func utilizationRatio(metrics map[string]podMetric, requests map[string]int64, target int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var metricsTotal, requestsTotal int64
	n := 0
	for name, m := range metrics {
		req, ok := requests[name]
		if !ok {
			continue // a pod the scale's selector does not pick
		}
		metricsTotal += m.value
		requestsTotal += req
		n++
	}
	if requestsTotal == 0 {
		return 0, 0, 0, fmt.Errorf("no metrics returned matched known pods")
	}
	utilization = int32(metricsTotal * 100 / requestsTotal)
	return float64(utilization) / float64(target), utilization, metricsTotal / int64(n), nil
}

// plainRatio is GetMetricUsageRatio for an average-value target.
func plainRatio(metrics map[string]podMetric, target int64) (float64, int64) {
	var sum int64
	for _, m := range metrics {
		sum += m.value
	}
	avg := sum / int64(len(metrics))
	return float64(avg) / float64(target), avg
}

// resourceReplicas is upstream's GetResourceReplicas (target utilization
// in percent) and GetRawResourceReplicas (targetAverage > 0, milli-units).
// It returns the replica count, the utilization (0 for raw targets) and
// the average raw usage per pod.
func (rc *replicaCalculator) resourceReplicas(current int32, target int32, targetAverage int64, res corev1.ResourceName, container string,
	pods []*corev1.Pod, samples []metricsv1beta1.PodMetrics, now time.Time) (int32, int32, int64, error) {
	metrics := podMetricsFor(samples, res, container)
	if len(metrics) == 0 {
		return 0, 0, 0, fmt.Errorf("unable to get metrics for resource %s: no metrics returned from resource metrics API", res)
	}
	if len(pods) == 0 {
		return 0, 0, 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := rc.groupPods(pods, metrics, res, now)
	for name := range ignored {
		delete(metrics, name)
	}
	for name := range unready {
		delete(metrics, name)
	}
	var requests map[string]int64
	if targetAverage == 0 {
		var err error
		if requests, err = podRequests(pods, container, res); err != nil {
			return 0, 0, 0, err
		}
	}
	if len(metrics) == 0 {
		return 0, 0, 0, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratioOf := func() (float64, int32, int64, error) {
		if targetAverage > 0 {
			r, avg := plainRatio(metrics, targetAverage)
			return r, 0, avg, nil
		}
		return utilizationRatio(metrics, requests, target)
	}
	ratio, utilization, raw, err := ratioOf()
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if math.Abs(1.0-ratio) <= rc.tolerance {
			return current, utilization, raw, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), utilization, raw, nil
	}
	if len(missing) > 0 {
		switch {
		case ratio < 1.0:
			for name := range missing {
				if targetAverage > 0 {
					metrics[name] = podMetric{value: targetAverage}
				} else {
					fallback := int64(max(100, target))
					metrics[name] = podMetric{value: requests[name] * fallback / 100}
				}
			}
		case ratio > 1.0:
			for name := range missing {
				metrics[name] = podMetric{value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			metrics[name] = podMetric{value: 0}
		}
	}
	newRatio, _, _, err := ratioOf()
	if err != nil {
		return 0, 0, 0, err
	}
	if math.Abs(1.0-newRatio) <= rc.tolerance || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, utilization, raw, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, utilization, raw, nil
	}
	return n, utilization, raw, nil
}
