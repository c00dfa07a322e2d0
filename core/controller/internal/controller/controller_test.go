package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/client"
)

func TestComputeHash(t *testing.T) {
	tmpl := func(image string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	one, two := int32(1), int32(2)
	for _, tc := range []struct {
		name     string
		template *corev1.PodTemplateSpec
		count    *int32
		want     string
	}{
		// Pinned: the same value natively and under GOOS=js (go-spew has
		// no unsafe there, which must not change its output). A change here
		// renames every Deployment's ReplicaSet.
		{"template", tmpl("hello"), nil, "57848ddf6f"},
		{"collision count 1", tmpl("hello"), &one, "cc85c8f88"},
	} {
		if got := ComputeHash(tc.template, tc.count); got != tc.want {
			t.Errorf("%s: ComputeHash = %q, want %q", tc.name, got, tc.want)
		}
	}
	base := ComputeHash(tmpl("hello"), nil)
	for _, tc := range []struct {
		name  string
		other string
	}{
		{"another image", ComputeHash(tmpl("hello:v2"), nil)},
		{"collision count 1", ComputeHash(tmpl("hello"), &one)},
		{"collision count 2", ComputeHash(tmpl("hello"), &two)},
	} {
		if tc.other == base {
			t.Errorf("%s hashes like the base template: %s", tc.name, base)
		}
	}
	// Map order must not matter.
	a, b := tmpl("hello"), tmpl("hello")
	a.Labels = map[string]string{"a": "1", "b": "2", "c": "3"}
	b.Labels = map[string]string{"c": "3", "b": "2", "a": "1"}
	if ComputeHash(a, nil) != ComputeHash(b, nil) {
		t.Error("equal templates hash differently")
	}
}

func TestExpectations(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name string
		do   func(e *Expectations)
		want bool
	}{
		{"nothing expected", func(e *Expectations) {}, true},
		{"creations pending", func(e *Expectations) { e.ExpectCreations("rs", 2); e.CreationObserved("rs") }, false},
		{"creations observed", func(e *Expectations) { e.ExpectCreations("rs", 2); e.CreationObserved("rs"); e.CreationObserved("rs") }, true},
		{"deletions pending", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
			e.DeletionObserved("rs", "ns/a")
		}, false},
		{"a deletion observed twice counts once", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
			e.DeletionObserved("rs", "ns/a")
			e.DeletionObserved("rs", "ns/a")
		}, false},
		{"an unexpected deletion does not count", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a"})
			e.DeletionObserved("rs", "ns/other")
		}, false},
		{"deletions observed", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
			e.DeletionObserved("rs", "ns/b")
			e.DeletionObserved("rs", "ns/a")
		}, true},
		{"expired", func(e *Expectations) { e.ExpectCreations("rs", 5); clk.Step(ExpectationsTimeout + time.Second) }, true},
		{"deleted", func(e *Expectations) { e.ExpectCreations("rs", 5); e.Delete("rs") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewExpectations(clk)
			tc.do(e)
			if got := e.Satisfied("rs"); got != tc.want {
				t.Errorf("Satisfied = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRemoveOwnerRefs(t *testing.T) {
	refs := []metav1.OwnerReference{{UID: "a"}, {UID: "b"}, {UID: "c"}}
	got := RemoveOwnerRefs(refs, "a", "c")
	if len(got) != 1 || got[0].UID != "b" {
		t.Errorf("RemoveOwnerRefs = %v, want [b]", got)
	}
	if got := RemoveOwnerRefs(refs[:1], "a"); got != nil {
		t.Errorf("removing the only ref = %v, want nil", got)
	}
}

func TestIsPodAvailable(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	ready := func(ago time.Duration) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}}}
	}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		minReady int32
		want     bool
	}{
		{"not ready", &corev1.Pod{}, 0, false},
		{"ready, no minReadySeconds", ready(0), 0, true},
		{"ready for less than minReadySeconds", ready(5 * time.Second), 10, false},
		{"ready for longer than minReadySeconds", ready(11 * time.Second), 10, true},
	} {
		if got := IsPodAvailable(tc.pod, tc.minReady, now); got != tc.want {
			t.Errorf("%s: IsPodAvailable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWorkerRetries checks the worker loop's error handling: a failing key
// is retried with back-off on the queue's clock, and dropped after
// MaxRetries.
func TestWorkerRetries(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	q := client.NewQueue[string](clk)
	calls := make(chan string, 100)
	w := Worker[string]{Queue: q, Workers: 1, MaxRetries: 2, Reconcile: func(ctx context.Context, key string) error {
		calls <- key
		return errors.New("conflict")
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- Run(ctx, "test", nil, w) }()
	q.Add("k")
	deadline := time.After(time.Minute)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := range 3 { // the first try and MaxRetries retries
		select {
		case <-calls:
		case <-deadline:
			t.Fatalf("call %d never came", i+1)
		}
		if i == 2 {
			break
		}
		for !clk.HasWaiters() { // the back-off timer
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("no back-off after call %d", i+1)
			}
		}
		clk.Step(time.Second)
	}
	// Run's worker forgets the key after the third failure.
	for q.NumRequeues("k") != 0 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("key never forgotten")
		}
	}
	clk.Step(time.Hour)
	select {
	case k := <-calls:
		t.Errorf("key %q retried after MaxRetries", k)
	default:
	}
	if clk.HasWaiters() {
		t.Error("a retry is scheduled after MaxRetries")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
