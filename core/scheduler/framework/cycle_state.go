package framework

import (
	"errors"

	"k8s.io/apimachinery/pkg/util/sets"
)

// ErrNotFound is returned by CycleState.Read for a key nobody wrote.
var ErrNotFound = errors.New("framework: not found")

// StateData is what a plugin stores in the CycleState.
type StateData interface {
	// Clone copies the data (preemption clones the state to try "what if").
	Clone() StateData
}

// StateKey names a piece of CycleState; plugins use their own name in it
// ("PreFilterNodeResourcesFit") so they never collide.
type StateKey string

// CycleState is the scratch space of one scheduling attempt: a PreFilter
// plugin writes what it computed once (the pod's requests), and Filter reads
// it for every node (upstream: pkg/scheduler/framework/cycle_state.go).
//
// Upstream uses a sync.Map because its filters run in parallel goroutines;
// here one attempt runs on one goroutine at a time (the scheduling cycle,
// then the binding cycle), so no lock is needed. Plugins write in
// PreFilter/PreScore and only read in Filter/Score, which run for every
// node: the few entries are kept in a slice, whose linear search with
// constant keys is cheaper than hashing the key on every read.
type CycleState struct {
	storage []stateEntry
	// SkipFilterPlugins are plugins whose PreFilter returned Skip.
	SkipFilterPlugins sets.Set[string]
	// SkipScorePlugins are plugins whose PreScore returned Skip.
	SkipScorePlugins sets.Set[string]
	// ActiveFilters is kept by the framework (package runtime): the filter
	// plugins whose PreFilter did not Skip, computed once per attempt
	// instead of once per node; nil until PreFilter ran. Plugins do not
	// touch it.
	ActiveFilters []FilterPlugin
}

type stateEntry struct {
	key StateKey
	val StateData
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{storage: make([]stateEntry, 0, 8)}
}

// Read returns the data under key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	for i := range c.storage {
		if c.storage[i].key == key {
			return c.storage[i].val, nil
		}
	}
	return nil, ErrNotFound
}

// Write stores val under key.
func (c *CycleState) Write(key StateKey, val StateData) {
	for i := range c.storage {
		if c.storage[i].key == key {
			c.storage[i].val = val
			return
		}
	}
	c.storage = append(c.storage, stateEntry{key: key, val: val})
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	for i := range c.storage {
		if c.storage[i].key == key {
			c.storage = append(c.storage[:i], c.storage[i+1:]...)
			return
		}
	}
}

// Clone deep-copies the state through each StateData's Clone.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := &CycleState{storage: make([]stateEntry, len(c.storage), max(len(c.storage), 8))}
	for i, e := range c.storage {
		out.storage[i] = stateEntry{key: e.key, val: e.val.Clone()}
	}
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	out.ActiveFilters = c.ActiveFilters
	return out
}
