package cri

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// write is one guest write to a stream.
type write struct {
	stream LogStream
	s      string
}

// TestLogWriterLines checks how guest writes become log lines: split at
// newlines across writes, streams kept apart, long lines cut into 16 KiB
// partial pieces, and an unfinished last line flushed as partial at exit.
func TestLogWriterLines(t *testing.T) {
	long := strings.Repeat("a", maxLogLine+5)
	tests := []struct {
		name   string
		writes []write
		want   []string // LogLine as "stream tag text"
	}{
		{
			name:   "lines split across writes",
			writes: []write{{Stdout, "hel"}, {Stdout, "lo\nwor"}, {Stdout, "ld\n\n"}},
			want:   []string{"stdout F hello", "stdout F world", "stdout F "},
		},
		{
			name:   "streams are separate",
			writes: []write{{Stdout, "out "}, {Stderr, "err\n"}, {Stdout, "line\n"}},
			want:   []string{"stderr F err", "stdout F out line"},
		},
		{
			name:   "long line and unfinished tail",
			writes: []write{{Stdout, long}},
			want:   []string{"stdout P " + long[:maxLogLine], "stdout P aaaaa"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			c := &container{clock: clk, log: newContainerLog(DefaultMaxLogBytes), runCtx: context.Background()}
			for _, w := range tt.writes {
				if _, err := (logWriter{c: c, stream: w.stream}).Write([]byte(w.s)); err != nil {
					t.Fatal(err)
				}
			}
			c.mu.Lock()
			c.log.flushLocked(clk.Now())
			var got []string
			for _, l := range c.log.live() {
				tag := "F"
				if l.Partial {
					tag = "P"
				}
				got = append(got, fmt.Sprintf("%s %s %s", l.Stream, tag, l.Text))
			}
			c.mu.Unlock()
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}
