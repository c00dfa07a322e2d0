package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

// fakePlugin is every kind of plugin at once; each field says what to return.
type fakePlugin struct {
	name      string
	filter    func(node string) *framework.Status
	score     map[string]int64
	normalize func(framework.NodeScoreList)
	preFilter *framework.PreFilterResult
	preStatus *framework.Status
	calls     *[]string
}

func (p *fakePlugin) Name() string { return p.name }
func (p *fakePlugin) PreFilter(context.Context, *framework.CycleState, *v1.Pod) (*framework.PreFilterResult, *framework.Status) {
	return p.preFilter, p.preStatus
}
func (p *fakePlugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }
func (p *fakePlugin) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if p.calls != nil {
		*p.calls = append(*p.calls, p.name+"/"+ni.Node().Name)
	}
	if p.filter == nil {
		return nil
	}
	return p.filter(ni.Node().Name)
}
func (p *fakePlugin) Score(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	return p.score[ni.Node().Name], nil
}
func (p *fakePlugin) ScoreExtensions() framework.ScoreExtensions {
	if p.normalize == nil {
		return nil
	}
	return p
}
func (p *fakePlugin) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	p.normalize(scores)
	return nil
}

// sortBind is the QueueSort and Bind plugin every profile needs.
type sortBind struct{ name string }

func (p *sortBind) Name() string { return p.name }
func (p *sortBind) Less(a, b *framework.QueuedPodInfo) bool {
	return a.Timestamp.Before(b.Timestamp)
}
func (p *sortBind) Bind(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	return nil
}

func newFramework(t *testing.T, pls []*fakePlugin, weights map[string]int32) *Framework {
	t.Helper()
	reg := Registry{"SortBind": func(context.Context, framework.Handle) (framework.Plugin, error) { return &sortBind{"SortBind"}, nil }}
	cfg := []PluginConfig{{Name: "SortBind"}}
	for _, p := range pls {
		reg[p.name] = func(context.Context, framework.Handle) (framework.Plugin, error) { return p, nil }
		cfg = append(cfg, PluginConfig{Name: p.name, Weight: weights[p.name]})
	}
	f, err := New(context.Background(), Config{Registry: reg, Plugins: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func nodes(names ...string) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range names {
		ni := framework.NewNodeInfo()
		ni.SetNode(st.MakeNode().Name(n).Obj())
		out = append(out, ni)
	}
	return out
}

func TestNewValidates(t *testing.T) {
	plugin := func(name string) PluginFactory {
		return func(context.Context, framework.Handle) (framework.Plugin, error) { return &sortBind{name: name}, nil }
	}
	scoreOnly := func(context.Context, framework.Handle) (framework.Plugin, error) { return &fakePlugin{name: "S"}, nil }
	filterOnly := func(context.Context, framework.Handle) (framework.Plugin, error) { return &filterPlugin{}, nil }
	tests := []struct {
		name    string
		reg     Registry
		plugins []PluginConfig
		wantErr string
	}{
		{name: "unknown plugin", reg: Registry{}, plugins: []PluginConfig{{Name: "Nope"}}, wantErr: `plugin "Nope" does not exist`},
		{name: "twice", reg: Registry{"A": plugin("A")}, plugins: []PluginConfig{{Name: "A"}, {Name: "A"}}, wantErr: "more than once"},
		{name: "two queue sorts", reg: Registry{"A": plugin("A"), "B": plugin("B")}, plugins: []PluginConfig{{Name: "A"}, {Name: "B"}}, wantErr: "only one QueueSort"},
		{name: "no queue sort", reg: Registry{"F": filterOnly}, plugins: []PluginConfig{{Name: "F"}}, wantErr: "one QueueSort plugin is required"},
		{name: "negative weight", reg: Registry{"A": plugin("A"), "S": scoreOnly}, plugins: []PluginConfig{{Name: "A"}, {Name: "S", Weight: -1}}, wantErr: "negative weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Config{Registry: tt.reg, Plugins: tt.plugins})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

type filterPlugin struct{}

func (*filterPlugin) Name() string { return "F" }
func (*filterPlugin) Filter(context.Context, *framework.CycleState, *v1.Pod, *framework.NodeInfo) *framework.Status {
	return nil
}

func TestRunFilterPlugins(t *testing.T) {
	var calls []string
	reject := func(node string) *framework.Status {
		if node == "bad" {
			return framework.NewStatus(framework.Unschedulable, "nope")
		}
		return nil
	}
	a := &fakePlugin{name: "A", filter: reject, calls: &calls}
	b := &fakePlugin{name: "B", calls: &calls}
	f := newFramework(t, []*fakePlugin{a, b}, nil)
	state := framework.NewCycleState()
	pod := st.MakePod().Name("p").Obj()
	for _, ni := range nodes("good", "bad") {
		s := f.RunFilterPlugins(context.Background(), state, pod, ni)
		if ni.Node().Name == "bad" && (s.Plugin() != "A" || s.Code() != framework.Unschedulable) {
			t.Errorf("bad node: %v from %q", s, s.Plugin())
		}
		if ni.Node().Name == "good" && !s.IsSuccess() {
			t.Errorf("good node: %v", s)
		}
	}
	if got, want := strings.Join(calls, " "), "A/good B/good A/bad"; got != want {
		t.Errorf("calls %q, want %q (filters stop at the first rejection)", got, want)
	}

	// An Error is wrapped with the plugin's name.
	a.filter = func(string) *framework.Status { return framework.AsStatus(errors.New("broken")) }
	s := f.RunFilterPlugins(context.Background(), state, pod, nodes("n")[0])
	if s.Code() != framework.Error || s.Message() != `running "A" filter plugin: broken` || s.Plugin() != "A" {
		t.Errorf("error status: %v (%q)", s, s.Plugin())
	}

	// A PreFilter Skip skips the plugin's Filter.
	a.preStatus = framework.NewStatus(framework.Skip)
	if _, s, _ := f.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := f.RunFilterPlugins(context.Background(), state, pod, nodes("n")[0]); !s.IsSuccess() {
		t.Errorf("skipped filter ran: %v", s)
	}
}

func TestRunPreFilterPluginsNarrowing(t *testing.T) {
	a := &fakePlugin{name: "A", preFilter: &framework.PreFilterResult{NodeNames: sets.New("n1", "n2")}}
	b := &fakePlugin{name: "B", preFilter: &framework.PreFilterResult{NodeNames: sets.New("n3")}}
	f := newFramework(t, []*fakePlugin{a, b}, nil)
	_, status, plugins := f.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj())
	if status.Code() != framework.UnschedulableAndUnresolvable || status.Message() != "node(s) didn't satisfy plugin(s) [A B] simultaneously" || !plugins.Equal(sets.New("A", "B")) {
		t.Errorf("got %v, %v", status, plugins)
	}
}

func TestRunScorePlugins(t *testing.T) {
	a := &fakePlugin{name: "A", score: map[string]int64{"n1": 10, "n2": 20}}
	// B's raw scores are 0..1000; it normalizes them to 0..100.
	b := &fakePlugin{name: "B", score: map[string]int64{"n1": 1000, "n2": 500}, normalize: func(l framework.NodeScoreList) {
		for i := range l {
			l[i].Score /= 10
		}
	}}
	f := newFramework(t, []*fakePlugin{a, b}, map[string]int32{"B": 3})
	pod := st.MakePod().Name("p").Obj()
	got, status := f.RunScorePlugins(context.Background(), framework.NewCycleState(), pod, nodes("n1", "n2"))
	if !status.IsSuccess() {
		t.Fatal(status)
	}
	want := []framework.NodePluginScores{
		{Name: "n1", TotalScore: 10 + 300, Scores: []framework.PluginScore{{Name: "A", Raw: 10, Normalized: 10, Score: 10}, {Name: "B", Raw: 1000, Normalized: 100, Score: 300}}},
		{Name: "n2", TotalScore: 20 + 150, Scores: []framework.PluginScore{{Name: "A", Raw: 20, Normalized: 20, Score: 20}, {Name: "B", Raw: 500, Normalized: 50, Score: 150}}},
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].TotalScore != want[i].TotalScore || len(got[i].Scores) != 2 ||
			got[i].Scores[0] != want[i].Scores[0] || got[i].Scores[1] != want[i].Scores[1] {
			t.Errorf("node %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if sp := f.ScorePlugins(); len(sp) != 2 || sp[1] != (ScorePluginWeight{Name: "B", Weight: 3}) {
		t.Errorf("ScorePlugins() = %v", sp)
	}

	// A score out of range after normalizing is an error.
	b.normalize = nil
	if _, status := f.RunScorePlugins(context.Background(), framework.NewCycleState(), pod, nodes("n1")); status.Code() != framework.Error {
		t.Errorf("out-of-range score: %v", status)
	}
}
