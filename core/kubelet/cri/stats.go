package cri

import "time"

// ContainerStats is a container's resource usage: upstream's ContainerStats
// message (CpuUsage and MemoryUsage), what the kubelet's resource analyzer
// serves to metrics-server and so to `kubectl top`.
type ContainerStats struct {
	ID string
	// Timestamp is when the sample was taken, from the Config's clock.
	Timestamp time.Time
	// UsageCoreNanoSeconds is the CPU time the guest has used since it
	// started, in ns: cpuacct.usage. It is measured in real time while the
	// guest holds the thread (sleeps and throttling do not count; time in
	// host calls on its behalf, like writing its log, does), plus that of
	// the execs and HTTP requests it served once they ended. Natively, time
	// the goroutine waited for a free core is counted too.
	UsageCoreNanoSeconds uint64
	// UsageNanoCores is the average CPU use since the previous ContainerStats
	// of this container (1e9 = one full core); 0 on the first call, as
	// upstream computes it from two samples.
	UsageNanoCores uint64
	// ThrottledNanoSeconds is how long the CPU limit kept the guest from
	// running (cpu.stat's throttled_time).
	ThrottledNanoSeconds uint64
	// WorkingSetBytes is the container's memory: the linear memory of its
	// running instances together (its own process, execs, spawned
	// programs), as a cgroup's memory.current counts all its processes; 0
	// once it has exited. (A plain, uninstrumented module reports its
	// initial memory: its growth is not seen.)
	WorkingSetBytes uint64
}

// statsSample is the previous sample, for UsageNanoCores.
type statsSample struct {
	at  time.Duration // mono
	cpu uint64
}

// ContainerStats returns a container's resource usage, or
// ErrContainerNotFound. A container that never started reports zeros.
func (r *Runtime) ContainerStats(id string) (ContainerStats, error) {
	c, err := r.get(id)
	if err != nil {
		return ContainerStats{}, err
	}
	return c.stats(), nil
}

// ListContainerStats returns the stats of the containers matching f, in
// ListContainers' order.
func (r *Runtime) ListContainerStats(f ContainerFilter) []ContainerStats {
	var out []ContainerStats
	for _, st := range r.ListContainers(f) {
		if s, err := r.ContainerStats(st.ID); err == nil {
			out = append(out, s)
		}
	}
	return out
}

func (c *container) stats() ContainerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := ContainerStats{ID: c.id, Timestamp: c.clock.Now()}
	g := c.guest
	if g == nil {
		return s
	}
	s.UsageCoreNanoSeconds = uint64(g.cpu.Load() + c.execCPU.Load())
	s.ThrottledNanoSeconds = uint64(g.throttled.Load())
	if c.state == ContainerRunning {
		s.WorkingSetBytes = uint64(max(c.memPages.Load(), 0)) * wasmPageSize
	}
	now := mono()
	if prev := c.lastStats; prev.at != 0 && now > prev.at && s.UsageCoreNanoSeconds >= prev.cpu {
		s.UsageNanoCores = uint64(float64(s.UsageCoreNanoSeconds-prev.cpu) / float64(now-prev.at) * 1e9)
	}
	c.lastStats = statsSample{at: now, cpu: s.UsageCoreNanoSeconds}
	return s
}

// WorkingSetBytes is a container's memory now (ContainerStats'
// WorkingSetBytes), read without taking a CPU sample, so the eviction
// manager's reads do not shorten `kubectl top`'s CPU window; 0 for an
// unknown or stopped container.
func (r *Runtime) WorkingSetBytes(id string) uint64 {
	c, err := r.get(id)
	if err != nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != ContainerRunning {
		return 0
	}
	return uint64(max(c.memPages.Load(), 0)) * wasmPageSize
}
