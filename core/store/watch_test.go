package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
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
