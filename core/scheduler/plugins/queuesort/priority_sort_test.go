package queuesort

import (
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
)

func TestLess(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	q := func(name string, prio int32, at time.Time) *framework.QueuedPodInfo {
		return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(st.MakePod().Name(name).Priority(prio).Obj()), Timestamp: at}
	}
	tests := []struct {
		name string
		a, b *framework.QueuedPodInfo
		want bool
	}{
		{name: "higher priority first", a: q("a", 100, t0.Add(time.Second)), b: q("b", 10, t0), want: true},
		{name: "lower priority later", a: q("a", 10, t0), b: q("b", 100, t0.Add(time.Second)), want: false},
		{name: "equal priority: earlier first", a: q("a", 10, t0), b: q("b", 10, t0.Add(time.Second)), want: true},
		{name: "equal priority: later after", a: q("a", 10, t0.Add(time.Second)), b: q("b", 10, t0), want: false},
		{name: "unset priority is 0", a: &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(st.MakePod().Name("a").Obj()), Timestamp: t0}, b: q("b", -1, t0), want: true},
	}
	pl := &PrioritySort{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pl.Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}
