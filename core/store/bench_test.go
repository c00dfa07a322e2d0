package store

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var value1KiB = make([]byte, 1024)

func podKey(i int) string { return "/registry/pods/default/p-" + strconv.Itoa(i) }

// BenchmarkCreate: creates of 1 KiB values into a growing store (the
// scheduler benchmark creates 10,000+ pods). Writes/s is 1e9 / ns/op.
func BenchmarkCreate(b *testing.B) {
	s := New(Config{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Create(podKey(i), value1KiB); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkUpdate: compare-and-swap updates of 1 KiB values over 10,000 keys,
// with the history limit compacting as it goes.
func BenchmarkUpdate(b *testing.B) {
	const n = 10_000
	s := New(Config{})
	mods := make([]int64, n)
	for i := range n {
		kv, _ := s.Create(podKey(i), value1KiB)
		mods[i] = kv.ModRevision
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		kv, err := s.Update(podKey(i%n), value1KiB, mods[i%n])
		if err != nil {
			b.Fatal(err)
		}
		mods[i%n] = kv.ModRevision
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkTxn: the update kube-apiserver sends, as a Txn.
func BenchmarkTxn(b *testing.B) {
	s := New(Config{})
	kv, _ := s.Create("/registry/pods/default/p", value1KiB)
	mod := kv.ModRevision
	b.ReportAllocs()
	for b.Loop() {
		resp, err := s.Txn(TxnRequest{
			If:   []Compare{ModRevision("/registry/pods/default/p", Equal, mod)},
			Then: []Op{OpPut("/registry/pods/default/p", value1KiB)},
			Else: []Op{OpGet("/registry/pods/default/p")},
		})
		if err != nil || !resp.Succeeded {
			b.Fatal(err)
		}
		mod = resp.Revision
	}
}

// listStore holds 10,000 pods and, beside them, 10,000 events (another
// prefix a pod list must not pay for), each pod written twice.
func listStore(b *testing.B) (s *Store, mid int64) {
	s = New(Config{})
	for i := range 10_000 {
		s.Create(podKey(i), value1KiB)
		s.Create("/registry/events/default/e-"+strconv.Itoa(i), value1KiB)
	}
	mid = s.Revision()
	for i := range 10_000 {
		s.Update(podKey(i), value1KiB, 0)
	}
	return s, mid
}

// BenchmarkList10k: a list of 10,000 pods at the current revision.
func BenchmarkList10k(b *testing.B) {
	s, _ := listStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if kvs, _ := s.List("/registry/pods/"); len(kvs) != 10_000 {
			b.Fatal(len(kvs))
		}
	}
}

// BenchmarkListAt10k: the same list at a past revision (a search by revision
// in every key's generations).
func BenchmarkListAt10k(b *testing.B) {
	s, mid := listStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if kvs, _, err := s.ListAt("/registry/pods/", mid); err != nil || len(kvs) != 10_000 {
			b.Fatal(len(kvs), err)
		}
	}
}

// BenchmarkGet: one key among 20,000.
func BenchmarkGet(b *testing.B) {
	s, _ := listStore(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Get(podKey(i % 10_000)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchFanOut1000: one write, delivered to 1,000 watchers of its
// prefix. ns/op is the time from the write to its delivery at the last
// watcher; ns-to-first is the delivery at the first one.
func BenchmarkWatchFanOut1000(b *testing.B) {
	const watchers = 1000
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		got     atomic.Int64
		start   atomic.Int64 // UnixNano of the write being measured
		first   atomic.Int64 // ns to the first delivery of it
		allDone = make(chan struct{}, 1)
		wg      sync.WaitGroup
	)
	for range watchers {
		w, err := s.Watch(ctx, "/registry/pods/", 0)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range w.ResultChan() {
				switch got.Add(1) {
				case 1:
					first.Store(time.Now().UnixNano() - start.Load())
				case watchers:
					allDone <- struct{}{}
				}
			}
		}()
	}
	var firstSum int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		got.Store(0)
		start.Store(time.Now().UnixNano())
		if _, err := s.Create(podKey(i), value1KiB); err != nil {
			b.Fatal(err)
		}
		<-allDone
		firstSum += first.Load()
	}
	b.ReportMetric(float64(firstSum)/float64(b.N), "ns-to-first")
	b.ReportMetric(float64(b.N*watchers)/b.Elapsed().Seconds(), "deliveries/s")
	cancel()
	wg.Wait()
}
