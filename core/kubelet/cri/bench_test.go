package cri_test

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// BenchmarkPullImage measures one node pulling hello:1.0: "uncached" is the
// first pull in the process (the module is compiled), "cached" a pull on
// another node after that (the compiled module is reused).
func BenchmarkPullImage(b *testing.B) {
	ctx := context.Background()
	catalog := images.New()
	newRuntime := func(b *testing.B, cache *cri.CompileCache) *cri.Runtime {
		rt, err := cri.New(cri.Config{Images: catalog, Cache: cache, Clock: clock.RealClock{}})
		if err != nil {
			b.Fatal(err)
		}
		return rt
	}

	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			cache := cri.NewCompileCache()
			rt := newRuntime(b, cache) // the warm-up call is not measured
			b.StartTimer()
			if _, err := rt.PullImage(ctx, "hello:1.0"); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if st := cache.Stats(); st.Compiles != 1 {
				b.Fatalf("stats %+v, want 1 compile", st)
			}
			cache.Close(ctx)
			b.StartTimer()
		}
	})

	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		cache := cri.NewCompileCache()
		defer cache.Close(ctx)
		if _, err := newRuntime(b, cache).PullImage(ctx, "hello:1.0"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			rt := newRuntime(b, cache) // a fresh node that has not pulled yet
			b.StartTimer()
			if _, err := rt.PullImage(ctx, "hello:1.0"); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if st := cache.Stats(); st.Compiles != 1 {
			b.Fatalf("stats %+v, want 1 compile", st)
		}
	})
}

// BenchmarkStartToFirstLogLine measures CreateContainer + StartContainer until
// the guest's greeting is in its log, from an image already pulled: the
// container part of "pod startup latency".
func BenchmarkStartToFirstLogLine(b *testing.B) {
	for _, bc := range []struct {
		name     string
		image    string
		command  []string
		memLimit int64
	}{
		{"no limit", "hello:1.0", nil, 0},
		{"memory limit", "hello:1.0", nil, 16 << 20}, // a second decoded copy, made on the first create
		// The userland (165 KB, compiled on the first create): busybox's echo.
		{"busybox echo", "busybox", []string{"echo", "hi"}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			cache := cri.NewCompileCache()
			defer cache.Close(ctx)
			rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rt.PullImage(ctx, bc.image); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, err := rt.CreateContainer(ctx, cri.ContainerConfig{PodName: "bench", Name: "c", Image: bc.image, Command: bc.command, MemoryLimitBytes: bc.memLimit})
				if err != nil {
					b.Fatal(err)
				}
				if err := rt.StartContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				fctx, cancel := context.WithCancel(ctx)
				w := &firstWrite{cancel: cancel}
				// Canceled at the first line; nil when the container had
				// already ended (busybox echo) and its line was read.
				if err := rt.ReadLogs(fctx, id, cri.LogOptions{Follow: true, TailLines: -1}, w); (err != context.Canceled && err != nil) || !w.wrote {
					b.Fatalf("no log line: %v", err)
				}
				b.StopTimer()
				if err := rt.RemoveContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// firstWrite cancels its context at the first write.
type firstWrite struct {
	cancel context.CancelFunc
	wrote  bool
}

func (f *firstWrite) Write(p []byte) (int, error) { f.wrote = true; f.cancel(); return len(p), nil }

// modes are the two ways a CompileCache can run guests.
var modes = []struct {
	name string
	opts []cri.CacheOption
}{
	{"instrumented", nil},
	{"plain", []cri.CacheOption{cri.WithoutInstrumentation()}},
}

// BenchmarkGuestSpeed runs `cpu --work=N` (N thousand iterations of a loop
// that calls nothing) to its exit, instrumented and plain: the cost of the
// budget checks on the tightest loop there is. Reports million iterations
// per second.
func BenchmarkGuestSpeed(b *testing.B) {
	const work = 5 // million iterations
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			ctx := context.Background()
			cache := cri.NewCompileCache(m.opts...)
			defer cache.Close(ctx)
			rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rt.PullImage(ctx, "cpu"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				id, err := rt.CreateContainer(ctx, cri.ContainerConfig{Name: "c", Image: "cpu", Args: []string{"--work=5000"}})
				if err != nil {
					b.Fatal(err)
				}
				if err := rt.StartContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				if err := rt.ReadLogs(ctx, id, cri.LogOptions{Follow: true, TailLines: -1}, io.Discard); err != nil {
					b.Fatal(err)
				}
				if st, _ := rt.ContainerStatus(id); st.ExitCode != 0 {
					b.Fatalf("exit %d %s", st.ExitCode, st.Message)
				}
				b.StopTimer()
				_ = rt.RemoveContainer(ctx, id)
				b.StartTimer()
			}
			b.ReportMetric(float64(work*b.N)/b.Elapsed().Seconds(), "Miter/s")
			// Per CPU second of the process: steadier on a shared machine.
			b.ReportMetric(float64(work*b.N)/(processCPU()-cpu0).Seconds(), "Miter/cpu-s")
		})
	}
}

// BenchmarkCompile measures the first pull of an image in a process
// (validation, instrumentation and compilation), instrumented and plain,
// for the smallest and the largest catalog images.
func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	for _, image := range []string{"cpu:1.0", "web:1.0"} {
		for _, m := range modes {
			b.Run(image+"/"+m.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					cache := cri.NewCompileCache(m.opts...)
					rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := rt.PullImage(ctx, image); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					cache.Close(ctx)
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkKillLatency measures StopContainer on a guest spinning in a loop
// that calls nothing (`cpu`), from the call to the container's exit.
func BenchmarkKillLatency(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			if m.opts != nil && runtime.GOOS == "js" {
				b.Skip("on js/wasm a plain guest in a loop cannot be stopped")
			}
			ctx := context.Background()
			cache := cri.NewCompileCache(m.opts...)
			defer cache.Close(ctx)
			rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rt.PullImage(ctx, "cpu"); err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				id, err := rt.CreateContainer(ctx, cri.ContainerConfig{Name: "c", Image: "cpu"})
				if err != nil {
					b.Fatal(err)
				}
				if err := rt.StartContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond) // deep in its loop
				start := time.Now()
				if err := rt.StopContainer(ctx, id, 0); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				_ = rt.RemoveContainer(ctx, id)
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/kill")
		})
	}
}

// BenchmarkImageStart is BenchmarkStartToFirstLogLine for every image of
// the catalog with its own command (the README's image table): create and
// start to the first byte of its log, the image pulled (compiled) before.
// An image whose first output comes on a timer (cpu reports its rate every
// second) measures that timer too.
func BenchmarkImageStart(b *testing.B) {
	for _, image := range []string{"hello", "web", "crash", "oom", "cpu", "sleep", "config", "job", "busybox"} {
		b.Run(image, func(b *testing.B) {
			ctx := context.Background()
			cache := cri.NewCompileCache()
			defer cache.Close(ctx)
			rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rt.PullImage(ctx, image); err != nil {
				b.Fatal(err)
			}
			var command []string
			if image == "busybox" {
				command = []string{"echo", "hi"} // its sh would wait for input
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, err := rt.CreateContainer(ctx, cri.ContainerConfig{PodName: "bench", Name: "c", Image: image, Command: command})
				if err != nil {
					b.Fatal(err)
				}
				if err := rt.StartContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				w := &firstWrite{cancel: cancel}
				_ = rt.ReadLogs(fctx, id, cri.LogOptions{Follow: true, TailLines: -1}, w)
				cancel()
				b.StopTimer()
				if !w.wrote {
					b.Fatalf("%s wrote nothing in 10 s", image)
				}
				_ = rt.StopContainer(ctx, id, 0)
				if err := rt.RemoveContainer(ctx, id); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
