package cri

import (
	"fmt"
	"sync/atomic"
)

// This file counts guest memory: every running instance's linear memory is
// charged, page by page, to its container, its node and (in a tab) the
// host, the way the kernel charges a process's pages to its cgroup and to
// the machine.
//
//	guest memory.grow(+n pages)
//	   │ kubetab.memory_grow (guest.go)
//	   ▼
//	container  the container's processes together (cgroup memory.current)
//	   │        above resources.limits.memory: the grower is OOMKilled (137)
//	   ▼
//	node       every container of the node (the machine's RAM)
//	   │        above the node's memory: OOMKilled as by the kernel's OOM killer
//	   ▼
//	host       every node of the process (a browser tab's one wasm heap)
//	            above the host's budget: OOMKilled too
//
// A charge that would go over any of them is refused before the memory is
// grown, so a guest can never hold more than its node has, and the guests
// of a tab never more than the tab can hold. Pages are given back when an
// instance ends. Upstream the kernel's OOM killer picks the process with
// the highest oom_score (the kubelet sets oom_score_adj by QoS class: 1000
// for BestEffort, -997 for Guaranteed); here the process that asked for the
// page that does not fit is the one that ends. The kubelet's eviction
// manager (core/kubelet/eviction.go) works above this: it reads the
// containers' working sets and evicts a pod before its node is full.

// MemoryPool is memory that guests share, counted in 64 KiB pages: a node's
// memory, or the host's (every node of a process). Its methods are safe for
// concurrent use.
type MemoryPool struct {
	name  string
	limit int64 // pages; 0: no limit
	used  atomic.Int64
}

// NewMemoryPool returns a pool of bytes (rounded down to whole 64 KiB
// pages); name says whose memory it is in OOM messages ("node node-1",
// "the host"). bytes <= 0 means no limit: pages are counted, never refused.
func NewMemoryPool(name string, bytes int64) *MemoryPool {
	p := &MemoryPool{name: name}
	if bytes > 0 {
		p.limit = bytes / wasmPageSize
	}
	return p
}

// LimitBytes is the pool's size in bytes; 0 for no limit.
func (p *MemoryPool) LimitBytes() int64 { return p.limit * wasmPageSize }

// UsedBytes is the memory charged to the pool now, in bytes.
func (p *MemoryPool) UsedBytes() int64 { return p.used.Load() * wasmPageSize }

// charge adds n pages if they fit and reports whether they did.
func (p *MemoryPool) charge(n int64) bool {
	for {
		cur := p.used.Load()
		if p.limit != 0 && cur+n > p.limit {
			return false
		}
		if p.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (p *MemoryPool) release(n int64) { p.used.Add(-n) }

// memCharge is the chain one guest charges: its container's pages (limited
// by the container's memory limit), then each pool. The zero value charges
// nothing.
type memCharge struct {
	container  *atomic.Int64 // the container's pages
	limitPages uint32        // the container's limit; 0 for none
	pools      []*MemoryPool // node, then host; nil entries are skipped
}

// charge adds n pages to every level, or to none; on failure it returns
// the message of the OOM kill: which level was full.
func (m memCharge) charge(n, cur int64) (ok bool, msg string) {
	if m.container != nil {
		if next := m.container.Add(n); m.limitPages != 0 && next > int64(m.limitPages) {
			m.container.Add(-n)
			return false, fmt.Sprintf("memory limit %d bytes reached: the guest asked to grow its memory from %d to %d bytes",
				int64(m.limitPages)*wasmPageSize, cur*wasmPageSize, (cur+n)*wasmPageSize)
		}
	}
	for i, p := range m.pools {
		if p == nil {
			continue
		}
		if !p.charge(n) {
			for _, q := range m.pools[:i] {
				if q != nil {
					q.release(n)
				}
			}
			if m.container != nil {
				m.container.Add(-n)
			}
			return false, fmt.Sprintf("out of memory: %s has %d bytes and %d are in use: the guest asked to grow its memory from %d to %d bytes",
				p.name, p.LimitBytes(), p.UsedBytes(), cur*wasmPageSize, (cur+n)*wasmPageSize)
		}
	}
	return true, ""
}

// release gives n pages back to every level.
func (m memCharge) release(n int64) {
	if m.container != nil {
		m.container.Add(-n)
	}
	for _, p := range m.pools {
		if p != nil {
			p.release(n)
		}
	}
}
