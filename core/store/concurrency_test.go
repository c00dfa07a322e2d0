package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// The acceptance test: 8 writers doing read-modify-write with retry on
// conflict lose no update, and 4 watchers see each key's revisions strictly
// increasing with no gaps against the store's history (here: every write the
// writers were told succeeded, and nothing else).
func TestConcurrentWritersLoseNoUpdateAndWatchersSeeEveryRevision(t *testing.T) {
	const writers, watchers, nkeys = 8, 4, 4
	each := 150
	if runtime.GOOS == "js" {
		each = 40
	}
	s := New(Config{})
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/counters/c%d", i)
		if _, err := s.Create(keys[i], []byte("0")); err != nil {
			t.Fatal(err)
		}
	}
	start := s.Revision()
	total := writers * each

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make([][]Event, watchers)
	var watchWG sync.WaitGroup
	for i := range watchers {
		w, err := s.Watch(ctx, "/registry/counters/", start)
		if err != nil {
			t.Fatal(err)
		}
		watchWG.Add(1)
		go func() {
			defer watchWG.Done()
			for len(seen[i]) < total {
				ev, ok := <-w.ResultChan()
				if !ok {
					t.Errorf("watcher %d closed after %d events: %v", i, len(seen[i]), w.Err())
					return
				}
				seen[i] = append(seen[i], ev)
			}
		}()
	}

	// Each writer records the writes the store acknowledged.
	acked := make([][]KeyValue, writers)
	var writeWG sync.WaitGroup
	for wi := range writers {
		writeWG.Add(1)
		go func() {
			defer writeWG.Done()
			for n := 0; n < each; {
				key := keys[(wi+n)%nkeys]
				cur, err := s.Get(key)
				if err != nil {
					t.Error(err)
					return
				}
				v, _ := strconv.Atoi(string(cur.Value))
				val := []byte(strconv.Itoa(v + 1))
				var kv KeyValue
				if n%2 == 0 { // the Update shorthand
					kv, err = s.Update(key, val, cur.ModRevision)
					if errors.Is(err, ErrConflict) {
						continue
					}
				} else { // the txn kube-apiserver sends
					var resp TxnResponse
					resp, err = s.Txn(TxnRequest{If: []Compare{ModRevision(key, Equal, cur.ModRevision)}, Then: []Op{OpPut(key, val)}})
					if err == nil && !resp.Succeeded {
						continue
					}
					if err == nil {
						kv = resp.Responses[0].Put.KV
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				acked[wi] = append(acked[wi], kv)
				n++
			}
		}()
	}
	writeWG.Wait()
	watchWG.Wait()
	if t.Failed() {
		return
	}

	// No lost update: each counter equals the increments acknowledged on it.
	perKey := map[string][]KeyValue{}
	for _, kvs := range acked {
		for _, kv := range kvs {
			perKey[kv.Key] = append(perKey[kv.Key], kv)
		}
	}
	var revs []int64
	for _, key := range keys {
		kvs := perKey[key]
		slices.SortFunc(kvs, func(a, b KeyValue) int { return int(a.ModRevision - b.ModRevision) })
		cur, _ := s.Get(key)
		if string(cur.Value) != strconv.Itoa(len(kvs)) {
			t.Fatalf("%s = %s after %d acknowledged increments", key, cur.Value, len(kvs))
		}
		for i, kv := range kvs {
			if string(kv.Value) != strconv.Itoa(i+1) || kv.Version != int64(i+2) {
				t.Fatalf("%s: the %d-th acknowledged write is %s v%d", key, i+1, kv.Value, kv.Version)
			}
			revs = append(revs, kv.ModRevision)
		}
	}
	// The acknowledged writes are the store's whole history since start.
	slices.Sort(revs)
	for i, r := range revs {
		if r != start+1+int64(i) {
			t.Fatalf("acknowledged revisions have a gap or a duplicate at %d: %d", i, r)
		}
	}
	if s.Revision() != start+int64(total) {
		t.Fatalf("store at %d, want %d", s.Revision(), start+int64(total))
	}

	// Every watcher saw exactly that history, in order.
	for i, evs := range seen {
		got := map[string][]KeyValue{}
		for j, ev := range evs {
			if j > 0 && ev.Revision() <= evs[j-1].Revision() {
				t.Fatalf("watcher %d: revision %d after %d", i, ev.Revision(), evs[j-1].Revision())
			}
			if ev.Type != Put || ev.PrevKV == nil || ev.PrevKV.Version+1 != ev.KV.Version {
				t.Fatalf("watcher %d: event %+v does not follow its PrevKV", i, ev)
			}
			got[ev.KV.Key] = append(got[ev.KV.Key], ev.KV)
		}
		if !reflect.DeepEqual(got, perKey) {
			t.Fatalf("watcher %d saw a different history than the writers were acknowledged", i)
		}
	}
}
