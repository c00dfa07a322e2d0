// Package podautoscaler is the horizontal pod autoscaler controller: it
// sets a workload's replicas from how busy its pods are.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/podautoscaler
// (horizontal.go, replica_calculator.go).
//
// Every SyncPeriod (15 s, --horizontal-pod-autoscaler-sync-period) each
// HorizontalPodAutoscaler is reconciled:
//
//	GET  <target>/scale            current replicas and the pods' selector
//	                               (AbleToScale False FailedGetScale if not)
//	GET  metrics.k8s.io PodMetrics the pods' usage, as `kubectl top` shows it
//	     + the pods' requests      replica calculator: desired replicas for
//	                               each metric, the largest wins
//	                               (ScalingActive True ValidMetricFound)
//	stabilize and limit            scale-down takes the highest recommendation
//	                               of the last 5 minutes
//	                               (--horizontal-pod-autoscaler-downscale-stabilization);
//	                               without spec.behavior a scale-up may at most
//	                               double (or reach 4); with it, its policies
//	                               (4 pods or 100 % per 15 s up, 100 % per 15 s
//	                               down) bound each step; min and max bound all
//	                               (ScalingLimited)
//	PUT  <target>/scale            the new replicas, event SuccessfulRescale
//	                               "New size: 3; reason: cpu resource
//	                               utilization (percentage of request) above target"
//	PUT  hpa/status                currentReplicas, desiredReplicas,
//	                               currentMetrics, conditions, lastScaleTime
//
// Only the resource metrics API is served here (cpu and memory, from the
// kubelets); Pods, Object and External metrics need custom.metrics.k8s.io or
// external.metrics.k8s.io, which no adapter serves, and say so in
// ScalingActive.
package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
)

// Defaults of kube-controller-manager's flags.
const (
	// Component is the controller's user agent and event source.
	Component = "horizontal-pod-autoscaler"
	// DefaultSyncPeriod is --horizontal-pod-autoscaler-sync-period.
	DefaultSyncPeriod = 15 * time.Second
	// DefaultDownscaleStabilization is --horizontal-pod-autoscaler-downscale-stabilization.
	DefaultDownscaleStabilization = 5 * time.Minute
	// DefaultTolerance is --horizontal-pod-autoscaler-tolerance.
	DefaultTolerance = 0.1
	// DefaultCPUInitializationPeriod is --horizontal-pod-autoscaler-cpu-initialization-period.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultInitialReadinessDelay is --horizontal-pod-autoscaler-initial-readiness-delay.
	DefaultInitialReadinessDelay = 30 * time.Second

	// Without spec.behavior one step may at most double the replicas, or
	// reach scaleUpLimitMinimum.
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times the syncs, the stabilization window and the policies'
	// periods; nil is the real clock.
	Clock clock.WithDelayedExecution
	// SyncPeriod, DownscaleStabilization, Tolerance, CPUInitializationPeriod
	// and InitialReadinessDelay are the flags above; zero is the default.
	SyncPeriod              time.Duration
	DownscaleStabilization  time.Duration
	Tolerance               float64
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
}

type timestampedRecommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// Controller is the horizontal pod autoscaler.
type Controller struct {
	client   *client.Client
	clock    clock.WithDelayedExecution
	recorder *client.Recorder
	period   time.Duration
	window   time.Duration
	calc     replicaCalculator
	queue    *client.Queue[string]

	hpas *client.Informer[*autoscalingv2.HorizontalPodAutoscaler]
	pods *client.Informer[*corev1.Pod]

	mu              sync.Mutex // guards the three maps, by HPA key
	recommendations map[string][]timestampedRecommendation
	scaleUpEvents   map[string][]scaleEvent
	scaleDownEvents map[string][]scaleEvent
}

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	workers := 1
	if err := controller.CheckConfig("podautoscaler", cfg.Client, &workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	if cfg.DownscaleStabilization < 0 {
		return nil, fmt.Errorf("podautoscaler: DownscaleStabilization (%v) must not be negative", cfg.DownscaleStabilization)
	}
	if cfg.DownscaleStabilization == 0 {
		cfg.DownscaleStabilization = DefaultDownscaleStabilization
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.CPUInitializationPeriod <= 0 {
		cfg.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if cfg.InitialReadinessDelay <= 0 {
		cfg.InitialReadinessDelay = DefaultInitialReadinessDelay
	}
	c := &Controller{
		client: cfg.Client, clock: cfg.Clock, period: cfg.SyncPeriod, window: cfg.DownscaleStabilization,
		recorder:        client.NewRecorder(cfg.Client, Component, "", cfg.Clock),
		calc:            replicaCalculator{tolerance: cfg.Tolerance, cpuInitializationPeriod: cfg.CPUInitializationPeriod, delayOfInitialReadinessStatus: cfg.InitialReadinessDelay},
		queue:           client.NewQueue[string](cfg.Clock),
		hpas:            client.NewInformer(client.For[*autoscalingv2.HorizontalPodAutoscaler](cfg.Client, autoscalingv2.GroupName, "horizontalpodautoscalers"), "", client.ListOptions{}),
		pods:            client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		recommendations: map[string][]timestampedRecommendation{},
		scaleUpEvents:   map[string][]scaleEvent{}, scaleDownEvents: map[string][]scaleEvent{},
	}
	c.hpas.AddHandler(client.Handler[*autoscalingv2.HorizontalPodAutoscaler]{
		OnAdd: func(h *autoscalingv2.HorizontalPodAutoscaler) { c.queue.Add(client.Key(h)) },
		OnUpdate: func(old, h *autoscalingv2.HorizontalPodAutoscaler) {
			if !apiequality.Semantic.DeepEqual(old.Spec, h.Spec) {
				c.queue.Add(client.Key(h))
			}
		},
		OnDelete: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			key := client.Key(h)
			c.mu.Lock()
			delete(c.recommendations, key)
			delete(c.scaleUpEvents, key)
			delete(c.scaleDownEvents, key)
			c.mu.Unlock()
		},
	})
	return c, nil
}

// SetDownscaleStabilization changes the window before Run (the
// controller manager's flag).
func (c *Controller) SetDownscaleStabilization(d time.Duration) { c.window = d }

func (c *Controller) informers() []controller.Informer {
	return []controller.Informer{c.hpas, c.pods}
}

// HasSynced reports whether the caches hold their first lists.
func (c *Controller) HasSynced() bool { return controller.Synced(c.informers()...) }

// Run reconciles every HPA each SyncPeriod until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	return controller.Run(ctx, Component, c.informers(), controller.Worker[string]{
		Queue: c.queue, Workers: 1, Reconcile: func(ctx context.Context, key string) error {
			ns, name := controller.SplitKey(key)
			hpa, ok := c.hpas.Get(ns, name)
			if !ok {
				return nil
			}
			// The next look comes after one period whatever happens now
			// (upstream's fixed-interval rate limiter).
			defer c.queue.AddAfter(key, c.period)
			_ = c.Reconcile(ctx, hpa.DeepCopy())
			return nil
		},
	})
}

// targetResource maps a scaleTargetRef to the resource whose scale
// subresource it names.
func targetResource(ref autoscalingv2.CrossVersionObjectReference) (schema.GroupResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupResource{}, err
	}
	res := strings.ToLower(ref.Kind) + "s"
	switch {
	case gv.Group == "apps" && (ref.Kind == "Deployment" || ref.Kind == "ReplicaSet" || ref.Kind == "StatefulSet"):
	case gv.Group == "" && ref.Kind == "ReplicationController":
	default:
		return schema.GroupResource{}, fmt.Errorf("no matches for kind %q in group %q", ref.Kind, gv.Group)
	}
	return schema.GroupResource{Group: gv.Group, Resource: res}, nil
}

// Reconcile is upstream's reconcileAutoscaler for one HPA.
func (c *Controller) Reconcile(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	original := hpa.Status.DeepCopy()
	key := client.Key(hpa)
	ref := fmt.Sprintf("%s/%s/%s", hpa.Spec.ScaleTargetRef.Kind, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name)

	gr, err := targetResource(hpa.Spec.ScaleTargetRef)
	var scale *autoscalingv1.Scale
	if err == nil {
		scale, err = c.client.GetScale(ctx, gr.Group, gr.Resource, hpa.Namespace, hpa.Spec.ScaleTargetRef.Name)
	}
	if err != nil {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		c.updateStatusIfNeeded(ctx, original, hpa)
		return fmt.Errorf("failed to query scale subresource for %s: %v", ref, err)
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	c.recordInitialRecommendation(current, key)

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	var (
		statuses      []autoscalingv2.MetricStatus
		desired       int32
		rescaleReason string
		rescale       = true
	)
	switch {
	case current == 0 && minReplicas != 0:
		// Scaled to zero by hand: autoscaling is off until someone scales up.
		desired, rescale = 0, false
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
	case current > hpa.Spec.MaxReplicas:
		rescaleReason = "Current number of replicas above Spec.MaxReplicas"
		desired = hpa.Spec.MaxReplicas
	case current < minReplicas:
		rescaleReason = "Current number of replicas below Spec.MinReplicas"
		desired = minReplicas
	default:
		metricDesired, metricName, st, err := c.computeReplicasForMetrics(ctx, hpa, scale)
		statuses = st
		if err != nil && metricDesired == -1 {
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			c.updateStatusIfNeeded(ctx, original, hpa)
			c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %v", ref, err)
		}
		rescaleMetric := ""
		if metricDesired > desired {
			desired, rescaleMetric = metricDesired, metricName
		}
		if desired > current {
			rescaleReason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desired < current {
			rescaleReason = "All metrics below target"
		}
		if hpa.Spec.Behavior == nil {
			desired = c.normalizeDesiredReplicas(hpa, key, current, desired, minReplicas)
		} else {
			desired = c.normalizeDesiredReplicasWithBehaviors(hpa, key, current, desired, minReplicas)
		}
		rescale = desired != current
	}
	if rescale {
		scale.Spec.Replicas = desired
		if _, err := c.client.UpdateScale(ctx, gr.Group, gr.Resource, scale); err != nil {
			c.recorder.Eventf(hpa, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, rescaleReason, err.Error())
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			c.updateStatusIfNeeded(ctx, original, hpa)
			return fmt.Errorf("failed to rescale %s: %v", ref, err)
		}
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
		c.recorder.Eventf(hpa, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, rescaleReason)
		c.storeScaleEvent(hpa.Spec.Behavior, key, current, desired)
	} else {
		desired = current
	}
	c.setStatus(hpa, current, desired, statuses, rescale)
	return c.updateStatusIfNeeded(ctx, original, hpa)
}

// computeReplicasForMetrics returns the largest proposal of the metrics
// that could be computed, or -1 and the error when none could.
func (c *Controller) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale) (int32, string, []autoscalingv2.MetricStatus, error) {
	selector, err := labels.Parse(scale.Status.Selector)
	if scale.Status.Selector == "" || err != nil {
		msg := "selector is required"
		if err != nil {
			msg = fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		}
		c.recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return -1, "", nil, errors.New(msg)
	}
	statuses := make([]autoscalingv2.MetricStatus, len(hpa.Spec.Metrics))
	replicas, name := int32(-1), ""
	var invalid int
	var firstErr error
	for i, spec := range hpa.Spec.Metrics {
		r, n, st, reason, err := c.computeReplicasForMetric(ctx, hpa, spec, scale.Spec.Replicas, selector)
		if err != nil {
			if invalid == 0 {
				firstErr = err
				c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "the HPA was unable to compute the replica count: %v", err)
			}
			c.recorder.Event(hpa, corev1.EventTypeWarning, reason, err.Error())
			invalid++
			continue
		}
		statuses[i] = st
		if replicas == -1 || r > replicas {
			replicas, name = r, n
		}
	}
	if invalid == len(hpa.Spec.Metrics) {
		return -1, "", statuses, fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %v", invalid, len(hpa.Spec.Metrics), firstErr)
	}
	c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", name)
	return replicas, name, statuses, nil
}

// computeReplicasForMetric handles one metric: Resource and
// ContainerResource from metrics.k8s.io.
func (c *Controller) computeReplicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	current int32, selector labels.Selector) (int32, string, autoscalingv2.MetricStatus, string, error) {
	var (
		res       corev1.ResourceName
		container string
		target    autoscalingv2.MetricTarget
		failed    = "FailedGetResourceMetric"
	)
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		res, target = spec.Resource.Name, spec.Resource.Target
	case autoscalingv2.ContainerResourceMetricSourceType:
		res, target, container = spec.ContainerResource.Name, spec.ContainerResource.Target, spec.ContainerResource.Container
		failed = "FailedGetContainerResourceMetric"
	case autoscalingv2.PodsMetricSourceType:
		return 0, "", autoscalingv2.MetricStatus{}, "FailedGetPodsMetric",
			fmt.Errorf("unable to get metric %s: no custom metrics API (custom.metrics.k8s.io) is served", spec.Pods.Metric.Name)
	case autoscalingv2.ObjectMetricSourceType:
		return 0, "", autoscalingv2.MetricStatus{}, "FailedGetObjectMetric",
			fmt.Errorf("unable to get metric %s: no custom metrics API (custom.metrics.k8s.io) is served", spec.Object.Metric.Name)
	case autoscalingv2.ExternalMetricSourceType:
		return 0, "", autoscalingv2.MetricStatus{}, "FailedGetExternalMetric",
			fmt.Errorf("unable to get external metric %s: no external metrics API (external.metrics.k8s.io) is served", spec.External.Metric.Name)
	default:
		return 0, "", autoscalingv2.MetricStatus{}, "InvalidMetricSourceType", fmt.Errorf("unknown metric source type %q", spec.Type)
	}
	what := "resource"
	if container != "" {
		what = "container resource"
	}
	if c.client.Registry().Metrics() == nil {
		return 0, "", autoscalingv2.MetricStatus{}, failed, fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: the resource metrics API (metrics.k8s.io) is not served", res, res)
	}
	// As the controller's metrics client: authorized as its own account
	// (list pods.metrics.k8s.io), like every other request it makes.
	samples, err := c.client.ListPodMetrics(ctx, hpa.Namespace, selector)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, failed, fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: unable to fetch metrics from resource metrics API: %v", res, res, err)
	}
	var pods []*corev1.Pod
	for _, p := range c.pods.List() {
		if p.Namespace == hpa.Namespace && selector.Matches(labels.Set(p.Labels)) {
			pods = append(pods, p)
		}
	}
	now := c.clock.Now()
	status := autoscalingv2.MetricStatus{Type: spec.Type}
	current2 := autoscalingv2.MetricValueStatus{}
	var replicas int32
	var name string
	if target.AverageValue != nil {
		r, _, raw, err := c.calc.resourceReplicas(current, 0, target.AverageValue.MilliValue(), res, container, pods, samples.Items, now)
		if err != nil {
			return 0, "", status, failed, fmt.Errorf("failed to get %s usage: %v", res, err)
		}
		replicas, name = r, fmt.Sprintf("%s %s", res, what)
		current2.AverageValue = resource.NewMilliQuantity(raw, resource.DecimalSI)
	} else {
		if target.AverageUtilization == nil {
			return 0, "", status, failed, fmt.Errorf("invalid resource metric source: neither a utilization target nor a value target was set")
		}
		r, util, raw, err := c.calc.resourceReplicas(current, *target.AverageUtilization, 0, res, container, pods, samples.Items, now)
		if err != nil {
			return 0, "", status, failed, fmt.Errorf("failed to get %s utilization: %v", res, err)
		}
		replicas, name = r, fmt.Sprintf("%s %s utilization (percentage of request)", res, what)
		current2.AverageValue = resource.NewMilliQuantity(raw, resource.DecimalSI)
		current2.AverageUtilization = &util
	}
	if container != "" {
		status.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: res, Container: container, Current: current2}
	} else {
		status.Resource = &autoscalingv2.ResourceMetricStatus{Name: res, Current: current2}
	}
	return replicas, name, status, "", nil
}

// recordInitialRecommendation seeds the window with the current size, so
// a new HPA does not scale down at once.
func (c *Controller) recordInitialRecommendation(current int32, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recommendations[key] == nil {
		c.recommendations[key] = []timestampedRecommendation{{current, c.clock.Now()}}
	}
}

// stabilizeRecommendation is upstream's: the highest recommendation of the
// window, recording this one (in the place of one that fell out of it).
func (c *Controller) stabilizeRecommendation(key string, prenormalized int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	max := prenormalized
	cutoff := now.Add(-c.window)
	old := -1
	for i, rec := range c.recommendations[key] {
		if rec.at.Before(cutoff) {
			old = i
		} else if rec.replicas > max {
			max = rec.replicas
		}
	}
	if old >= 0 {
		c.recommendations[key][old] = timestampedRecommendation{prenormalized, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], timestampedRecommendation{prenormalized, now})
	}
	return max
}

// normalizeDesiredReplicas is upstream's, for an HPA without behavior.
func (c *Controller) normalizeDesiredReplicas(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, prenormalized, minReplicas int32) int32 {
	stabilized := c.stabilizeRecommendation(key, prenormalized)
	if stabilized != prenormalized {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := convertDesiredReplicasWithRules(current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if desired == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return desired
}

func convertDesiredReplicasWithRules(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	maxAllowed := maxReplicas
	reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if limit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum)); maxReplicas > limit {
		maxAllowed = limit
		reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case desired < minReplicas:
		return minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case desired > maxAllowed:
		return maxAllowed, reason, message
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// normalizeDesiredReplicasWithBehaviors is upstream's, for spec.behavior.
func (c *Controller) normalizeDesiredReplicasWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, prenormalized, minReplicas int32) int32 {
	b := hpa.Spec.Behavior
	up, down := registry.ScaleUpRules(b.ScaleUp), registry.ScaleDownRules(b.ScaleDown)
	if down.StabilizationWindowSeconds == nil {
		w := int32(c.window / time.Second)
		down.StabilizationWindowSeconds = &w
	}
	stabilized, reason, message := c.stabilizeRecommendationWithBehaviors(key, up, down, current, prenormalized)
	if stabilized != prenormalized {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := c.convertDesiredReplicasWithBehaviorRate(key, up, down, current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	status := corev1.ConditionTrue
	if desired == stabilized {
		status = corev1.ConditionFalse
	}
	c.setCondition(hpa, autoscalingv2.ScalingLimited, status, reason, "%s", message)
	return desired
}

func (c *Controller) stabilizeRecommendationWithBehaviors(key string, up, down *autoscalingv2.HPAScalingRules, current, desired int32) (int32, string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	upRec, downRec := desired, desired
	upCutoff := now.Add(-time.Duration(*up.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*down.StabilizationWindowSeconds) * time.Second)
	old := -1
	for i, rec := range c.recommendations[key] {
		if rec.at.After(upCutoff) {
			upRec = min(rec.replicas, upRec)
		}
		if rec.at.After(downCutoff) {
			downRec = max(rec.replicas, downRec)
		}
		if rec.at.Before(upCutoff) && rec.at.Before(downCutoff) {
			old = i
		}
	}
	recommendation := current
	if recommendation < upRec {
		recommendation = upRec
	}
	if recommendation > downRec {
		recommendation = downRec
	}
	if old >= 0 {
		c.recommendations[key][old] = timestampedRecommendation{desired, now}
	} else {
		c.recommendations[key] = append(c.recommendations[key], timestampedRecommendation{desired, now})
	}
	if desired >= current {
		return recommendation, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return recommendation, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

func (c *Controller) convertDesiredReplicasWithBehaviorRate(key string, up, down *autoscalingv2.HPAScalingRules, current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	c.mu.Lock()
	upEvents, downEvents := c.scaleUpEvents[key], c.scaleDownEvents[key]
	c.mu.Unlock()
	now := c.clock.Now()
	switch {
	case desired > current:
		limit := max(scaleUpLimit(current, upEvents, downEvents, up, now), current)
		maxAllowed := maxReplicas
		reason, message := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxAllowed > limit {
			maxAllowed = limit
			reason, message = "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > maxAllowed {
			return maxAllowed, reason, message
		}
	case desired < current:
		limit := min(scaleDownLimit(current, upEvents, downEvents, down, now), current)
		minAllowed := minReplicas
		reason, message := "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minAllowed < limit {
			minAllowed = limit
			reason, message = "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < minAllowed {
			return minAllowed, reason, message
		}
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// changeInPeriod sums the scale events of the last period.
func changeInPeriod(periodSeconds int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// scaleUpLimit is upstream's calculateScaleUpLimitWithScalingRules.
func scaleUpLimit(current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := func(a, b int32) int32 { return max(a, b) }, int32(math.MinInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = func(a, b int32) int32 { return min(a, b) }, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, up, now) + changeInPeriod(p.PeriodSeconds, down, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start + p.Value
		} else {
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is upstream's calculateScaleDownLimitWithBehaviors.
func scaleDownLimit(current int32, up, down []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	// For scaling down the smallest change is the largest count.
	pick, result := func(a, b int32) int32 { return min(a, b) }, int32(math.MaxInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = func(a, b int32) int32 { return max(a, b) }, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, up, now) + changeInPeriod(p.PeriodSeconds, down, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start - p.Value
		} else {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// storeScaleEvent remembers a step for the policies' periods (only with
// spec.behavior), reusing a slot older than the longest period.
func (c *Controller) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prev, next int32) {
	if b == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	rules, events, change := registry.ScaleUpRules(b.ScaleUp), c.scaleUpEvents, next-prev
	if next < prev {
		rules, events, change = registry.ScaleDownRules(b.ScaleDown), c.scaleDownEvents, prev-next
	}
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	cutoff := now.Add(-time.Duration(longest) * time.Second)
	list := events[key]
	for i := range list {
		if list[i].at.Before(cutoff) {
			list[i] = scaleEvent{change: change, at: now}
			return
		}
	}
	events[key] = append(list, scaleEvent{change: change, at: now})
}

// setStatus is upstream's setStatus: lastScaleTime moves on a rescale.
func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, metrics []autoscalingv2.MetricStatus, rescale bool) {
	// One entry per spec.metrics, in order (an empty one where a metric
	// could not be read, as upstream writes it): printers match them up.
	hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas = current, desired
	hpa.Status.CurrentMetrics = metrics
	gen := hpa.Generation
	hpa.Status.ObservedGeneration = &gen
	if rescale {
		now := metav1.NewTime(c.clock.Now().Truncate(time.Second))
		hpa.Status.LastScaleTime = &now
	}
}

func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if apiequality.Semantic.DeepEqual(old, &hpa.Status) {
		return nil
	}
	_, err := client.For[*autoscalingv2.HorizontalPodAutoscaler](c.client, autoscalingv2.GroupName, "horizontalpodautoscalers").UpdateStatus(ctx, hpa)
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Event(hpa, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %v", hpa.Name, err)
	}
	return nil
}

// setCondition sets one condition; lastTransitionTime moves only when its
// status changes (upstream's setConditionInList).
func (c *Controller) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	list := hpa.Status.Conditions
	i := 0
	for ; i < len(list); i++ {
		if list[i].Type == t {
			break
		}
	}
	if i == len(list) {
		list = append(list, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t})
	}
	cond := &list[i]
	if cond.Status != status {
		cond.LastTransitionTime = metav1.NewTime(c.clock.Now().Truncate(time.Second))
	}
	cond.Status, cond.Reason, cond.Message = status, reason, msg
	hpa.Status.Conditions = list
}
