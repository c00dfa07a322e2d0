package nodeports

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestNodePorts(t *testing.T) {
	node := st.MakeNode().Name("n").Obj()
	onNode := func(pods ...*v1.Pod) *framework.NodeInfo {
		ni := framework.NewNodeInfo(pods...)
		ni.SetNode(node)
		return ni
	}
	udp := func(port int32) *v1.Pod {
		p := st.MakePod().Name("udp").Node("n").HostPort(port).Obj()
		p.Spec.Containers[0].Ports[0].Protocol = v1.ProtocolUDP
		return p
	}
	conflict := framework.NewStatus(framework.Unschedulable, ErrReason)
	tests := []struct {
		name          string
		pod           *v1.Pod
		nodeInfo      *framework.NodeInfo
		wantPreFilter *framework.Status
		want          *framework.Status
	}{
		{
			name:          "no host ports: skipped",
			pod:           st.MakePod().Name("p").Container(st.PauseImage).Obj(),
			nodeInfo:      onNode(st.MakePod().Name("a").Node("n").HostPort(80).Obj()),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name:     "a free port fits",
			pod:      st.MakePod().Name("p").HostPort(80).Obj(),
			nodeInfo: onNode(st.MakePod().Name("a").Node("n").HostPort(8080).Obj()),
		},
		{
			name:     "the same port is taken",
			pod:      st.MakePod().Name("p").HostPort(80).Obj(),
			nodeInfo: onNode(st.MakePod().Name("a").Node("n").HostPort(80).Obj()),
			want:     conflict,
		},
		{
			name:     "another protocol is another port",
			pod:      st.MakePod().Name("p").HostPort(53).Obj(),
			nodeInfo: onNode(udp(53)),
		},
		{
			name:     "different host IPs do not collide",
			pod:      st.MakePod().Name("p").HostPort(80, "10.0.0.1").Obj(),
			nodeInfo: onNode(st.MakePod().Name("a").Node("n").HostPort(80, "10.0.0.2").Obj()),
		},
		{
			name:     "0.0.0.0 collides with any IP",
			pod:      st.MakePod().Name("p").HostPort(80).Obj(),
			nodeInfo: onNode(st.MakePod().Name("a").Node("n").HostPort(80, "10.0.0.2").Obj()),
			want:     conflict,
		},
		{
			name:     "any IP collides with 0.0.0.0",
			pod:      st.MakePod().Name("p").HostPort(80, "10.0.0.1").Obj(),
			nodeInfo: onNode(st.MakePod().Name("a").Node("n").HostPort(80).Obj()),
			want:     conflict,
		},
	}
	pl := &NodePorts{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tt.pod)
			if !s.Equal(tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", s, tt.wantPreFilter)
			}
			if !s.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, tt.nodeInfo); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
			if Fits(tt.pod, tt.nodeInfo) != (tt.want == nil) {
				t.Errorf("Fits disagrees with Filter")
			}
		})
	}
}

func TestNodePortsFreedWhenPodRemoved(t *testing.T) {
	a := st.MakePod().Name("a").Node("n").HostPort(80).Obj()
	ni := framework.NewNodeInfo(a)
	ni.SetNode(st.MakeNode().Name("n").Obj())
	p := st.MakePod().Name("p").HostPort(80).Obj()
	if Fits(p, ni) {
		t.Fatal("port 80 should be taken")
	}
	if err := ni.RemovePod(a); err != nil {
		t.Fatal(err)
	}
	if !Fits(p, ni) {
		t.Error("port 80 should be free once the pod is gone")
	}
	evs := (&NodePorts{}).EventsToRegister()
	if !evs[0].Match(framework.AssignedPodDelete) {
		t.Errorf("a deleted pod frees its ports: %+v", evs)
	}
}
