package store

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Linearizability: a history of concurrent gets, puts and compare-and-swaps,
// recorded from real goroutines, must be explainable by some order of the
// operations that respects real time (an operation that returned before
// another was called comes first) and the sequential model below. The model
// also checks the revisions the store hands out, so "every write gets the next
// revision, in the order the writes took effect" is part of what is checked.
// github.com/anishathalye/porcupine is the checker etcd's own robustness
// tests use.

const linKeys = 3

type linInput struct {
	op     string // "get", "put", "cas"
	key    int
	value  string
	expect int64 // cas: the ModRevision to compare with
}

type linOutput struct {
	ok    bool   // get: found; cas: succeeded
	value string // get
	mod   int64  // get: the key's ModRevision
	rev   int64  // put, cas: the store's revision after the txn
}

type linState struct {
	rev   int64
	value [linKeys]string
	mod   [linKeys]int64 // 0: the key does not exist
}

var linModel = porcupine.Model{
	Init: func() any { return linState{rev: 1} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(linState), input.(linInput), output.(linOutput)
		switch in.op {
		case "get":
			exists := st.mod[in.key] != 0
			return out.ok == exists && out.value == st.value[in.key] && out.mod == st.mod[in.key], st
		case "put":
			st.rev++
			st.value[in.key], st.mod[in.key] = in.value, st.rev
			return out.rev == st.rev, st
		case "cas":
			if st.mod[in.key] != in.expect {
				return !out.ok && out.rev == st.rev, st
			}
			st.rev++
			st.value[in.key], st.mod[in.key] = in.value, st.rev
			return out.ok && out.rev == st.rev, st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		return fmt.Sprintf("%s(k%d %q %d) -> %+v", in.op, in.key, in.value, in.expect, out)
	},
}

func recordHistory(t *testing.T, s *Store, clients, opsEach int) []porcupine.Operation {
	var clock atomic.Int64 // a logical clock: real-time order without reading the wall clock
	keys := [linKeys]string{"/lin/a", "/lin/b", "/lin/c"}
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 99))
			lastMod := [linKeys]int64{}
			for i := 0; i < opsEach; i++ {
				in := linInput{key: r.IntN(linKeys), value: fmt.Sprintf("c%d-%d", c, i)}
				var out linOutput
				call := clock.Add(1)
				switch r.IntN(3) {
				case 0:
					in.op, in.value = "get", ""
					kv, err := s.Get(keys[in.key])
					if err == nil {
						out = linOutput{ok: true, value: string(kv.Value), mod: kv.ModRevision}
						lastMod[in.key] = kv.ModRevision
					}
				case 1:
					in.op = "put"
					resp, err := s.Txn(TxnRequest{Then: []Op{OpPut(keys[in.key], []byte(in.value))}})
					if err != nil {
						t.Error(err)
						return
					}
					out.rev = resp.Revision
				default:
					in.op, in.expect = "cas", lastMod[in.key]
					resp, err := s.Txn(TxnRequest{
						If:   []Compare{ModRevision(keys[in.key], Equal, in.expect)},
						Then: []Op{OpPut(keys[in.key], []byte(in.value))},
					})
					if err != nil {
						t.Error(err)
						return
					}
					out.ok, out.rev = resp.Succeeded, resp.Revision
				}
				ret := clock.Add(1)
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
				if i%8 == 0 {
					runtime.Gosched() // let the clients interleave, also on one thread (js)
				}
			}
		}()
	}
	wg.Wait()
	return history
}

func TestLinearizable(t *testing.T) {
	clients, opsEach := 8, 80
	if runtime.GOOS == "js" {
		clients, opsEach = 4, 40
	}
	s := New(Config{})
	history := recordHistory(t, s, clients, opsEach)
	if t.Failed() {
		return
	}
	// The timeout only stops a runaway search; it asserts nothing about speed.
	if res := porcupine.CheckOperationsTimeout(linModel, history, time.Minute); res != porcupine.Ok {
		t.Fatalf("history of %d operations is %s, not linearizable", len(history), res)
	}

	// The checker has teeth: a get that starts after every write returned
	// and still reads the initial state cannot be placed anywhere.
	var last int64
	for _, op := range history {
		last = max(last, op.Return)
	}
	stale := append(history[:len(history):len(history)], porcupine.Operation{
		ClientId: clients, Input: linInput{op: "get", key: 0}, Call: last + 1, Output: linOutput{}, Return: last + 2,
	})
	if _, err := s.Get("/lin/a"); err != nil {
		t.Fatalf("the workload never wrote /lin/a: %v", err)
	}
	if res := porcupine.CheckOperationsTimeout(linModel, stale, time.Minute); res != porcupine.Illegal {
		t.Fatalf("a stale read after the end was judged %s", res)
	}
}
