package imagelocality

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	"github.com/kubetab/kubetab/core/scheduler/internal/plugintest"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestImageLocality(t *testing.T) {
	const big = 300 * mb
	nodes := []*v1.Node{
		st.MakeNode().Name("has-both").Images(map[string]int64{"db:1.0": big, "web:1.0": big}).Obj(),
		st.MakeNode().Name("has-web").Images(map[string]int64{"web:1.0": big}).Obj(),
		st.MakeNode().Name("has-none").Obj(),
		st.MakeNode().Name("has-tiny").Images(map[string]int64{"hello:1.0": 28 * 1024, "hello:latest": 28 * 1024}).Obj(),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]int64
	}{
		{
			// web:1.0 is on 2 of 4 nodes: it counts 300 MiB × 2/4 = 150 MiB;
			// (150 - 23) × 100 / (1000 - 23) = 12.
			name: "an image counts its size scaled by how many nodes have it",
			pod:  st.MakePod().Name("p").Container("web:1.0").Obj(),
			want: map[string]int64{"has-both": 12, "has-web": 12, "has-none": 0, "has-tiny": 0},
		},
		{
			// db:1.0 on 1 of 4: 75 MiB. Two containers: the range is 23 MiB
			// to 2000 MiB. has-both: 150 + 75 = 225 MiB: (225 - 23) × 100 /
			// 1977 = 10; has-web: 150 MiB: 6.
			name: "more images present, more score",
			pod:  st.MakePod().Name("p").Container("web:1.0").Container("db:1.0").Obj(),
			want: map[string]int64{"has-both": 10, "has-web": 6, "has-none": 0},
		},
		{
			// kubetab's WebAssembly images are far below upstream's 23 MiB
			// floor: no node gets anything for them.
			name: "images below 23 MiB score 0",
			pod:  st.MakePod().Name("p").Container("hello").Obj(),
			want: map[string]int64{"has-tiny": 0, "has-none": 0},
		},
	}
	tests = append(tests, struct {
		name string
		pod  *v1.Pod
		want map[string]int64
	}{
		// Every node would score 0: Score is skipped (same totals).
		name: "no node has the image: skipped",
		pod:  st.MakePod().Name("p").Container("nowhere:1.0").Obj(),
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := plugintest.NewSnapshot(nil, nodes)
			pl := plugintest.NewPlugin[*ImageLocality](t, New, snap)
			all, _ := snap.List()
			got := plugintest.RunScore(t, pl, framework.NewCycleState(), tt.pod, all)
			if tt.want == nil && got != nil {
				t.Errorf("scores %v, want skipped", got)
			}
			for n, w := range tt.want {
				if got[n] != w {
					t.Errorf("%s: %d, want %d (all %v)", n, got[n], w, got)
				}
			}
		})
	}
}

func TestNormalizedImageName(t *testing.T) {
	for in, want := range map[string]string{
		"hello":                 "hello:latest",
		"hello:1.0":             "hello:1.0",
		"registry:5000/hello":   "registry:5000/hello:latest",
		"registry:5000/hello:2": "registry:5000/hello:2",
	} {
		if got := framework.NormalizedImageName(in); got != want {
			t.Errorf("NormalizedImageName(%q) = %q, want %q", in, got, want)
		}
	}
}
