package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// A trace of the page's main thread, for finding what its long tasks are
// made of (KUBETAB_TRACE=1 with TestFlowBench): Chromium's own timeline
// events (devtools.timeline), the ones its Performance panel draws. Each
// task over 50 ms on the renderer's main thread is broken down by the self
// time of the events inside it (UpdateLayoutTree is style recalculation,
// Layout, Paint, FunctionCall with the script's function, GC ...), summed
// over all long tasks, so the biggest line says where the time goes.
type pageTrace struct {
	mu     sync.Mutex
	events []traceEvent
	done   chan struct{}
}

type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// startTrace starts recording the page's timeline.
func startTrace(t *testing.T, ctx context.Context) *pageTrace {
	t.Helper()
	tr := &pageTrace{done: make(chan struct{})}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *tracing.EventDataCollected:
			tr.mu.Lock()
			for _, v := range ev.Value {
				var e traceEvent
				if json.Unmarshal(v, &e) == nil {
					tr.events = append(tr.events, e)
				}
			}
			tr.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(tr.done)
		}
	}); err != nil {
		t.Fatalf("tracing: %v", err)
	}
	cats := []string{"devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"}
	if os.Getenv("KUBETAB_TRACE") == "invalidations" {
		// Which nodes dirtied style and layout, and why (the Performance
		// panel's "invalidations"): LayoutInvalidationTracking and
		// StyleRecalcInvalidationTracking events in KUBETAB_TRACE_FILE.
		cats = append(cats, "disabled-by-default-devtools.timeline.invalidationTracking")
	}
	_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{IncludedCategories: cats},
	})
	if err != nil {
		t.Fatalf("tracing: %v", err)
	}
	return tr
}

// stop ends the trace and writes the breakdown of the main thread's long
// tasks to the test log (and the raw trace to KUBETAB_TRACE_FILE, for
// chrome://tracing or Perfetto).
func (tr *pageTrace) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, tracing.End, cdp.Empty{}); err != nil {
		t.Fatalf("tracing end: %v", err)
	}
	<-tr.done
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if f := os.Getenv("KUBETAB_TRACE_FILE"); f != "" {
		b, _ := json.Marshal(map[string]any{"traceEvents": tr.events})
		_ = os.WriteFile(f, b, 0o644)
	}
	t.Log(tr.breakdown())
}

// breakdown sums self time by event name (and, for script, by function)
// inside the renderer main thread's tasks over 50 ms.
func (tr *pageTrace) breakdown() string {
	main := map[[2]int]bool{}
	for _, e := range tr.events {
		if e.Ph == "M" && e.Name == "thread_name" && strings.Contains(string(e.Args), "CrRendererMain") {
			main[[2]int{e.Pid, e.Tid}] = true
		}
	}
	var evs []traceEvent
	for _, e := range tr.events {
		if e.Ph == "X" && main[[2]int{e.Pid, e.Tid}] {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Ts != evs[j].Ts {
			return evs[i].Ts < evs[j].Ts
		}
		return evs[i].Dur > evs[j].Dur
	})
	self := map[string]float64{}
	var long, total float64
	var n int
	for i := 0; i < len(evs); {
		task := evs[i]
		end := task.Ts + task.Dur
		j := i + 1
		for j < len(evs) && evs[j].Ts < end {
			j++
		}
		if task.Name == "RunTask" && task.Dur > 50_000 {
			n++
			total += task.Dur
			long = max(long, task.Dur)
			// Self time: each event's duration minus its direct children's.
			type open struct {
				key string
				end float64
			}
			var stack []open
			for _, e := range evs[i:j] {
				for len(stack) > 0 && e.Ts >= stack[len(stack)-1].end {
					stack = stack[:len(stack)-1]
				}
				key := e.Name
				if e.Name == "FunctionCall" || e.Name == "EventDispatch" || e.Name == "TimerFire" || e.Name == "FireAnimationFrame" {
					key += " " + describeArgs(e.Args)
				}
				if len(stack) > 0 {
					self[stack[len(stack)-1].key] -= e.Dur
				}
				self[key] += e.Dur
				stack = append(stack, open{key, e.Ts + e.Dur})
			}
		}
		i = j
	}
	type row struct {
		k string
		v float64
	}
	var rows []row
	for k, v := range self {
		rows = append(rows, row{k, v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].v > rows[j].v })
	var b strings.Builder
	fmt.Fprintf(&b, "main thread: %d tasks over 50 ms, %.0f ms in them, longest %.0f ms; self time inside them:\n", n, total/1000, long/1000)
	for i, r := range rows {
		if i == 25 || r.v < 1000 {
			break
		}
		fmt.Fprintf(&b, "  %8.0f ms  %s\n", r.v/1000, r.k)
	}
	return b.String()
}

// describeArgs names a script event: its function and file:line, or its
// event type.
func describeArgs(raw json.RawMessage) string {
	var a struct {
		Data struct {
			FunctionName string `json:"functionName"`
			URL          string `json:"url"`
			LineNumber   int    `json:"lineNumber"`
			Type         string `json:"type"`
		} `json:"data"`
	}
	_ = json.Unmarshal(raw, &a)
	d := a.Data
	if d.Type != "" {
		return d.Type
	}
	url := d.URL
	if i := strings.LastIndex(url, "/"); i >= 0 {
		url = url[i+1:]
	}
	return fmt.Sprintf("%s %s:%d", d.FunctionName, url, d.LineNumber)
}

// startCPUProfile starts V8's sampling profiler on the page's main thread
// (KUBETAB_CPUPROFILE=FILE with TestFlowBench); stop writes the profile as
// Chromium's .cpuprofile JSON, which DevTools' Performance panel opens.
func startCPUProfile(t *testing.T, ctx context.Context) func() {
	t.Helper()
	if _, err := chromedp.Call(ctx, profiler.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("profiler: %v", err)
	}
	if _, err := chromedp.Call(ctx, profiler.Start, cdp.Empty{}); err != nil {
		t.Fatalf("profiler: %v", err)
	}
	return func() {
		res, err := chromedp.Call(ctx, profiler.Stop, cdp.Empty{})
		if err != nil {
			t.Fatalf("profiler: %v", err)
		}
		b, _ := json.Marshal(res.Profile)
		if err := os.WriteFile(os.Getenv("KUBETAB_CPUPROFILE"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
