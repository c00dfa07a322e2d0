// Package store is kubetab's etcd: the single source of truth of the cluster.
//
// Upstream counterpart: etcd's mvcc package (server/storage/mvcc: kvstore.go,
// watchable_store.go, key_index.go), as kube-apiserver uses it through
// k8s.io/apiserver/pkg/storage/etcd3.
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
// still what I read". A mismatch is ErrConflict, which the API server answers
// with 409 Conflict. Watches are streams of Events in revision order; a watch can
// start from any revision the store still keeps in its history, and asking for
// an older one is ErrCompacted (410 Gone at the API).
//
// Values are opaque bytes (kube-apiserver stores JSON or protobuf); keys look
// like etcd's under kube-apiserver: /registry/pods/default/web-7d4b9-x2x8q.
package store

import (
	"errors"
	"sort"
	"strings"
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
)

func (t EventType) String() string {
	if t == Delete {
		return "DELETE"
	}
	return "PUT"
}

// Event is one write, as a watcher sees it.
type Event struct {
	Type   EventType
	KV     KeyValue  // for Delete: the key's last value, ModRevision = the delete's revision
	PrevKV *KeyValue // the value before this write, nil on create
}

// Revision is the revision of the event.
func (e Event) Revision() int64 { return e.KV.ModRevision }

// Config configures a Store.
type Config struct {
	// HistoryLimit is how many past events the store keeps for watches that start
	// in the past. Older revisions are compacted. Zero means 100,000.
	HistoryLimit int
	// WatcherQueueLimit is how many undelivered events a watcher may hold before
	// it is dropped with ErrWatcherTooSlow, so a slow reader never blocks writers.
	// Zero means 100,000.
	WatcherQueueLimit int
}

// Store is an in-memory, revisioned key/value store with watches.
type Store struct {
	cfg Config

	// mu guards everything below. Lock order: Store.mu, then watcher.mu.
	mu        sync.RWMutex
	rev       int64
	keys      map[string]*KeyValue
	history   []Event // events with revision in (compacted, rev], oldest first
	compacted int64   // the highest revision no longer in history
	watchers  map[*Watcher]struct{}
}

// New returns an empty store at revision 1 (etcd starts there too).
func New(cfg Config) *Store {
	if cfg.HistoryLimit <= 0 {
		cfg.HistoryLimit = 100_000
	}
	if cfg.WatcherQueueLimit <= 0 {
		cfg.WatcherQueueLimit = 100_000
	}
	return &Store{
		cfg:       cfg,
		rev:       1,
		compacted: 1,
		keys:      map[string]*KeyValue{},
		watchers:  map[*Watcher]struct{}{},
	}
}

// Revision is the store's current revision.
func (s *Store) Revision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rev
}

// Get returns the current value of key, or ErrNotFound.
func (s *Store) Get(key string) (KeyValue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	kv, ok := s.keys[key]
	if !ok {
		return KeyValue{}, ErrNotFound
	}
	return *kv, nil
}

// List returns every key that starts with prefix, sorted by key, and the
// revision the answer is consistent with.
func (s *Store) List(prefix string) ([]KeyValue, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]KeyValue, 0, 16)
	for k, kv := range s.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, *kv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, s.rev
}

// Count returns how many keys start with prefix.
func (s *Store) Count(prefix string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for k := range s.keys {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// Create writes key only if it does not exist (etcd: a txn comparing
// CreateRevision to 0). It returns the new KeyValue or ErrExists.
func (s *Store) Create(key string, value []byte) (KeyValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[key]; ok {
		return KeyValue{}, ErrExists
	}
	s.rev++
	kv := &KeyValue{Key: key, Value: value, CreateRevision: s.rev, ModRevision: s.rev, Version: 1}
	s.keys[key] = kv
	s.publish(Event{Type: Put, KV: *kv})
	return *kv, nil
}

// Update overwrites an existing key. If expectModRevision is not zero, the write
// happens only if the key's ModRevision still equals it; otherwise ErrConflict.
func (s *Store) Update(key string, value []byte, expectModRevision int64) (KeyValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.keys[key]
	if !ok {
		return KeyValue{}, ErrNotFound
	}
	if expectModRevision != 0 && old.ModRevision != expectModRevision {
		return *old, ErrConflict
	}
	s.rev++
	prev := *old
	kv := &KeyValue{Key: key, Value: value, CreateRevision: old.CreateRevision, ModRevision: s.rev, Version: old.Version + 1}
	s.keys[key] = kv
	s.publish(Event{Type: Put, KV: *kv, PrevKV: &prev})
	return *kv, nil
}

// Delete removes key. If expectModRevision is not zero, only if the key's
// ModRevision still equals it. It returns the deleted value with ModRevision
// set to the deletion's revision.
func (s *Store) Delete(key string, expectModRevision int64) (KeyValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.keys[key]
	if !ok {
		return KeyValue{}, ErrNotFound
	}
	if expectModRevision != 0 && old.ModRevision != expectModRevision {
		return *old, ErrConflict
	}
	s.rev++
	delete(s.keys, key)
	prev := *old
	gone := prev
	gone.ModRevision = s.rev
	s.publish(Event{Type: Delete, KV: gone, PrevKV: &prev})
	return gone, nil
}

// publish records ev in the history and queues it for every matching watcher.
// Called with s.mu held for writing.
func (s *Store) publish(ev Event) {
	s.history = append(s.history, ev)
	if over := len(s.history) - s.cfg.HistoryLimit; over > 0 {
		s.compacted = s.history[over-1].Revision()
		// Copy so the dropped events can be collected.
		s.history = append([]Event(nil), s.history[over:]...)
	}
	for w := range s.watchers {
		if strings.HasPrefix(ev.KV.Key, w.prefix) {
			if !w.enqueue(ev, s.cfg.WatcherQueueLimit) {
				delete(s.watchers, w)
			}
		}
	}
}

// Compact drops the history up to and including rev; watches from an older
// revision then fail with ErrCompacted.
func (s *Store) Compact(rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > s.rev {
		return ErrFuture
	}
	if rev <= s.compacted {
		return ErrCompacted
	}
	i := sort.Search(len(s.history), func(i int) bool { return s.history[i].Revision() > rev })
	s.history = append([]Event(nil), s.history[i:]...)
	s.compacted = rev
	return nil
}

// CompactedRevision is the newest revision that is no longer in the history.
func (s *Store) CompactedRevision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compacted
}
