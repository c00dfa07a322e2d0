// Package podgc is the pod garbage collector: it deletes the pods that
// nobody else would ever delete.
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller/podgc
// (gc_controller.go).
//
// A pod object outlives its containers: a finished Job's pods stay
// Succeeded or Failed so their logs and exit codes can be read, and a pod
// bound to a node whose machine is gone has no kubelet left to finish it.
// Every GCCheckPeriod (20 s) the controller looks at all pods and nodes and
// force-deletes (grace period 0):
//
//  1. terminated pods (Succeeded or Failed) beyond TerminatedPodThreshold
//     (--terminated-pod-gc-threshold, 12,500): the evicted ones first, then
//     the oldest by creation time;
//  2. terminating pods on a node that is not Ready and carries the
//     node.kubernetes.io/out-of-service taint (an administrator's word that
//     the machine is down for good);
//  3. orphaned pods: bound to a node that no longer exists. A node missing
//     from the cache is quarantined for QuarantineTime (40 s) and then looked
//     up in the API server itself, so a node that is only slow to appear in
//     the watch does not lose its pods. These pods get the DisruptionTarget
//     condition (DeletionByPodGC, "PodGC: node no longer exists");
//  4. unscheduled terminating pods: deleted before the scheduler bound them
//     (only finalizers keep such a pod around).
//
// Each pod that has not finished is first marked Failed (with the
// condition, for orphans), since no kubelet will ever report its end; then
// it is deleted.
package podgc

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/core/internal/podutil"
)

const (
	// Component is the controller's user agent.
	Component = "pod-garbage-collector"
	// DefaultTerminatedPodThreshold is --terminated-pod-gc-threshold.
	DefaultTerminatedPodThreshold = 12500
	// GCCheckPeriod is how often the controller looks.
	GCCheckPeriod = 20 * time.Second
	// QuarantineTime is how long a node missing from the cache may stay
	// missing before the controller asks the API server whether it is gone.
	QuarantineTime = 40 * time.Second

	// Reason and message of the DisruptionTarget condition of orphans.
	DisruptionReason  = "DeletionByPodGC"
	DisruptionMessage = "PodGC: node no longer exists"
)

// Config configures the controller.
type Config struct {
	// Client talks to the API server. Required.
	Client *client.Client
	// Clock times the checks and the quarantine; nil is the real clock.
	Clock clock.WithDelayedExecution
	// TerminatedPodThreshold is how many terminated pods may stay; 0 means
	// DefaultTerminatedPodThreshold and a negative value turns the
	// terminated-pod collection off (upstream: a threshold of 0 or less).
	TerminatedPodThreshold int
}

// Controller is the pod garbage collector.
type Controller struct {
	client    *client.Client
	clock     clock.WithDelayedExecution
	threshold int
	queue     *client.Queue[string] // one key: the next check

	podInformer  *client.Informer[*corev1.Pod]
	nodeInformer *client.Informer[*corev1.Node]

	// quarantine holds, for each node name pods are bound to but the
	// cache does not know, when it was first seen missing. Only gc, which
	// runs in the single worker, uses it.
	quarantine map[string]time.Time
}

// gcKey is the queue's only key.
const gcKey = "gc"

// New returns a controller; call Run to start it.
func New(cfg Config) (*Controller, error) {
	workers := 1
	if err := controller.CheckConfig("podgc", cfg.Client, &workers, 1, &cfg.Clock); err != nil {
		return nil, err
	}
	if cfg.TerminatedPodThreshold == 0 {
		cfg.TerminatedPodThreshold = DefaultTerminatedPodThreshold
	}
	return &Controller{
		client:       cfg.Client,
		clock:        cfg.Clock,
		threshold:    cfg.TerminatedPodThreshold,
		queue:        client.NewQueue[string](cfg.Clock),
		podInformer:  client.NewInformer(cfg.Client.Pods(), "", client.ListOptions{}),
		nodeInformer: client.NewInformer(cfg.Client.Nodes(), "", client.ListOptions{}),
		quarantine:   map[string]time.Time{},
	}, nil
}

// HasSynced reports whether the controller's caches hold their first lists.
func (gcc *Controller) HasSynced() bool { return controller.Synced(gcc.informers()...) }

func (gcc *Controller) informers() []controller.Informer {
	return []controller.Informer{gcc.podInformer, gcc.nodeInformer}
}

// Run collects garbage once the caches are filled, and then every
// GCCheckPeriod on the clock, until ctx is done.
func (gcc *Controller) Run(ctx context.Context) error {
	gcc.queue.Add(gcKey)
	return controller.Run(ctx, Component, gcc.informers(),
		controller.Worker[string]{Queue: gcc.queue, Workers: 1, Reconcile: func(ctx context.Context, _ string) error {
			gcc.gc(ctx)
			gcc.queue.AddAfter(gcKey, GCCheckPeriod)
			return nil
		}})
}

// gc is one pass over every pod.
func (gcc *Controller) gc(ctx context.Context) {
	pods := gcc.podInformer.List()
	nodes := gcc.nodeInformer.List()
	if gcc.threshold > 0 {
		gcc.gcTerminated(ctx, pods)
	}
	gcc.gcTerminating(ctx, pods)
	gcc.gcOrphaned(ctx, pods, nodes)
	gcc.gcUnscheduledTerminating(ctx, pods)
}

func isPodTerminated(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
		return false
	}
	return true
}

// gcTerminated deletes the terminated pods beyond the threshold, evicted
// and oldest first.
func (gcc *Controller) gcTerminated(ctx context.Context, pods []*corev1.Pod) {
	var terminated []*corev1.Pod
	for _, pod := range pods {
		if isPodTerminated(pod) {
			terminated = append(terminated, pod)
		}
	}
	deleteCount := len(terminated) - gcc.threshold
	if deleteCount <= 0 {
		return
	}
	klog.FromContext(ctx).Info("Garbage collecting pods", "numPods", deleteCount)
	sort.Sort(byEvictionAndCreationTimestamp(terminated))
	for _, pod := range terminated[:deleteCount] {
		gcc.logError(ctx, gcc.markFailedAndDeletePod(ctx, pod, nil))
	}
}

// gcTerminating force-deletes terminating pods on nodes that are down and
// tainted out-of-service.
func (gcc *Controller) gcTerminating(ctx context.Context, pods []*corev1.Pod) {
	var terminating []*corev1.Pod
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil {
			continue
		}
		node, ok := gcc.nodeInformer.Get("", pod.Spec.NodeName)
		if !ok {
			continue
		}
		if !isNodeReady(node) && hasTaint(node, corev1.TaintNodeOutOfService) {
			terminating = append(terminating, pod)
		}
	}
	if len(terminating) == 0 {
		return
	}
	sort.Sort(byEvictionAndCreationTimestamp(terminating))
	for _, pod := range terminating {
		gcc.logError(ctx, gcc.markFailedAndDeletePod(ctx, pod, nil))
	}
}

// gcOrphaned deletes the pods bound to nodes that do not exist, once the
// node has been missing for QuarantineTime and the API server confirms it.
func (gcc *Controller) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) {
	existing := sets.New[string]()
	for _, n := range nodes {
		existing.Insert(n.Name)
	}
	now := gcc.clock.Now()
	missing := sets.New[string]()
	for _, pod := range pods {
		if name := pod.Spec.NodeName; name != "" && !existing.Has(name) {
			missing.Insert(name)
			if _, ok := gcc.quarantine[name]; !ok {
				gcc.quarantine[name] = now
			}
		}
	}
	deleted := sets.New[string]()
	for name, since := range gcc.quarantine {
		if !missing.Has(name) {
			delete(gcc.quarantine, name) // it appeared, or its pods are gone
			continue
		}
		if now.Sub(since) < QuarantineTime {
			continue
		}
		// Out of quarantine: ask the API server, not the cache. Whatever
		// the answer, a node still missing next time starts a new
		// quarantine (upstream's delaying queue works the same way).
		delete(gcc.quarantine, name)
		_, err := gcc.client.Nodes().Get(ctx, "", name)
		switch {
		case apierrors.IsNotFound(err):
			deleted.Insert(name)
		case err != nil:
			klog.FromContext(ctx).Error(err, "Error while getting node", "node", name)
		}
	}
	for _, pod := range pods {
		if !deleted.Has(pod.Spec.NodeName) {
			continue
		}
		err := gcc.markFailedAndDeletePod(ctx, pod, &corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: DisruptionReason, Message: DisruptionMessage,
		})
		gcc.logError(ctx, err)
	}
}

// gcUnscheduledTerminating deletes terminating pods never bound to a node.
func (gcc *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) {
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil || pod.Spec.NodeName != "" {
			continue
		}
		gcc.logError(ctx, gcc.markFailedAndDeletePod(ctx, pod, nil))
	}
}

// byEvictionAndCreationTimestamp orders pods evicted by the kubelet first,
// then by creation time, then by name.
type byEvictionAndCreationTimestamp []*corev1.Pod

func (o byEvictionAndCreationTimestamp) Len() int      { return len(o) }
func (o byEvictionAndCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byEvictionAndCreationTimestamp) Less(i, j int) bool {
	if ei, ej := isEvicted(o[i]), isEvicted(o[j]); ei != ej {
		return ei
	}
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

// isEvicted is the kubelet's PodIsEvicted: Failed with reason Evicted (a
// node under memory or disk pressure ended it).
func isEvicted(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "Evicted"
}

// markFailedAndDeletePod marks a pod that has not finished as Failed (with
// cond, when set) on its latest version, then deletes it at once. A pod
// already gone is no error.
func (gcc *Controller) markFailedAndDeletePod(ctx context.Context, pod *corev1.Pod, cond *corev1.PodCondition) error {
	defer eventloop.MaybeTurn()
	klog.FromContext(ctx).Info("PodGC is force deleting Pod", "pod", klog.KObj(pod))
	if !controller.IsPodTerminal(pod) {
		latest, err := gcc.client.Pods().Get(ctx, pod.Namespace, pod.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if latest.UID != pod.UID {
			return nil // a new pod of the same name: not this one's to delete
		}
		latest.Status.Phase = corev1.PodFailed
		if cond != nil {
			podutil.UpdatePodCondition(&latest.Status, *cond, gcc.clock.Now())
		}
		if _, err := gcc.client.Pods().UpdateStatus(ctx, latest); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	zero := int64(0)
	err := gcc.client.Pods().Delete(ctx, pod.Namespace, pod.Name, &metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (gcc *Controller) logError(ctx context.Context, err error) {
	if err != nil {
		klog.FromContext(ctx).Error(fmt.Errorf("podgc: %w", err), "Failed to delete pod")
	}
}

func isNodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
