package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kubetab/kubetab/core/eventloop"
)

// Snapshots (upstream: `etcdctl snapshot save` and `etcdutl snapshot
// restore`). A snapshot holds every key that exists, with its create and mod
// revisions and version, and the store's revision; it does not hold the
// history. A store restored from one is at the snapshot's revision with that
// revision compacted: reads and watches start from there, and a client that
// remembers an older resourceVersion gets ErrCompacted and relists, as
// against an etcd restored from a backup.
//
// The format (version 1) is binary, all integers as Go varints
// (encoding/binary: Uvarint for lengths and counts, Varint for revisions):
//
//	"kubetab store snapshot\n"        magic, 23 bytes
//	uvarint   format version          1
//	varint    revision                the store's revision
//	uvarint   n                       number of keys
//	n times, in strictly ascending key order:
//	  uvarint len, bytes              key
//	  uvarint len, bytes              value
//	  varint                          CreateRevision
//	  varint                          ModRevision
//	  varint                          Version
//	32 bytes                          SHA-256 of everything above
//
// etcd likewise appends a SHA-256 to the database file `snapshot save`
// writes, and `snapshot restore` refuses a file whose hash does not match.

// Errors of Restore. Each comes wrapped with the detail of what is wrong.
var (
	ErrSnapshotCorrupt = errors.New("store: snapshot is corrupt")
	ErrSnapshotVersion = errors.New("store: unsupported snapshot format version")
)

const (
	snapshotMagic   = "kubetab store snapshot\n"
	snapshotVersion = 1
)

// Snapshot writes every key and the current revision to w. It reads a
// consistent view under the lock and encodes it after releasing it, so
// writers wait only for the copy of the key list, not for w; while it
// encodes, it gives the host's event loop its turns (core/eventloop).
func (s *Store) Snapshot(w io.Writer) error {
	_, err := s.SnapshotTimed(w)
	return err
}

// SnapshotTimed is Snapshot that also says how long it held the thread:
// its time from taking the read lock to the end, less the event loop's
// turns it gave while encoding. In a browser tab, where every goroutine
// shares one thread, that is the worker time a save costs; the rest of its
// wall time other work ran.
func (s *Store) SnapshotTimed(w io.Writer) (held time.Duration, err error) {
	s.mu.RLock()
	start := time.Now()
	rev, kvs := s.rev, s.currentKVs()
	s.mu.RUnlock()
	turns, err := encodeSnapshot(w, rev, kvs)
	return time.Since(start) - turns, err
}

// SnapshotBody is SnapshotTimed without the trailing SHA-256: it writes
// the snapshot's bytes up to the checksum, and the caller appends the
// SHA-256 of exactly those bytes to make the snapshot (Restore refuses it
// otherwise). A browser tab hashes with WebCrypto, natively and off the
// worker's thread, where Go's SHA-256 compiled to wasm is most of a save's
// time (1.1 MB of 300 pods: ~40 ms).
func (s *Store) SnapshotBody(w io.Writer) (held time.Duration, err error) {
	s.mu.RLock()
	start := time.Now()
	rev, kvs := s.rev, s.currentKVs()
	s.mu.RUnlock()
	turns, err := encodeSnapshotBody(w, rev, kvs)
	return time.Since(start) - turns, err
}

// Checkpoint is Snapshot for a write-ahead log (core/store/wal): cut runs
// with writes held off, at the snapshot's revision, so the log can start a
// new segment exactly after it; then the snapshot is written to w.
func (s *Store) Checkpoint(w io.Writer, cut func(rev int64)) error {
	s.mu.Lock()
	rev, kvs := s.rev, s.currentKVs()
	cut(rev)
	s.mu.Unlock()
	_, err := encodeSnapshot(w, rev, kvs)
	return err
}

// currentKVs lists the live keys. Called with s.mu held.
func (s *Store) currentKVs() []*KeyValue {
	kvs := make([]*KeyValue, 0, s.sizes.keys)
	s.index.visit("", "\x00", func(ki *keyIndex) bool {
		if kv := ki.current(); kv != nil {
			kvs = append(kvs, kv) // stored KeyValues are immutable: safe to read later
		}
		return true
	})
	return kvs
}

// encodeSnapshot writes the snapshot and returns the time spent in the
// event loop's turns it gave.
func encodeSnapshot(w io.Writer, rev int64, kvs []*KeyValue) (turns time.Duration, err error) {
	h := sha256.New()
	turns, err = encodeSnapshotBody(io.MultiWriter(w, h), rev, kvs)
	if err != nil {
		return turns, err
	}
	if _, err := w.Write(h.Sum(nil)); err != nil {
		return turns, fmt.Errorf("store: write snapshot: %w", err)
	}
	return turns, nil
}

// encodeSnapshotBody writes the snapshot up to its checksum.
func encodeSnapshotBody(w io.Writer, rev int64, kvs []*KeyValue) (turns time.Duration, err error) {
	bw := bufio.NewWriter(w)
	var buf [binary.MaxVarintLen64]byte
	uvarint := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	varint := func(v int64) { bw.Write(buf[:binary.PutVarint(buf[:], v)]) }
	bw.WriteString(snapshotMagic)
	uvarint(snapshotVersion)
	varint(rev)
	uvarint(uint64(len(kvs)))
	for i, kv := range kvs {
		if i%64 == 63 {
			// In a browser tab a big snapshot takes a while to encode (and
			// hash): let the page's requests and console lines in between.
			t := time.Now()
			eventloop.MaybeTurn()
			turns += time.Since(t)
		}
		uvarint(uint64(len(kv.Key)))
		bw.WriteString(kv.Key)
		uvarint(uint64(len(kv.Value)))
		bw.Write(kv.Value)
		varint(kv.CreateRevision)
		varint(kv.ModRevision)
		varint(kv.Version)
	}
	if err := bw.Flush(); err != nil {
		return turns, fmt.Errorf("store: write snapshot: %w", err)
	}
	return turns, nil
}

// Restore returns a new store (with the default Config) holding the keys of
// the snapshot read from r. See (*Store).Restore for the errors.
func Restore(r io.Reader) (*Store, error) {
	s := New(Config{})
	if err := s.Restore(r); err != nil {
		return nil, err
	}
	return s, nil
}

// Restore replaces the store's contents with the snapshot read from r: the
// keys, their revisions and the store's revision, with the history empty
// and the snapshot's revision as the compacted revision. Open watches end
// with ErrCompacted: what they were following is gone, and their clients
// must list again (restore before starting the control plane to avoid that).
//
// A snapshot that is not one (wrong magic), has an unknown format version
// (ErrSnapshotVersion), is truncated, fails its checksum or holds impossible
// contents (ErrSnapshotCorrupt) is refused, and the store is left unchanged.
func (s *Store) Restore(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("store: read snapshot: %w", err)
	}
	snap, err := decodeSnapshot(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		w.cancel(ErrCompacted)
		delete(s.watchers, w)
	}
	s.rev = snap.rev
	s.compacted = snap.rev
	s.index = snap.index
	s.history = eventLog{}
	s.sizes = snap.sizes
	return nil
}

type decodedSnapshot struct {
	rev   int64
	index treeIndex
	sizes sizes
}

func decodeSnapshot(data []byte) (decodedSnapshot, error) {
	corrupt := func(format string, args ...any) (decodedSnapshot, error) {
		return decodedSnapshot{}, fmt.Errorf("%w: "+format, append([]any{ErrSnapshotCorrupt}, args...)...)
	}
	if len(data) == 0 {
		return corrupt("empty input")
	}
	if !bytes.HasPrefix(data, []byte(snapshotMagic)) {
		if len(data) < len(snapshotMagic) && bytes.HasPrefix([]byte(snapshotMagic), data) {
			return corrupt("truncated after %d bytes", len(data))
		}
		return corrupt("not a kubetab store snapshot")
	}
	version, n := binary.Uvarint(data[len(snapshotMagic):])
	if n <= 0 {
		return corrupt("truncated after %d bytes", len(data))
	}
	if version != snapshotVersion {
		return decodedSnapshot{}, fmt.Errorf("%w: %d (this kubetab reads version %d)", ErrSnapshotVersion, version, snapshotVersion)
	}
	if len(data) < len(snapshotMagic)+n+sha256.Size {
		return corrupt("truncated after %d bytes", len(data))
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return corrupt("sha256 checksum mismatch (the file is damaged or truncated)")
	}

	d := snapshotDecoder{buf: body[len(snapshotMagic)+n:]}
	rev := d.varint()
	count := d.uvarint()
	if d.err != nil {
		return corrupt("%v", d.err)
	}
	if rev < 1 {
		return corrupt("revision %d is not positive", rev)
	}
	// Every key takes at least 5 bytes, so a count beyond that is a lie
	// (and must not make us allocate for it).
	if count > uint64(len(d.buf))/5 {
		return corrupt("%d keys cannot fit in %d bytes", count, len(d.buf))
	}
	out := decodedSnapshot{rev: rev, index: newTreeIndex()}
	prevKey := ""
	for i := uint64(0); i < count; i++ {
		key := string(d.bytes())
		value := d.bytes()
		kv := &KeyValue{Key: key, Value: value, CreateRevision: d.varint(), ModRevision: d.varint(), Version: d.varint()}
		if d.err != nil {
			return corrupt("key %d: %v", i, d.err)
		}
		switch {
		case key == "":
			return corrupt("key %d is empty", i)
		case i > 0 && key <= prevKey:
			return corrupt("key %q is out of order after %q", key, prevKey)
		case kv.CreateRevision < 1 || kv.CreateRevision > kv.ModRevision || kv.ModRevision > rev:
			return corrupt("key %q: revisions create=%d mod=%d do not fit revision %d", key, kv.CreateRevision, kv.ModRevision, rev)
		case kv.Version < 1 || kv.Version > kv.ModRevision-kv.CreateRevision+1:
			return corrupt("key %q: version %d is impossible between revisions %d and %d", key, kv.Version, kv.CreateRevision, kv.ModRevision)
		}
		prevKey = key
		out.index.insert(&keyIndex{key: key, generations: []generation{{revs: []*KeyValue{kv}}}})
		out.sizes.keys++
		out.sizes.revs++
		out.sizes.liveBytes += kvSize(kv)
		out.sizes.revBytes += kvSize(kv)
	}
	if len(d.buf) != 0 {
		return corrupt("%d bytes after the last key", len(d.buf))
	}
	return out, nil
}

// snapshotDecoder reads varints and byte strings, remembering the first error.
type snapshotDecoder struct {
	buf []byte
	err error
}

func (d *snapshotDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errors.New("bad or truncated number")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *snapshotDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errors.New("bad or truncated number")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *snapshotDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.err = fmt.Errorf("a string of %d bytes runs past the end", n)
		return nil
	}
	b := bytes.Clone(d.buf[:n])
	d.buf = d.buf[n:]
	return b
}
