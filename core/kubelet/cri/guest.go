package cri

import (
	"context"
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/kubetab/kubetab/core/eventloop"
	"github.com/kubetab/kubetab/core/kubelet/cri/instrument"
)

// This file is the host side of the instrumentation (package instrument):
// what a guest's call to kubetab.yield and kubetab.memory_grow does.
//
//	guest code ──budget reaches 0──▶ kubetab.yield
//	                                  ├─ account the CPU time the guest used
//	                                  ├─ stopped? end it (exit 137)
//	                                  ├─ over its CPU limit? sleep it off
//	                                  ├─ runtime.Gosched (other goroutines)
//	                                  ├─ every eventLoopSlice: the event-loop hook (js)
//	                                  └─ return the next budget (about 1 ms of guest time)
//
// One guest (a container's instance, or an exec) is one *guest, found
// through the context of its _start call.

// Tuning of the budget: the host aims to be called every yieldInterval of
// guest time; the budget adapts to the guest's speed between minBudget and
// maxBudget.
const (
	yieldInterval = time.Millisecond
	minBudget     = 64
	maxBudget     = 1 << 24
)

// cfsPeriod is the CPU limit's accounting period, cpu.cfs_period_us's
// default: a container limited to L millicores may use L/1000 of each
// period, and at most one period's quota in a burst.
const cfsPeriod = 100 * time.Millisecond

// monoStart anchors mono.
var monoStart = time.Now()

// mono is the process's monotonic time. CPU accounting and CPU limits use
// real time, not the injected clock: a paused fake clock does not make a
// busy guest use less CPU.
func mono() time.Duration { return time.Since(monoStart) }

// guestKey finds the *guest in the context of a guest's call.
type guestKey struct{}

// guest is the host's state of one running instance.
type guest struct {
	ctx      context.Context // done when the guest must end
	mem      memCharge       // where its pages are charged (memory.go); set by instance
	throttle *throttle       // nil without a CPU limit
	now      func() time.Duration

	// Touched only by the guest's goroutine (host functions run on it).
	budget  int32
	resumed time.Duration // when the guest last got the thread back

	// Read by other goroutines.
	cpu       atomic.Int64  // CPU time used, ns
	pages     atomic.Uint32 // memory size, in pages
	yields    atomic.Int64  // calls to yield
	oom       atomic.Pointer[string]
	throttled atomic.Int64 // time spent throttled, ns

	proc *process   // the process this guest is; set by instance
	host *hostState // its side of the kubetab_host functions; set by instance
}

func newGuest(ctx context.Context, milliCPU int64) *guest {
	g := &guest{ctx: ctx, now: mono, budget: instrument.InitialBudget}
	if milliCPU > 0 {
		g.throttle = newThrottle(milliCPU, g.now())
	}
	g.resumed = g.now()
	return g
}

func guestOf(ctx context.Context) *guest {
	g, _ := ctx.Value(guestKey{}).(*guest)
	return g
}

// pause accounts the CPU time the guest used since it last resumed; call it
// when the guest stops running (a sleep, a yield).
func (g *guest) pause() time.Duration {
	now := g.now()
	ran := now - g.resumed
	if ran > 0 {
		g.cpu.Add(int64(ran))
	}
	g.resumed = now
	return ran
}

// resume marks the guest running again.
func (g *guest) resume() { g.resumed = g.now() }

// exitIfStopped ends a stopped guest from inside a host call, the way WASI's
// proc_exit does: it panics with a sys.ExitError, which wazero turns into the
// error of the guest's call.
func (g *guest) exitIfStopped() { exitIfStopped(g.ctx) }

// yield is kubetab.yield: see the file comment. It returns the next budget.
func (g *guest) yield() int32 {
	g.yields.Add(1)
	ran := g.pause()
	now := g.resumed
	// Aim at one call per yieldInterval of guest time: scale the budget by
	// how far off this one was, at most 4x either way (a host call, like a
	// log write that let other goroutines run, can make one interval look
	// long).
	if ran > 0 {
		next := int64(float64(g.budget) * float64(yieldInterval) / float64(ran))
		next = min(max(next, int64(g.budget)/4, minBudget), int64(g.budget)*4, maxBudget)
		g.budget = int32(next)
	}

	g.exitIfStopped()
	if g.throttle != nil {
		if d := g.throttle.charge(now, ran); d > 0 {
			g.throttled.Add(int64(d))
			g.sleep(d)
		}
	}
	goruntime.Gosched()
	eventloop.MaybeTurn() // in the browser: the page's messages and timers get a turn
	g.exitIfStopped()
	g.resume()
	return g.budget
}

// sleep waits d of real time, or until the guest is stopped.
func (g *guest) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-g.ctx.Done():
		g.exitIfStopped()
	}
}

// grow is kubetab.memory_grow: memory.grow, except that growing past the
// container's memory limit, or past what its node (or the host) has left,
// ends the guest, OOMKilled, as the kernel's OOM killer ends a process
// whose cgroup, or machine, is out of memory (memory.go).
func (g *guest) grow(mod api.Module, delta uint32) uint32 {
	mem := mod.Memory()
	cur := int64(mem.Size() / wasmPageSize)
	if ok, msg := g.mem.charge(int64(delta), cur); !ok {
		g.oom.Store(&msg)
		panic(sys.NewExitError(ExitCodeKilled))
	}
	prev, ok := mem.Grow(delta)
	if !ok {
		g.mem.release(int64(delta))
		return 0xffffffff // -1: the module's own maximum
	}
	g.pages.Store(prev + delta)
	return prev
}

// instantiateHost adds the "kubetab" host module to a wazero runtime.
func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(instrument.HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			if g := guestOf(ctx); g != nil {
				stack[0] = api.EncodeI32(g.yield())
				return
			}
			goruntime.Gosched()
			stack[0] = api.EncodeI32(instrument.InitialBudget)
		}), nil, []api.ValueType{api.ValueTypeI32}).
		WithName(instrument.YieldName).
		Export(instrument.YieldName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			delta := api.DecodeU32(stack[0])
			if g := guestOf(ctx); g != nil {
				stack[0] = api.EncodeU32(g.grow(mod, delta))
				return
			}
			prev, ok := mod.Memory().Grow(delta)
			if !ok {
				prev = 0xffffffff
			}
			stack[0] = api.EncodeU32(prev)
		}), []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		WithName(instrument.GrowName).
		Export(instrument.GrowName).
		Instantiate(ctx)
	return err
}

// throttle enforces a CPU limit: a token bucket of CPU time filled at the
// limit's rate (L millicores = L/1000 s of CPU per second) and at most one
// CFS period's quota deep. A guest that has used more than it was given
// sleeps until the bucket is back at zero. Over any long stretch the guest
// gets L/1000 of a core, like the kernel's CFS bandwidth control, though in
// slices of about a millisecond instead of a quota-then-throttle per period.
type throttle struct {
	rate   float64       // CPU seconds per second
	depth  time.Duration // the bucket's size: one period's quota
	tokens time.Duration // may go negative: debt to sleep off
	last   time.Duration // mono time of the last charge
}

func newThrottle(milliCPU int64, now time.Duration) *throttle {
	rate := float64(milliCPU) / 1000
	depth := time.Duration(float64(cfsPeriod) * rate)
	return &throttle{rate: rate, depth: depth, tokens: depth, last: now}
}

// charge records that the guest ran for ran, ending at now, and returns how
// long it must sleep before it runs again (0 for not at all).
func (t *throttle) charge(now, ran time.Duration) time.Duration {
	t.tokens += time.Duration(float64(now-t.last) * t.rate)
	t.last = now
	if t.tokens > t.depth {
		t.tokens = t.depth
	}
	t.tokens -= ran
	if t.tokens >= 0 {
		return 0
	}
	return time.Duration(float64(-t.tokens) / t.rate)
}
