package scheduler

import (
	"testing"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		name       string
		percentage int32
		numNodes   int
		want       int
	}{
		{name: "under 100 nodes: all", numNodes: 10, want: 10},
		{name: "99 nodes: all", numNodes: 99, want: 99},
		{name: "100 nodes, adaptive 50%: but at least 100", numNodes: 100, want: 100},
		{name: "1000 nodes, adaptive 42%", numNodes: 1000, want: 420},
		{name: "5000 nodes, adaptive 10%", numNodes: 5000, want: 500},
		{name: "6000 nodes, adaptive floor 5%", numNodes: 6000, want: 300},
		{name: "10000 nodes, adaptive floor 5%", numNodes: 10000, want: 500},
		{name: "configured 10% of 1000", percentage: 10, numNodes: 1000, want: 100},
		{name: "configured 1% of 1000: at least 100", percentage: 1, numNodes: 1000, want: 100},
		{name: "configured 100%", percentage: 100, numNodes: 1000, want: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := numFeasibleNodesToFind(tt.percentage, tt.numNodes); got != tt.want {
				t.Errorf("numFeasibleNodesToFind(%d, %d) = %d, want %d", tt.percentage, tt.numNodes, got, tt.want)
			}
		})
	}
}

func TestSelectHost(t *testing.T) {
	if _, err := selectHost(nil); err == nil {
		t.Error("selectHost(nil) succeeded")
	}
	scores := []framework.NodePluginScores{{Name: "a", TotalScore: 50}, {Name: "b", TotalScore: 90}, {Name: "c", TotalScore: 90}, {Name: "d", TotalScore: 10}}
	seen := map[string]int{}
	for range 200 {
		host, err := selectHost(scores)
		if err != nil {
			t.Fatal(err)
		}
		seen[host]++
	}
	if len(seen) != 2 || seen["b"] == 0 || seen["c"] == 0 {
		t.Errorf("picked %v; want only the tied best b and c, both sometimes", seen)
	}
}

func TestTruncateMessage(t *testing.T) {
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'x'
	}
	got := truncateMessage(string(long))
	if len(got) != maxEventMessage || got[len(got)-4:] != " ..." {
		t.Errorf("len %d, tail %q", len(got), got[len(got)-4:])
	}
	if truncateMessage("short") != "short" {
		t.Error("short message changed")
	}
}
