package nodeunschedulable

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestNodeUnschedulable(t *testing.T) {
	tests := []struct {
		name       string
		pod        *v1.Pod
		node       *v1.Node
		wantStatus *framework.Status
	}{
		{
			name: "schedulable node",
			pod:  st.MakePod().Name("p").Obj(),
			node: st.MakeNode().Name("n").Obj(),
		},
		{
			name:       "cordoned node",
			pod:        st.MakePod().Name("p").Obj(),
			node:       st.MakeNode().Name("n").Unschedulable(true).Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable),
		},
		{
			name: "cordoned node, pod tolerates the unschedulable taint",
			pod:  st.MakePod().Name("p").Toleration(v1.TaintNodeUnschedulable).Obj(),
			node: st.MakeNode().Name("n").Unschedulable(true).Obj(),
		},
		{
			name:       "cordoned node, pod tolerates another taint",
			pod:        st.MakePod().Name("p").Toleration("example.com/other").Obj(),
			node:       st.MakeNode().Name("n").Unschedulable(true).Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable),
		},
		{
			name:       "no node",
			pod:        st.MakePod().Name("p").Obj(),
			wantStatus: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnknownCondition),
		},
	}
	pl, _ := New(context.Background(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			if tt.node != nil {
				ni.SetNode(tt.node)
			}
			got := pl.(framework.FilterPlugin).Filter(context.Background(), nil, tt.pod, ni)
			if !got.Equal(tt.wantStatus) {
				t.Errorf("Filter = %v, want %v", got, tt.wantStatus)
			}
		})
	}
}
