package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestCompareSemantics(t *testing.T) {
	s := New(Config{})
	s.Create("/x", []byte("b"))    // rev 2
	s.Update("/x", []byte("b"), 0) // rev 3: c=2 m=3 v=2
	cases := []struct {
		name string
		cmp  Compare
		want bool
	}{
		{"mod equal", ModRevision("/x", Equal, 3), true},
		{"mod stale", ModRevision("/x", Equal, 2), false},
		{"mod greater", ModRevision("/x", Greater, 2), true},
		{"mod less", ModRevision("/x", Less, 3), false},
		{"mod not equal", ModRevision("/x", NotEqual, 2), true},
		{"create equal", CreateRevision("/x", Equal, 2), true},
		{"version equal", Version("/x", Equal, 2), true},
		{"version greater", Version("/x", Greater, 2), false},
		{"value equal", Value("/x", Equal, []byte("b")), true},
		{"value greater", Value("/x", Greater, []byte("a")), true},
		{"value less", Value("/x", Less, []byte("c")), true},
		{"value not equal", Value("/x", NotEqual, []byte("b")), false},
		{"missing key: create revision is 0", CreateRevision("/nope", Equal, 0), true},
		{"missing key: version is 0", Version("/nope", Equal, 0), true},
		{"missing key: mod revision is 0", ModRevision("/nope", Less, 1), true},
		{"missing key: a value compare always fails", Value("/nope", NotEqual, []byte("z")), false},
		{"missing key: even against empty", Value("/nope", Equal, nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.Txn(TxnRequest{If: []Compare{tc.cmp}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Succeeded != tc.want {
				t.Fatalf("succeeded = %v, want %v", resp.Succeeded, tc.want)
			}
			if resp.Revision != 3 {
				t.Fatalf("a txn without writes moved the revision to %d", resp.Revision)
			}
		})
	}
}

func TestTxnBranchesAndRevisions(t *testing.T) {
	s := New(Config{})
	s.Create("/a", []byte("1")) // rev 2
	s.Create("/d/1", []byte("x"))
	s.Create("/d/2", []byte("y")) // rev 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}

	// Success: three writes, one revision.
	resp, err := s.Txn(TxnRequest{
		If: []Compare{ModRevision("/a", Equal, 2)},
		Then: []Op{
			OpPut("/a", []byte("2")),
			OpPut("/b", []byte("new")),
			OpGet("/", WithPrefix()), // sees the two puts above
			OpDelete("/d/", WithPrefix()),
		},
		Else: []Op{OpGet("/a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Succeeded || resp.Revision != 5 || len(resp.Responses) != 4 {
		t.Fatalf("resp %+v", resp)
	}
	put := resp.Responses[0].Put
	if put.KV.ModRevision != 5 || put.KV.Version != 2 || put.PrevKV == nil || string(put.PrevKV.Value) != "1" {
		t.Fatalf("put response %+v", put)
	}
	if resp.Responses[1].Put.PrevKV != nil {
		t.Fatal("a create has a PrevKV")
	}
	if got := keysOf(resp.Responses[2].Range.KVs); !reflect.DeepEqual(got, []string{"/a", "/b", "/d/1", "/d/2"}) {
		t.Fatalf("range inside txn saw %q", got)
	}
	if got := string(resp.Responses[2].Range.KVs[0].Value); got != "2" {
		t.Fatalf("range inside txn saw /a = %q, want the txn's own write", got)
	}
	del := resp.Responses[3].Delete
	if del.Deleted != 2 || del.PrevKVs[0].Key != "/d/1" || del.PrevKVs[0].ModRevision != 3 {
		t.Fatalf("delete response %+v", del)
	}
	// Watchers see the four writes, all at revision 5, in op order.
	want := []string{"PUT /a 5", "PUT /b 5", "DELETE /d/1 5", "DELETE /d/2 5"}
	for _, wnt := range want {
		ev := next(t, w)
		if got := fmt.Sprintf("%v %s %d", ev.Type, ev.KV.Key, ev.Revision()); got != wnt {
			t.Fatalf("event %q, want %q", got, wnt)
		}
	}

	// Failure: the stale compare runs Else, which reads; nothing is written.
	resp, err = s.Txn(TxnRequest{
		If:   []Compare{ModRevision("/a", Equal, 2)},
		Then: []Op{OpPut("/a", []byte("3"))},
		Else: []Op{OpGet("/a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Succeeded || resp.Revision != 5 || resp.Responses[0].Range.KVs[0].ModRevision != 5 {
		t.Fatalf("failed txn resp %+v", resp)
	}
	// A delete of nothing writes nothing.
	resp, _ = s.Txn(TxnRequest{Then: []Op{OpDelete("/none")}})
	if resp.Revision != 5 || resp.Responses[0].Delete.Deleted != 0 {
		t.Fatalf("empty delete resp %+v", resp)
	}
	// A get at a past revision inside a txn.
	resp, _ = s.Txn(TxnRequest{Then: []Op{OpGet("/d/", WithPrefix(), WithRev(4))}})
	if got := keysOf(resp.Responses[0].Range.KVs); !reflect.DeepEqual(got, []string{"/d/1", "/d/2"}) {
		t.Fatalf("get at rev 4 in txn: %q", got)
	}
}

func TestTxnRefused(t *testing.T) {
	s := New(Config{})
	s.Create("/a", nil)
	many := make([]Op, MaxTxnOps+1)
	for i := range many {
		many[i] = OpGet("/a")
	}
	cases := []struct {
		name string
		req  TxnRequest
		want error
	}{
		{"put of empty key", TxnRequest{Then: []Op{OpPut("", nil)}}, ErrEmptyKey},
		{"delete of empty key", TxnRequest{Else: []Op{OpDelete("")}}, ErrEmptyKey},
		{"two puts of one key", TxnRequest{Then: []Op{OpPut("/b", nil), OpPut("/b", nil)}}, ErrDuplicateKey},
		{"put inside a deleted range", TxnRequest{Else: []Op{OpPut("/p/x", nil), OpDelete("/p/", WithPrefix())}}, ErrDuplicateKey},
		{"too many ops", TxnRequest{Then: many}, ErrTooManyOps},
		{"get at a future revision", TxnRequest{Then: []Op{OpGet("/a", WithRev(99))}}, ErrFuture},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Txn(tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if s.Revision() != 2 {
				t.Fatal("a refused txn wrote")
			}
		})
	}
	// The same key in the two branches is fine: only one runs.
	if _, err := s.Txn(TxnRequest{Then: []Op{OpPut("/b", nil)}, Else: []Op{OpPut("/b", nil)}}); err != nil {
		t.Fatal(err)
	}
}

// Create, Update and Delete are the txns their doc comments name: running
// both against twin stores gives the same outcome, key by key.
func TestWrappersAreTxns(t *testing.T) {
	type step struct {
		op     string
		key    string
		expect int64
	}
	steps := []step{
		{"create", "/a", 0}, {"create", "/a", 0}, {"update", "/a", 2}, {"update", "/a", 2},
		{"update", "/b", 0}, {"delete", "/a", 2}, {"delete", "/a", 3}, {"delete", "/a", 0}, {"create", "/a", 0},
	}
	plain, viaTxn := New(Config{}), New(Config{})
	for i, st := range steps {
		val := []byte(fmt.Sprint(i))
		var err error
		switch st.op {
		case "create":
			_, err = plain.Create(st.key, val)
		case "update":
			_, err = plain.Update(st.key, val, st.expect)
		case "delete":
			_, err = plain.Delete(st.key, st.expect)
		}
		var cmps []Compare
		var then []Op
		switch st.op {
		case "create":
			cmps, then = []Compare{CreateRevision(st.key, Equal, 0)}, []Op{OpPut(st.key, val)}
		case "update":
			cmps, then = []Compare{CreateRevision(st.key, Greater, 0)}, []Op{OpPut(st.key, val)}
		case "delete":
			cmps, then = []Compare{CreateRevision(st.key, Greater, 0)}, []Op{OpDelete(st.key)}
		}
		if st.expect != 0 {
			cmps = append(cmps, ModRevision(st.key, Equal, st.expect))
		}
		resp, terr := viaTxn.Txn(TxnRequest{If: cmps, Then: then})
		if terr != nil {
			t.Fatal(terr)
		}
		if resp.Succeeded != (err == nil) {
			t.Fatalf("step %d %+v: wrapper err %v, txn succeeded %v", i, st, err, resp.Succeeded)
		}
		a, _ := plain.List("/")
		b, _ := viaTxn.List("/")
		if !reflect.DeepEqual(a, b) || plain.Revision() != viaTxn.Revision() {
			t.Fatalf("step %d: %+v vs %+v", i, a, b)
		}
	}
}
