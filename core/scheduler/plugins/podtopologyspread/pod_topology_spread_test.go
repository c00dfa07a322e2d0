package podtopologyspread

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

const zone = v1.LabelTopologyZone

// zoned is a node in a zone.
func zoned(name, z string) *v1.Node {
	return st.MakeNode().Name(name).Label(zone, z).Obj()
}

// web is a pod labelled app=web on a node.
func web(name, node string) *v1.Pod {
	return st.MakePod().Name(name).Node(node).Label("app", "web").Obj()
}

func TestPodTopologySpreadFilter(t *testing.T) {
	// zone a: a1 (2 web pods), a2 (0); zone b: b1 (1); zone c: c1 (0).
	nodes := []*v1.Node{zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("c1", "c"), st.MakeNode().Name("nolabel").Obj()}
	pods := []*v1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "b1"),
		st.MakePod().Name("other").Node("c1").Label("app", "db").Obj()}
	notMatch := framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
	tests := []struct {
		name          string
		pod           *v1.Pod
		pods          []*v1.Pod
		want          map[string]*framework.Status // nodes not listed fit
		wantPreFilter *framework.Status
	}{
		{
			name:          "no constraints and no owner: skipped",
			pod:           st.MakePod().Name("p").Label("app", "web").Obj(),
			pods:          pods,
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name:          "soft constraints only: the filter skips",
			pod:           st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.ScheduleAnyway, "app", "web").Obj(),
			pods:          pods,
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			// min is zone c (0): a gives 2+1-0 = 3, b gives 1+1-0 = 2.
			name: "maxSkew 1 by zone: only the emptiest zone",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "app", "web").Obj(),
			pods: pods,
			want: map[string]*framework.Status{
				"a1": notMatch, "a2": notMatch, "b1": notMatch,
				"nolabel": framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch),
			},
		},
		{
			name: "maxSkew 2 by zone: b is fine too",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(2, zone, v1.DoNotSchedule, "app", "web").Obj(),
			pods: pods,
			want: map[string]*framework.Status{
				"a1": notMatch, "a2": notMatch,
				"nolabel": framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch),
			},
		},
		{
			// The pod does not match its own selector: it adds no skew.
			name: "a pod that does not match the selector adds nothing",
			pod:  st.MakePod().Name("p").Label("app", "db").SpreadConstraint(2, zone, v1.DoNotSchedule, "app", "web").Obj(),
			pods: pods,
			want: map[string]*framework.Status{
				"nolabel": framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch),
			},
		},
		{
			// By hostname: a1 has 2, the minimum is 0.
			name: "by hostname",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "app", "web").Obj(),
			pods: pods,
			want: map[string]*framework.Status{"a1": notMatch, "b1": notMatch},
		},
		{
			// Only zones a and b hold nodes the pod may use (node affinity
			// honored): zone c does not count, so the minimum is b's 1.
			name: "nodes the pod's node affinity excludes are no domains",
			pod:  st.MakePod().Name("p").Label("app", "web").NodeAffinityIn(zone, "a", "b").SpreadConstraint(1, zone, v1.DoNotSchedule, "app", "web").Obj(),
			pods: pods,
			want: map[string]*framework.Status{
				"a1": notMatch, "a2": notMatch,
				"nolabel": framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch),
			},
		},
		{
			// minDomains 5 > 3 zones: the global minimum counts as 0.
			name: "fewer domains than minDomains: the minimum is 0",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "app", "web").Obj()
				five := int32(5)
				p.Spec.TopologySpreadConstraints[0].MinDomains = &five
				return p
			}(),
			pods: []*v1.Pod{web("w1", "a1"), web("w2", "b1"), web("w3", "c1")},
			want: map[string]*framework.Status{
				"a1": notMatch, "a2": notMatch, "b1": notMatch, "c1": notMatch,
				"nolabel": framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch),
			},
		},
		{
			name: "terminating pods do not count",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "app", "web").Obj(),
			pods: []*v1.Pod{st.MakePod().Name("dying").Node("a1").Label("app", "web").Terminating().Obj()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.NewSnapshot(tt.pods, nodes)
			pl := plugintest.NewPlugin[*PodTopologySpread](t, New, snap)
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tt.pod)
			if !s.Equal(tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", s, tt.wantPreFilter)
			}
			if !s.IsSuccess() {
				return
			}
			for _, n := range nodes {
				got := pl.Filter(context.Background(), state, tt.pod, snap.NodeInfo(t, n.Name))
				if want := tt.want[n.Name]; !got.Equal(want) {
					t.Errorf("%s: %v, want %v", n.Name, got, want)
				}
			}
		})
	}
}

func TestPodTopologySpreadAddRemovePod(t *testing.T) {
	nodes := []*v1.Node{zoned("a1", "a"), zoned("b1", "b")}
	pods := []*v1.Pod{web("w1", "a1")}
	snap := plugintest.NewSnapshot(pods, nodes)
	pl := plugintest.NewPlugin[*PodTopologySpread](t, New, snap)
	pod := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "app", "web").Obj()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(context.Background(), state, pod); !s.IsSuccess() {
		t.Fatal(s)
	}
	a1 := snap.NodeInfo(t, "a1")
	if s := pl.Filter(context.Background(), state, pod, a1); s.IsSuccess() {
		t.Fatal("a1 should be rejected: a has 1, b has 0")
	}
	// Preemption asks "what if w1 were gone": then a fits.
	cp := state.Clone()
	if s := pl.RemovePod(context.Background(), cp, pod, framework.NewPodInfo(pods[0]), a1); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.Filter(context.Background(), cp, pod, a1); !s.IsSuccess() {
		t.Errorf("without w1, a1 should fit: %v", s)
	}
	// The original state is untouched.
	if s := pl.Filter(context.Background(), state, pod, a1); s.IsSuccess() {
		t.Error("RemovePod on a clone changed the original state")
	}
	// And with one more web pod in b, a fits again.
	if s := pl.AddPod(context.Background(), state, pod, framework.NewPodInfo(web("w9", "b1")), snap.NodeInfo(t, "b1")); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.Filter(context.Background(), state, pod, a1); !s.IsSuccess() {
		t.Errorf("with a web pod added in b, a1 should fit: %v", s)
	}
}

func TestPodTopologySpreadScore(t *testing.T) {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-rs"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	owned := func(name, node string) *v1.Pod {
		return st.MakePod().Name(name).Node(node).Label("app", "web").OwnedBy("apps/v1", "ReplicaSet", "web-rs").Obj()
	}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		pod   *v1.Pod
		check func(t *testing.T, got map[string]int64)
	}{
		{
			name:  "no constraints and no owner: skipped",
			nodes: []*v1.Node{zoned("a1", "a")},
			pod:   st.MakePod().Name("p").Label("app", "web").Obj(),
			check: func(t *testing.T, got map[string]int64) {
				if got != nil {
					t.Errorf("scores %v, want skipped", got)
				}
			},
		},
		{
			// The system default constraints (hostname maxSkew 3, zone
			// maxSkew 5) spread a ReplicaSet's pods: the node with fewer
			// of them scores higher.
			name:  "default constraints spread a ReplicaSet's pods",
			nodes: []*v1.Node{zoned("busy", "a"), zoned("quiet", "b"), zoned("empty", "c")},
			pods:  []*v1.Pod{owned("w1", "busy"), owned("w2", "busy"), owned("w3", "quiet")},
			pod:   st.MakePod().Name("p").Label("app", "web").OwnedBy("apps/v1", "ReplicaSet", "web-rs").Obj(),
			check: func(t *testing.T, got map[string]int64) {
				if !(got["empty"] == 100 && got["quiet"] < got["empty"] && got["busy"] < got["quiet"]) {
					t.Errorf("scores %v, want empty (100) > quiet > busy", got)
				}
			},
		},
		{
			// A soft constraint of the pod's own: nodes without the key are
			// ignored (0); the rest ranked by their zone's count.
			name:  "a soft zone constraint",
			nodes: []*v1.Node{zoned("a1", "a"), zoned("b1", "b"), st.MakeNode().Name("nolabel").Obj()},
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a1")},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.ScheduleAnyway, "app", "web").Obj(),
			check: func(t *testing.T, got map[string]int64) {
				// a: 2 × log(4) = 2.77 -> 3; b: 0. Normalized: b 100, a
				// 100 × (3 + 0 - 3) / 3 = 0.
				if got["b1"] != 100 || got["a1"] != 0 || got["nolabel"] != 0 {
					t.Errorf("scores %v, want b1 100, a1 0, nolabel 0", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.NewSnapshot(tt.pods, tt.nodes)
			h := plugintest.NewFramework(t, plugintest.Config{Snapshot: snap, Listers: framework.Listers{
				ReplicaSets: plugintest.MapLister[*appsv1.ReplicaSet]{rs},
			}})
			pl, err := New(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := snap.List()
			tt.check(t, plugintest.RunScore(t, pl.(framework.ScorePlugin), framework.NewCycleState(), tt.pod, all))
		})
	}
}
