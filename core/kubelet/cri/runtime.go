package cri

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Config configures one node's Runtime.
type Config struct {
	// Images is the registry images are pulled from. Required.
	Images ImageSource
	// Cache is the process-wide compile cache, shared by every node. Required.
	Cache *CompileCache
	// Clock stamps states and log lines and is the guests' clock: their wall
	// time, monotonic time and sleeps. Required.
	Clock clock.Clock
	// OnEvent, if set, is called for every container event (upstream:
	// GetContainerEvents, which feeds the kubelet's evented PLEG), so the
	// kubelet learns that a container exited without polling. See
	// ContainerEvent for the order guarantees. It must not block or call back
	// into the Runtime synchronously: hand the event to a work queue.
	OnEvent func(ContainerEvent)
	// MaxLogBytes bounds each container's kept log; 0 means
	// DefaultMaxLogBytes. The oldest lines are dropped first.
	MaxLogBytes int
	// Network is the cluster network the containers' processes reach
	// (wget, nslookup); nil for none.
	Network PodNetwork
	// Memory is the node's memory: every guest's linear memory is charged
	// to it, and a guest whose memory.grow does not fit is OOMKilled
	// (memory.go). Nil: not counted.
	Memory *MemoryPool
	// HostMemory is the memory every node of the process shares (a browser
	// tab's wasm heap); charged after Memory. Nil: not counted.
	HostMemory *MemoryPool
}

// Runtime is one node's container runtime: its pulled images and its
// containers. Create it with New; it is safe for concurrent use.
type Runtime struct {
	source      ImageSource
	cache       *CompileCache
	clock       clock.Clock
	onEvent     func(ContainerEvent)
	maxLogBytes int
	network     PodNetwork
	pools       []*MemoryPool // node, host

	// mu guards the maps below. Lock order: Runtime.mu before container.mu.
	// Neither is held while calling OnEvent or running guest code.
	mu         sync.Mutex
	images     map[string]*nodeImage // by digest
	tags       map[string]string     // normalized reference → digest
	containers map[string]*container // by ID
	// byPod holds the same containers by pod UID, then ID: the kubelet
	// lists one pod's containers several times a sync, and a node runs
	// a hundred pods.
	byPod map[string]map[string]*container
}

// addLocked and removeLocked keep containers and byPod in step. Called
// with mu held.
func (r *Runtime) addLocked(c *container) {
	r.containers[c.id] = c
	pod := r.byPod[c.cfg.PodUID]
	if pod == nil {
		pod = map[string]*container{}
		r.byPod[c.cfg.PodUID] = pod
	}
	pod[c.id] = c
}

func (r *Runtime) removeLocked(id string) {
	c := r.containers[id]
	if c == nil {
		return
	}
	delete(r.containers, id)
	if pod := r.byPod[c.cfg.PodUID]; pod != nil {
		delete(pod, id)
		if len(pod) == 0 {
			delete(r.byPod, c.cfg.PodUID)
		}
	}
}

// New returns a node's runtime with no images and no containers. In a fresh
// JS engine the first interpreter call stalls while V8 compiles wazero's
// interpreter: CompileCache.WarmUp pays that once, after the cluster is
// ready (cluster.Cluster.WarmUp), rather than at the first pod.
func New(cfg Config) (*Runtime, error) {
	switch {
	case cfg.Images == nil:
		return nil, errors.New("cri: Config.Images is required")
	case cfg.Cache == nil:
		return nil, errors.New("cri: Config.Cache is required")
	case cfg.Clock == nil:
		return nil, errors.New("cri: Config.Clock is required")
	case cfg.MaxLogBytes < 0:
		return nil, errors.New("cri: Config.MaxLogBytes must not be negative")
	}
	maxLog := cfg.MaxLogBytes
	if maxLog == 0 {
		maxLog = DefaultMaxLogBytes
	}
	return &Runtime{
		source:      cfg.Images,
		cache:       cfg.Cache,
		clock:       cfg.Clock,
		onEvent:     cfg.OnEvent,
		maxLogBytes: maxLog,
		network:     cfg.Network,
		pools:       []*MemoryPool{cfg.Memory, cfg.HostMemory},
		images:      map[string]*nodeImage{},
		tags:        map[string]string{},
		containers:  map[string]*container{},
		byPod:       map[string]map[string]*container{},
	}, nil
}

// Memory is the node's memory pool (Config.Memory); nil if not counted.
func (r *Runtime) Memory() *MemoryPool { return r.pools[0] }

// ContainerEventType says what happened to a container.
type ContainerEventType int

// Container events, named as upstream's ContainerEventType.
const (
	ContainerCreatedEvent ContainerEventType = iota
	ContainerStartedEvent
	ContainerStoppedEvent
	ContainerDeletedEvent
)

func (t ContainerEventType) String() string {
	switch t {
	case ContainerCreatedEvent:
		return "ContainerCreated"
	case ContainerStartedEvent:
		return "ContainerStarted"
	case ContainerStoppedEvent:
		return "ContainerStopped"
	case ContainerDeletedEvent:
		return "ContainerDeleted"
	}
	return "ContainerEventType(?)"
}

// ContainerEvent is upstream's ContainerEventResponse: a container changed.
//
// For one container, events come in order, each once: Created (from
// CreateContainer), Started (from StartContainer), Stopped (when the guest
// exited, for any reason, from the container's goroutine), Deleted (from
// RemoveContainer). A container removed before it started has no Started or
// Stopped. Events of different containers may arrive concurrently.
type ContainerEvent struct {
	ContainerID string
	Type        ContainerEventType
	CreatedAt   time.Time       // when the event happened, from the clock
	Status      ContainerStatus // the container right after the event
}

// emit calls OnEvent. No lock may be held.
func (r *Runtime) emit(t ContainerEventType, st ContainerStatus) {
	if r.onEvent == nil {
		return
	}
	r.onEvent(ContainerEvent{ContainerID: st.ID, Type: t, CreatedAt: r.clock.Now(), Status: st})
}

// get returns a container by ID.
func (r *Runtime) get(id string) (*container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[id]
	if c == nil {
		return nil, errNotFound(id)
	}
	return c, nil
}

// ContainerFilter selects containers for ListContainers; zero fields match
// everything.
type ContainerFilter struct {
	ID     string
	PodUID string
	State  *ContainerState
	// LabelSelector matches containers having all these labels.
	LabelSelector map[string]string
}

// ListContainers returns the statuses of the containers matching f, oldest
// first. (Upstream has a lighter Container message for lists; here the list
// carries full statuses.)
func (r *Runtime) ListContainers(f ContainerFilter) []ContainerStatus {
	r.mu.Lock()
	from := r.containers
	switch c := r.containers[f.ID]; {
	case f.ID != "" && c == nil:
		from = nil
	case f.ID != "":
		from = map[string]*container{c.id: c}
	case f.PodUID != "":
		from = r.byPod[f.PodUID]
	}
	all := make([]*container, 0, len(from))
	for _, c := range from {
		// A container's ID and pod never change: filter on them before
		// copying each status (the kubelet lists one pod's on every sync).
		if (f.ID != "" && c.id != f.ID) || (f.PodUID != "" && c.cfg.PodUID != f.PodUID) {
			continue
		}
		all = append(all, c)
	}
	r.mu.Unlock()

	var out []ContainerStatus
	for _, c := range all {
		st := c.status()
		if (f.ID != "" && st.ID != f.ID) ||
			(f.PodUID != "" && st.PodUID != f.PodUID) ||
			(f.State != nil && st.State != *f.State) {
			continue
		}
		match := true
		for k, v := range f.LabelSelector {
			if got, ok := st.Labels[k]; !ok || got != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Close kills every running container of this node and waits for them to
// end, or for ctx. The containers and images stay listed (exited); the node
// can still be used. The CompileCache is not closed: other nodes share it.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	all := make([]*container, 0, len(r.containers))
	for _, c := range r.containers {
		all = append(all, c)
	}
	r.mu.Unlock()
	for _, c := range all {
		c.kill()
	}
	for _, c := range all {
		if err := c.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}
