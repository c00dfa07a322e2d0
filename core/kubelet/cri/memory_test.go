package cri_test

import (
	"context"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

// pooledNode is a runtime whose guests are charged to node (and host).
func pooledNode(t testing.TB, cache *cri.CompileCache, nodeMem, hostMem *cri.MemoryPool) *node {
	t.Helper()
	n := &node{clk: testingclock.NewFakeClock(t0), events: make(chan cri.ContainerEvent, 1000)}
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: n.clk, Memory: nodeMem, HostMemory: hostMem,
		OnEvent: func(e cri.ContainerEvent) { n.events <- e }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	n.Runtime = rt
	return n
}

// TestNodeMemory: a guest without a memory limit can never hold more than
// its node has: the grow that does not fit ends it OOMKilled (137), while
// the other containers of the node keep running; the pages it held come
// back. The same holds for the host's memory, shared by two nodes.
func TestNodeMemory(t *testing.T) {
	cache := cri.NewCompileCache()
	t.Cleanup(func() { cache.Close(context.Background()) })
	tests := []struct {
		name       string
		node, host int64 // bytes; 0: no pool
		wantMsg    string
	}{
		{name: "node", node: 24 << 20, wantMsg: "out of memory: node node-1 has 25165824 bytes"},
		{name: "host", node: 1 << 30, host: 24 << 20, wantMsg: "out of memory: the host has 25165824 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodePool, hostPool *cri.MemoryPool
			if tt.node > 0 {
				nodePool = cri.NewMemoryPool("node node-1", tt.node)
			}
			if tt.host > 0 {
				hostPool = cri.NewMemoryPool("the host", tt.host)
			}
			n := pooledNode(t, cache, nodePool, hostPool)
			other := pooledNode(t, cache, cri.NewMemoryPool("node node-2", tt.node), hostPool)
			sleeper := n.run(t, cri.ContainerConfig{Name: "s", Image: "sleep"})
			n.waitForLog(t, n.run(t, cri.ContainerConfig{Name: "h", Image: "hello"}), "Hello from")
			// The hog runs on the same node, or (for the host's memory) on
			// the other one.
			if tt.host == 0 {
				other = n
			}
			id := other.run(t, cri.ContainerConfig{Name: "hog", Image: "oom", Args: []string{"--step-ms=0"}})
			st := other.waitExitedWithin(t, id, time.Minute)
			if st.ExitCode != 137 || st.Reason != cri.ReasonOOMKilled || !strings.Contains(st.Message, tt.wantMsg) {
				t.Fatalf("hog: exit %d %s %q, want 137 OOMKilled %q", st.ExitCode, st.Reason, st.Message, tt.wantMsg)
			}
			if log := other.logText(t, id); !strings.Contains(log, "oom: allocated 10 MiB") || strings.Contains(log, "malloc failed") {
				t.Fatalf("hog's log:\n%s", log)
			}
			if s, _ := n.ContainerStatus(sleeper); s.State != cri.ContainerRunning {
				t.Fatalf("the sleeper is %v, want running", s.State)
			}
			s, err := n.ContainerStats(sleeper)
			if err != nil || s.WorkingSetBytes == 0 {
				t.Fatalf("sleeper stats %+v %v", s, err)
			}
			pool := nodePool
			if hostPool != nil {
				pool = hostPool
			}
			// What is left charged is the running containers' memory.
			var running int64
			for _, c := range n.ListContainerStats(cri.ContainerFilter{}) {
				running += int64(c.WorkingSetBytes)
			}
			if got := pool.UsedBytes(); got != running || got >= pool.LimitBytes()/2 {
				t.Fatalf("pool holds %d bytes after the OOM kill, running containers %d", got, running)
			}
		})
	}
}
