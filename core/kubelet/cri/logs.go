package cri

import (
	"bytes"
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"time"
)

// LogStream names the stream a log line came from.
type LogStream string

// The two streams a container writes.
const (
	Stdout LogStream = "stdout"
	Stderr LogStream = "stderr"
)

// maxLogLine is where a line without a newline is cut into partial lines, as
// containerd cuts at its 16 KiB buffer.
const maxLogLine = 16 << 10

// DefaultMaxLogBytes bounds the log kept per container when
// Config.MaxLogBytes is 0. Upstream the kubelet rotates at
// containerLogMaxSize (10 MiB, 5 files); a tab has less memory to spare.
const DefaultMaxLogBytes = 256 << 10

// LogLine is one line a container wrote.
type LogLine struct {
	Time   time.Time // when the runtime received it, from the injected clock
	Stream LogStream
	// Partial is true for a piece of a line longer than 16 KiB, or a last line
	// without a newline: the CRI log format's "P" tag ("F" for full lines).
	Partial bool
	Text    string // without the newline
}

// String formats the line as the kubelet's CRI log files store it
// (/var/log/pods/<ns>_<pod>_<uid>/<container>/0.log):
//
//	2016-10-06T00:17:09.669794202Z stdout F hello: tick 1
func (l LogLine) String() string {
	tag := "F"
	if l.Partial {
		tag = "P"
	}
	return l.Time.UTC().Format(time.RFC3339Nano) + " " + string(l.Stream) + " " + tag + " " + l.Text
}

// LogOptions select what ReadLogs writes, as `kubectl logs` flags do.
type LogOptions struct {
	// Follow keeps writing new lines until ctx is done or the container has
	// exited and every line was written (kubectl logs -f).
	Follow bool
	// TailLines is how many of the last lines to start with; -1 means all.
	// As upstream, 0 means none: with Follow, only lines written from now on.
	TailLines int64
	// LimitBytes stops after this many bytes; 0 means no limit.
	LimitBytes int64
	// Timestamps prefixes each line with its RFC 3339 time and a space.
	Timestamps bool
	// SinceTime skips lines written before it (after TailLines picked its
	// lines, as the kubelet does); zero means no such filter.
	SinceTime time.Time
}

// lineOverhead is what a line costs beyond its text in the bound, about the
// size of the CRI log prefix (time, stream, tag). It also keeps a guest that
// prints empty lines in a loop from growing the log without bound.
const lineOverhead = 40

// containerLog is the bounded log of one container: a queue of lines whose
// oldest lines are dropped once the total size passes maxBytes. Its fields
// are guarded by the container's mutex.
//
//	lines: [ dropped … | head … live lines … ]
//	        ^0           ^head                 sequence number of lines[head] = first
type containerLog struct {
	lines    []LogLine
	head     int   // lines[:head] are dropped, kept until the next compaction
	first    int64 // sequence number of lines[head]; earlier lines were dropped
	bytes    int   // size of the live lines (text + lineOverhead each)
	maxBytes int
	partial  [2]bytes.Buffer // unfinished line per stream (0 stdout, 1 stderr)
	changed  chan struct{}   // closed and replaced when a line is added or the container exits
}

func newContainerLog(maxBytes int) containerLog {
	return containerLog{maxBytes: maxBytes, changed: make(chan struct{})}
}

// live returns the lines not dropped yet.
func (l *containerLog) live() []LogLine { return l.lines[l.head:] }

// appendLocked adds one line, drops the oldest lines beyond maxBytes (always
// keeping the newest) and wakes followers.
func (l *containerLog) appendLocked(line LogLine) {
	l.lines = append(l.lines, line)
	l.bytes += len(line.Text) + lineOverhead
	for l.bytes > l.maxBytes && l.head < len(l.lines)-1 {
		l.bytes -= len(l.lines[l.head].Text) + lineOverhead
		l.lines[l.head] = LogLine{} // let the text be collected
		l.head++
		l.first++
	}
	// Compact once the dropped prefix is as long as the rest: amortized O(1).
	if l.head > 64 && l.head >= len(l.lines)-l.head {
		l.lines = append(l.lines[:0:0], l.lines[l.head:]...)
		l.head = 0
	}
	l.wakeLocked()
}

func (l *containerLog) wakeLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// logWriter is the io.Writer a guest's stdout or stderr goes to. It cuts what
// the guest writes into lines and stamps each with the clock.
type logWriter struct {
	c      *container
	stream LogStream
}

func (w logWriter) Write(p []byte) (int, error) {
	c := w.c
	// A write is where a busy guest gives way: on js/wasm nothing preempts a
	// goroutine, so without this a guest printing in a loop would keep every
	// other goroutine (log followers, the kubelet, StopContainer) from running.
	// (The JS event loop itself still waits for the guest to block; see the
	// package doc.) And a stopped guest that keeps printing ends here.
	goruntime.Gosched()
	exitIfStopped(c.runCtx)
	idx := 0
	if w.stream == Stderr {
		idx = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := &c.log.partial[idx]
	now := c.clock.Now()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			buf.Write(rest)
			for buf.Len() >= maxLogLine {
				c.log.appendLocked(LogLine{Time: now, Stream: w.stream, Partial: true, Text: string(buf.Next(maxLogLine))})
			}
			break
		}
		buf.Write(rest[:i])
		c.log.appendLocked(LogLine{Time: now, Stream: w.stream, Text: buf.String()})
		buf.Reset()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// flushLocked writes out unfinished lines when the container exits.
func (l *containerLog) flushLocked(now time.Time) {
	for i, stream := range []LogStream{Stdout, Stderr} {
		if buf := &l.partial[i]; buf.Len() > 0 {
			l.appendLocked(LogLine{Time: now, Stream: stream, Partial: true, Text: buf.String()})
			buf.Reset()
		}
	}
}

// LogLines returns the lines a container's log keeps, oldest first: what the
// kubelet's log file for it would hold (LogLine.String gives that format).
// Unfinished lines of a running container are not included yet.
func (r *Runtime) LogLines(id string) ([]LogLine, error) {
	c, err := r.get(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]LogLine(nil), c.log.live()...), nil
}

// ReadLogs writes a container's log to w, as `kubectl logs` shows it: one
// line per line the container wrote (both streams, in the order written),
// optionally prefixed by its time. Logs outlive the container's exit and stay
// until RemoveContainer.
//
// Without Follow, ReadLogs writes what is there and returns. With Follow it
// then waits for new lines and returns nil once the container has exited and
// every line was written, or ctx.Err() when ctx is done first.
// Lines dropped by the size bound while a slow follower was writing are
// skipped. The error of a failed w.Write is returned as is.
func (r *Runtime) ReadLogs(ctx context.Context, id string, opts LogOptions, w io.Writer) error {
	c, err := r.get(id)
	if err != nil {
		return err
	}
	var (
		next    int64 // sequence number of the next line to write
		started bool
		written int64
	)
	for {
		c.mu.Lock()
		if !started {
			started = true
			next = c.log.first
			total := int64(len(c.log.live()))
			if opts.TailLines >= 0 && opts.TailLines < total {
				next = c.log.first + total - opts.TailLines
			}
		}
		if next < c.log.first {
			next = c.log.first
		}
		batch := append([]LogLine(nil), c.log.live()[next-c.log.first:]...)
		next += int64(len(batch))
		exited := c.state == ContainerExited
		changed := c.log.changed
		c.mu.Unlock()

		for _, line := range batch {
			if !opts.SinceTime.IsZero() && line.Time.Before(opts.SinceTime) {
				continue
			}
			var b []byte
			if opts.Timestamps {
				b = fmt.Appendf(b, "%s ", line.Time.UTC().Format(time.RFC3339Nano))
			}
			b = append(b, line.Text...)
			if !line.Partial {
				b = append(b, '\n')
			}
			if opts.LimitBytes > 0 && written+int64(len(b)) > opts.LimitBytes {
				b = b[:opts.LimitBytes-written]
			}
			n, err := w.Write(b)
			written += int64(n)
			if err != nil {
				return err
			}
			if opts.LimitBytes > 0 && written >= opts.LimitBytes {
				return nil
			}
		}
		if !opts.Follow || exited {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
