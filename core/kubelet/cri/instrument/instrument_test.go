package instrument_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kubetab/kubetab/core/kubelet/cri/instrument"
)

// host is the "kubetab" and "env" modules a test instantiates next to a
// guest: yield counts its calls and hands out a tiny budget, so that the
// guest comes back often; memory_grow does what memory.grow would.
type host struct {
	yields int
	grows  int
	logged []uint32
}

func (h *host) instantiate(t testing.TB, ctx context.Context, rt wazero.Runtime) {
	t.Helper()
	_, err := rt.NewHostModuleBuilder(instrument.HostModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
		h.yields++
		stack[0] = api.EncodeI32(3)
	}), nil, []api.ValueType{api.ValueTypeI32}).Export(instrument.YieldName).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
		h.grows++
		prev, ok := m.Memory().Grow(api.DecodeU32(stack[0]))
		if !ok {
			stack[0] = api.EncodeI32(-1)
			return
		}
		stack[0] = api.EncodeU32(prev)
	}), []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export(instrument.GrowName).
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.NewHostModuleBuilder("env").
		NewFunctionBuilder().WithFunc(func(v uint32) { h.logged = append(h.logged, v) }).Export("log").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
}

// runFeatures runs testdata/features.wasm's "run" in a fresh runtime.
func runFeatures(t *testing.T, module []byte) (uint64, *host) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	h := &host{}
	h.instantiate(t, ctx, rt)
	mod, err := rt.Instantiate(ctx, module)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mod.ExportedFunction("run").Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res[0], h
}

func TestFeaturesSameResult(t *testing.T) {
	plain, err := os.ReadFile("testdata/features.wasm")
	if err != nil {
		t.Fatal(err)
	}
	inst, stats, err := instrument.Module(plain)
	if err != nil {
		t.Fatal(err)
	}
	want, hp := runFeatures(t, plain)
	got, hi := runFeatures(t, inst)
	if got != want {
		t.Fatalf("instrumented run() = %d, plain %d", got, want)
	}
	if hp.yields != 0 || hi.yields < 1000 {
		t.Fatalf("yield calls: plain %d, instrumented %d; want 0 and many (budget 3)", hp.yields, hi.yields)
	}
	if hi.grows != 1 {
		t.Fatalf("memory_grow calls = %d, want 1", hi.grows)
	}
	if len(hi.logged) != 1 || hi.logged[0] != 42 {
		t.Fatalf("env.log got %v, want [42] (the imported function keeps its index)", hi.logged)
	}
	// fib and run and call_ref_double call; sum and countdown loop; double
	// and init are leaves.
	want2 := instrument.Stats{Functions: 7, EntryChecks: 3, LoopChecks: 2, GrowsRelayed: 1}
	if stats != want2 {
		t.Fatalf("stats %+v, want %+v", stats, want2)
	}
}

func TestNameSectionShifted(t *testing.T) {
	plain, _ := os.ReadFile("testdata/features.wasm")
	inst, _, err := instrument.Module(plain)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	// The export "run" names function 6 before and 8 after; its debug name
	// must follow it.
	if d := cm.ExportedFunctions()["run"]; d.Index() != 8 || d.DebugName() != ".run" {
		t.Fatalf("run is function %d named %q, want 8 named .run", d.Index(), d.DebugName())
	}
}

// modules returns every module of the repository's testdata and image
// catalog, by path.
func modules(t *testing.T) map[string][]byte {
	t.Helper()
	paths, _ := filepath.Glob("../testdata/*.wasm")
	more, _ := filepath.Glob("../../../../wasm/images/*/*.wasm")
	paths = append(append(paths, more...), "testdata/features.wasm")
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	if len(out) < 10 {
		t.Fatalf("found only %d modules", len(out))
	}
	return out
}

// TestEveryModuleCompiles instruments every module at hand and compiles the
// result: wazero's validation is the judge of the rewrite. (Running them is
// the cri package's test.)
func TestEveryModuleCompiles(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for path, b := range modules(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, plainErr := rt.CompileModule(ctx, b)
			inst, _, err := instrument.Module(b)
			if err != nil {
				if plainErr == nil {
					t.Fatalf("instrument: %v (wazero accepts the module)", err)
				}
				return
			}
			cm, err := rt.CompileModule(ctx, inst)
			if (err == nil) != (plainErr == nil) {
				t.Fatalf("compile instrumented: %v; plain: %v", err, plainErr)
			}
			if err != nil {
				return
			}
			imports := 0
			for _, f := range cm.ImportedFunctions() {
				if m, _, _ := f.Import(); m == instrument.HostModule {
					imports++
				}
			}
			if imports != 2 {
				t.Fatalf("instrumented module imports %d kubetab functions, want 2", imports)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	plain, _ := os.ReadFile("testdata/features.wasm")
	inst, _, err := instrument.Module(plain)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"twice", inst, `the "kubetab" import module is reserved`},
		{"not wasm", []byte("hello"), "bad magic number"},
		{"truncated", plain[:len(plain)/2], "unexpected end"},
		// A body using try (0x06) from the legacy exception proposal.
		{"exceptions", []byte{0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
			1, 4, 1, 0x60, 0, 0, // type () -> ()
			3, 2, 1, 0, // one function
			10, 7, 1, 5, 0, 0x06, 0x40, 0x0b, 0x0b}, "opcode 0x6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := instrument.Module(tt.in)
			if !errors.Is(err, instrument.ErrUnsupported) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Module = %v, want ErrUnsupported saying %q", err, tt.want)
			}
		})
	}
}

// FuzzModule feeds mutated modules to the instrumenter: it must never panic,
// and whatever it returns for a module wazero accepts must compile.
func FuzzModule(f *testing.F) {
	for _, p := range []string{"testdata/features.wasm", "../testdata/loop.wasm", "../testdata/grow.wasm", "../testdata/spam.wasm"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, b []byte) {
		inst, _, err := instrument.Module(b)
		if err != nil {
			return
		}
		cm, err := compile(ctx, rt, inst)
		if err == nil {
			cm.Close(ctx)
			return
		}
		if strings.Contains(err.Error(), "wazero panicked") {
			t.Fatalf("the instrumented module makes wazero panic: %v", err)
		}
		// Is it the input's fault? Judge it without custom sections: wazero
		// v1.12 allocates what a "name" section's counts claim before reading
		// them, gigabytes for a hostile module. (An instrumented module
		// carries only a name section the rewriter re-encoded.)
		b = stripCustom(b)
		cm, err = compile(ctx, rt, b)
		if err != nil {
			return // garbage in
		}
		cm.Close(ctx)
		inst, _, err = instrument.Module(b)
		if err != nil {
			t.Fatalf("instrument: %v (wazero accepts the module)", err)
		}
		if cm, err = compile(ctx, rt, inst); err != nil {
			t.Fatalf("wazero accepts the input but not its instrumented form: %v", err)
		}
		cm.Close(ctx)
	})
}

// stripCustom returns a module without its custom sections (b must be well
// formed at the section level, which instrument.Module checked).
func stripCustom(b []byte) []byte {
	out := append([]byte(nil), b[:8]...)
	for off := 8; off < len(b); {
		id := b[off]
		size, n := uint64(0), 0
		for shift := 0; ; shift += 7 {
			c := b[off+1+n]
			n++
			size |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
		end := off + 1 + n + int(size)
		if id != 0 {
			out = append(out, b[off:end]...)
		}
		off = end
	}
	return out
}

// compile is rt.CompileModule, with a panic (wazero v1.12 has a few on
// malformed input that the instrumenter let through) turned into an error.
func compile(ctx context.Context, rt wazero.Runtime, b []byte) (cm wazero.CompiledModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("wazero panicked: %v", r)
		}
	}()
	return rt.CompileModule(ctx, b)
}

// BenchmarkModule measures the rewrite of the largest catalog image alone
// (the compile that follows is measured in package cri).
func BenchmarkModule(b *testing.B) {
	mod, err := os.ReadFile("../../../../wasm/images/hello/hello-1.0.wasm")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(mod)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := instrument.Module(mod); err != nil {
			b.Fatal(err)
		}
	}
}
