package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// A Progress event comes after every matching event up to its revision and
// before every later one, whatever the watcher has or has not read yet.
func TestRequestProgressOrder(t *testing.T) {
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Create("/pods/a", nil) // rev 2, before the watch: replayed
	w, err := s.Watch(ctx, "/pods/", 1)
	if err != nil {
		t.Fatal(err)
	}
	s.Create("/pods/b", nil)  // 3
	s.Create("/nodes/n", nil) // 4: outside the watch, but it moves the revision
	w.RequestProgress()       // progress at 4
	s.Create("/pods/c", nil)  // 5
	w.RequestProgress()       // progress at 5
	want := []string{"PUT /pods/a 2", "PUT /pods/b 3", "PROGRESS  4", "PUT /pods/c 5", "PROGRESS  5"}
	for _, wnt := range want {
		ev := next(t, w)
		if got := fmt.Sprintf("%v %s %d", ev.Type, ev.KV.Key, ev.Revision()); got != wnt {
			t.Fatalf("got %q, want %q", got, wnt)
		}
	}
	// Resuming after a progress revision misses nothing and repeats nothing.
	w2, err := s.Watch(ctx, "/pods/", 4)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w2); ev.KV.Key != "/pods/c" {
		t.Fatalf("resumed watch got %s", ev.KV.Key)
	}
	w.Stop()
	w.RequestProgress() // on an ended watch: nothing, and no panic
}

func TestWatchRangeSingleKey(t *testing.T) {
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.WatchRange(ctx, "/a", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Create("/ab", nil) // same prefix, other key
	s.Create("/a", []byte("1"))
	s.Delete("/a", 0)
	for _, wnt := range []string{"PUT /a", "DELETE /a"} {
		if ev := next(t, w); fmt.Sprintf("%v %s", ev.Type, ev.KV.Key) != wnt {
			t.Fatalf("got %v %s, want %s", ev.Type, ev.KV.Key, wnt)
		}
	}
}

func TestDeleteEventCarriesLastValue(t *testing.T) {
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Create("/a", []byte("v1"))
	w, _ := s.Watch(ctx, "/", 0)
	s.Delete("/a", 0)
	ev := next(t, w)
	if ev.Type != Delete || string(ev.KV.Value) != "v1" || ev.KV.ModRevision != 3 || ev.PrevKV == nil || ev.PrevKV.ModRevision != 2 {
		t.Fatalf("delete event %+v prev %+v", ev, ev.PrevKV)
	}
}

func TestRestoreEndsWatches(t *testing.T) {
	src := New(Config{})
	src.Create("/a", nil)
	var snap bytes.Buffer
	if err := src.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	s := New(Config{})
	w, _ := s.Watch(context.Background(), "/", 0)
	if err := s.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	for range w.ResultChan() {
	}
	if !errors.Is(w.Err(), ErrCompacted) {
		t.Fatalf("watch across a restore ended with %v", w.Err())
	}
	if s.Status().Watchers != 0 {
		t.Fatal("restore left watchers registered")
	}
}

// The observer sees every write, transactions and deletes included, in
// revision order, and sees each one before a watcher can receive it.
func TestObserverSeesWritesBeforeWatchers(t *testing.T) {
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	s.SetObserver(func(ev Event) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%v %s %d", ev.Type, ev.KV.Key, ev.Revision()))
		mu.Unlock()
	})
	w, err := s.Watch(ctx, "/pods/", 0)
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := s.Create("/pods/a", []byte("1"))                                 // 2
	s.Update("/pods/a", []byte("2"), kv.ModRevision)                          // 3
	s.Create("/nodes/n", nil)                                                 // 4: no watcher, still observed
	s.Txn(TxnRequest{Then: []Op{OpPut("/pods/b", nil), OpDelete("/pods/a")}}) // 5
	want := []string{"PUT /pods/a 2", "PUT /pods/a 3", "PUT /nodes/n 4", "PUT /pods/b 5", "DELETE /pods/a 5"}
	for range 4 {
		ev := next(t, w)
		got := fmt.Sprintf("%v %s %d", ev.Type, ev.KV.Key, ev.Revision())
		mu.Lock()
		observed := slices.Contains(seen, got)
		mu.Unlock()
		if !observed {
			t.Errorf("watcher received %q before the observer saw it", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Errorf("observed %q, want %q", seen, want)
	}
	s.SetObserver(nil)
	s.Create("/pods/c", nil)
	if len(seen) != len(want) {
		t.Errorf("observed after SetObserver(nil): %q", seen[len(want):])
	}
}

// 300 updates of a 900 KB value keep memory bounded: the history is cut
// to HistoryBytesLimit of past values, and a watcher that stops reading is
// dropped (ErrWatcherTooSlow: the API server's 410, the client relists)
// once its queue holds WatcherQueueBytesLimit. Before the byte bounds the
// store held every version: 270 MB here.
func TestLargeUpdatesKeepMemoryBounded(t *testing.T) {
	s := New(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stuck, err := s.Watch(ctx, "/registry/configmaps/", 0) // never read
	if err != nil {
		t.Fatal(err)
	}
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	key := "/registry/configmaps/default/big"
	if _, err := s.Create(key, make([]byte, 900<<10)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		v := make([]byte, 900<<10)
		v[0] = byte(i)
		if _, err := s.Update(key, v, 0); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Status()
	if past := st.Size - st.SizeInUse; past > DefaultHistoryBytesLimit {
		t.Errorf("the store keeps %d MB of past values; want at most %d MB", past>>20, DefaultHistoryBytesLimit>>20)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	const bound = 160 << 20
	if grown := int64(after.HeapAlloc) - int64(base.HeapAlloc); grown > bound {
		t.Errorf("the heap grew by %d MB after 300 updates of 900 KB; want under %d MB", grown>>20, bound>>20)
	} else {
		t.Logf("heap grew by %.0f MB; the store keeps %.0f MB of past values, %d events", float64(grown)/(1<<20), float64(st.Size-st.SizeInUse)/(1<<20), st.Events)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-stuck.ResultChan():
			if !ok {
				if !errors.Is(stuck.Err(), ErrWatcherTooSlow) {
					t.Fatalf("the stuck watcher ended with %v", stuck.Err())
				}
				return
			}
		case <-deadline:
			t.Fatal("the stuck watcher was never dropped")
		}
	}
}
