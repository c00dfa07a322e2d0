// Package plugintest builds what plugin unit tests need around a plugin: a
// snapshot of nodes and pods, and a real framework (runtime.Framework) as
// the plugin's Handle, with the plugins a test names enabled (upstream:
// pkg/scheduler/framework/runtime NewFramework and
// pkg/scheduler/backend/cache NewSnapshot, as plugin tests use them).
package plugintest

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/framework/runtime"
)

// Snapshot is a fixed set of nodes and their pods.
type Snapshot struct {
	list   []*framework.NodeInfo
	byName map[string]*framework.NodeInfo
}

var (
	_ framework.SharedLister   = (*Snapshot)(nil)
	_ framework.NodeInfoLister = (*Snapshot)(nil)
)

// NewSnapshot puts each pod on the node its spec.nodeName names (pods on
// unknown nodes are dropped).
func NewSnapshot(pods []*v1.Pod, nodes []*v1.Node) *Snapshot {
	s := &Snapshot{byName: map[string]*framework.NodeInfo{}}
	for _, n := range nodes {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		s.list = append(s.list, ni)
		s.byName[n.Name] = ni
	}
	for _, p := range pods {
		if ni, ok := s.byName[p.Spec.NodeName]; ok {
			ni.AddPod(p)
		}
	}
	return s
}

// NodeInfos implements framework.SharedLister.
func (s *Snapshot) NodeInfos() framework.NodeInfoLister { return s }

// List implements framework.NodeInfoLister.
func (s *Snapshot) List() ([]*framework.NodeInfo, error) { return s.list, nil }

// HavePodsWithAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, n := range s.list {
		if len(n.PodsWithAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// HavePodsWithRequiredAntiAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	var out []*framework.NodeInfo
	for _, n := range s.list {
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// Get implements framework.NodeInfoLister.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, error) {
	if ni, ok := s.byName[name]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// NodeInfo returns a node's NodeInfo (the test fails if there is none).
func (s *Snapshot) NodeInfo(t testing.TB, name string) *framework.NodeInfo {
	t.Helper()
	ni, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

// Config is what NewFramework builds.
type Config struct {
	Snapshot framework.SharedLister
	Listers  framework.Listers
	// Plugins are enabled in order (with weight 1); Registry has their
	// factories.
	Plugins  []runtime.PluginConfig
	Registry runtime.Registry
	// Nominator, if set, answers NominatedPodsForNode.
	Nominator framework.PodNominator
	Client    *client.Client
	Recorder  *client.Recorder
}

// fakeSort and fakeBinder make a profile valid (one QueueSort, a Bind).
type fakeSort struct{}

func (fakeSort) Name() string                            { return "FakeQueueSort" }
func (fakeSort) Less(a, b *framework.QueuedPodInfo) bool { return a.Timestamp.Before(b.Timestamp) }

type fakeBinder struct{}

func (fakeBinder) Name() string { return "FakeBinder" }
func (fakeBinder) Bind(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	return nil
}

// NewFramework builds a framework with cfg's plugins.
func NewFramework(t testing.TB, cfg Config) *runtime.Framework {
	t.Helper()
	reg := runtime.Registry{
		"FakeQueueSort": func(context.Context, framework.Handle) (framework.Plugin, error) { return fakeSort{}, nil },
		"FakeBinder":    func(context.Context, framework.Handle) (framework.Plugin, error) { return fakeBinder{}, nil },
	}
	if err := reg.Merge(cfg.Registry); err != nil {
		t.Fatal(err)
	}
	plugins := append([]runtime.PluginConfig{{Name: "FakeQueueSort"}}, cfg.Plugins...)
	plugins = append(plugins, runtime.PluginConfig{Name: "FakeBinder"})
	snap := cfg.Snapshot
	if snap == nil {
		snap = NewSnapshot(nil, nil)
	}
	f, err := runtime.New(context.Background(), runtime.Config{
		ProfileName: v1.DefaultSchedulerName,
		Registry:    reg,
		Plugins:     plugins,
		Client:      cfg.Client,
		Recorder:    cfg.Recorder,
		Snapshot:    snap,
		Listers:     cfg.Listers,
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Nominator != nil {
		f.SetPodNominator(cfg.Nominator)
	}
	return f
}

// NewHandle is a framework with no plugins but the snapshot: the Handle a
// plugin under test is built with.
func NewHandle(t testing.TB, snap framework.SharedLister) *runtime.Framework {
	t.Helper()
	return NewFramework(t, Config{Snapshot: snap})
}

// NewPlugin builds a plugin with a Handle over snap.
func NewPlugin[P framework.Plugin](t testing.TB, factory runtime.PluginFactory, snap framework.SharedLister) P {
	t.Helper()
	pl, err := factory(context.Background(), NewHandle(t, snap))
	if err != nil {
		t.Fatal(err)
	}
	return pl.(P)
}

// MapLister is a framework.Lister over a fixed list.
type MapLister[T interface {
	comparable
	GetNamespace() string
	GetName() string
}] []T

// Get implements framework.Lister.
func (l MapLister[T]) Get(namespace, name string) (T, bool) {
	for _, o := range l {
		if o.GetNamespace() == namespace && o.GetName() == name {
			return o, true
		}
	}
	var zero T
	return zero, false
}

// List implements framework.Lister.
func (l MapLister[T]) List() []T { return l }

// RunScore runs PreScore, Score and NormalizeScore of a plugin over the
// nodes as the framework does, and returns the final score per node name.
// A PreScore Skip returns nil.
func RunScore(t testing.TB, pl framework.ScorePlugin, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if ps, ok := pl.(framework.PreScorePlugin); ok {
		st := ps.PreScore(ctx, state, pod, nodes)
		if st.IsSkip() {
			return nil
		}
		if !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st)
		}
	}
	list := make(framework.NodeScoreList, len(nodes))
	for i, n := range nodes {
		s, st := pl.Score(ctx, state, pod, n)
		if !st.IsSuccess() {
			t.Fatalf("Score %s: %v", n.Node().Name, st)
		}
		list[i] = framework.NodeScore{Name: n.Node().Name, Score: s}
	}
	if ext := pl.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
			t.Fatalf("NormalizeScore: %v", st)
		}
	}
	out := map[string]int64{}
	for _, ns := range list {
		out[ns.Name] = ns.Score
	}
	return out
}
