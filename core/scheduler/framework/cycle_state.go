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
// then the binding cycle), so a plain map is enough. Plugins write in
// PreFilter/PreScore and only read in Filter/Score.
type CycleState struct {
	storage map[StateKey]StateData
	// SkipFilterPlugins are plugins whose PreFilter returned Skip.
	SkipFilterPlugins sets.Set[string]
	// SkipScorePlugins are plugins whose PreScore returned Skip.
	SkipScorePlugins sets.Set[string]
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{storage: map[StateKey]StateData{}}
}

// Read returns the data under key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if v, ok := c.storage[key]; ok {
		return v, nil
	}
	return nil, ErrNotFound
}

// Write stores val under key.
func (c *CycleState) Write(key StateKey, val StateData) { c.storage[key] = val }

// Delete removes key.
func (c *CycleState) Delete(key StateKey) { delete(c.storage, key) }

// Clone deep-copies the state through each StateData's Clone.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := &CycleState{storage: make(map[StateKey]StateData, len(c.storage))}
	for k, v := range c.storage {
		out.storage[k] = v.Clone()
	}
	out.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	out.SkipScorePlugins = c.SkipScorePlugins.Clone()
	return out
}
