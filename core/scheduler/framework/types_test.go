package framework

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func setOf(s ...string) sets.Set[string] { return sets.New(s...) }

type res = map[v1.ResourceName]string

func TestPodRequests(t *testing.T) {
	const mi = 1024 * 1024
	tests := []struct {
		name        string
		pod         *v1.Pod
		want        Resource
		wantNonZero Resource
	}{
		{
			name:        "no requests: zero, and the defaults for scoring",
			pod:         st.MakePod().Container(st.PauseImage).Obj(),
			wantNonZero: Resource{MilliCPU: DefaultMilliCPURequest, Memory: DefaultMemoryRequest},
		},
		{
			name:        "containers add up; defaults per container without a request",
			pod:         st.MakePod().Req(res{v1.ResourceCPU: "500m"}).Req(res{v1.ResourceCPU: "250m", v1.ResourceMemory: "64Mi"}).Obj(),
			want:        Resource{MilliCPU: 750, Memory: 64 * mi},
			wantNonZero: Resource{MilliCPU: 750, Memory: 200*mi + 64*mi},
		},
		{
			name:        "init containers: the largest, if more than the containers",
			pod:         st.MakePod().Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).InitReq(res{v1.ResourceCPU: "2", v1.ResourceMemory: "512Mi"}).InitReq(res{v1.ResourceCPU: "500m", v1.ResourceMemory: "3Gi"}).Obj(),
			want:        Resource{MilliCPU: 2000, Memory: 3 * 1024 * mi},
			wantNonZero: Resource{MilliCPU: 2000, Memory: 3 * 1024 * mi},
		},
		{
			name: "sidecars add to the containers and to later init containers",
			// containers 1 + sidecar 1 = 2; init after the sidecar: 2 + 1 = 3.
			pod:         st.MakePod().Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).SidecarReq(res{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).InitReq(res{v1.ResourceCPU: "2", v1.ResourceMemory: "1Gi"}).Obj(),
			want:        Resource{MilliCPU: 3000, Memory: 2 * 1024 * mi},
			wantNonZero: Resource{MilliCPU: 3000, Memory: 2 * 1024 * mi},
		},
		{
			name: "overhead is added",
			pod: func() *v1.Pod {
				p := st.MakePod().Req(res{v1.ResourceCPU: "1"}).Obj()
				p.Spec.Overhead = st.ResourceList(res{v1.ResourceCPU: "250m"})
				return p
			}(),
			want:        Resource{MilliCPU: 1250},
			wantNonZero: Resource{MilliCPU: 1250, Memory: DefaultMemoryRequest},
		},
		{
			name: "extended resources",
			pod:  st.MakePod().Req(res{"example.com/gpu": "2"}).Obj(),
			want: Resource{ScalarResources: map[v1.ResourceName]int64{"example.com/gpu": 2}},
			wantNonZero: Resource{MilliCPU: DefaultMilliCPURequest, Memory: DefaultMemoryRequest,
				ScalarResources: map[v1.ResourceName]int64{"example.com/gpu": 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodRequests(tt.pod, false); !equalResource(got, tt.want) {
				t.Errorf("PodRequests = %+v, want %+v", got, tt.want)
			}
			if got := PodRequests(tt.pod, true); !equalResource(got, tt.wantNonZero) {
				t.Errorf("PodRequests(nonZero) = %+v, want %+v", got, tt.wantNonZero)
			}
		})
	}
}

func equalResource(a, b Resource) bool {
	if a.MilliCPU != b.MilliCPU || a.Memory != b.Memory || a.EphemeralStorage != b.EphemeralStorage || a.AllowedPodNumber != b.AllowedPodNumber {
		return false
	}
	for k, v := range a.ScalarResources {
		if b.ScalarResources[k] != v {
			return false
		}
	}
	for k, v := range b.ScalarResources {
		if a.ScalarResources[k] != v {
			return false
		}
	}
	return true
}

func TestNodeInfoAddRemove(t *testing.T) {
	p1 := st.MakePod().Name("p1").Node("n").Req(res{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj()
	p2 := st.MakePod().Name("p2").Node("n").Container(st.PauseImage).Obj()
	ni := NewNodeInfo(p1, p2)
	ni.SetNode(st.MakeNode().Name("n").Capacity(res{v1.ResourceCPU: "4", v1.ResourcePods: "110"}).Obj())
	if ni.Requested.MilliCPU != 1000 || ni.NonZeroRequested.MilliCPU != 1100 || len(ni.Pods) != 2 {
		t.Fatalf("after adding: %v, nonzero %+v", ni, ni.NonZeroRequested)
	}
	snap := ni.Snapshot()
	if err := ni.RemovePod(p1); err != nil {
		t.Fatal(err)
	}
	if ni.Requested.MilliCPU != 0 || ni.NonZeroRequested.MilliCPU != 100 || len(ni.Pods) != 1 {
		t.Fatalf("after removing: %v", ni)
	}
	if snap.Requested.MilliCPU != 1000 || len(snap.Pods) != 2 {
		t.Errorf("the snapshot changed with the original: %v", snap)
	}
	if err := ni.RemovePod(p1); err == nil {
		t.Error("removing a pod twice succeeded")
	}
	if ni.Allocatable.AllowedPodNumber != 110 || ni.Allocatable.MilliCPU != 4000 {
		t.Errorf("allocatable = %+v", ni.Allocatable)
	}
}

func TestSetNodeFallsBackToCapacity(t *testing.T) {
	n := st.MakeNode().Name("n").Obj()
	n.Status.Capacity = st.ResourceList(res{v1.ResourceCPU: "2", v1.ResourcePods: "10"})
	ni := NewNodeInfo()
	ni.SetNode(n)
	if ni.Allocatable.MilliCPU != 2000 || ni.Allocatable.AllowedPodNumber != 10 {
		t.Errorf("allocatable = %+v, want the capacity", ni.Allocatable)
	}
}

func TestStatus(t *testing.T) {
	var nilStatus *Status
	if !nilStatus.IsSuccess() || nilStatus.Code() != Success || nilStatus.Message() != "" || nilStatus.AsError() != nil {
		t.Error("a nil status is not Success")
	}
	s := NewStatus(Unschedulable, "a", "b").WithPlugin("P")
	if s.Message() != "a, b" || s.Plugin() != "P" || !s.IsRejected() || s.AsError().Error() != "a, b" {
		t.Errorf("status %v", s)
	}
	if s.String() != "Unschedulable: a, b" {
		t.Errorf("String() = %q", s.String())
	}
	if AsStatus(nil) != nil || AsStatus(errTest).Code() != Error || AsStatus(errTest).IsRejected() {
		t.Error("AsStatus")
	}
	if !NewStatus(UnschedulableAndUnresolvable, "x").Equal(NewStatus(UnschedulableAndUnresolvable, "x")) ||
		NewStatus(Unschedulable, "x").Equal(NewStatus(UnschedulableAndUnresolvable, "x")) {
		t.Error("Equal")
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("boom")
