package kubelet

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// Resource metrics: what `kubectl top` shows (upstream: the kubelet's
// /metrics/resource endpoint, filled by its resource analyzer from the CRI's
// ContainerStats, scraped by metrics-server, which serves metrics.k8s.io).
//
//	runtime ──ContainerStats every 15 s──▶ kubelet (this file: the latest sample)
//	                                            │ ResourceMetrics
//	kubectl top ──GET metrics.k8s.io──▶ API server ──▶ core/cluster asks every kubelet
//
// CPU is a rate, so it needs two samples: the first sample of a container
// reports 0, and `kubectl top` shows a real number from the second one on
// (upstream, metrics-server likewise needs two scrapes). The rate is the CPU
// time the guest used between the two samples over the real time between
// them; memory is the guest's linear memory (its working set). A node's
// usage is the sum of its containers'.

// statsInterval is how often the kubelet samples its containers: the
// metric resolution of metrics-server (15 s). A read of the metrics takes a
// new sample when the last one is at least minStatsWindow old, so `kubectl
// top` shows a pod created a moment ago, with usage averaged since the
// previous sample.
const (
	statsInterval  = 15 * time.Second
	minStatsWindow = time.Second
)

// statsCache is the latest sample of every running container.
type statsCache struct {
	mu     sync.Mutex // guards the fields below
	at     time.Time  // when the sample was taken (kubelet clock); zero: none yet
	window time.Duration
	pods   []podSample
}

type podSample struct {
	uid             types.UID
	namespace, name string
	containers      []containerSample
}

type containerSample struct {
	name         string
	nanoCores    uint64
	workingBytes uint64
}

// statsLoop samples now and every statsInterval until ctx is done.
func (kl *Kubelet) statsLoop(ctx context.Context) {
	t := kl.clock.NewTicker(statsInterval)
	defer t.Stop()
	kl.sampleStats()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			kl.sampleStats()
		}
	}
}

// sampleStats takes a sample of every running container.
func (kl *Kubelet) sampleStats() {
	running := cri.ContainerRunning
	byPod := map[types.UID]*podSample{}
	var order []types.UID
	for _, c := range kl.runtime.ListContainers(cri.ContainerFilter{State: &running}) {
		st, err := kl.runtime.ContainerStats(c.ID)
		if err != nil {
			continue // gone meanwhile
		}
		uid := types.UID(c.PodUID)
		ps := byPod[uid]
		if ps == nil {
			ps = &podSample{uid: uid, namespace: c.PodNamespace, name: c.PodName}
			byPod[uid] = ps
			order = append(order, uid)
		}
		ps.containers = append(ps.containers, containerSample{name: c.Name, nanoCores: st.UsageNanoCores, workingBytes: st.WorkingSetBytes})
	}
	pods := make([]podSample, 0, len(order))
	for _, uid := range order {
		ps := byPod[uid]
		sort.Slice(ps.containers, func(i, j int) bool { return ps.containers[i].name < ps.containers[j].name })
		pods = append(pods, *ps)
	}
	now := kl.clock.Now()
	kl.stats.mu.Lock()
	defer kl.stats.mu.Unlock()
	kl.stats.window = statsInterval
	if !kl.stats.at.IsZero() && now.After(kl.stats.at) {
		kl.stats.window = now.Sub(kl.stats.at)
	}
	kl.stats.at, kl.stats.pods = now, pods
}

// ResourceMetrics returns the latest sample of the node and of its pods that
// have running containers, as metrics-server serves them, taking a new
// sample first when there is none or it is at least minStatsWindow old.
func (kl *Kubelet) ResourceMetrics() (metricsv1beta1.NodeMetrics, []metricsv1beta1.PodMetrics) {
	kl.stats.mu.Lock()
	stale := kl.stats.at.IsZero() || kl.clock.Since(kl.stats.at) >= minStatsWindow
	kl.stats.mu.Unlock()
	if stale {
		kl.sampleStats()
	}
	kl.stats.mu.Lock()
	at, window, samples := kl.stats.at, kl.stats.window, kl.stats.pods
	kl.stats.mu.Unlock()

	ts := metav1.NewTime(at.Truncate(time.Second))
	var nodeCPU, nodeMem uint64
	pods := make([]metricsv1beta1.PodMetrics, 0, len(samples))
	for _, ps := range samples {
		pm := metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: ps.name, Namespace: ps.namespace, CreationTimestamp: ts},
			Timestamp:  ts,
			Window:     metav1.Duration{Duration: window},
		}
		if p := kl.podByUID(ps.uid); p != nil {
			pm.Labels = copyLabels(p.Labels)
		}
		for _, c := range ps.containers {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c.name, Usage: usage(c.nanoCores, c.workingBytes)})
			nodeCPU += c.nanoCores
			nodeMem += c.workingBytes
		}
		pods = append(pods, pm)
	}
	node := metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: kl.nodeName, Labels: kl.nodeLabels(), CreationTimestamp: ts},
		Timestamp:  ts,
		Window:     metav1.Duration{Duration: window},
		Usage:      usage(nodeCPU, nodeMem),
	}
	return node, pods
}

func usage(nanoCores, bytes uint64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(int64(nanoCores), resource.Nano),
		corev1.ResourceMemory: *resource.NewQuantity(int64(bytes), resource.BinarySI),
	}
}

func copyLabels(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
