package client

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestRecorderAggregatesRepeatsAndNeverDropsSameInstantEvents(t *testing.T) {
	c := newClient(t, 0)
	ctx := context.Background()
	p, err := c.Pods().Create(ctx, pod("web", ""))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	r := NewRecorder(c, "test", "", clk)
	// Same instant, different events: both must be stored.
	r.Eventf(p, corev1.EventTypeNormal, "Created", "Created pod: %s", "a")
	r.Eventf(p, corev1.EventTypeNormal, "Created", "Created pod: %s", "b")
	// A repeat later: counted, not stored again.
	clk.Step(time.Minute)
	r.Eventf(p, corev1.EventTypeNormal, "Created", "Created pod: %s", "a")

	evs, _, err := c.Events().List(ctx, "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	counts := map[string]int32{}
	for _, e := range evs {
		counts[e.Message] = e.Count
		if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.Name != "web" || e.Source.Component != "test" {
			t.Errorf("event %+v", e)
		}
		if e.Message == "Created pod: a" && !e.LastTimestamp.Time.Equal(clk.Now()) {
			t.Errorf("lastTimestamp %v, want %v", e.LastTimestamp, clk.Now())
		}
	}
	if counts["Created pod: a"] != 2 || counts["Created pod: b"] != 1 {
		t.Fatalf("counts %v", counts)
	}
}
