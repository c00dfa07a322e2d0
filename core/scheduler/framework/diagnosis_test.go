package framework

import (
	"testing"

	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestFitErrorMessage(t *testing.T) {
	const (
		cpu           = "Insufficient cpu"
		memory        = "Insufficient memory"
		unschedulable = "node(s) were unschedulable"
	)
	statuses := func(m map[string]*Status) *NodeToStatus {
		nts := NewDefaultNodeToStatus()
		for n, s := range m {
			nts.Set(n, s)
		}
		return nts
	}
	tests := []struct {
		name      string
		numNodes  int
		diagnosis Diagnosis
		want      string
	}{
		{
			name:     "one reason on every node",
			numNodes: 3,
			diagnosis: Diagnosis{NodeToStatus: statuses(map[string]*Status{
				"n1": NewStatus(Unschedulable, cpu), "n2": NewStatus(Unschedulable, cpu), "n3": NewStatus(Unschedulable, cpu),
			})},
			want: "0/3 nodes are available: 3 Insufficient cpu.",
		},
		{
			name:     "reasons are counted and sorted as strings",
			numNodes: 3,
			diagnosis: Diagnosis{NodeToStatus: statuses(map[string]*Status{
				"n1": NewStatus(UnschedulableAndUnresolvable, unschedulable),
				"n2": NewStatus(Unschedulable, cpu, memory),
				"n3": NewStatus(Unschedulable, cpu),
			})},
			want: "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 Insufficient cpu.",
		},
		{
			name:     "counts sort as strings: 10 before 9, as upstream",
			numNodes: 19,
			diagnosis: func() Diagnosis {
				m := map[string]*Status{}
				for i := range 10 {
					m[string(rune('a'+i))] = NewStatus(Unschedulable, cpu)
				}
				for i := range 9 {
					m[string(rune('A'+i))] = NewStatus(Unschedulable, memory)
				}
				return Diagnosis{NodeToStatus: statuses(m)}
			}(),
			want: "0/19 nodes are available: 10 Insufficient cpu, 9 Insufficient memory.",
		},
		{
			name:      "a PreFilter rejection replaces the per-node counts",
			numNodes:  2,
			diagnosis: Diagnosis{NodeToStatus: NewDefaultNodeToStatus(), PreFilterMsg: "node(s) didn't match pod topology spread constraints (missing required label)"},
			want:      "0/2 nodes are available: node(s) didn't match pod topology spread constraints (missing required label).",
		},
		{
			name:     "absent nodes count with the absent status",
			numNodes: 3,
			diagnosis: func() Diagnosis {
				nts := statuses(map[string]*Status{"n1": NewStatus(Unschedulable, cpu)})
				nts.SetAbsentNodesStatus(NewStatus(UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]"))
				return Diagnosis{NodeToStatus: nts}
			}(),
			want: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
		},
		{
			name:     "the PostFilter message follows",
			numNodes: 1,
			diagnosis: Diagnosis{
				NodeToStatus:  statuses(map[string]*Status{"n1": NewStatus(Unschedulable, cpu)}),
				PostFilterMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
			},
			// Upstream's separator adds a period after the preemption
			// message's own: real clusters print "pod..".
			want: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &FitError{Pod: st.MakePod().Name("p").Obj(), NumAllNodes: tt.numNodes, Diagnosis: tt.diagnosis}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() =\n%q, want\n%q", got, tt.want)
			}
		})
	}
}

func TestDiagnosisAddPluginStatus(t *testing.T) {
	var d Diagnosis
	d.AddPluginStatus(NewStatus(Unschedulable, "x").WithPlugin("A"))
	d.AddPluginStatus(NewStatus(Pending, "y").WithPlugin("B"))
	d.AddPluginStatus(NewStatus(Unschedulable, "no plugin"))
	if !d.UnschedulablePlugins.Equal(setOf("A", "B")) || !d.PendingPlugins.Equal(setOf("B")) {
		t.Errorf("got %v / %v", d.UnschedulablePlugins, d.PendingPlugins)
	}
}
