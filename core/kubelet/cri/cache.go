package cri

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kubetab/kubetab/core/kubelet/cri/instrument"
)

// ErrCacheClosed is a pull or container start after CompileCache.Close.
var ErrCacheClosed = errors.New("cri: compile cache is closed")

// noLimit is the memory limit, in 64 KiB pages, of a container without
// resources.limits.memory: all of wasm32's 4 GiB.
const noLimit = 65536

// wasmPageSize is the size of one WebAssembly memory page.
const wasmPageSize = 64 << 10

// CompileCache holds compiled modules by digest for every node of one process:
// kubetab's registry mirror. Create one per process (per cluster) and pass it
// to every node's Runtime in Config.Cache.
//
// Compiling turns a module into wazero's interpreter code; for a 34 KB C
// module that is tens of milliseconds in a browser, for a Go module hundreds.
// Instantiating an already compiled module is cheap. So the first PullImage of
// a digest anywhere compiles it, and later pulls of the same digest, from any
// node, only record the image in that node's list (Stats counts both).
//
//	node-1 PullImage("hello:1.0") ─┐ sha256:723a…: compile (miss)
//	node-2 PullImage("hello:1.0") ─┤ sha256:723a…: hit
//	node-2 PullImage("hello")     ─┘ same digest (latest = 1.0): hit
//
// Inside, one wazero interpreter engine (a wazero.CompilationCache) is shared
// by one wazero.Runtime per memory limit in use: wazero fixes a module's
// maximum memory when it decodes it, so a container with a 16 MiB limit runs a
// copy of the module decoded under a 16 MiB runtime. The interpreter code
// itself is compiled once per digest and shared by all copies.
//
// Compiled modules stay until Close: the catalog is small and the cache
// belongs to the process, not to a node.
//
// Before compiling, the cache instruments the module (package instrument):
// the guest then calls back into the runtime about every millisecond, which
// is where it yields, is throttled to its CPU limit, is stopped, and where
// growing past its memory limit kills it. Since the runtime enforces the
// memory limit itself, an instrumented module needs no copy per limit.
// WithoutInstrumentation makes a cache that runs modules as they are (for
// comparison in tests and benchmarks).
type CompileCache struct {
	engine     wazero.CompilationCache // the one interpreter engine behind every runtime below
	instrument bool                    // set by NewCompileCache, read-only after

	warmOnce sync.Once
	warmErr  error

	// mu guards the fields below. It is never held while compiling or running
	// guest code. Lock order: container.mu, then CompileCache.mu, then
	// cachedModule.mu.
	mu       sync.Mutex
	closed   bool
	active   map[*container]struct{}  // running guests of every node
	runtimes map[uint32]*wasmRuntime  // by memory limit in pages; noLimit = none
	modules  map[string]*cachedModule // by digest
	compiles int64
	hits     int64
}

// CacheStats counts what a CompileCache did.
type CacheStats struct {
	// Modules is the number of digests the cache holds (compiled or failed).
	Modules int
	// Compiles counts compilations: first pulls of a digest in the process.
	Compiles int64
	// Hits counts pulls that reused an earlier compilation.
	Hits int64
}

// wasmRuntime is a wazero.Runtime with WASI instantiated in it.
type wasmRuntime struct {
	rt   wazero.Runtime
	wasi map[string]api.FunctionDefinition // what a guest may import
}

// cachedModule is one digest in the cache.
type cachedModule struct {
	digest string
	binary []byte        // what is compiled: the instrumented module, unless the cache runs them plain
	size   int           // of the image's module as pulled
	done   chan struct{} // closed when compiled and err are set

	// Set before done is closed, read-only after.
	compiled wazero.CompiledModule // decoded without a memory limit
	err      error
	minPages uint32 // initial memory of the module, in pages

	mu      sync.Mutex          // guards limited
	limited map[uint32]*variant // copies decoded under a memory limit, by pages
}

// variant is a module decoded under one memory limit.
type variant struct {
	done     chan struct{}
	compiled wazero.CompiledModule
	err      error
}

// CacheOption configures a CompileCache.
type CacheOption func(*CompileCache)

// WithoutInstrumentation makes a cache that compiles modules as they are.
// Its guests cannot be stopped, throttled or yield on js/wasm while they loop
// without calling the host, and a memory.grow past the memory limit fails
// (the guest's malloc returns NULL) instead of ending the guest OOMKilled.
// It exists to measure and test the instrumentation against.
func WithoutInstrumentation() CacheOption {
	return func(c *CompileCache) { c.instrument = false }
}

// NewCompileCache returns an empty cache. Close releases it.
func NewCompileCache(opts ...CacheOption) *CompileCache {
	c := &CompileCache{
		engine:     wazero.NewCompilationCache(),
		instrument: true,
		runtimes:   map[uint32]*wasmRuntime{},
		modules:    map[string]*cachedModule{},
		active:     map[*container]struct{}{},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Instrumented reports whether the cache instruments modules (the default).
func (c *CompileCache) Instrumented() bool { return c.instrument }

// Stats returns the cache's counters.
func (c *CompileCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Modules: len(c.modules), Compiles: c.compiles, Hits: c.hits}
}

// Close kills the containers still running on any node, waits for them (or
// for ctx), and releases every compiled module and wazero runtime. Pulls and
// container starts fail with ErrCacheClosed afterwards.
func (c *CompileCache) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	active := make([]*container, 0, len(c.active))
	for ct := range c.active {
		active = append(active, ct)
	}
	c.mu.Unlock()

	for _, ct := range active {
		ct.kill()
	}
	for _, ct := range active {
		if err := ct.wait(ctx); err != nil {
			return err
		}
	}

	c.mu.Lock()
	runtimes := c.runtimes
	c.runtimes, c.modules = nil, nil
	c.mu.Unlock()
	var errs []error
	for _, wr := range runtimes {
		errs = append(errs, wr.rt.Close(ctx))
	}
	errs = append(errs, c.engine.Close(ctx))
	return errors.Join(errs...)
}

// track records a guest about to run, so that Close can end it first.
func (c *CompileCache) track(ct *container) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrCacheClosed
	}
	c.active[ct] = struct{}{}
	return nil
}

// untrack forgets a guest that has ended.
func (c *CompileCache) untrack(ct *container) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.active, ct)
}

// runtime returns the wazero runtime for a memory limit, creating it (and
// instantiating WASI in it) on first use.
func (c *CompileCache) runtime(ctx context.Context, pages uint32) (*wasmRuntime, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrCacheClosed
	}
	if wr := c.runtimes[pages]; wr != nil {
		return wr, nil
	}
	// The interpreter: wazero's compiler does not exist on js/wasm, and one
	// engine kind for every host keeps native tests honest about the browser.
	// An instrumented guest is stopped in kubetab.yield. A plain one relies
	// on WithCloseOnContextDone: the interpreter checks for a stop at every
	// loop header and call, which works natively (it needs another goroutine
	// to notice the stop) but not on js/wasm.
	cfg := wazero.NewRuntimeConfigInterpreter().
		WithCompilationCache(c.engine).
		WithCloseOnContextDone(!c.instrument).
		WithMemoryLimitPages(pages)
	rt := wazero.NewRuntimeWithConfig(context.WithoutCancel(ctx), cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("cri: instantiate WASI: %w", err)
	}
	if err := instantiateHost(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("cri: instantiate the kubetab host module: %w", err)
	}
	if err := instantiateUserlandHost(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("cri: instantiate the %s host module: %w", HostModule, err)
	}
	wr := &wasmRuntime{rt: rt, wasi: rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions()}
	c.runtimes[pages] = wr
	return wr, nil
}

// compile returns the compiled form of module (named name in errors),
// compiling it if no node of the process has compiled these bytes before:
// the cache is content-addressed, so an image's program, a userland shared
// by every image, and a program a learner copied into a container are all
// compiled once per process. Concurrent compiles of one digest compile once;
// the others wait for it (or for ctx).
func (c *CompileCache) compile(ctx context.Context, name string, module []byte) (*cachedModule, error) {
	return c.compileDigest(ctx, name, module, contentDigest(module))
}

// compileDigest is compile for a module whose digest the caller knows.
func (c *CompileCache) compileDigest(ctx context.Context, name string, module []byte, digest string) (*cachedModule, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrCacheClosed
	}
	m := c.modules[digest]
	mine := m == nil
	if mine {
		m = &cachedModule{digest: digest, binary: module, size: len(module), done: make(chan struct{}), limited: map[uint32]*variant{}}
		c.modules[digest] = m
		c.compiles++
	} else {
		c.hits++
	}
	c.mu.Unlock()
	if mine {
		m.binary, m.compiled, m.minPages, m.err = c.compileCommand(ctx, Image{Ref: name, Module: module})
		close(m.done)
	}

	select {
	case <-m.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if m.err != nil {
		return nil, m.err
	}
	return m, nil
}

// compileCommand instruments a module (unless the cache runs them plain),
// compiles it without a memory limit and checks that it is a WASI command.
// It returns what it compiled and the module's initial memory in pages.
func (c *CompileCache) compileCommand(ctx context.Context, img Image) ([]byte, wazero.CompiledModule, uint32, error) {
	bad := func(err error) ([]byte, wazero.CompiledModule, uint32, error) {
		return nil, nil, 0, fmt.Errorf("%w: %s: %v", ErrInvalidImage, img.Ref, err)
	}
	wr, err := c.runtime(ctx, noLimit)
	if err != nil {
		return nil, nil, 0, err
	}
	bin := img.Module
	if c.instrument {
		// The rewriter also bounds what a hostile module can make wazero
		// allocate (see instrument.MaxLocals), so it runs first.
		if bin, _, err = instrument.Module(img.Module); err != nil {
			return bad(err)
		}
	}
	cm, err := compileModule(ctx, wr.rt, bin)
	if err != nil {
		return bad(err)
	}
	minPages, err := validateCommand(cm, wr.wasi, c.instrument)
	if err != nil {
		_ = cm.Close(ctx)
		return bad(err)
	}
	return bin, cm, minPages, nil
}

// compileModule is rt.CompileModule with a panic turned into an error:
// wazero v1.12 panics on a few malformed modules, and a learner's upload must
// not take the cluster down.
func compileModule(ctx context.Context, rt wazero.Runtime, bin []byte) (cm wazero.CompiledModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			cm, err = nil, fmt.Errorf("malformed module (the decoder failed: %v)", r)
		}
	}()
	return rt.CompileModule(ctx, bin)
}

// validateCommand checks what a WASI command must look like, so that a bad
// image fails at pull time with a reason instead of at container start:
//
//   - it exports "_start" with no params and no results (a "reactor", a
//     library with "_initialize", is not a program);
//   - it exports its memory as "memory" (WASI functions read and write there);
//   - every import is a wasi_snapshot_preview1 function wazero provides, with
//     the same signature.
//
// An instrumented module also imports the two kubetab functions the
// instrumenter added (a module that imported them itself was refused by the
// instrumenter).
func validateCommand(cm wazero.CompiledModule, wasi map[string]api.FunctionDefinition, instrumented bool) (minPages uint32, err error) {
	exports := cm.ExportedFunctions()
	start, ok := exports["_start"]
	if !ok {
		if _, reactor := exports["_initialize"]; reactor {
			return 0, errors.New(`it is a WASI reactor (exports "_initialize"), not a command: there is no "_start" to run`)
		}
		return 0, errors.New(`no "_start" export: not a WASI command`)
	}
	if len(start.ParamTypes()) != 0 || len(start.ResultTypes()) != 0 {
		return 0, errors.New(`"_start" must take no params and return nothing`)
	}
	if len(cm.ImportedMemories()) != 0 {
		return 0, errors.New("it imports its memory; a WASI command defines and exports its own")
	}
	mem, ok := cm.ExportedMemories()["memory"]
	if !ok {
		return 0, errors.New(`no "memory" export: WASI needs the guest's memory`)
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if instrumented && mod == instrument.HostModule && (name == instrument.YieldName || name == instrument.GrowName) {
			continue
		}
		if mod == HostModule {
			sig, ok := hostFunctions[name]
			if !ok {
				return 0, fmt.Errorf("imports %s.%s, which the runtime does not provide", mod, name)
			}
			if len(f.ParamTypes()) != sig.params || len(f.ResultTypes()) != sig.results ||
				slices.ContainsFunc(f.ParamTypes(), func(t api.ValueType) bool { return t != api.ValueTypeI32 }) ||
				slices.ContainsFunc(f.ResultTypes(), func(t api.ValueType) bool { return t != api.ValueTypeI32 }) {
				return 0, fmt.Errorf("imports %s.%s with the wrong signature", mod, name)
			}
			continue
		}
		if mod != wasi_snapshot_preview1.ModuleName {
			return 0, fmt.Errorf("imports %s.%s: a container can only import %s functions", mod, name, wasi_snapshot_preview1.ModuleName)
		}
		host, ok := wasi[name]
		if !ok {
			return 0, fmt.Errorf("imports %s.%s, which is not a WASI preview1 function", mod, name)
		}
		if !slices.Equal(f.ParamTypes(), host.ParamTypes()) || !slices.Equal(f.ResultTypes(), host.ResultTypes()) {
			return 0, fmt.Errorf("imports %s.%s with the wrong signature", mod, name)
		}
	}
	return mem.Min(), nil
}

// forLimit returns the module decoded under a memory limit of pages (noLimit
// for none) and the runtime to instantiate it in.
func (c *CompileCache) forLimit(ctx context.Context, m *cachedModule, pages uint32) (wazero.CompiledModule, *wasmRuntime, error) {
	if c.instrument {
		// An instrumented guest's memory limit is enforced by
		// kubetab.memory_grow: one decoded module serves every limit.
		pages = noLimit
	}
	wr, err := c.runtime(ctx, pages)
	if err != nil {
		return nil, nil, err
	}
	if pages == noLimit {
		return m.compiled, wr, nil
	}
	m.mu.Lock()
	v := m.limited[pages]
	mine := v == nil
	if mine {
		v = &variant{done: make(chan struct{})}
		m.limited[pages] = v
	}
	m.mu.Unlock()
	if mine {
		// Only decoding and validation run again: the interpreter code for this
		// digest is already in the shared engine.
		v.compiled, v.err = compileModule(ctx, wr.rt, m.binary)
		close(v.done)
	}
	select {
	case <-v.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if v.err != nil {
		return nil, nil, v.err
	}
	return v.compiled, wr, nil
}

// warmUpModule is a hand-assembled module exporting f(x) = x+1. Calling it
// once makes the JS engine compile wazero's interpreter loop, which in a fresh
// browser tab costs ~100 ms the first time (see DESIGN.md, Verified facts).
var warmUpModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
	0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // type section: (i32) -> i32
	0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
	0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00, // export section: "f" = func 0
	0x0a, 0x09, 0x01, 0x07, 0x00, // code section: one body, 7 bytes, no locals
	0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, // local.get 0; i32.const 1; i32.add; end
}

// WarmUp runs one interpreter call, once per cache: the JS engine then
// compiles wazero's interpreter before the first image's pull needs it.
// It is only for speed (a pull works without it), so the browser build
// calls it after the cluster is ready, in the background, rather than
// making the tab's start wait for it.
func (c *CompileCache) WarmUp(ctx context.Context) error {
	c.warmOnce.Do(func() {
		c.warmErr = func() error {
			wr, err := c.runtime(ctx, noLimit)
			if err != nil {
				return err
			}
			mod, err := wr.rt.InstantiateWithConfig(ctx, warmUpModule, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				return fmt.Errorf("cri: warm-up: %w", err)
			}
			defer mod.Close(ctx)
			res, err := mod.ExportedFunction("f").Call(ctx, 41)
			if err != nil {
				return fmt.Errorf("cri: warm-up: %w", err)
			}
			if res[0] != 42 {
				return fmt.Errorf("cri: warm-up: f(41) = %d, want 42", res[0])
			}
			return nil
		}()
	})
	return c.warmErr
}
