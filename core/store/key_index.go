package store

import (
	"sort"

	"github.com/google/btree"
)

// keyIndex is the life story of one key: every revision of it the store still
// keeps, grouped into generations (upstream: server/storage/mvcc/key_index.go).
//
// A generation is one life of the key: it starts with the put that created
// the key and ends with the delete that removed it. Putting the key again
// after a delete starts a new generation, with a new CreateRevision and
// Version 1. For example put(2) put(4) delete(6) put(8) on key "a":
//
//	key:  "a"
//	generations (oldest first):
//	    {2, 4 | deleted 6}     CreateRevision 2, versions 1 and 2
//	    {8}                    CreateRevision 8, version 1, alive
//
// Reading "a" at a revision R finds the newest generation that started at or
// before R; if that generation was deleted at or before R the key did not
// exist at R, otherwise its value at R is the newest put at or before R:
//
//	at 3: {2} -> the put of 2     at 5: {2, 4} -> the put of 4
//	at 7: deleted at 6 -> none    at 9: {8} -> the put of 8
//
// Compaction at revision C keeps exactly what reads at C or later need: in
// each generation, the newest put at or before C and everything after it; a
// generation deleted at or before C is dropped whole; a key left with no
// generations leaves the index.
//
//	compact(4): {4 | deleted 6} {8}    (2 is no longer readable)
//	compact(6): {8}                    (at 6 and later, the first life is over)
//	compact(9): {8}                    (8 is the newest put at or before 9)
//
// etcd keeps only revision numbers here and reads the values from its bbolt
// backend, where they are stored by revision; an in-memory store can keep a
// pointer to each value right in the index, which is what revs holds. A
// stored KeyValue is never modified, so readers and the history may share it.
// etcd also ends each generation with a tombstone revision and an empty
// generation; here the deleted field says the same.
type keyIndex struct {
	key         string
	generations []generation
}

// generation is one life of a key. revs is never empty.
type generation struct {
	revs    []*KeyValue // the puts, oldest first (ModRevision ascending)
	deleted int64       // revision of the delete that ended this life, 0 while alive
}

// current is the key's live value, or nil if its last generation was deleted.
func (ki *keyIndex) current() *KeyValue {
	if len(ki.generations) == 0 {
		return nil // a new keyIndex, before its first put
	}
	g := &ki.generations[len(ki.generations)-1]
	if g.deleted != 0 {
		return nil
	}
	return g.revs[len(g.revs)-1]
}

// at is the key's value at revision rev, or nil if it did not exist then.
// rev must not be older than the last compaction.
func (ki *keyIndex) at(rev int64) *KeyValue {
	for i := len(ki.generations) - 1; i >= 0; i-- {
		g := &ki.generations[i]
		if g.revs[0].ModRevision > rev {
			continue // this life started after rev
		}
		if g.deleted != 0 && g.deleted <= rev {
			return nil
		}
		j := sort.Search(len(g.revs), func(j int) bool { return g.revs[j].ModRevision > rev })
		return g.revs[j-1]
	}
	return nil
}

// put appends a new revision of the key and returns it. A put after a
// delete starts a new generation.
func (ki *keyIndex) put(value []byte, rev int64) *KeyValue {
	kv := &KeyValue{Key: ki.key, Value: value, CreateRevision: rev, ModRevision: rev, Version: 1}
	if n := len(ki.generations); n > 0 && ki.generations[n-1].deleted == 0 {
		g := &ki.generations[n-1]
		last := g.revs[len(g.revs)-1]
		kv.CreateRevision = last.CreateRevision
		kv.Version = last.Version + 1
		g.revs = append(g.revs, kv)
		return kv
	}
	ki.generations = append(ki.generations, generation{revs: []*KeyValue{kv}})
	return kv
}

// tombstone ends the current generation at rev. The key must be alive.
func (ki *keyIndex) tombstone(rev int64) {
	ki.generations[len(ki.generations)-1].deleted = rev
}

// compact drops what no read at revision c or later needs (see the type's
// comment) and reports how many put revisions and how many bytes of keys and
// values it let go. An empty generations slice afterwards means the key can
// leave the index.
func (ki *keyIndex) compact(c int64) (revs int, bytes int64) {
	drop := func(kvs []*KeyValue) {
		for i, kv := range kvs {
			revs++
			bytes += kvSize(kv)
			kvs[i] = nil // let the value go even while the array lives on
		}
	}
	i := 0
	for i < len(ki.generations) && ki.generations[i].deleted != 0 && ki.generations[i].deleted <= c {
		drop(ki.generations[i].revs)
		i++
	}
	if i > 0 {
		clear(ki.generations[:i])
		ki.generations = ki.generations[i:]
	}
	if len(ki.generations) == 0 {
		return revs, bytes
	}
	g := &ki.generations[0]
	// The newest put at or before c stays; the ones before it go.
	j := sort.Search(len(g.revs), func(j int) bool { return g.revs[j].ModRevision > c })
	if j > 1 {
		drop(g.revs[:j-1])
		// Re-slicing keeps the array; the next append that outgrows it copies
		// only the kept part, so a hot key does not pay a copy per compaction.
		g.revs = g.revs[j-1:]
	}
	return revs, bytes
}

// kvSize is what one stored revision counts for in Status sizes.
func kvSize(kv *KeyValue) int64 { return int64(len(kv.Key) + len(kv.Value)) }

// treeIndex orders the keyIndexes by key in a B-tree, so a range or a prefix
// is a walk over just the keys in it, in order, in O(log n + k). It is
// etcd's treeIndex (server/storage/mvcc/index.go), which uses the same
// github.com/google/btree. Beside the tree, a hash map answers single-key
// lookups (Get, and every write's "does it exist?") in O(1): the tree is only
// needed for ranges, and a create pays one tree insert instead of a tree
// lookup and an insert. etcd has no such map; its index lives in memory next
// to a disk, where a tree walk is the cheap part.
type treeIndex struct {
	tree *btree.BTreeG[indexEntry]
	keys map[string]*keyIndex
}

// indexEntry is one key in the tree. The tree holds values, not pointers,
// so a range builds its pivots without allocating.
type indexEntry struct {
	key string
	ki  *keyIndex
}

// btreeDegree is etcd's choice too: wide nodes, few levels.
const btreeDegree = 32

func newTreeIndex() treeIndex {
	return treeIndex{
		tree: btree.NewG(btreeDegree, func(a, b indexEntry) bool { return a.key < b.key }),
		keys: map[string]*keyIndex{},
	}
}

func (t treeIndex) get(key string) *keyIndex { return t.keys[key] }

func (t treeIndex) insert(ki *keyIndex) {
	t.tree.ReplaceOrInsert(indexEntry{key: ki.key, ki: ki})
	t.keys[ki.key] = ki
}

func (t treeIndex) remove(key string) {
	t.tree.Delete(indexEntry{key: key})
	delete(t.keys, key)
}

func (t treeIndex) len() int { return len(t.keys) }

// visit calls fn for every key in the range [key, end) in key order, until fn
// returns false. end follows etcd's conventions: "" means the single key,
// "\x00" means every key >= key.
func (t treeIndex) visit(key, end string, fn func(*keyIndex) bool) {
	switch end {
	case "":
		if ki := t.get(key); ki != nil {
			fn(ki)
		}
	case "\x00":
		t.tree.AscendGreaterOrEqual(indexEntry{key: key}, func(e indexEntry) bool { return fn(e.ki) })
	default:
		if key >= end {
			return
		}
		t.tree.AscendRange(indexEntry{key: key}, indexEntry{key: end}, func(e indexEntry) bool { return fn(e.ki) })
	}
}

// PrefixEnd is the end of the range that holds exactly the keys starting
// with prefix: the prefix with its last byte incremented, dropping trailing
// 0xff bytes (etcd clientv3's GetPrefixRangeEnd). The prefix "" and
// prefixes made only of 0xff bytes have no such end; for them it returns
// "\x00", which as a range end means "every key from here on".
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// inRange reports whether k is in [key, end) with etcd's conventions for end.
func inRange(k, key, end string) bool {
	switch end {
	case "":
		return k == key
	case "\x00":
		return k >= key
	}
	return k >= key && k < end
}
