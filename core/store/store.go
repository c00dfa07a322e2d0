// Package store is kubetab's etcd: the single source of truth of the cluster.
//
// Upstream counterpart: etcd's mvcc package (server/storage/mvcc: kvstore.go,
// kvstore_txn.go, index.go, key_index.go, watchable_store.go), as
// kube-apiserver uses it through k8s.io/apiserver/pkg/storage/etcd3.
//
// # Revisions
//
// Every write moves one global revision forward. Each key remembers the revision
// that created it (CreateRevision), the revision of its last write (ModRevision)
// and how many times it was written since it was created (Version):
//
//	rev:      1        2        3          4
//	          put a    put b    put a      delete b
//	a:        c=1 m=1 v=1       c=1 m=3 v=2
//	b:                 c=2 m=2 v=1         (gone; the event carries rev 4)
//
// kube-apiserver uses ModRevision as an object's metadata.resourceVersion, and
// turns an update into a compare-and-swap: "write this if the key's ModRevision is
// still what I read" (a Txn; Update is the shorthand). A mismatch is
// ErrConflict, which the API server answers with 409 Conflict.
//
// # Multi-version reads, history and compaction
//
// The store keeps old revisions, not only the latest values: GetAt and ListAt
// read the keys as they were at any revision since the last compaction, and a
// watch can start from any such revision and replay what happened since.
// Both are answered from the same writes, so a list at revision R followed by
// a watch from R is a complete, gap-free picture (that is how a Kubernetes
// reflector works: list, then watch from the list's resourceVersion).
//
//	 compacted                                   current
//	     |<------------ retained revisions ---------->|
//	-----+--------------------------------------------+----> revision
//	 ErrCompacted    GetAt / ListAt / Watch work         ErrFuture
//
// Compaction forgets the revisions older than a point so memory stays
// bounded: the store compacts by itself to keep at most Config.HistoryLimit
// events and Config.HistoryBytesLimit bytes of past values, and Compact
// does it on request (kube-apiserver asks etcd every 5 minutes; kubetab's
// API server too: core/apiserver/registry's Compactor).
// A read or watch older than the compacted revision is ErrCompacted, which
// the API server answers with 410 Gone ("too old resource version").
//
// # Where things are
//
//	store.go      Store, reads (Get, GetAt, List, ListAt, Range), writes, Compact, Status
//	key_index.go  the index: a B-tree of keys, each with its generations of revisions
//	history.go    the event log that watches replay from
//	txn.go        Txn: compares, then/else operations, atomically
//	watch.go      Watcher: ordered, gap-free streams; progress notifications
//	snapshot.go   Snapshot and Restore: a versioned, checksummed dump of the keys
//
// # Errors
//
// Errors keep the package's "store:" prefix (house style: the prefix says
// which layer failed) and otherwise use etcd's words, so "store: required
// revision has been compacted" is etcd's "mvcc: required revision has been
// compacted". core/etcdctl shows them exactly as the real etcdctl does
// ("etcdserver: mvcc: ..."), as etcd's gRPC layer translates them.
//
// Values are opaque bytes (kube-apiserver stores JSON or protobuf); keys look
// like etcd's under kube-apiserver: /registry/pods/default/web-7d4b9-x2x8q.
// The store keeps the value slices it is given and hands out the same slices
// to readers: nobody may modify a value after writing it or after reading it.
package store

import (
	"errors"
	"fmt"
	"sync"
)

// Errors returned by the store. They mirror etcd's wording.
var (
	ErrNotFound       = errors.New("store: key not found")
	ErrExists         = errors.New("store: key already exists")
	ErrConflict       = errors.New("store: mod revision does not match")
	ErrCompacted      = errors.New("store: required revision has been compacted")
	ErrFuture         = errors.New("store: required revision is a future revision")
	ErrWatcherTooSlow = errors.New("store: watcher fell too far behind and was dropped")
	ErrEmptyKey       = errors.New("store: key is not provided")
	// ErrRequestTooLarge refuses a write whose keys and values together
	// exceed Config.MaxRequestBytes (etcd's "etcdserver: request is too
	// large", from its --max-request-bytes).
	ErrRequestTooLarge = errors.New("store: request is too large")
)

// KeyValue is one key at one revision.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64 // revision of the write that created the key
	ModRevision    int64 // revision of the key's last write
	Version        int64 // writes since creation, 1 for a new key
}

// EventType says what happened to a key.
type EventType int

const (
	// Put is a create or an update; PrevKV is nil for a create.
	Put EventType = iota
	// Delete removes the key; KV holds the last value with the deletion's revision.
	Delete
	// Progress is no write: it answers Watcher.RequestProgress. KV.ModRevision
	// is the store's revision when it was asked, KV.Key is empty, and the
	// watch has already delivered every matching event up to that revision.
	Progress
)

func (t EventType) String() string {
	switch t {
	case Put:
		return "PUT"
	case Delete:
		return "DELETE"
	case Progress:
		return "PROGRESS"
	}
	return "UNKNOWN"
}

// Event is one write, as a watcher sees it. Events of one Txn share its
// revision and arrive in the order of its operations.
type Event struct {
	Type   EventType
	KV     KeyValue  // for Delete: the key's last value, ModRevision = the delete's revision
	PrevKV *KeyValue // the value before this write, nil on create; shared, do not modify
}

// Revision is the revision of the event.
func (e Event) Revision() int64 { return e.KV.ModRevision }

// Config configures a Store.
type Config struct {
	// HistoryLimit is how many past events the store keeps for watches and
	// reads that start in the past. Older revisions are compacted. Zero means
	// 100,000.
	HistoryLimit int
	// HistoryBytesLimit bounds the bytes of the past values the store keeps
	// (Status.Size - Status.SizeInUse: the keys and values of revisions a
	// later write or a delete superseded). Past it, the oldest revisions are
	// compacted, so a few large objects updated often cannot hold the
	// memory of every version they had. etcd has no such bound (its
	// database grows to --quota-backend-bytes, then refuses writes);
	// kube-apiserver's compaction every 5 minutes keeps it small there.
	// Zero means 64 MiB; negative means no bound.
	HistoryBytesLimit int64
	// WatcherQueueLimit is how many undelivered events a watcher may hold before
	// it is dropped with ErrWatcherTooSlow, so a slow reader never blocks writers.
	// Zero means 100,000.
	WatcherQueueLimit int
	// WatcherQueueBytesLimit is the same bound in bytes (the keys and values
	// of the undelivered events), so a reader that stops reading cannot hold
	// the values of every write after it in memory. Zero means 16 MiB;
	// negative means no bound.
	WatcherQueueBytesLimit int64
	// MaxRequestBytes bounds one write (a Create, an Update or a Txn): the
	// bytes of its keys and values together. Larger is ErrRequestTooLarge
	// and writes nothing. Zero means 1.5 MiB, etcd's default
	// --max-request-bytes, which is why Kubernetes objects stay under about
	// 1.5 MB; negative means no limit.
	MaxRequestBytes int
	// Log, when set, receives every write before the store applies it, and
	// a write it fails is refused (nothing changes): a write-ahead log
	// (core/store/wal) that syncs to disk before it returns makes every
	// acknowledged write durable, as etcd's WAL does. nil keeps the store in
	// memory only.
	Log Log
}

// Log is a write-ahead log: Append must make e durable before it returns.
// It is called with the store locked, in revision order.
type Log interface {
	Append(e Entry) error
}

// Entry is one logged write: the puts and deletes of one revision, as
// Replay applies them again.
type Entry struct {
	Revision int64
	Ops      []Op // PutOp and DeleteOp only
}

// DefaultHistoryBytesLimit is Config.HistoryBytesLimit's default.
const DefaultHistoryBytesLimit = 64 << 20

// DefaultMaxRequestBytes is etcd's default --max-request-bytes.
const DefaultMaxRequestBytes = 1536 * 1024

// Store is an in-memory, multi-version key/value store with transactions and
// watches. All its methods are safe for concurrent use.
type Store struct {
	cfg Config

	// mu guards everything below. Lock order: Store.mu, then Watcher.mu.
	mu        sync.RWMutex
	rev       int64
	compacted int64     // reads and watches need a revision >= this
	index     treeIndex // every key with its retained revisions
	history   eventLog  // events with revision in (compacted, rev], oldest first
	watchers  map[*Watcher]struct{}
	sizes     sizes
	// observe sees each event as it is published (SetObserver).
	observe func(Event)
	// replaying is set while Replay applies a logged write (not logged again).
	replaying bool
}

// sizes are the running totals behind Status.
type sizes struct {
	keys      int   // live keys
	liveBytes int64 // their keys and values
	revs      int   // put revisions held in the index, live or not
	revBytes  int64 // their keys and values
}

// New returns an empty store at revision 1 (etcd starts there too).
func New(cfg Config) *Store {
	if cfg.HistoryLimit <= 0 {
		cfg.HistoryLimit = 100_000
	}
	if cfg.WatcherQueueLimit <= 0 {
		cfg.WatcherQueueLimit = 100_000
	}
	if cfg.WatcherQueueBytesLimit == 0 {
		cfg.WatcherQueueBytesLimit = 16 << 20
	}
	if cfg.HistoryBytesLimit == 0 {
		cfg.HistoryBytesLimit = DefaultHistoryBytesLimit
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	return &Store{
		cfg:       cfg,
		rev:       1,
		compacted: 1,
		index:     newTreeIndex(),
		watchers:  map[*Watcher]struct{}{},
	}
}

// Revision is the store's current revision.
func (s *Store) Revision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rev
}

// CompactedRevision is the oldest revision that can still be read; events up
// to and including it are no longer in the history, so a watch can start
// after it but not before.
func (s *Store) CompactedRevision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compacted
}

// readRev checks a requested read revision: 0 (or less) means the current
// one. Called with s.mu held.
func (s *Store) readRev(rev int64) (int64, error) {
	switch {
	case rev <= 0:
		return s.rev, nil
	case rev < s.compacted:
		return 0, ErrCompacted
	case rev > s.rev:
		return 0, ErrFuture
	}
	return rev, nil
}

// Get returns the current value of key, or ErrNotFound.
func (s *Store) Get(key string) (KeyValue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ki := s.index.get(key); ki != nil {
		if kv := ki.current(); kv != nil {
			return *kv, nil
		}
	}
	return KeyValue{}, ErrNotFound
}

// GetAt returns key as it was at revision rev (0 means now): ErrNotFound if
// it did not exist then, ErrCompacted if rev is older than the compacted
// revision, ErrFuture if rev is newer than the current one.
func (s *Store) GetAt(key string, rev int64) (KeyValue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	at, err := s.readRev(rev)
	if err != nil {
		return KeyValue{}, err
	}
	if ki := s.index.get(key); ki != nil {
		if kv := ki.at(at); kv != nil {
			return *kv, nil
		}
	}
	return KeyValue{}, ErrNotFound
}

// List returns every key that starts with prefix, sorted by key, and the
// revision the answer is consistent with (the current one).
func (s *Store) List(prefix string) ([]KeyValue, int64) {
	kvs, rev, _ := s.Range(prefix, PrefixEnd(prefix), 0)
	return kvs, rev
}

// ListAt returns every key that starts with prefix as they were at revision
// rev (0 means now), sorted by key, and that revision. It has the errors of
// GetAt. A watch from the same revision continues exactly where the list
// ends.
func (s *Store) ListAt(prefix string, rev int64) ([]KeyValue, int64, error) {
	return s.Range(prefix, PrefixEnd(prefix), rev)
}

// Range returns the keys in the range [key, end) as they were at revision
// rev (0 means now), sorted by key, and that revision. As in etcd, an empty
// end means the single key `key`, and end "\x00" means every key >= key;
// PrefixEnd(p) makes the range of the keys that start with p. It has the
// errors of GetAt, except that a range with no keys is not an error.
func (s *Store) Range(key, end string, rev int64) ([]KeyValue, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	at, err := s.readRev(rev)
	if err != nil {
		return nil, 0, err
	}
	return s.rangeAt(key, end, at, at == s.rev), at, nil
}

// rangeAt reads [key, end) at revision at, which readRev has checked.
// latest says that at is the newest revision written, so each key's current
// value is the answer (a cheaper lookup than a search by revision).
func (s *Store) rangeAt(key, end string, at int64, latest bool) []KeyValue {
	// Count first, so the answer is allocated once at its size: for
	// thousands of keys that is cheaper than growing a slice of them.
	n := 0
	s.index.visit(key, end, func(*keyIndex) bool { n++; return true })
	out := make([]KeyValue, 0, n)
	s.index.visit(key, end, func(ki *keyIndex) bool {
		var kv *KeyValue
		if latest {
			kv = ki.current()
		} else {
			kv = ki.at(at)
		}
		if kv != nil {
			out = append(out, *kv)
		}
		return true
	})
	return out
}

// Count returns how many keys start with prefix.
func (s *Store) Count(prefix string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	s.index.visit(prefix, PrefixEnd(prefix), func(ki *keyIndex) bool {
		if ki.current() != nil {
			n++
		}
		return true
	})
	return n
}

// Create writes key only if it does not exist. It is the Txn
// If(CreateRevision(key) = 0) Then(Put), which is how kube-apiserver creates
// objects. It returns the new KeyValue or ErrExists.
func (s *Store) Create(key string, value []byte) (KeyValue, error) {
	if key == "" {
		return KeyValue{}, ErrEmptyKey
	}
	if s.tooLarge(len(key) + len(value)) {
		return KeyValue{}, ErrRequestTooLarge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ki := s.index.get(key)
	if ki != nil && ki.current() != nil {
		return KeyValue{}, ErrExists
	}
	if err := s.log(OpPut(key, value)); err != nil {
		return KeyValue{}, err
	}
	kv := s.put(ki, key, value, s.rev+1)
	s.commit(s.rev + 1)
	return *kv, nil
}

// Update overwrites an existing key. If expectModRevision is not zero, the
// write happens only if the key's ModRevision still equals it (the Txn
// If(ModRevision(key) = expect) Then(Put)); otherwise it is ErrConflict and
// the key's current value is returned with it. A missing key is ErrNotFound.
func (s *Store) Update(key string, value []byte, expectModRevision int64) (KeyValue, error) {
	if key == "" {
		return KeyValue{}, ErrEmptyKey
	}
	if s.tooLarge(len(key) + len(value)) {
		return KeyValue{}, ErrRequestTooLarge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ki := s.index.get(key)
	var old *KeyValue
	if ki != nil {
		old = ki.current()
	}
	if old == nil {
		return KeyValue{}, ErrNotFound
	}
	if expectModRevision != 0 && old.ModRevision != expectModRevision {
		return *old, ErrConflict
	}
	if err := s.log(OpPut(key, value)); err != nil {
		return KeyValue{}, err
	}
	kv := s.put(ki, key, value, s.rev+1)
	s.commit(s.rev + 1)
	return *kv, nil
}

// log hands the writes of the next revision to Config.Log, if any, before
// they are applied. Called with s.mu held for writing.
func (s *Store) log(ops ...Op) error {
	if s.cfg.Log == nil || s.replaying {
		return nil
	}
	if err := s.cfg.Log.Append(Entry{Revision: s.rev + 1, Ops: ops}); err != nil {
		return fmt.Errorf("store: write-ahead log: %w", err)
	}
	return nil
}

// SetLog makes l the store's write-ahead log from now on (after a replay).
func (s *Store) SetLog(l Log) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Log = l
}

// Replay applies a logged write again, without logging it: the puts and
// deletes of e at the next revision, as when they were first written.
// Entries must be replayed in order onto the state they were written on
// (a snapshot at or before the first, then every later entry).
func (s *Store) Replay(e Entry) error {
	if e.Revision <= s.Revision() {
		return nil // already in the snapshot
	}
	s.mu.Lock()
	s.replaying = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.replaying = false
		s.mu.Unlock()
	}()
	if _, err := s.Txn(TxnRequest{Then: e.Ops}); err != nil {
		return err
	}
	if got := s.Revision(); got != e.Revision {
		return fmt.Errorf("store: replay of revision %d left the store at %d", e.Revision, got)
	}
	return nil
}

// tooLarge says whether a write of n bytes of keys and values is over
// Config.MaxRequestBytes. cfg does not change after New, so no lock.
func (s *Store) tooLarge(n int) bool {
	return s.cfg.MaxRequestBytes > 0 && n > s.cfg.MaxRequestBytes
}

// Delete removes key. If expectModRevision is not zero, only if the key's
// ModRevision still equals it (otherwise ErrConflict, with the current
// value). It returns the deleted value with ModRevision set to the
// deletion's revision.
func (s *Store) Delete(key string, expectModRevision int64) (KeyValue, error) {
	if key == "" {
		return KeyValue{}, ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ki := s.index.get(key)
	var old *KeyValue
	if ki != nil {
		old = ki.current()
	}
	if old == nil {
		return KeyValue{}, ErrNotFound
	}
	if expectModRevision != 0 && old.ModRevision != expectModRevision {
		return *old, ErrConflict
	}
	if err := s.log(OpDelete(key)); err != nil {
		return KeyValue{}, err
	}
	gone := s.delete(ki, s.rev+1)
	s.commit(s.rev + 1)
	return gone, nil
}

// put writes key at revision rev and publishes the event; ki is the key's
// index or nil for a key never seen (or fully compacted). The caller commits
// rev. Called with s.mu held for writing.
func (s *Store) put(ki *keyIndex, key string, value []byte, rev int64) *KeyValue {
	if ki == nil {
		ki = &keyIndex{key: key}
		s.index.insert(ki)
	}
	prev := ki.current()
	kv := ki.put(value, rev)
	if prev == nil {
		s.sizes.keys++
	} else {
		s.sizes.liveBytes -= kvSize(prev)
	}
	s.sizes.liveBytes += kvSize(kv)
	s.sizes.revs++
	s.sizes.revBytes += kvSize(kv)
	s.publish(Event{Type: Put, KV: *kv, PrevKV: prev})
	return kv
}

// delete removes the live key of ki at revision rev, publishes the event and
// returns the deleted value with the delete's revision. The caller commits
// rev. Called with s.mu held for writing.
func (s *Store) delete(ki *keyIndex, rev int64) KeyValue {
	prev := ki.current()
	ki.tombstone(rev)
	s.sizes.keys--
	s.sizes.liveBytes -= kvSize(prev)
	gone := *prev
	gone.ModRevision = rev
	s.publish(Event{Type: Delete, KV: gone, PrevKV: prev})
	return gone
}

// SetObserver makes f see every event from now on, in revision order, as
// it is written and before any watcher can receive it: what core/trace
// needs to show "written to etcd" ahead of "seen by a controller". f runs
// with the store locked, so it must be quick and must not call the store;
// nil removes it.
func (s *Store) SetObserver(f func(Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = f
}

// publish records ev in the history and queues it for every matching watcher.
// Called with s.mu held for writing.
func (s *Store) publish(ev Event) {
	s.history.append(ev)
	if s.observe != nil {
		s.observe(ev)
	}
	for w := range s.watchers {
		if inRange(ev.KV.Key, w.key, w.end) {
			if !w.enqueue(ev, s.cfg) {
				delete(s.watchers, w)
			}
		}
	}
}

// commit makes rev the current revision once its writes are in, then
// compacts if the history has grown past its limits: HistoryLimit events
// (cut in one step) and HistoryBytesLimit bytes of superseded values (cut
// one oldest revision at a time, each freeing the value its write
// superseded). Called with s.mu held for writing.
func (s *Store) commit(rev int64) {
	s.rev = rev
	if over := s.history.len() - s.cfg.HistoryLimit; over > 0 {
		s.compact(s.history.at(over - 1).Revision())
	}
	if s.cfg.HistoryBytesLimit < 0 {
		return
	}
	for s.history.len() > 0 && s.sizes.revBytes-s.sizes.liveBytes > s.cfg.HistoryBytesLimit {
		s.compact(s.history.at(0).Revision())
	}
}

// Compact forgets the revisions older than rev: afterwards GetAt, ListAt
// and Range at an older revision, and watches from one, fail with
// ErrCompacted. Compacting at or below the compacted revision is
// ErrCompacted, beyond the current revision ErrFuture (etcd's rules).
func (s *Store) Compact(rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > s.rev {
		return ErrFuture
	}
	if rev <= s.compacted {
		return ErrCompacted
	}
	s.compact(rev)
	return nil
}

// compact drops the events up to and including rev from the history and
// compacts the index of every key they touched: a key revision that is no
// longer needed was superseded by a later write at or before rev, whose
// event is among those dropped now or was dropped by an earlier compaction.
// Called with s.mu held for writing.
func (s *Store) compact(rev int64) {
	s.history.dropThrough(rev, func(ev Event) {
		ki := s.index.get(ev.KV.Key)
		if ki == nil {
			return // already compacted away by an earlier event of this batch
		}
		n, b := ki.compact(rev)
		s.sizes.revs -= n
		s.sizes.revBytes -= b
		if len(ki.generations) == 0 {
			s.index.remove(ki.key)
		}
	})
	s.compacted = rev
}

// Status is a summary of the store, for `etcdctl endpoint status`.
type Status struct {
	Revision        int64 // the current revision
	CompactRevision int64 // the oldest readable revision
	Keys            int   // keys that exist now
	Revisions       int   // key revisions held, current and past (puts; deletes hold no value)
	Events          int   // events in the watch history
	Watchers        int   // open watches
	// Size is the bytes of keys and values of every revision held: what
	// etcd calls the database size. SizeInUse counts the current keys only;
	// compaction brings Size down towards it.
	Size, SizeInUse int64
}

// Status returns a summary of the store.
func (s *Store) Status() Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Status{
		Revision:        s.rev,
		CompactRevision: s.compacted,
		Keys:            s.sizes.keys,
		Revisions:       s.sizes.revs,
		Events:          s.history.len(),
		Watchers:        len(s.watchers),
		Size:            s.sizes.revBytes,
		SizeInUse:       s.sizes.liveBytes,
	}
}
