package nodename

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestNodeName(t *testing.T) {
	tests := []struct {
		name       string
		pod        *v1.Pod
		node       *v1.Node
		wantStatus *framework.Status
	}{
		{name: "no node name", pod: st.MakePod().Name("p").Obj(), node: st.MakeNode().Name("n").Obj()},
		{name: "this node", pod: st.MakePod().Name("p").Node("n").Obj(), node: st.MakeNode().Name("n").Obj()},
		{
			name:       "another node",
			pod:        st.MakePod().Name("p").Node("m").Obj(),
			node:       st.MakeNode().Name("n").Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason),
		},
	}
	pl, _ := New(context.Background(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(tt.node)
			got := pl.(framework.FilterPlugin).Filter(context.Background(), nil, tt.pod, ni)
			if !got.Equal(tt.wantStatus) {
				t.Errorf("Filter = %v, want %v", got, tt.wantStatus)
			}
		})
	}
}
