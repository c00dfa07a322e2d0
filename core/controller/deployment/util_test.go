package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		name                string
		surge, unavailable  intstr.IntOrString
		desired             int32
		wantSurge, wantUnav int32
	}{
		{"defaults of 3: surge rounds up, unavailable down", intstr.FromString("25%"), intstr.FromString("25%"), 3, 1, 0},
		{"defaults of 4", intstr.FromString("25%"), intstr.FromString("25%"), 4, 1, 1},
		{"defaults of 10", intstr.FromString("25%"), intstr.FromString("25%"), 10, 3, 2},
		{"integers", intstr.FromInt32(2), intstr.FromInt32(1), 10, 2, 1},
		{"both round to 0: unavailable becomes 1", intstr.FromString("0%"), intstr.FromString("10%"), 5, 0, 1},
		{"100% surge", intstr.FromString("100%"), intstr.FromInt32(0), 3, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, u, err := resolveFenceposts(&tc.surge, &tc.unavailable, tc.desired)
			if err != nil {
				t.Fatal(err)
			}
			if s != tc.wantSurge || u != tc.wantUnav {
				t.Errorf("surge, unavailable = %d, %d; want %d, %d", s, u, tc.wantSurge, tc.wantUnav)
			}
		})
	}
}

func TestNewRSNewReplicas(t *testing.T) {
	rs := func(n int32) *appsv1.ReplicaSet { return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &n}} }
	d := func(replicas int32, surge intstr.IntOrString) *appsv1.Deployment {
		u := intstr.FromInt32(0)
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas, Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &u}}}}
	}
	for _, tc := range []struct {
		name     string
		d        *appsv1.Deployment
		old, new int32
		want     int32
	}{
		{"room for the surge only", d(3, intstr.FromInt32(1)), 3, 0, 1},
		{"old already scaled down", d(3, intstr.FromInt32(1)), 1, 2, 3},
		{"at the limit", d(3, intstr.FromInt32(1)), 2, 2, 2},
		{"never above spec.replicas", d(3, intstr.FromInt32(5)), 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newRS := rs(tc.new)
			if got := newRSNewReplicas(tc.d, []*appsv1.ReplicaSet{rs(tc.old), newRS}, newRS); got != tc.want {
				t.Errorf("newRSNewReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestProportionalScaling scales a Deployment in the middle of a rollout:
// the new replicas are shared in proportion to the ReplicaSets' sizes.
func TestProportionalScaling(t *testing.T) {
	surge, unav := intstr.FromInt32(3), intstr.FromInt32(2)
	replicas := int32(15) // was 10, with max-replicas 13 (10 + 3)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas, Strategy: appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unav}}}}
	mk := func(n int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &n}}
	}
	oldRS, newRS := mk(8), mk(5)
	for _, rs := range []*appsv1.ReplicaSet{oldRS, newRS} {
		setReplicasAnnotations(rs, 10, 13)
	}
	toAdd := replicas + 3 - 13 // allowed (18) minus current (13): 5
	po := getProportion(oldRS, d, toAdd, 0)
	pn := getProportion(newRS, d, toAdd, po)
	// 8·18/13 = 11.08 → +3; 5·18/13 = 6.92 → +2.
	if po != 3 || pn != 2 {
		t.Errorf("proportions old %d, new %d; want 3, 2", po, pn)
	}
}

// The surge counts the pods a ReplicaSet still has (status) as well as
// those it is about to have (spec); availability counts no more than the
// spec keeps.
func TestCountsAgainstStaleStatus(t *testing.T) {
	rs := func(spec, status, available int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &spec},
			Status: appsv1.ReplicaSetStatus{Replicas: status, AvailableReplicas: available}}
	}
	surge, unavailable := intstr.FromInt32(2), intstr.FromInt32(1)
	ten := int32(10)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &ten, Strategy: appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}}}
	for _, tc := range []struct {
		name          string
		old, new      *appsv1.ReplicaSet
		wantNew       int32
		wantAvailable int32
	}{
		{"old scaled down, its pods not yet deleted", rs(9, 10, 10), rs(2, 2, 0), 2, 9},
		{"old pods deleted: room for one more", rs(9, 9, 9), rs(2, 2, 0), 3, 9},
		{"new ReplicaSet creating its pods", rs(10, 10, 10), rs(2, 0, 0), 2, 10},
	} {
		if got := newRSNewReplicas(d, []*appsv1.ReplicaSet{tc.old, tc.new}, tc.new); got != tc.wantNew {
			t.Errorf("%s: new ReplicaSet may grow to %d, want %d", tc.name, got, tc.wantNew)
		}
		if got := boundedAvailableReplicaCount([]*appsv1.ReplicaSet{tc.old, tc.new}); got != tc.wantAvailable {
			t.Errorf("%s: %d available, want %d", tc.name, got, tc.wantAvailable)
		}
	}
}
