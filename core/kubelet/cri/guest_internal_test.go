package cri

import (
	"testing"
	"time"
)

// TestThrottle drives the CPU limit's token bucket with fake time: a guest
// that would run flat out, yielding every millisecond, for 10 s.
func TestThrottle(t *testing.T) {
	tests := []struct {
		milli     int64
		wantShare float64
	}{
		{200, 0.2},
		{500, 0.5},
		{1, 0.001},
		{1000, 1},
		{2000, 1}, // more than the one thread there is
	}
	for _, tt := range tests {
		now := time.Duration(0)
		th := newThrottle(tt.milli, now)
		var ran, burst time.Duration
		throttledYet := false
		for now < 10*time.Second {
			slice := time.Millisecond
			now += slice
			ran += slice
			d := th.charge(now, slice)
			if d == 0 && !throttledYet {
				burst += slice
			}
			if d > 0 {
				throttledYet = true
			}
			now += d
		}
		share := float64(ran) / float64(now)
		if share < tt.wantShare*0.97-0.001 || share > tt.wantShare*1.03+0.001 {
			t.Errorf("%dm: ran %.4f of the time, want %.3f", tt.milli, share, tt.wantShare)
		}
		// The first burst is one period's quota, and what the bucket refills
		// meanwhile: quota/(1-rate) (20ms of quota at 200m lasts 25ms).
		rate := float64(tt.milli) / 1000
		if want := time.Duration(float64(cfsPeriod) * rate / (1 - rate)); tt.milli < 1000 && (burst < want-2*time.Millisecond || burst > want+2*time.Millisecond) {
			t.Errorf("%dm: first burst %v, want about %v", tt.milli, burst, want)
		}
	}
}

// TestThrottleIdle: time asleep refills the bucket, but not beyond one period.
func TestThrottleIdle(t *testing.T) {
	th := newThrottle(200, 0)
	if d := th.charge(time.Hour, 20*time.Millisecond); d != 0 {
		t.Fatalf("a guest idle for an hour may use its 20ms quota at once; slept %v", d)
	}
	if d := th.charge(time.Hour+10*time.Millisecond, 10*time.Millisecond); d <= 0 {
		t.Fatal("the bucket held more than one period's quota")
	}
}
