package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestRevisions(t *testing.T) {
	s := New(Config{})
	a1, err := s.Create("/a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := s.Create("/b", []byte("1"))
	a2, err := s.Update("/a", []byte("2"), a1.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                 string
		kv                   KeyValue
		create, mod, version int64
	}{
		{"first create", a1, 2, 2, 1},
		{"second create", b1, 3, 3, 1},
		{"update keeps create revision", a2, 2, 4, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kv.CreateRevision != tc.create || tc.kv.ModRevision != tc.mod || tc.kv.Version != tc.version {
				t.Fatalf("got c=%d m=%d v=%d, want c=%d m=%d v=%d", tc.kv.CreateRevision, tc.kv.ModRevision, tc.kv.Version, tc.create, tc.mod, tc.version)
			}
		})
	}
	if _, err := s.Create("/a", nil); !errors.Is(err, ErrExists) {
		t.Fatalf("create existing: %v", err)
	}
	if _, err := s.Update("/a", []byte("3"), a1.ModRevision); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale update: %v", err)
	}
	if _, err := s.Delete("/a", a1.ModRevision); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale delete: %v", err)
	}
	gone, err := s.Delete("/a", 0)
	if err != nil || gone.ModRevision != 5 || string(gone.Value) != "2" {
		t.Fatalf("delete: %+v %v", gone, err)
	}
	if _, err := s.Get("/a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	kvs, rev := s.List("/")
	if len(kvs) != 1 || kvs[0].Key != "/b" || rev != 5 {
		t.Fatalf("list: %+v rev %d", kvs, rev)
	}
}

func next(t *testing.T, w *Watcher) Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed: %v", w.Err())
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

func TestWatchFromRevisionAndPrefix(t *testing.T) {
	s := New(Config{})
	s.Create("/pods/a", []byte("1"))
	kv, _ := s.Create("/nodes/n", []byte("1"))
	s.Create("/pods/b", []byte("1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// From a past revision: the history replays, then live events follow.
	w, err := s.Watch(ctx, "/pods/", kv.ModRevision-1)
	if err != nil {
		t.Fatal(err)
	}
	s.Delete("/pods/a", 0)
	want := []string{"PUT /pods/b", "DELETE /pods/a"}
	for _, wnt := range want {
		ev := next(t, w)
		if got := fmt.Sprintf("%v %s", ev.Type, ev.KV.Key); got != wnt {
			t.Fatalf("got %q want %q", got, wnt)
		}
	}
	if _, err := s.Watch(ctx, "/", s.Revision()+1); !errors.Is(err, ErrFuture) {
		t.Fatalf("future watch: %v", err)
	}
}

func TestCompaction(t *testing.T) {
	s := New(Config{HistoryLimit: 3})
	for i := 0; i < 10; i++ {
		s.Create(fmt.Sprintf("/k%d", i), nil)
	}
	if _, err := s.Watch(context.Background(), "/", 2); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from compacted revision: %v", err)
	}
	w, err := s.Watch(context.Background(), "/", s.CompactedRevision())
	if err != nil {
		t.Fatalf("watch from oldest kept revision: %v", err)
	}
	defer w.Stop()
	for i := 0; i < 3; i++ {
		next(t, w)
	}
}

func TestSlowWatcherIsDroppedNotBlocking(t *testing.T) {
	s := New(Config{WatcherQueueLimit: 10})
	w, err := s.Watch(context.Background(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads; writers must still finish.
	for i := 0; i < 100; i++ {
		if _, err := s.Create(fmt.Sprintf("/k%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for range w.ResultChan() {
	}
	if !errors.Is(w.Err(), ErrWatcherTooSlow) {
		t.Fatalf("err = %v, want ErrWatcherTooSlow", w.Err())
	}
}

// Concurrent read-modify-write with retry on conflict loses no update, and a
// watcher sees every revision in order with no gaps.
func TestConcurrentCASAndOrderedWatch(t *testing.T) {
	s := New(Config{})
	s.Create("/counter", []byte("0"))
	start := s.Revision()
	w, err := s.Watch(context.Background(), "/", start)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < each; {
				kv, _ := s.Get("/counter")
				var v int
				fmt.Sscan(string(kv.Value), &v)
				if _, err := s.Update("/counter", []byte(fmt.Sprint(v+1)), kv.ModRevision); errors.Is(err, ErrConflict) {
					continue
				} else if err != nil {
					t.Error(err)
					return
				}
				n++
			}
		}()
	}
	wg.Wait()
	kv, _ := s.Get("/counter")
	if string(kv.Value) != fmt.Sprint(writers*each) {
		t.Fatalf("counter = %s, want %d", kv.Value, writers*each)
	}
	prev := start
	for i := 0; i < writers*each; i++ {
		ev := next(t, w)
		if ev.Revision() != prev+1 {
			t.Fatalf("revision %d after %d: gap or reorder", ev.Revision(), prev)
		}
		prev = ev.Revision()
	}
}

func TestHistory(t *testing.T) {
	s := New(Config{})
	a1, _ := s.Create("a", []byte("1"))
	a2, _ := s.Update("a", []byte("2"), a1.ModRevision)
	if _, err := s.Delete("a", a2.ModRevision); err != nil {
		t.Fatal(err)
	}
	s.Create("b", []byte("x"))
	a3, _ := s.Create("a", []byte("3"))
	got, rev := s.History("a")
	want := []string{"put 2 v1 1", "put 3 v2 2", "delete 4", "put 6 v1 3"}
	var lines []string
	for _, r := range got {
		if r.Deleted {
			lines = append(lines, fmt.Sprintf("delete %d", r.KV.ModRevision))
			continue
		}
		lines = append(lines, fmt.Sprintf("put %d v%d %s", r.KV.ModRevision, r.KV.Version, r.KV.Value))
	}
	if !reflect.DeepEqual(lines, want) || rev != a3.ModRevision {
		t.Fatalf("history %q at %d, want %q at %d", lines, rev, want, a3.ModRevision)
	}
	// Compaction at 5 drops the first life (deleted at 4) whole.
	if err := s.Compact(5); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.History("a"); len(got) != 1 || got[0].KV.ModRevision != 6 {
		t.Fatalf("after compact(5): %+v", got)
	}
	if got, _ := s.History("none"); len(got) != 0 {
		t.Fatalf("missing key: %+v", got)
	}
}

// A write over MaxRequestBytes is refused whole, as etcd refuses a request
// over --max-request-bytes, and nothing changes.
func TestMaxRequestBytes(t *testing.T) {
	s := New(Config{MaxRequestBytes: 100})
	if _, err := s.Create("/k", make([]byte, 50)); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 100)
	rev := s.Revision()
	for name, write := range map[string]func() error{
		"create": func() error { _, err := s.Create("/other", big); return err },
		"update": func() error { _, err := s.Update("/k", big, 0); return err },
		"txn": func() error {
			_, err := s.Txn(TxnRequest{Then: []Op{OpPut("/a", make([]byte, 60)), OpPut("/b", make([]byte, 60))}})
			return err
		},
	} {
		if err := write(); !errors.Is(err, ErrRequestTooLarge) {
			t.Errorf("%s: %v, want ErrRequestTooLarge", name, err)
		}
	}
	if got := s.Revision(); got != rev {
		t.Fatalf("a refused write moved the revision %d -> %d", rev, got)
	}
	if _, err := New(Config{}).Create("/k", make([]byte, DefaultMaxRequestBytes)); !errors.Is(err, ErrRequestTooLarge) {
		t.Fatalf("default limit: %v", err)
	}
}
