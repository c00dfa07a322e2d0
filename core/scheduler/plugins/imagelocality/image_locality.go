// Package imagelocality holds ImageLocality: the score that prefers nodes
// that already have the pod's images, so its containers start without a
// pull (upstream: pkg/scheduler/framework/plugins/imagelocality).
//
// It reads node.status.images, which each kubelet reports (name and size of
// every image it has pulled). An image counts for its size, scaled by how
// many nodes have it: an image every node has does not make any node
// special, and pods would otherwise all pile onto the first node that
// pulled it (the "node heating problem"):
//
//	sum   = Σ over the pod's containers of size(image) × nodesWithImage/allNodes
//	score = 100 × (clamp(sum, 23 MiB, 1000 MiB × containers) - 23 MiB) / (1000 MiB × containers - 23 MiB)
//
// The thresholds are upstream's, chosen for registry images of 23 MiB to
// 1 GB. kubetab's images are WebAssembly modules of kilobytes to a few
// megabytes, all under the lower threshold, so ImageLocality scores 0
// everywhere here, exactly as upstream would for images that small. The
// decision record shows it.
package imagelocality

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "ImageLocality"

// Upstream's bounds of the image score.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// ImageLocality is the plugin.
type ImageLocality struct {
	handle framework.Handle
}

var (
	_ framework.PreScorePlugin = (*ImageLocality)(nil)
	_ framework.ScorePlugin    = (*ImageLocality)(nil)
)

// New is the plugin's factory.
func New(_ context.Context, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name implements framework.Plugin.
func (*ImageLocality) Name() string { return Name }

// preScoreState is, for each image of the pod, on how many of all nodes it
// is. Upstream keeps these counts in the scheduler cache; counting them once
// per attempt over the snapshot gives the same numbers.
type preScoreState struct {
	images     []string // the pod's images, normalized, one per container
	numNodes   map[string]int
	totalNodes int
}

// Clone implements framework.StateData.
func (s *preScoreState) Clone() framework.StateData { return s }

func podImages(pod *v1.Pod) []string {
	out := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		out = append(out, framework.NormalizedImageName(c.Image))
	}
	for _, c := range pod.Spec.Containers {
		out = append(out, framework.NormalizedImageName(c.Image))
	}
	return out
}

// PreScore counts the nodes that have each of the pod's images. When no
// node has any of them every node would score 0, so Score is skipped
// (upstream runs it and gets the zeros; the totals are the same).
func (pl *ImageLocality) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	s, err := pl.count(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	present := false
	for _, n := range s.numNodes {
		present = present || n > 0
	}
	if !present {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

func (pl *ImageLocality) count(pod *v1.Pod) (*preScoreState, error) {
	all, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	s := &preScoreState{images: podImages(pod), numNodes: map[string]int{}, totalNodes: len(all)}
	for _, img := range s.images {
		s.numNodes[img] = 0
	}
	for _, n := range all {
		if len(n.ImageSizes) == 0 {
			continue
		}
		for img := range s.numNodes {
			if _, ok := n.ImageSizes[img]; ok {
				s.numNodes[img]++
			}
		}
	}
	return s, nil
}

// Score implements framework.ScorePlugin.
func (pl *ImageLocality) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var s *preScoreState
	if c, err := state.Read(preScoreStateKey); err == nil {
		s = c.(*preScoreState)
	} else {
		if s, err = pl.count(pod); err != nil {
			return 0, framework.AsStatus(fmt.Errorf("counting images: %w", err))
		}
	}
	var sum int64
	for _, img := range s.images {
		if size, ok := nodeInfo.ImageSizes[img]; ok && s.totalNodes > 0 {
			spread := float64(s.numNodes[img]) / float64(s.totalNodes)
			sum += int64(float64(size) * spread)
		}
	}
	return calculatePriority(sum, len(s.images)), nil
}

// ScoreExtensions implements framework.ScorePlugin: scores are in 0..100.
func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

// calculatePriority maps the summed image score onto 0..100 between the
// thresholds.
func calculatePriority(sumScores int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if sumScores < minThreshold {
		sumScores = minThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	if maxThreshold <= minThreshold {
		return 0
	}
	return framework.MaxNodeScore * (sumScores - minThreshold) / (maxThreshold - minThreshold)
}
