package scheduler

import (
	"container/heap"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// podHeap is a priority queue of pods with lookup by key (upstream:
// pkg/scheduler/backend/heap). less decides the order.
type podHeap struct {
	items []*framework.QueuedPodInfo
	index map[string]int // key -> position in items
	less  func(a, b *framework.QueuedPodInfo) bool
}

func newPodHeap(less func(a, b *framework.QueuedPodInfo) bool) *podHeap {
	return &podHeap{index: map[string]int{}, less: less}
}

// heap.Interface, on an unexported view so callers use the methods below.
type podHeapImpl podHeap

func (h *podHeapImpl) Len() int           { return len(h.items) }
func (h *podHeapImpl) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeapImpl) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[podKey(h.items[i].Pod)] = i
	h.index[podKey(h.items[j].Pod)] = j
}
func (h *podHeapImpl) Push(x any) {
	p := x.(*framework.QueuedPodInfo)
	h.index[podKey(p.Pod)] = len(h.items)
	h.items = append(h.items, p)
}
func (h *podHeapImpl) Pop() any {
	n := len(h.items) - 1
	p := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, podKey(p.Pod))
	return p
}

// AddOrUpdate inserts p, or replaces the entry with the same key.
func (h *podHeap) AddOrUpdate(p *framework.QueuedPodInfo) {
	if i, ok := h.index[podKey(p.Pod)]; ok {
		h.items[i] = p
		heap.Fix((*podHeapImpl)(h), i)
		return
	}
	heap.Push((*podHeapImpl)(h), p)
}

// Get returns the entry with key.
func (h *podHeap) Get(key string) (*framework.QueuedPodInfo, bool) {
	if i, ok := h.index[key]; ok {
		return h.items[i], true
	}
	return nil, false
}

// Has reports whether key is in the heap.
func (h *podHeap) Has(key string) bool {
	_, ok := h.index[key]
	return ok
}

// Delete removes key; false if it was not there.
func (h *podHeap) Delete(key string) bool {
	i, ok := h.index[key]
	if !ok {
		return false
	}
	heap.Remove((*podHeapImpl)(h), i)
	return true
}

// Peek returns the first entry, or nil.
func (h *podHeap) Peek() *framework.QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

// Pop removes and returns the first entry, or nil.
func (h *podHeap) Pop() *framework.QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop((*podHeapImpl)(h)).(*framework.QueuedPodInfo)
}

// Len is the number of entries.
func (h *podHeap) Len() int { return len(h.items) }

// List returns the entries in heap order (not sorted).
func (h *podHeap) List() []*framework.QueuedPodInfo {
	return append([]*framework.QueuedPodInfo(nil), h.items...)
}
