package tainttoleration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func nodeInfo(n *v1.Node) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func TestTaintTolerationFilter(t *testing.T) {
	gpu := st.MakeNode().Name("n").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *framework.Status
	}{
		{
			name: "no taints: fits",
			pod:  st.MakePod().Name("p").Obj(),
			node: st.MakeNode().Name("n").Obj(),
		},
		{
			name: "an untolerated NoSchedule taint is named in upstream's wording",
			pod:  st.MakePod().Name("p").Obj(),
			node: gpu,
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"),
		},
		{
			name: "a taint without a value prints an empty value",
			pod:  st.MakePod().Name("p").Obj(),
			node: st.MakeNode().Name("n").Taint("node-role.kubernetes.io/control-plane", "", v1.TaintEffectNoSchedule).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
		},
		{
			name: "tolerated by key, value and effect",
			pod: st.MakePod().Name("p").Tolerations(v1.Toleration{
				Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule,
			}).Obj(),
			node: gpu,
		},
		{
			name: "Exists tolerates any value",
			pod:  st.MakePod().Name("p").Toleration("dedicated").Obj(),
			node: gpu,
		},
		{
			name: "a toleration for another value does not help",
			pod: st.MakePod().Name("p").Tolerations(v1.Toleration{
				Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "fpga", Effect: v1.TaintEffectNoSchedule,
			}).Obj(),
			node: gpu,
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"),
		},
		{
			name: "a toleration for another effect does not help",
			pod: st.MakePod().Name("p").Tolerations(v1.Toleration{
				Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute,
			}).Obj(),
			node: gpu,
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"),
		},
		{
			name: "NoExecute keeps pods off too",
			pod:  st.MakePod().Name("p").Obj(),
			node: st.MakeNode().Name("n").Taint(v1.TaintNodeUnreachable, "", v1.TaintEffectNoExecute).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
		},
		{
			name: "PreferNoSchedule never rejects",
			pod:  st.MakePod().Name("p").Obj(),
			node: st.MakeNode().Name("n").Taint("dedicated", "gpu", v1.TaintEffectPreferNoSchedule).Obj(),
		},
		{
			name: "the first untolerated taint is the one named",
			pod:  st.MakePod().Name("p").Toleration("a").Obj(),
			node: st.MakeNode().Name("n").Taint("a", "1", v1.TaintEffectNoSchedule).Taint("b", "2", v1.TaintEffectNoSchedule).Taint("c", "3", v1.TaintEffectNoSchedule).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {b: 2}"),
		},
		{
			name: "an empty key with Exists tolerates everything",
			pod:  st.MakePod().Name("p").Tolerations(v1.Toleration{Operator: v1.TolerationOpExists}).Obj(),
			node: st.MakeNode().Name("n").Taint("a", "1", v1.TaintEffectNoSchedule).Taint("b", "", v1.TaintEffectNoExecute).Obj(),
		},
	}
	pl := &TaintToleration{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pl.Filter(context.Background(), framework.NewCycleState(), tt.pod, nodeInfo(tt.node))
			if !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTaintTolerationScore(t *testing.T) {
	prefer := func(name string, taints ...string) *v1.Node {
		n := st.MakeNode().Name(name)
		for _, k := range taints {
			n.Taint(k, "x", v1.TaintEffectPreferNoSchedule)
		}
		return n.Obj()
	}
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		want  map[string]int64
	}{
		{
			name:  "no taints anywhere: every node gets the maximum",
			pod:   st.MakePod().Name("p").Obj(),
			nodes: []*v1.Node{prefer("a"), prefer("b")},
			want:  map[string]int64{"a": 100, "b": 100},
		},
		{
			name:  "more untolerated PreferNoSchedule taints score lower",
			pod:   st.MakePod().Name("p").Obj(),
			nodes: []*v1.Node{prefer("none"), prefer("one", "k1"), prefer("two", "k1", "k2")},
			want:  map[string]int64{"none": 100, "one": 50, "two": 0},
		},
		{
			name: "tolerated taints do not count",
			pod: st.MakePod().Name("p").Tolerations(v1.Toleration{
				Key: "k1", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule,
			}).Obj(),
			nodes: []*v1.Node{prefer("one", "k1"), prefer("two", "k1", "k2")},
			want:  map[string]int64{"one": 100, "two": 0},
		},
		{
			name: "a toleration for NoSchedule does not count for PreferNoSchedule",
			pod: st.MakePod().Name("p").Tolerations(v1.Toleration{
				Key: "k1", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule,
			}).Obj(),
			nodes: []*v1.Node{prefer("clean"), prefer("one", "k1")},
			want:  map[string]int64{"clean": 100, "one": 0},
		},
		{
			name: "NoSchedule taints do not count in the score",
			pod:  st.MakePod().Name("p").Obj(),
			nodes: []*v1.Node{
				st.MakeNode().Name("hard").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(),
				prefer("soft", "k"),
			},
			want: map[string]int64{"hard": 100, "soft": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nis []*framework.NodeInfo
			for _, n := range tt.nodes {
				nis = append(nis, nodeInfo(n))
			}
			got := plugintest.RunScore(t, &TaintToleration{}, framework.NewCycleState(), tt.pod, nis)
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("score of %s = %d, want %d (all: %v)", n, got[n], w, got)
				}
			}
		})
	}
}

func TestTaintTolerationEvents(t *testing.T) {
	evs := (&TaintToleration{}).EventsToRegister()
	if !evs[0].Match(framework.NodeTaintChange) || !evs[0].Match(framework.NodeAdd) {
		t.Errorf("a taint change or a new node must wake pods this plugin rejected: %+v", evs)
	}
	if evs[0].Match(framework.AssignedPodDelete) {
		t.Errorf("a deleted pod cannot remove a taint: %+v", evs)
	}
}
