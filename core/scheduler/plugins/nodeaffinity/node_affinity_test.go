package nodeaffinity

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func nodeInfo(n *v1.Node) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func TestNodeAffinityFilter(t *testing.T) {
	ssdA := st.MakeNode().Name("node-1").Label("disktype", "ssd").Label("zone", "a").Label("cores", "8").Obj()
	mismatch := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	tests := []struct {
		name          string
		pod           *v1.Pod
		wantPreFilter *framework.Status
		wantNodes     sets.Set[string]
		want          *framework.Status
	}{
		{
			name:          "nothing to check: PreFilter skips",
			pod:           st.MakePod().Name("p").Obj(),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name: "nodeSelector matches",
			pod:  st.MakePod().Name("p").NodeSelector(map[string]string{"disktype": "ssd"}).Obj(),
		},
		{
			name: "nodeSelector does not match",
			pod:  st.MakePod().Name("p").NodeSelector(map[string]string{"disktype": "hdd"}).Obj(),
			want: mismatch,
		},
		{
			name: "every nodeSelector label must match",
			pod:  st.MakePod().Name("p").NodeSelector(map[string]string{"disktype": "ssd", "gpu": "yes"}).Obj(),
			want: mismatch,
		},
		{
			name: "required In matches",
			pod:  st.MakePod().Name("p").NodeAffinityIn("zone", "a", "b").Obj(),
		},
		{
			name: "required In does not match",
			pod:  st.MakePod().Name("p").NodeAffinityIn("zone", "c").Obj(),
			want: mismatch,
		},
		{
			name: "terms are ORed",
			pod:  st.MakePod().Name("p").NodeAffinityIn("zone", "c").NodeAffinityIn("disktype", "ssd").Obj(),
		},
		{
			name: "requirements of one term are ANDed",
			pod: st.MakePod().Name("p").NodeAffinityTerm(
				v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}},
				v1.NodeSelectorRequirement{Key: "disktype", Operator: v1.NodeSelectorOpIn, Values: []string{"hdd"}},
			).Obj(),
			want: mismatch,
		},
		{
			name: "NotIn, Exists, DoesNotExist",
			pod: st.MakePod().Name("p").NodeAffinityTerm(
				v1.NodeSelectorRequirement{Key: "zone", Operator: v1.NodeSelectorOpNotIn, Values: []string{"b"}},
				v1.NodeSelectorRequirement{Key: "disktype", Operator: v1.NodeSelectorOpExists},
				v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpDoesNotExist},
			).Obj(),
		},
		{
			name: "Gt compares numbers",
			pod: st.MakePod().Name("p").NodeAffinityTerm(
				v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"4"}},
			).Obj(),
		},
		{
			name: "Lt compares numbers",
			pod: st.MakePod().Name("p").NodeAffinityTerm(
				v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpLt, Values: []string{"4"}},
			).Obj(),
			want: mismatch,
		},
		{
			name: "a term that does not parse matches nothing",
			pod: st.MakePod().Name("p").NodeAffinityTerm(
				v1.NodeSelectorRequirement{Key: "cores", Operator: v1.NodeSelectorOpGt, Values: []string{"many"}},
			).Obj(),
			want: mismatch,
		},
		{
			name: "nodeSelector and node affinity must both match",
			pod:  st.MakePod().Name("p").NodeSelector(map[string]string{"disktype": "hdd"}).NodeAffinityIn("zone", "a").Obj(),
			want: mismatch,
		},
		{
			name: "an empty term matches no node",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Obj()
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{}},
				}}}
				return p
			}(),
			want: mismatch,
		},
		{
			name: "matchFields metadata.name narrows the nodes in PreFilter",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Obj()
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}}}}},
				}}}
				return p
			}(),
			wantNodes: sets.New("node-1"),
		},
		{
			name: "matchFields for another node",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Obj()
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"node-2"}}}}},
				}}}
				return p
			}(),
			wantNodes: sets.New("node-2"),
			want:      mismatch,
		},
		{
			name: "conflicting node names: PreFilter rejects",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Obj()
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
						{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"node-1"}},
						{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"node-2"}},
					}}},
				}}}
				return p
			}(),
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict),
		},
	}
	pl := &NodeAffinity{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			res, st := pl.PreFilter(context.Background(), state, tt.pod)
			if !st.Equal(tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", st, tt.wantPreFilter)
			}
			if !st.IsSuccess() {
				return
			}
			if tt.wantNodes == nil && !res.AllNodes() || tt.wantNodes != nil && (res.AllNodes() || !res.NodeNames.Equal(tt.wantNodes)) {
				t.Errorf("PreFilterResult %+v, want %v", res, tt.wantNodes)
			}
			if got := pl.Filter(context.Background(), state, tt.pod, nodeInfo(ssdA)); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeAffinityScore(t *testing.T) {
	nodes := []*framework.NodeInfo{
		nodeInfo(st.MakeNode().Name("ssd-a").Label("disktype", "ssd").Label("zone", "a").Obj()),
		nodeInfo(st.MakeNode().Name("ssd-b").Label("disktype", "ssd").Label("zone", "b").Obj()),
		nodeInfo(st.MakeNode().Name("hdd-a").Label("disktype", "hdd").Label("zone", "a").Obj()),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]int64 // nil: Score skipped
	}{
		{name: "no preferences: skipped", pod: st.MakePod().Name("p").Obj()},
		{
			name: "the sum of the matching weights, scaled so the best is 100",
			pod:  st.MakePod().Name("p").PreferredNodeAffinityIn(80, "disktype", "ssd").PreferredNodeAffinityIn(20, "zone", "a").Obj(),
			want: map[string]int64{"ssd-a": 100, "ssd-b": 80, "hdd-a": 20},
		},
		{
			name: "nothing matches: all 0",
			pod:  st.MakePod().Name("p").PreferredNodeAffinityIn(10, "disktype", "nvme").Obj(),
			want: map[string]int64{"ssd-a": 0, "ssd-b": 0, "hdd-a": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plugintest.RunScore(t, &NodeAffinity{}, framework.NewCycleState(), tt.pod, nodes)
			if tt.want == nil {
				if got != nil {
					t.Errorf("scores %v, want Score skipped", got)
				}
				return
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("%s: %d, want %d (all %v)", n, got[n], w, got)
				}
			}
		})
	}
}

func TestNodeAffinityEvents(t *testing.T) {
	evs := (&NodeAffinity{}).EventsToRegister()
	if !evs[0].Match(framework.NodeLabelChange) || !evs[0].Match(framework.NodeAdd) {
		t.Errorf("a new or relabelled node must wake pods this plugin rejected: %+v", evs)
	}
}
