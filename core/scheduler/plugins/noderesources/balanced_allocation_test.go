package noderesources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestBalancedAllocation(t *testing.T) {
	capacity := res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}
	node := func(name string, pods ...*v1.Pod) *framework.NodeInfo {
		return nodeInfo(st.MakeNode().Name(name).Capacity(capacity).Obj(), pods...)
	}
	used := func(node, cpu, mem string) *v1.Pod {
		return st.MakePod().Name("used-" + node).Node(node).Req(res{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}).Obj()
	}
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*framework.NodeInfo
		want  map[string]int64 // nil: skipped
	}{
		{
			// cpu 1/4 = 0.25, memory 2/8 = 0.25: perfectly balanced.
			name:  "the same share of cpu and memory scores 100",
			pod:   st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj(),
			nodes: []*framework.NodeInfo{node("empty")},
			want:  map[string]int64{"empty": 100},
		},
		{
			// with the pod: cpu 3/4 = 0.75, memory 2/8 = 0.25; std 0.25: 75.
			// balanced: cpu 2/4 = 0.5, memory 4/8 = 0.5: 100.
			name:  "a lopsided node scores lower",
			pod:   st.MakePod().Name("p").Req(res{v1.ResourceCPU: "400m", v1.ResourceMemory: "400Mi"}).Obj(),
			nodes: []*framework.NodeInfo{node("lopsided", used("lopsided", "2600m", "1648Mi")), node("balanced", used("balanced", "1600m", "3696Mi"))},
			want:  map[string]int64{"lopsided": 75, "balanced": 100},
		},
		{
			name:  "a pod that requests nothing is not scored",
			pod:   st.MakePod().Name("p").Container(st.PauseImage).Obj(),
			nodes: []*framework.NodeInfo{node("a")},
		},
		{
			// Fractions are capped at 1: cpu 6/4 -> 1, memory 1/8: std 0.4375.
			name:  "an overcommitted resource counts as full",
			pod:   st.MakePod().Name("p").Req(res{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}).Obj(),
			nodes: []*framework.NodeInfo{node("over", used("over", "4", "0"))},
			want:  map[string]int64{"over": 56},
		},
	}
	pl, err := NewBalancedAllocation(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plugintest.RunScore(t, pl.(framework.ScorePlugin), framework.NewCycleState(), tt.pod, tt.nodes)
			if tt.want == nil {
				if got != nil {
					t.Errorf("scores %v, want skipped", got)
				}
				return
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("%s: %d, want %d", n, got[n], w)
				}
			}
		})
	}
}
