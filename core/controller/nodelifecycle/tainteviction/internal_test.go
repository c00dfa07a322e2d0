package tainteviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestGetMinTolerationTime(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name string
		tol  []corev1.Toleration
		want time.Duration
	}{
		{"none", nil, 0},
		{"forever", []corev1.Toleration{{}}, -1},
		{"shortest wins", []corev1.Toleration{{TolerationSeconds: secs(300)}, {TolerationSeconds: secs(60)}, {}}, 60 * time.Second},
		{"negative is now", []corev1.Toleration{{TolerationSeconds: secs(-5)}}, 0},
	} {
		if got := getMinTolerationTime(tc.tol); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
