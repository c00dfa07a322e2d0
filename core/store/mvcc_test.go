package store

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// history builds a keyIndex from a script like etcd's key_index_test:
// "p2 p4 d6 p8" is put at 2, put at 4, delete at 6, put at 8.
func buildKeyIndex(t *testing.T, script ...string) *keyIndex {
	t.Helper()
	ki := &keyIndex{key: "a"}
	for _, step := range script {
		var rev int64
		fmt.Sscanf(step[1:], "%d", &rev)
		switch step[0] {
		case 'p':
			ki.put([]byte(step), rev)
		case 'd':
			ki.tombstone(rev)
		default:
			t.Fatalf("bad step %q", step)
		}
	}
	return ki
}

// describe renders generations as "{2 4 | 6} {8}".
func describe(ki *keyIndex) string {
	out := ""
	for i, g := range ki.generations {
		if i > 0 {
			out += " "
		}
		out += "{"
		for j, kv := range g.revs {
			if j > 0 {
				out += " "
			}
			out += fmt.Sprint(kv.ModRevision)
		}
		if g.deleted != 0 {
			out += fmt.Sprintf(" | %d", g.deleted)
		}
		out += "}"
	}
	return out
}

func TestKeyIndexAt(t *testing.T) {
	ki := buildKeyIndex(t, "p2", "p4", "d6", "p8")
	cases := []struct {
		rev             int64
		want            string // the value's script step, "" for absent
		create, version int64
	}{
		{1, "", 0, 0},
		{2, "p2", 2, 1},
		{3, "p2", 2, 1},
		{4, "p4", 2, 2},
		{5, "p4", 2, 2},
		{6, "", 0, 0},
		{7, "", 0, 0},
		{8, "p8", 8, 1},
		{100, "p8", 8, 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("at ", tc.rev), func(t *testing.T) {
			kv := ki.at(tc.rev)
			if tc.want == "" {
				if kv != nil {
					t.Fatalf("got %s, want absent", kv.Value)
				}
				return
			}
			if kv == nil || string(kv.Value) != tc.want || kv.CreateRevision != tc.create || kv.Version != tc.version {
				t.Fatalf("got %+v, want %s c=%d v=%d", kv, tc.want, tc.create, tc.version)
			}
		})
	}
}

// The cases of the diagram in key_index.go.
func TestKeyIndexCompact(t *testing.T) {
	cases := []struct {
		at    int64
		want  string
		revs  int // put revisions let go
		empty bool
	}{
		{1, "{2 4 | 6} {8}", 0, false},
		{3, "{2 4 | 6} {8}", 0, false},
		{4, "{4 | 6} {8}", 1, false},
		{5, "{4 | 6} {8}", 1, false},
		{6, "{8}", 2, false},
		{9, "{8}", 2, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("compact ", tc.at), func(t *testing.T) {
			ki := buildKeyIndex(t, "p2", "p4", "d6", "p8")
			revs, _ := ki.compact(tc.at)
			if got := describe(ki); got != tc.want || revs != tc.revs {
				t.Fatalf("got %s (%d dropped), want %s (%d dropped)", got, revs, tc.want, tc.revs)
			}
			// Reads at or after the compaction are unchanged.
			fresh := buildKeyIndex(t, "p2", "p4", "d6", "p8")
			for r := tc.at; r <= 10; r++ {
				if !reflect.DeepEqual(ki.at(r), fresh.at(r)) {
					t.Fatalf("at %d after compact(%d): %+v, want %+v", r, tc.at, ki.at(r), fresh.at(r))
				}
			}
		})
	}
	t.Run("a deleted key leaves", func(t *testing.T) {
		ki := buildKeyIndex(t, "p2", "p3", "d5")
		if revs, _ := ki.compact(5); revs != 2 || len(ki.generations) != 0 {
			t.Fatalf("compact(5): %s, %d dropped", describe(ki), revs)
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ prefix, want string }{
		{"/registry/pods/", "/registry/pods0"},
		{"a", "b"},
		{"a\xff", "b"},
		{"\xff\xff", "\x00"},
		{"", "\x00"},
	}
	for _, tc := range cases {
		if got := PrefixEnd(tc.prefix); got != tc.want {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

func keysOf(kvs []KeyValue) []string {
	out := []string{}
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

func TestRange(t *testing.T) {
	s := New(Config{})
	for _, k := range []string{"/a", "/a/1", "/a/2", "/ab", "/b", "/b/1"} {
		if _, err := s.Create(k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, key, end string
		want           []string
	}{
		{"single key", "/a", "", []string{"/a"}},
		{"missing single key", "/zz", "", []string{}},
		{"prefix", "/a/", PrefixEnd("/a/"), []string{"/a/1", "/a/2"}},
		{"prefix is not a directory", "/a", PrefixEnd("/a"), []string{"/a", "/a/1", "/a/2", "/ab"}},
		{"half-open range", "/a/2", "/b/1", []string{"/a/2", "/ab", "/b"}},
		{"from key", "/ab", "\x00", []string{"/ab", "/b", "/b/1"}},
		{"everything", "", "\x00", []string{"/a", "/a/1", "/a/2", "/ab", "/b", "/b/1"}},
		{"empty range", "/b", "/a", []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kvs, rev, err := s.Range(tc.key, tc.end, 0)
			if err != nil || rev != 7 {
				t.Fatalf("rev %d, err %v", rev, err)
			}
			if got := keysOf(kvs); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if n := s.Count("/a/"); n != 2 {
		t.Fatalf("Count(/a/) = %d", n)
	}
}

func TestGetAtAndListAt(t *testing.T) {
	s := New(Config{})
	// rev 2: create a; 3: create b; 4: update a; 5: delete b; 6: create b again.
	s.Create("/k/a", []byte("a1"))
	s.Create("/k/b", []byte("b1"))
	s.Update("/k/a", []byte("a2"), 0)
	s.Delete("/k/b", 0)
	s.Create("/k/b", []byte("b2"))
	cases := []struct {
		rev  int64
		want string // "key=value@create/mod/version ..."
	}{
		{1, ""},
		{2, "/k/a=a1@2/2/1"},
		{3, "/k/a=a1@2/2/1 /k/b=b1@3/3/1"},
		{4, "/k/a=a2@2/4/2 /k/b=b1@3/3/1"},
		{5, "/k/a=a2@2/4/2"},
		{6, "/k/a=a2@2/4/2 /k/b=b2@6/6/1"},
		{0, "/k/a=a2@2/4/2 /k/b=b2@6/6/1"},
	}
	render := func(kvs []KeyValue) string {
		out := ""
		for i, kv := range kvs {
			if i > 0 {
				out += " "
			}
			out += fmt.Sprintf("%s=%s@%d/%d/%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version)
		}
		return out
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("rev ", tc.rev), func(t *testing.T) {
			kvs, rev, err := s.ListAt("/k/", tc.rev)
			if err != nil {
				t.Fatal(err)
			}
			if want := max(tc.rev, 0); tc.rev != 0 && rev != want {
				t.Fatalf("answered at %d, want %d", rev, want)
			}
			if got := render(kvs); got != tc.want {
				t.Fatalf("ListAt = %q, want %q", got, tc.want)
			}
			// GetAt agrees with ListAt key by key.
			for _, key := range []string{"/k/a", "/k/b"} {
				kv, err := s.GetAt(key, tc.rev)
				inList := false
				for _, l := range kvs {
					if l.Key == key {
						inList = true
						if !reflect.DeepEqual(l, kv) {
							t.Fatalf("GetAt(%s) = %+v, ListAt has %+v", key, kv, l)
						}
					}
				}
				if !inList && !errors.Is(err, ErrNotFound) {
					t.Fatalf("GetAt(%s) = %+v, %v; want ErrNotFound", key, kv, err)
				}
			}
		})
	}
	if _, _, err := s.ListAt("/k/", 7); !errors.Is(err, ErrFuture) {
		t.Fatalf("ListAt future: %v", err)
	}
	if _, err := s.GetAt("/k/a", 7); !errors.Is(err, ErrFuture) {
		t.Fatalf("GetAt future: %v", err)
	}
	if err := s.Compact(4); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ListAt("/k/", 3); !errors.Is(err, ErrCompacted) {
		t.Fatalf("ListAt compacted: %v", err)
	}
	if _, err := s.GetAt("/k/a", 3); !errors.Is(err, ErrCompacted) {
		t.Fatalf("GetAt compacted: %v", err)
	}
	// The compacted revision itself is still readable, as in etcd.
	if kvs, _, err := s.ListAt("/k/", 4); err != nil || render(kvs) != "/k/a=a2@2/4/2 /k/b=b1@3/3/1" {
		t.Fatalf("ListAt(4) after Compact(4) = %q, %v", render(kvs), err)
	}
}

func TestCompactRules(t *testing.T) {
	s := New(Config{})
	for i := 0; i < 5; i++ {
		s.Create(fmt.Sprint("/k", i), nil)
	}
	cases := []struct {
		rev  int64
		want error
	}{
		{7, ErrFuture},
		{3, nil},
		{3, ErrCompacted},
		{2, ErrCompacted},
		{6, nil},
	}
	for _, tc := range cases {
		if err := s.Compact(tc.rev); !errors.Is(err, tc.want) {
			t.Fatalf("Compact(%d) = %v, want %v", tc.rev, err, tc.want)
		}
	}
	if got := s.CompactedRevision(); got != 6 {
		t.Fatalf("compacted = %d", got)
	}
	// Compaction forgets history, never the current keys.
	if kvs, _ := s.List("/"); len(kvs) != 5 {
		t.Fatalf("list after compaction: %d keys", len(kvs))
	}
}

// The history limit compacts by itself and keeps memory bounded even for a
// key that is written over and over (a node's Lease).
func TestHistoryLimitBoundsRevisions(t *testing.T) {
	s := New(Config{HistoryLimit: 10})
	s.Create("/lease", []byte("0"))
	s.Create("/other", []byte("x"))
	for i := 1; i <= 1000; i++ {
		if _, err := s.Update("/lease", []byte(fmt.Sprint(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Status()
	if st.Events != 10 || st.Revisions > 12 || st.Keys != 2 {
		t.Fatalf("status after 1000 updates with HistoryLimit 10: %+v", st)
	}
	if st.CompactRevision != st.Revision-10 {
		t.Fatalf("compacted %d, revision %d", st.CompactRevision, st.Revision)
	}
	// Everything retained is still readable and right.
	for r := st.CompactRevision; r <= st.Revision; r++ {
		kv, err := s.GetAt("/lease", r)
		if err != nil || string(kv.Value) != fmt.Sprint(r-3) || kv.ModRevision != r {
			t.Fatalf("GetAt(%d) = %s@%d, %v", r, kv.Value, kv.ModRevision, err)
		}
		if kv, err := s.GetAt("/other", r); err != nil || string(kv.Value) != "x" {
			t.Fatalf("untouched key at %d: %v", r, err)
		}
	}
	// Deleted keys leave the index once their delete is compacted.
	s.Delete("/other", 0)
	for i := 0; i < 20; i++ {
		s.Update("/lease", nil, 0)
	}
	if n := s.index.len(); n != 1 {
		t.Fatalf("index holds %d keys, want 1", n)
	}
}

func TestStatusSizes(t *testing.T) {
	s := New(Config{})
	s.Create("/a", []byte("123"))  // 5 bytes
	s.Create("/b", []byte("4567")) // 6 bytes
	s.Update("/a", []byte("1"), 0) // 3 bytes now, 5 still held
	s.Delete("/b", 0)
	st := s.Status()
	want := Status{Revision: 5, CompactRevision: 1, Keys: 1, Revisions: 3, Events: 4, Size: 14, SizeInUse: 3}
	if st != want {
		t.Fatalf("status %+v, want %+v", st, want)
	}
	s.Compact(5)
	st = s.Status()
	want = Status{Revision: 5, CompactRevision: 5, Keys: 1, Revisions: 1, Events: 0, Size: 3, SizeInUse: 3}
	if st != want {
		t.Fatalf("status after compaction %+v, want %+v", st, want)
	}
}

func TestEmptyKeyRefused(t *testing.T) {
	s := New(Config{})
	if _, err := s.Create("", nil); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("create: %v", err)
	}
	if _, err := s.Update("", nil, 0); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("update: %v", err)
	}
	if _, err := s.Delete("", 0); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("delete: %v", err)
	}
	if s.Revision() != 1 {
		t.Fatal("a refused write moved the revision")
	}
}
