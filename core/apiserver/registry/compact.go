package registry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/store"
)

// Compaction, as kube-apiserver asks etcd for it
//
// etcd keeps every revision of every key until it is told to forget them.
// kube-apiserver tells it every 5 minutes (--etcd-compaction-interval): at
// each tick it compacts to the revision it saw at the previous tick, so
// the store keeps between one and two intervals of history, and a watch
// or list from an older resourceVersion is 410 Gone; clients then list
// again (upstream: k8s.io/apiserver/pkg/storage/etcd3/compact.go).
//
// Several API servers may share one etcd, so they agree on the ticks
// through a key, compact_rev_key: a tick is a transaction "if the key's
// Version is still the one I saw last, write the revision I saw last";
// only the API server whose transaction succeeds compacts, and the others
// adopt the key's Version and try at their next tick. `etcdctl get
// compact_rev_key` shows the last compacted revision, as on a real
// cluster.
//
//	tick:        1            2              3
//	             |            |              |
//	rev seen:    r1           r2             r3
//	compacts to: (nothing)    r1             r2

// CompactRevKey is the key API servers agree on compactions through.
const CompactRevKey = "compact_rev_key"

// DefaultCompactionInterval is kube-apiserver's --etcd-compaction-interval.
const DefaultCompactionInterval = 5 * time.Minute

// Compactor compacts a store periodically, as kube-apiserver does.
type Compactor struct {
	Store    *store.Store
	Clock    clock.WithTicker // nil is the real clock
	Interval time.Duration    // zero is DefaultCompactionInterval

	version int64 // compact_rev_key's Version as last seen: the logical time
	rev     int64 // the store's revision at the last tick
}

// Run compacts every Interval until ctx is done; the first compaction
// happens two intervals after the start, as upstream's.
func (c *Compactor) Run(ctx context.Context) error {
	if c.Store == nil {
		return errors.New("compactor: Store is required")
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultCompactionInterval
	}
	t := clk.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		_ = c.Tick()
	}
}

// Tick is one compaction round: claim the tick through compact_rev_key,
// then compact to the revision of the previous tick, if there was one.
func (c *Compactor) Tick() error {
	resp, err := c.Store.Txn(store.TxnRequest{
		If:   []store.Compare{store.Version(CompactRevKey, store.Equal, c.version)},
		Then: []store.Op{store.OpPut(CompactRevKey, []byte(strconv.FormatInt(c.rev, 10)))},
		Else: []store.Op{store.OpGet(CompactRevKey)},
	})
	if err != nil {
		return err
	}
	prev := c.rev
	c.rev = resp.Revision
	if !resp.Succeeded {
		// Another API server compacted at this tick: adopt its time.
		if kvs := resp.Responses[0].Range.KVs; len(kvs) > 0 {
			c.version = kvs[0].Version
		}
		return nil
	}
	c.version++
	if prev == 0 {
		return nil // no compaction at the first tick
	}
	if err := c.Store.Compact(prev); err != nil && !errors.Is(err, store.ErrCompacted) {
		return err
	}
	return nil
}
