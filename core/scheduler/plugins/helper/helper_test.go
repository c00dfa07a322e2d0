package helper

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

func TestDefaultNormalizeScore(t *testing.T) {
	tests := []struct {
		in      []int64
		reverse bool
		want    []int64
	}{
		{in: []int64{0, 5, 10}, want: []int64{0, 50, 100}},
		{in: []int64{0, 5, 10}, reverse: true, want: []int64{100, 50, 0}},
		{in: []int64{0, 0}, want: []int64{0, 0}},
		{in: []int64{0, 0}, reverse: true, want: []int64{100, 100}},
		{in: []int64{1, 3}, want: []int64{33, 100}},
	}
	for _, tt := range tests {
		list := make(framework.NodeScoreList, len(tt.in))
		for i, s := range tt.in {
			list[i].Score = s
		}
		DefaultNormalizeScore(framework.MaxNodeScore, tt.reverse, list)
		var got []int64
		for _, ns := range list {
			got = append(got, ns.Score)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%v reverse=%v: %v, want %v", tt.in, tt.reverse, got, tt.want)
		}
	}
}

func TestFindMatchingUntoleratedTaint(t *testing.T) {
	taints := []v1.Taint{
		{Key: "soft", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "hard", Value: "x", Effect: v1.TaintEffectNoSchedule},
	}
	got, ok := FindMatchingUntoleratedTaint(taints, nil, DoNotScheduleTaintsFilterFunc())
	if !ok || got.Key != "hard" {
		t.Errorf("got %v %v, want the NoSchedule taint", got, ok)
	}
	tol := []v1.Toleration{{Key: "hard", Operator: v1.TolerationOpExists}}
	if _, ok := FindMatchingUntoleratedTaint(taints, tol, DoNotScheduleTaintsFilterFunc()); ok {
		t.Error("the NoSchedule taint is tolerated; PreferNoSchedule is not looked at")
	}
	if got, ok := FindMatchingUntoleratedTaint(taints, tol, nil); !ok || got.Key != "soft" {
		t.Errorf("without a filter every taint counts: %v %v", got, ok)
	}
}
