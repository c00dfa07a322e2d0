package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// sampleStore has history, deletes, recreations and an empty value.
func sampleStore(t testing.TB) *Store {
	t.Helper()
	s := New(Config{})
	s.Create("/registry/pods/default/web-1", []byte(`{"kind":"Pod"}`))
	s.Create("/registry/pods/default/web-2", []byte(`{"kind":"Pod","n":2}`))
	s.Update("/registry/pods/default/web-1", []byte(`{"kind":"Pod","v":2}`), 0)
	s.Create("/registry/namespaces/default", []byte{})
	s.Delete("/registry/pods/default/web-2", 0)
	s.Create("/registry/pods/default/web-2", []byte(`{"kind":"Pod","n":3}`))
	return s
}

func snapshotBytes(t testing.TB, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Snapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	src := sampleStore(t)
	data := snapshotBytes(t, src)
	dst, err := Restore(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	a, ra := src.List("")
	b, rb := dst.List("")
	if !reflect.DeepEqual(a, b) || ra != rb {
		t.Fatalf("restored %+v @%d, want %+v @%d", b, rb, a, ra)
	}
	if dst.CompactedRevision() != ra {
		t.Fatalf("restored store compacted at %d, want %d", dst.CompactedRevision(), ra)
	}
	if _, err := dst.Watch(context.Background(), "/", ra-1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch from before the snapshot: %v", err)
	}
	if st := dst.Status(); st.Keys != 3 || st.Revisions != 3 || st.Size != st.SizeInUse {
		t.Fatalf("restored status %+v", st)
	}
	// The restored store carries on: revisions and versions continue.
	kv, err := dst.Update("/registry/pods/default/web-1", []byte("x"), 4)
	if err != nil || kv.ModRevision != ra+1 || kv.Version != 3 || kv.CreateRevision != 2 {
		t.Fatalf("update after restore: %+v %v", kv, err)
	}
	// Same contents, same bytes: the format is canonical.
	if again := snapshotBytes(t, mustRestore(t, data)); !bytes.Equal(again, data) {
		t.Fatal("snapshot of a restored store differs from the snapshot it came from")
	}
}

func mustRestore(t testing.TB, data []byte) *Store {
	t.Helper()
	s, err := Restore(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withChecksum re-seals a body (everything before the checksum) so that a
// test reaches the checks after the checksum.
func withChecksum(body []byte) []byte {
	sum := sha256.Sum256(body)
	return append(append([]byte(nil), body...), sum[:]...)
}

// body builds a snapshot body by hand: header, revision, count, then raw bytes.
func body(version uint64, rev int64, count uint64, rest ...[]byte) []byte {
	b := []byte(snapshotMagic)
	b = binary.AppendUvarint(b, version)
	b = binary.AppendVarint(b, rev)
	b = binary.AppendUvarint(b, count)
	for _, r := range rest {
		b = append(b, r...)
	}
	return b
}

func entry(key, value string, create, mod, version int64) []byte {
	b := binary.AppendUvarint(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = append(b, value...)
	b = binary.AppendVarint(b, create)
	b = binary.AppendVarint(b, mod)
	return binary.AppendVarint(b, version)
}

func TestRestoreRefusesBadSnapshots(t *testing.T) {
	good := snapshotBytes(t, sampleStore(t))
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x20
		return b
	}
	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrSnapshotCorrupt, "empty input"},
		{"not a snapshot", []byte(`{"kind":"Pod"}`), ErrSnapshotCorrupt, "not a kubetab store snapshot"},
		{"truncated in the magic", good[:10], ErrSnapshotCorrupt, "truncated"},
		{"truncated in the body", good[:len(good)/2], ErrSnapshotCorrupt, "checksum"},
		{"truncated by one byte", good[:len(good)-1], ErrSnapshotCorrupt, "checksum"},
		{"one flipped bit in a value", flip(len(good) - 40), ErrSnapshotCorrupt, "checksum"},
		{"one flipped bit in the checksum", flip(len(good) - 1), ErrSnapshotCorrupt, "checksum"},
		{"trailing garbage", append(bytes.Clone(good), 0), ErrSnapshotCorrupt, "checksum"},
		{"unknown version", withChecksum(body(2, 5, 0)), ErrSnapshotVersion, "2 (this kubetab reads version 1)"},
		{"revision 0", withChecksum(body(1, 0, 0)), ErrSnapshotCorrupt, "revision 0"},
		{"count larger than the data", withChecksum(body(1, 5, 1000)), ErrSnapshotCorrupt, "cannot fit"},
		{"keys out of order", withChecksum(body(1, 5, 2, entry("/b", "", 2, 2, 1), entry("/a", "", 3, 3, 1))), ErrSnapshotCorrupt, "out of order"},
		{"duplicate key", withChecksum(body(1, 5, 2, entry("/a", "", 2, 2, 1), entry("/a", "", 3, 3, 1))), ErrSnapshotCorrupt, "out of order"},
		{"empty key", withChecksum(body(1, 5, 1, entry("", "", 2, 2, 1))), ErrSnapshotCorrupt, "empty"},
		{"mod revision after the store's", withChecksum(body(1, 5, 1, entry("/a", "", 2, 6, 1))), ErrSnapshotCorrupt, "do not fit"},
		{"created after modified", withChecksum(body(1, 5, 1, entry("/a", "", 4, 3, 1))), ErrSnapshotCorrupt, "do not fit"},
		{"impossible version", withChecksum(body(1, 5, 1, entry("/a", "", 2, 3, 3))), ErrSnapshotCorrupt, "version 3"},
		{"string past the end", withChecksum(body(1, 5, 1, []byte{0x7f, 'a'}, make([]byte, 10))), ErrSnapshotCorrupt, "past the end"},
		{"bytes after the last key", withChecksum(body(1, 5, 1, entry("/a", "", 2, 2, 1), []byte{1, 2, 3, 4, 5, 6})), ErrSnapshotCorrupt, "after the last key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := sampleStore(t)
			before := snapshotBytes(t, s)
			err := s.Restore(bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) || !bytes.Contains([]byte(err.Error()), []byte(tc.msg)) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
			if after := snapshotBytes(t, s); !bytes.Equal(before, after) || s.Revision() != 7 {
				t.Fatal("a refused restore changed the store")
			}
		})
	}
	// A hand-built snapshot that is right restores (the builders above are sound).
	s, err := Restore(bytes.NewReader(withChecksum(body(1, 5, 1, entry("/a", "v", 2, 4, 2)))))
	if err != nil {
		t.Fatal(err)
	}
	if kv, _ := s.Get("/a"); kv.Version != 2 || kv.ModRevision != 4 || string(kv.Value) != "v" {
		t.Fatalf("restored %+v", kv)
	}
}

// FuzzRestore: any input either is refused, leaving the store unchanged, or
// restores a store whose snapshot restores to the same store again. The
// fuzzer also gets to reach past the checksum: when the input does not start
// with the magic, it is taken as a body and sealed with a valid checksum.
func FuzzRestore(f *testing.F) {
	good := snapshotBytes(f, sampleStore(f))
	f.Add(good)
	f.Add(good[:len(good)-sha256.Size])
	f.Add(body(1, 5, 1, entry("/a", "v", 2, 4, 2)))
	f.Add(body(2, 5, 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		inputs := [][]byte{data}
		if bytes.HasPrefix(data, []byte(snapshotMagic)) {
			inputs = append(inputs, withChecksum(data))
		}
		for _, in := range inputs {
			s := New(Config{})
			s.Create("/keep", []byte("me"))
			err := s.Restore(bytes.NewReader(in))
			if err != nil {
				if !errors.Is(err, ErrSnapshotCorrupt) && !errors.Is(err, ErrSnapshotVersion) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if kv, gerr := s.Get("/keep"); gerr != nil || string(kv.Value) != "me" || s.Revision() != 2 {
					t.Fatal("a refused restore changed the store")
				}
				continue
			}
			checkInvariants(t, s)
			once := snapshotBytes(t, s)
			twice := snapshotBytes(t, mustRestore(t, once))
			if !bytes.Equal(once, twice) {
				t.Fatal("snapshot -> restore -> snapshot is not stable")
			}
		}
	})
}

// checkInvariants verifies what every store must satisfy.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	kvs, rev := s.List("")
	st := s.Status()
	if st.Keys != len(kvs) || rev != st.Revision || st.CompactRevision > rev {
		t.Fatalf("status %+v vs %d keys at %d", st, len(kvs), rev)
	}
	var size int64
	for i, kv := range kvs {
		if i > 0 && kvs[i-1].Key >= kv.Key {
			t.Fatalf("keys out of order: %q then %q", kvs[i-1].Key, kv.Key)
		}
		if kv.CreateRevision < 1 || kv.CreateRevision > kv.ModRevision || kv.ModRevision > rev || kv.Version < 1 {
			t.Fatalf("impossible key %+v at revision %d", kv, rev)
		}
		size += int64(len(kv.Key) + len(kv.Value))
	}
	if st.SizeInUse != size {
		t.Fatalf("SizeInUse %d, keys add up to %d", st.SizeInUse, size)
	}
}

// SnapshotBody plus the SHA-256 of its bytes is the snapshot, byte for byte;
// the body alone is refused.
func TestSnapshotBodySealed(t *testing.T) {
	s := sampleStore(t)
	var body bytes.Buffer
	if _, err := s.SnapshotBody(&body); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body.Bytes())
	sealed := append(bytes.Clone(body.Bytes()), sum[:]...)
	if want := snapshotBytes(t, s); !bytes.Equal(sealed, want) {
		t.Fatalf("body + sha256 is %d bytes, unlike the %d of Snapshot", len(sealed), len(want))
	}
	if _, err := Restore(bytes.NewReader(body.Bytes())); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("restore of the body alone: %v", err)
	}
}
