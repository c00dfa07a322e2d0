package interpodaffinity

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

const (
	hostname = v1.LabelHostname
	zone     = v1.LabelTopologyZone
)

func zoned(name, z string) *v1.Node { return st.MakeNode().Name(name).Label(zone, z).Obj() }

func TestInterPodAffinityFilter(t *testing.T) {
	nodes := []*v1.Node{zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")}
	cache := st.MakePod().Name("cache").Node("a1").Label("app", "cache").Obj()
	affinityMiss := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	antiMiss := framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	existingMiss := framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	tests := []struct {
		name          string
		pods          []*v1.Pod
		pod           *v1.Pod
		wantPreFilter *framework.Status
		want          map[string]*framework.Status // nodes not listed fit
	}{
		{
			name:          "no terms and no anti-affinity anywhere: skipped",
			pods:          []*v1.Pod{cache},
			pod:           st.MakePod().Name("p").Obj(),
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name: "affinity to a pod on the same node",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAffinity("app", "cache", hostname, st.Required).Obj(),
			want: map[string]*framework.Status{"a2": affinityMiss, "b1": affinityMiss},
		},
		{
			name: "affinity to a pod in the same zone",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAffinity("app", "cache", zone, st.Required).Obj(),
			want: map[string]*framework.Status{"b1": affinityMiss},
		},
		{
			name: "affinity to pods that run nowhere",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAffinity("app", "db", zone, st.Required).Obj(),
			want: map[string]*framework.Status{"a1": affinityMiss, "a2": affinityMiss, "b1": affinityMiss},
		},
		{
			// The first pod of a group with affinity to its own kind may go
			// anywhere, or the group could never start.
			name: "the first pod of a self-affine group",
			pod:  st.MakePod().Name("p").Label("app", "web").PodAffinity("app", "web", zone, st.Required).Obj(),
		},
		{
			name: "a node without the topology key never satisfies affinity",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAffinity("app", "cache", "rack", st.Required).Obj(),
			want: map[string]*framework.Status{"a1": affinityMiss, "a2": affinityMiss, "b1": affinityMiss},
		},
		{
			name: "anti-affinity to a pod on the node",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAntiAffinity("app", "cache", hostname, st.Required).Obj(),
			want: map[string]*framework.Status{"a1": antiMiss},
		},
		{
			name: "anti-affinity by zone",
			pods: []*v1.Pod{cache},
			pod:  st.MakePod().Name("p").PodAntiAffinity("app", "cache", zone, st.Required).Obj(),
			want: map[string]*framework.Status{"a1": antiMiss, "a2": antiMiss},
		},
		{
			// The existing pod objects to web pods in its zone: a new web pod
			// without any terms of its own is still kept out.
			name: "an existing pod's anti-affinity",
			pods: []*v1.Pod{st.MakePod().Name("loner").Node("a1").PodAntiAffinity("app", "web", zone, st.Required).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: map[string]*framework.Status{"a1": existingMiss, "a2": existingMiss},
		},
		{
			name: "another namespace does not match by default",
			pods: []*v1.Pod{st.MakePod().Name("cache").Namespace("other").Node("a1").Label("app", "cache").Obj()},
			pod:  st.MakePod().Name("p").PodAntiAffinity("app", "cache", hostname, st.Required).Obj(),
		},
		{
			name: "namespaces named in the term",
			pods: []*v1.Pod{st.MakePod().Name("cache").Namespace("other").Node("a1").Label("app", "cache").Obj()},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").PodAntiAffinity("app", "cache", hostname, st.Required).Obj()
				p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].Namespaces = []string{"other"}
				return p
			}(),
			want: map[string]*framework.Status{"a1": antiMiss},
		},
		{
			name: "a namespaceSelector",
			pods: []*v1.Pod{st.MakePod().Name("cache").Namespace("other").Node("a1").Label("app", "cache").Obj()},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").PodAntiAffinity("app", "cache", hostname, st.Required).Obj()
				p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
				return p
			}(),
			want: map[string]*framework.Status{"a1": antiMiss},
		},
		{
			name: "a selector that does not parse",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").PodAffinity("app", "cache", hostname, st.Required).Obj()
				p.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels = map[string]string{"bad key!": "x"}
				return p
			}(),
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, "parsing pod: "),
		},
	}
	namespaces := plugintest.MapLister[*v1.Namespace]{
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"team": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.NewSnapshot(tt.pods, nodes)
			h := plugintest.NewFramework(t, plugintest.Config{Snapshot: snap, Listers: framework.Listers{Namespaces: namespaces}})
			p, _ := New(context.Background(), h)
			pl := p.(*InterPodAffinity)
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tt.pod)
			if tt.wantPreFilter != nil && tt.wantPreFilter.Code() == framework.UnschedulableAndUnresolvable {
				if s.Code() != framework.UnschedulableAndUnresolvable {
					t.Fatalf("PreFilter = %v, want a parse error", s)
				}
				return
			}
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

func TestInterPodAffinityPreemptionView(t *testing.T) {
	nodes := []*v1.Node{zoned("a1", "a")}
	cache := st.MakePod().Name("cache").Node("a1").Label("app", "cache").Obj()
	snap := plugintest.NewSnapshot([]*v1.Pod{cache}, nodes)
	pl := plugintest.NewPlugin[*InterPodAffinity](t, New, snap)
	pod := st.MakePod().Name("p").PodAntiAffinity("app", "cache", hostname, st.Required).Obj()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(context.Background(), state, pod); !s.IsSuccess() {
		t.Fatal(s)
	}
	a1 := snap.NodeInfo(t, "a1")
	if s := pl.Filter(context.Background(), state, pod, a1); s.IsSuccess() {
		t.Fatal("a1 holds a cache pod")
	}
	if s := pl.RemovePod(context.Background(), state, pod, framework.NewPodInfo(cache), a1); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.Filter(context.Background(), state, pod, a1); !s.IsSuccess() {
		t.Errorf("with the cache pod removed, a1 fits: %v", s)
	}
}

func TestInterPodAffinityScore(t *testing.T) {
	nodes := []*v1.Node{zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")}
	tests := []struct {
		name string
		pods []*v1.Pod
		pod  *v1.Pod
		want map[string]int64 // nil: skipped
	}{
		{
			name: "no preferences and no pods with affinity: skipped",
			pods: []*v1.Pod{st.MakePod().Name("cache").Node("a1").Label("app", "cache").Obj()},
			pod:  st.MakePod().Name("p").Obj(),
		},
		{
			name: "preferred affinity by zone",
			pods: []*v1.Pod{st.MakePod().Name("cache").Node("a1").Label("app", "cache").Obj()},
			pod:  st.MakePod().Name("p").WeightedPodAffinity(50, "app", "cache", zone, st.Preferred).Obj(),
			want: map[string]int64{"a1": 100, "a2": 100, "b1": 0},
		},
		{
			name: "preferred anti-affinity by node",
			pods: []*v1.Pod{st.MakePod().Name("cache").Node("a1").Label("app", "cache").Obj()},
			pod:  st.MakePod().Name("p").WeightedPodAntiAffinity(50, "app", "cache", hostname, st.Preferred).Obj(),
			want: map[string]int64{"a1": 0, "a2": 100, "b1": 100},
		},
		{
			// An existing pod's required affinity to this pod counts with
			// hardPodAffinityWeight (1); its preferred anti-affinity subtracts.
			name: "existing pods' terms count too",
			pods: []*v1.Pod{
				st.MakePod().Name("friend").Node("b1").PodAffinity("app", "web", zone, st.Required).Obj(),
				st.MakePod().Name("foe").Node("a2").WeightedPodAntiAffinity(5, "app", "web", hostname, st.Preferred).Obj(),
			},
			pod: st.MakePod().Name("p").Label("app", "web").Obj(),
			// b1: +1, a2: -5, a1: 0 -> normalized over [-5, 1].
			want: map[string]int64{"b1": 100, "a1": 83, "a2": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.NewSnapshot(tt.pods, nodes)
			pl := plugintest.NewPlugin[*InterPodAffinity](t, New, snap)
			all, _ := snap.List()
			got := plugintest.RunScore(t, pl, framework.NewCycleState(), tt.pod, all)
			if tt.want == nil {
				if got != nil {
					t.Errorf("scores %v, want skipped", got)
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
