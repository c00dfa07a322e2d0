package store

// KeyRevision is one write of a key that the store still holds: a put (KV is
// the value it wrote) or the delete that ended a life of the key (KV.Value
// is nil, KV.ModRevision is the delete's revision).
type KeyRevision struct {
	Deleted bool
	KV      KeyValue
}

// History returns every write of key the store still holds, oldest first,
// and the revision the answer is consistent with. Writes at or before the
// compacted revision are gone, except the newest put at or before it in the
// key's current life (a read at the compacted revision still needs it; see
// keyIndex). A key the store holds nothing of has an empty history.
//
// etcd answers the same question with `etcdctl get KEY --rev=N` for each N;
// the store has the whole index at hand, so it answers in one read.
func (s *Store) History(key string) ([]KeyRevision, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ki := s.index.get(key)
	if ki == nil {
		return nil, s.rev
	}
	var out []KeyRevision
	for _, g := range ki.generations {
		for _, kv := range g.revs {
			out = append(out, KeyRevision{KV: *kv})
		}
		if g.deleted != 0 {
			last := *g.revs[len(g.revs)-1]
			last.Value = nil
			last.ModRevision = g.deleted
			last.Version = 0
			out = append(out, KeyRevision{Deleted: true, KV: last})
		}
	}
	return out, s.rev
}
