package replicaset

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func TestSlowStartBatch(t *testing.T) {
	for _, tc := range []struct {
		name          string
		count         int
		okCalls       int // calls that succeed before every later one fails
		wantCalls     int
		wantSuccesses int
	}{
		{"all succeed", 10, 10, 10, 10},     // 1 + 2 + 4 + 3
		{"first fails", 10, 0, 1, 0},        // batch 1 fails: stop
		{"third batch fails", 10, 3, 7, 3},  // 1 + 2 ok, batch of 4 fails
		{"last batch partly", 10, 8, 10, 8}, // 1 + 2 + 4 ok, 1 of the last 3 ok
		{"nothing to do", 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			got, err := slowStartBatch(tc.count, SlowStartInitialBatchSize, func() error {
				if int(calls.Add(1)) > tc.okCalls {
					return errors.New("quota")
				}
				return nil
			})
			if int(calls.Load()) != tc.wantCalls || got != tc.wantSuccesses {
				t.Errorf("calls = %d, successes = %d; want %d, %d", calls.Load(), got, tc.wantCalls, tc.wantSuccesses)
			}
			if (err != nil) != (tc.wantSuccesses < tc.count) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestGetPodsToDelete(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	type podSpec struct {
		name     string
		node     string
		phase    corev1.PodPhase
		ready    bool
		readyAgo time.Duration
		age      time.Duration
		restarts int32
		cost     string
	}
	mk := func(s podSpec) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.name, UID: types.UID(s.name),
			CreationTimestamp: metav1.NewTime(now.Add(-s.age))}}
		p.Spec.NodeName = s.node
		p.Status.Phase = s.phase
		if s.ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(now.Add(-s.readyAgo))}}
		}
		if s.restarts > 0 {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: s.restarts}}
		}
		if s.cost != "" {
			p.Annotations = map[string]string{controller.PodDeletionCostAnnotation: s.cost}
		}
		return p
	}
	running := corev1.PodRunning
	for _, tc := range []struct {
		name string
		pods []podSpec
		diff int
		want []string // deleted, in order
	}{{
		name: "unscheduled before scheduled",
		pods: []podSpec{{name: "a", node: "n1", phase: running, ready: true}, {name: "b"}},
		diff: 1, want: []string{"b"},
	}, {
		name: "pending before running",
		pods: []podSpec{{name: "a", node: "n1", phase: running}, {name: "b", node: "n2", phase: corev1.PodPending}},
		diff: 1, want: []string{"b"},
	}, {
		name: "not ready before ready",
		pods: []podSpec{{name: "a", node: "n1", phase: running, ready: true}, {name: "b", node: "n2", phase: running}},
		diff: 1, want: []string{"b"},
	}, {
		name: "lower deletion cost first",
		pods: []podSpec{{name: "a", node: "n1", phase: running, cost: "-5"}, {name: "b", node: "n2", phase: running, cost: "10"}},
		diff: 1, want: []string{"a"},
	}, {
		name: "doubled-up node first",
		pods: []podSpec{{name: "a", node: "n1", phase: running}, {name: "b", node: "n2", phase: running}, {name: "c", node: "n2", phase: running}},
		diff: 1, want: []string{"b"}, // b and c share n2; tie broken by UID
	}, {
		name: "ready for less time first",
		pods: []podSpec{{name: "a", node: "n1", phase: running, ready: true, readyAgo: time.Hour}, {name: "b", node: "n2", phase: running, ready: true, readyAgo: time.Minute}},
		diff: 1, want: []string{"b"},
	}, {
		name: "more restarts first",
		pods: []podSpec{{name: "a", node: "n1", phase: running, restarts: 1}, {name: "b", node: "n2", phase: running, restarts: 4}},
		diff: 1, want: []string{"b"},
	}, {
		name: "newer first",
		pods: []podSpec{{name: "a", node: "n1", phase: running, age: 10 * time.Hour}, {name: "b", node: "n2", phase: running, age: time.Minute}},
		diff: 1, want: []string{"b"},
	}, {
		name: "all of them: no ranking needed",
		pods: []podSpec{{name: "a"}, {name: "b"}},
		diff: 2, want: []string{"a", "b"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for _, s := range tc.pods {
				pods = append(pods, mk(s))
			}
			var got []string
			for _, p := range getPodsToDelete(pods, pods, tc.diff, now) {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("deleted %v, want %v", got, tc.want)
			}
		})
	}
}

// TestExpectationsPreventDoubleCreation syncs a ReplicaSet over and over
// while its pod cache never sees the pods it creates (the informer is not
// running): without expectations each sync would create 3 more.
func TestExpectationsPreventDoubleCreation(t *testing.T) {
	e := controllertest.NewEnv(t)
	rsc, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("rs informer", func(ctx context.Context) error { rsc.rsInformer.Run(ctx); return nil })
	rs, err := e.Client.ReplicaSets().Create(e.Ctx, controllertest.MakeReplicaSet("web").Replicas(3).Obj())
	if err != nil {
		t.Fatal(err)
	}
	key := client.Key(rs)
	e.Eventually("the ReplicaSet in the cache", func() (bool, string) {
		_, ok := rsc.rsInformer.Get("default", "web")
		return ok, "not cached"
	})
	for range 10 {
		if err := rsc.Reconcile(e.Ctx, key); err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	if n := len(e.Pods("default")); n != 3 {
		t.Fatalf("%d pods after 10 syncs with a lagging cache, want 3", n)
	}
	// Once the pod informer runs, the creations are observed and a sync
	// finds nothing to do.
	e.Start("pod informer", func(ctx context.Context) error { rsc.podInformer.Run(ctx); return nil })
	e.Eventually("creations observed", func() (bool, string) {
		return rsc.expectations.Satisfied(key), "expectations not satisfied"
	})
	if err := rsc.Reconcile(e.Ctx, key); err != nil && !apierrors.IsConflict(err) {
		t.Fatal(err)
	}
	if n := len(e.Pods("default")); n != 3 {
		t.Fatalf("%d pods, want 3", n)
	}
}
