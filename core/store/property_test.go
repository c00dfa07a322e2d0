package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// model is the store's meaning, written the simplest way: the full state
// after every revision.
type model struct {
	rev    int64
	states map[int64]map[string]KeyValue
}

func newModel() *model {
	return &model{rev: 1, states: map[int64]map[string]KeyValue{1: {}}}
}

// apply records one revision made of puts (value != nil) and deletes.
func (m *model) apply(writes []modelWrite) {
	if len(writes) == 0 {
		return
	}
	next := maps.Clone(m.states[m.rev])
	m.rev++
	for _, w := range writes {
		if w.del {
			delete(next, w.key)
			continue
		}
		kv := KeyValue{Key: w.key, Value: w.value, CreateRevision: m.rev, ModRevision: m.rev, Version: 1}
		if old, ok := next[w.key]; ok {
			kv.CreateRevision, kv.Version = old.CreateRevision, old.Version+1
		}
		next[w.key] = kv
	}
	m.states[m.rev] = next
}

type modelWrite struct {
	key   string
	value []byte
	del   bool
}

func (m *model) list(rev int64, prefix string) []KeyValue {
	out := []KeyValue{}
	for _, k := range slices.Sorted(maps.Keys(m.states[rev])) {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, m.states[rev][k])
		}
	}
	return out
}

// randomWorkload drives a store and the model with the same random writes:
// creates, updates, deletes, multi-key transactions and compactions.
func randomWorkload(t *testing.T, r *rand.Rand, s *Store, m *model, n int) {
	keys := []string{"/p/a", "/p/b", "/p/c", "/p/d", "/q/a", "/q/b", "/pq"}
	for i := 0; i < n; i++ {
		key := keys[r.IntN(len(keys))]
		val := []byte(fmt.Sprint(i))
		_, exists := m.states[m.rev][key]
		switch op := r.IntN(10); {
		case op < 3:
			_, err := s.Create(key, val)
			if exists != errors.Is(err, ErrExists) {
				t.Fatalf("create %s: exists=%v err=%v", key, exists, err)
			}
			if err == nil {
				m.apply([]modelWrite{{key: key, value: val}})
			}
		case op < 6:
			_, err := s.Update(key, val, 0)
			if exists == errors.Is(err, ErrNotFound) {
				t.Fatalf("update %s: exists=%v err=%v", key, exists, err)
			}
			if err == nil {
				m.apply([]modelWrite{{key: key, value: val}})
			}
		case op < 8:
			_, err := s.Delete(key, 0)
			if exists == errors.Is(err, ErrNotFound) {
				t.Fatalf("delete %s: exists=%v err=%v", key, exists, err)
			}
			if err == nil {
				m.apply([]modelWrite{{key: key, del: true}})
			}
		case op < 9:
			// A txn putting two keys and deleting a third prefix.
			k2 := keys[r.IntN(len(keys))]
			if k2 == key {
				continue
			}
			delPrefix := "/q/"
			if key[:3] == "/q/" || k2[:3] == "/q/" {
				delPrefix = "/zz/"
			}
			resp, err := s.Txn(TxnRequest{Then: []Op{OpPut(key, val), OpDelete(delPrefix, WithPrefix()), OpPut(k2, val)}})
			if err != nil {
				t.Fatal(err)
			}
			writes := []modelWrite{{key: key, value: val}}
			for _, kv := range resp.Responses[1].Delete.PrevKVs {
				writes = append(writes, modelWrite{key: kv.Key, del: true})
			}
			writes = append(writes, modelWrite{key: k2, value: val})
			m.apply(writes)
		default:
			if c := s.CompactedRevision() + int64(r.IntN(5)); c <= m.rev && c > s.CompactedRevision() {
				if err := s.Compact(c); err != nil {
					t.Fatal(err)
				}
			}
		}
		if s.Revision() != m.rev {
			t.Fatalf("store at revision %d, model at %d", s.Revision(), m.rev)
		}
	}
}

// Property: at every retained revision R, ListAt(R) is the model's state at
// R; and a watch from R, applied to ListAt(R), gives ListAt(R2) at every
// later revision R2. Revisions older than the compacted one are refused.
func TestListAtMatchesModelAndWatchReplay(t *testing.T) {
	seeds, ops := 24, 300
	if runtime.GOOS == "js" {
		seeds, ops = 4, 150
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			limit := []int{0, 7, 40}[seed%3]
			s := New(Config{HistoryLimit: limit})
			m := newModel()
			randomWorkload(t, r, s, m, ops)
			checkAgainstModel(t, s, m)
		})
	}
}

func checkAgainstModel(t *testing.T, s *Store, m *model) {
	t.Helper()
	compacted, current := s.CompactedRevision(), s.Revision()
	for _, prefix := range []string{"", "/p/", "/q/", "/p"} {
		for rev := int64(1); rev <= current; rev++ {
			got, at, err := s.ListAt(prefix, rev)
			if rev < compacted {
				if !errors.Is(err, ErrCompacted) {
					t.Fatalf("ListAt(%q, %d) below compacted %d: %v", prefix, rev, compacted, err)
				}
				continue
			}
			if err != nil || at != rev {
				t.Fatalf("ListAt(%q, %d): at %d, %v", prefix, rev, at, err)
			}
			if want := m.list(rev, prefix); !reflect.DeepEqual(got, want) {
				t.Fatalf("ListAt(%q, %d):\n got %+v\nwant %+v", prefix, rev, got, want)
			}
		}
		for from := compacted; from <= current; from++ {
			checkReplay(t, s, prefix, from, current)
		}
	}
}

// checkReplay lists at from, watches after from up to a Progress event (which
// marks "everything up to now delivered"), and checks the replayed state at
// every revision in between.
func checkReplay(t *testing.T, s *Store, prefix string, from, current int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _, err := s.ListAt(prefix, from)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, prefix, from)
	if err != nil {
		t.Fatalf("watch after %d: %v", from, err)
	}
	w.RequestProgress()
	var events []Event
	for {
		ev := next(t, w)
		if ev.Type == Progress {
			if ev.Revision() != current {
				t.Fatalf("progress at %d, want %d", ev.Revision(), current)
			}
			break
		}
		if ev.Revision() <= from || (len(events) > 0 && ev.Revision() < events[len(events)-1].Revision()) {
			t.Fatalf("watch after %d delivered revision %d out of order", from, ev.Revision())
		}
		events = append(events, ev)
	}
	state := map[string]KeyValue{}
	for _, kv := range base {
		state[kv.Key] = kv
	}
	for rev := from + 1; rev <= current; rev++ {
		for len(events) > 0 && events[0].Revision() == rev {
			ev := events[0]
			events = events[1:]
			if ev.Type == Delete {
				delete(state, ev.KV.Key)
			} else {
				state[ev.KV.Key] = ev.KV
			}
		}
		want, _, _ := s.ListAt(prefix, rev)
		got := []KeyValue{}
		for _, k := range slices.Sorted(maps.Keys(state)) {
			got = append(got, state[k])
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("prefix %q: ListAt(%d) + watch replay to %d:\n got %+v\nwant %+v", prefix, from, rev, got, want)
		}
	}
}
