package noderesources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

type res = map[v1.ResourceName]string

func nodeInfo(node *v1.Node, pods ...*v1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

func TestFitFilter(t *testing.T) {
	node := st.MakeNode().Name("n").Capacity(res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110", "example.com/gpu": "2", v1.ResourceEphemeralStorage: "10Gi"}).Obj()
	tiny := st.MakeNode().Name("tiny").Capacity(res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "1"}).Obj()
	used := func(cpu, mem string) *v1.Pod {
		return st.MakePod().Name("used").Node("n").Req(res{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}).Obj()
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		nodeInfo   *framework.NodeInfo
		wantStatus *framework.Status
	}{
		{
			name:     "no requests fits anywhere",
			pod:      st.MakePod().Name("p").Container(st.PauseImage).Obj(),
			nodeInfo: nodeInfo(node, used("4", "8Gi")),
		},
		{
			name:     "fits in what is left",
			pod:      st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj(),
			nodeInfo: nodeInfo(node, used("3", "6Gi")),
		},
		{
			name:       "insufficient cpu",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj(),
			nodeInfo:   nodeInfo(node, used("3500m", "1Gi")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientCPU),
		},
		{
			name:       "insufficient memory",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "3Gi"}).Obj(),
			nodeInfo:   nodeInfo(node, used("1", "6Gi")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientMemory),
		},
		{
			name:       "every reason is kept, in upstream's order",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}).Obj(),
			nodeInfo:   nodeInfo(node, used("3", "6Gi")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientCPU, ReasonInsufficientMemory),
		},
		{
			name:       "sum of containers counts",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Req(res{v1.ResourceCPU: "1"}).Obj(),
			nodeInfo:   nodeInfo(node, used("2500m", "0")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientCPU),
		},
		{
			name:       "the largest init container counts when it is larger than the containers",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).InitReq(res{v1.ResourceCPU: "3"}).Obj(),
			nodeInfo:   nodeInfo(node, used("2", "0")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientCPU),
		},
		{
			name:     "a smaller init container does not add",
			pod:      st.MakePod().Name("p").Req(res{v1.ResourceCPU: "2"}).InitReq(res{v1.ResourceCPU: "1"}).Obj(),
			nodeInfo: nodeInfo(node, used("2", "0")),
		},
		{
			name:       "a sidecar adds to the containers",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "2"}).SidecarReq(res{v1.ResourceCPU: "1"}).Obj(),
			nodeInfo:   nodeInfo(node, used("2", "0")),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonInsufficientCPU),
		},
		{
			name:       "more than the whole node is unresolvable",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "5"}).Obj(),
			nodeInfo:   nodeInfo(node),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonInsufficientCPU),
		},
		{
			name:       "too many pods",
			pod:        st.MakePod().Name("p").Container(st.PauseImage).Obj(),
			nodeInfo:   nodeInfo(tiny, st.MakePod().Name("other").Node("tiny").Container(st.PauseImage).Obj()),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonTooManyPods),
		},
		{
			name:       "too many pods and insufficient cpu",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1"}).Obj(),
			nodeInfo:   nodeInfo(tiny, st.MakePod().Name("other").Node("tiny").Req(res{v1.ResourceCPU: "4"}).Obj()),
			wantStatus: framework.NewStatus(framework.Unschedulable, ReasonTooManyPods, ReasonInsufficientCPU),
		},
		{
			name:       "insufficient extended resource",
			pod:        st.MakePod().Name("p").Req(res{"example.com/gpu": "3"}).Obj(),
			nodeInfo:   nodeInfo(node),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient example.com/gpu"),
		},
		{
			name:       "an extended resource the node does not have",
			pod:        st.MakePod().Name("p").Req(res{"example.com/fpga": "1"}).Obj(),
			nodeInfo:   nodeInfo(node),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient example.com/fpga"),
		},
		{
			name:       "insufficient ephemeral-storage",
			pod:        st.MakePod().Name("p").Req(res{v1.ResourceEphemeralStorage: "11Gi"}).Obj(),
			nodeInfo:   nodeInfo(node),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonInsufficientEphemeralStorage),
		},
	}
	p, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fit := p.(*Fit)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if _, s := fit.PreFilter(context.Background(), state, tt.pod); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			got := fit.Filter(context.Background(), state, tt.pod, tt.nodeInfo)
			if !got.Equal(tt.wantStatus) {
				t.Errorf("Filter = %v, want %v", got, tt.wantStatus)
			}
		})
	}
}

func TestFitFilterWithoutPreFilter(t *testing.T) {
	fit, _ := NewFit(DefaultFitArgs())
	node := st.MakeNode().Name("n").Capacity(res{v1.ResourceCPU: "1", v1.ResourcePods: "10"}).Obj()
	got := fit.Filter(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodeInfo(node))
	if got.Code() != framework.Error {
		t.Fatalf("Filter without PreFilter = %v, want an Error", got)
	}
}

func TestFitScore(t *testing.T) {
	capacity := res{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}
	empty := st.MakeNode().Name("empty").Capacity(capacity).Obj()
	half := st.MakeNode().Name("half").Capacity(capacity).Obj()
	halfPod := st.MakePod().Name("existing").Node("half").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj()
	besteffort := st.MakePod().Name("existing").Node("half").Container(st.PauseImage).Obj()
	pod := st.MakePod().Name("p").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj()

	tests := []struct {
		name     string
		strategy ScoringStrategyType
		pod      *v1.Pod
		nodeInfo *framework.NodeInfo
		want     int64
	}{
		// cpu (4000-1000)·100/4000 = 75, memory (8-2)·100/8 = 75.
		{name: "least allocated: empty node", strategy: LeastAllocated, pod: pod, nodeInfo: nodeInfo(empty), want: 75},
		// cpu (4000-2000)·100/4000 = 50, memory 50.
		{name: "least allocated: node with a pod", strategy: LeastAllocated, pod: pod, nodeInfo: nodeInfo(half, halfPod), want: 50},
		// The best-effort pod counts as 100m and 200Mi: cpu (4000-1100)·100/4000 = 72,
		// memory (8192-2248)·100/8192 = 72.
		{name: "least allocated: a pod without requests still counts", strategy: LeastAllocated, pod: pod, nodeInfo: nodeInfo(half, besteffort), want: 72},
		// cpu (4000-100)·100/4000 = 97, memory (8192-200)·100/8192 = 97.
		{name: "least allocated: a pod without requests is scored as 100m/200Mi", strategy: LeastAllocated,
			pod: st.MakePod().Name("p").Container(st.PauseImage).Obj(), nodeInfo: nodeInfo(empty), want: 97},
		{name: "most allocated: empty node", strategy: MostAllocated, pod: pod, nodeInfo: nodeInfo(empty), want: 25},
		{name: "most allocated: node with a pod", strategy: MostAllocated, pod: pod, nodeInfo: nodeInfo(half, halfPod), want: 50},
		{name: "more than the node is 0", strategy: LeastAllocated,
			pod: st.MakePod().Name("p").Req(res{v1.ResourceCPU: "8", v1.ResourceMemory: "16Gi"}).Obj(), nodeInfo: nodeInfo(empty), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := DefaultFitArgs()
			args.ScoringStrategy.Type = tt.strategy
			fit, err := NewFit(args)
			if err != nil {
				t.Fatal(err)
			}
			state := framework.NewCycleState()
			if s := fit.PreScore(context.Background(), state, tt.pod, nil); !s.IsSuccess() {
				t.Fatal(s)
			}
			got, s := fit.Score(context.Background(), state, tt.pod, tt.nodeInfo)
			if !s.IsSuccess() {
				t.Fatal(s)
			}
			if got != tt.want {
				t.Errorf("Score = %d, want %d", got, tt.want)
			}
			// Score without PreScore computes the same.
			if again, _ := fit.Score(context.Background(), framework.NewCycleState(), tt.pod, tt.nodeInfo); again != got {
				t.Errorf("Score without PreScore = %d, want %d", again, got)
			}
		})
	}
}

func TestNewFitValidates(t *testing.T) {
	for _, args := range []FitArgs{
		{ScoringStrategy: ScoringStrategy{Type: "Random"}},
		{ScoringStrategy: ScoringStrategy{Type: LeastAllocated, Resources: []ResourceSpec{{Name: v1.ResourceCPU, Weight: 0}}}},
	} {
		if _, err := NewFit(args); err == nil {
			t.Errorf("NewFit(%+v) succeeded", args)
		}
	}
}
