// Package wal keeps a store on disk: a write-ahead log synced before every
// write is acknowledged, and snapshots that let the log start over.
//
// Upstream counterpart: etcd's server/storage/wal (the log: records with a
// CRC, synced with fdatasync before a proposal is applied) and its snapshot
// files (server/etcdserver/api/snap), which bound how much log a restart
// replays.
//
// A data directory holds:
//
//	snapshot              the store at some revision S (core/store's format)
//	wal-<16 hex digits>   log segments, each named after the first revision
//	                      it may hold, in revision order
//
// Every write of the store is first appended to the current segment as one
// record and synced (File.Sync, which is fsync); only then does the store
// apply it and answer. A record is
//
//	uint32 length | uint32 CRC-32C of the payload | payload
//	payload: varint revision, uvarint op count, then per op:
//	         byte type (1 put, 2 delete), uvarint+bytes key, uvarint+bytes value or range end
//
// Open loads the snapshot and replays every record after S, segment by
// segment. A crash can leave at most one partly written record at the end
// of the last segment (its write was never acknowledged): a record whose
// length runs past the end or whose CRC does not match ends the log, and
// the tail is cut off. Nothing acknowledged is lost, and nothing
// half-written is applied.
//
// Checkpoint writes a new snapshot: under the store's lock it starts a new
// segment at the next revision and copies the key list, then writes the
// snapshot to a temporary file, syncs it, renames it over the old one and
// syncs the directory, and only then removes the segments the snapshot
// covers. A crash at any point leaves a snapshot and segments that together
// hold every acknowledged write.
package wal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/kubetab/kubetab/core/store"
)

const (
	snapshotName  = "snapshot"
	segmentPrefix = "wal-"
	opPut         = 1
	opDelete      = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Log is an open data directory: the store's write-ahead log.
type Log struct {
	dir string

	// mu guards f, segments and bytes. Append runs with the store locked;
	// lock order: store, then Log.mu.
	mu       sync.Mutex
	f        *os.File // the current segment, open for appending
	segments []string // every segment file, oldest first, the current last
	bytes    int64    // written to the current segment
}

var _ store.Log = (*Log)(nil)

// Open opens (or creates) the data directory dir and returns the store it
// holds, with the log attached: from now on every write is logged first.
// cfg configures the store (its Log is set here).
func Open(dir string, cfg store.Config) (*store.Store, *Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	cfg.Log = nil
	s := store.New(cfg)
	if data, err := os.ReadFile(filepath.Join(dir, snapshotName)); err == nil {
		if err := s.Restore(bytes.NewReader(data)); err != nil {
			return nil, nil, fmt.Errorf("wal: %s: %w", filepath.Join(dir, snapshotName), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	segments, err := listSegments(dir)
	if err != nil {
		return nil, nil, err
	}
	for i, name := range segments {
		last := i == len(segments)-1
		if err := replaySegment(s, filepath.Join(dir, name), last); err != nil {
			return nil, nil, err
		}
	}
	l := &Log{dir: dir, segments: segments}
	if err := l.startSegment(s.Revision() + 1); err != nil {
		return nil, nil, err
	}
	s.SetLog(l)
	return s, l, nil
}

func listSegments(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), segmentPrefix) && !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out) // fixed-width hex: lexical order is revision order
	return out, nil
}

func segmentName(firstRev int64) string { return fmt.Sprintf("%s%016x", segmentPrefix, firstRev) }

// replaySegment applies the records of one segment. A torn or corrupt
// record ends the log; in the last segment the tail from it is cut off
// (it was never acknowledged), in an earlier one it is an error.
func replaySegment(s *store.Store, path string, last bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	off := 0
	for off < len(data) {
		e, n, ok := decodeRecord(data[off:])
		if !ok {
			if !last {
				return fmt.Errorf("wal: %s: corrupt record at offset %d", path, off)
			}
			return os.Truncate(path, int64(off))
		}
		if err := s.Replay(e); err != nil {
			return fmt.Errorf("wal: %s: offset %d: %w", path, off, err)
		}
		off += n
	}
	return nil
}

// Append writes e as one record and syncs it to disk (store.Log).
func (l *Log) Append(e store.Entry) error {
	rec := encodeRecord(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("wal: log is closed")
	}
	if _, err := l.f.Write(rec); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	l.bytes += int64(len(rec))
	return nil
}

// Size is how many bytes the current segment holds: Checkpoint when it
// grows large, so a restart replays little.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

// startSegment opens a new segment for the records from firstRev on.
// Called with l.mu held (or before the log is shared).
func (l *Log) startSegment(firstRev int64) error {
	name := segmentName(firstRev)
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.bytes = f, 0
	if len(l.segments) == 0 || l.segments[len(l.segments)-1] != name {
		l.segments = append(l.segments, name)
	}
	return nil
}

// Checkpoint writes a snapshot of s (the store this log belongs to) and
// removes the segments it makes unnecessary.
func (l *Log) Checkpoint(s *store.Store) error {
	var rev int64
	var cutErr error
	var buf bytes.Buffer
	err := s.Checkpoint(&buf, func(at int64) {
		rev = at
		l.mu.Lock()
		cutErr = l.startSegment(at + 1)
		l.mu.Unlock()
	})
	if err != nil {
		return err
	}
	if cutErr != nil {
		return cutErr
	}
	tmp := filepath.Join(l.dir, snapshotName+".tmp")
	if err := writeFileSync(tmp, buf.Bytes()); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(l.dir, snapshotName)); err != nil {
		return err
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	// The snapshot holds every revision up to rev: the segments before the
	// one that starts at rev+1 are covered.
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := l.segments[:0]
	current := segmentName(rev + 1)
	for _, name := range l.segments {
		if name < current {
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		keep = append(keep, name)
	}
	l.segments = keep
	return nil
}

// Close closes the current segment; later writes of the store fail.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a directory's entries (a new or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func encodeRecord(e store.Entry) []byte {
	var p []byte
	p = binary.AppendVarint(p, e.Revision)
	p = binary.AppendUvarint(p, uint64(len(e.Ops)))
	for _, op := range e.Ops {
		second := op.Value
		typ := byte(opPut)
		if op.Type == store.DeleteOp {
			typ, second = opDelete, []byte(op.End)
		}
		p = append(p, typ)
		p = binary.AppendUvarint(p, uint64(len(op.Key)))
		p = append(p, op.Key...)
		p = binary.AppendUvarint(p, uint64(len(second)))
		p = append(p, second...)
	}
	rec := make([]byte, 8, 8+len(p))
	binary.BigEndian.PutUint32(rec[0:4], uint32(len(p)))
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(p, crcTable))
	return append(rec, p...)
}

// decodeRecord reads one record from the front of data; ok is false for a
// torn or corrupt one.
func decodeRecord(data []byte) (e store.Entry, n int, ok bool) {
	if len(data) < 8 {
		return e, 0, false
	}
	size := int(binary.BigEndian.Uint32(data[0:4]))
	if size > len(data)-8 {
		return e, 0, false
	}
	p := data[8 : 8+size]
	if crc32.Checksum(p, crcTable) != binary.BigEndian.Uint32(data[4:8]) {
		return e, 0, false
	}
	r := bufio.NewReader(bytes.NewReader(p))
	rev, err := binary.ReadVarint(r)
	if err != nil {
		return e, 0, false
	}
	count, err := binary.ReadUvarint(r)
	if err != nil || count > uint64(size) {
		return e, 0, false
	}
	e.Revision = rev
	readBytes := func() ([]byte, bool) {
		l, err := binary.ReadUvarint(r)
		if err != nil || l > uint64(size) {
			return nil, false
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, false
		}
		return b, true
	}
	for i := uint64(0); i < count; i++ {
		typ, err := r.ReadByte()
		if err != nil {
			return e, 0, false
		}
		key, ok1 := readBytes()
		second, ok2 := readBytes()
		if !ok1 || !ok2 {
			return e, 0, false
		}
		switch typ {
		case opPut:
			e.Ops = append(e.Ops, store.OpPut(string(key), second))
		case opDelete:
			e.Ops = append(e.Ops, store.Op{Type: store.DeleteOp, Key: string(key), End: string(second)})
		default:
			return e, 0, false
		}
	}
	return e, 8 + size, true
}
