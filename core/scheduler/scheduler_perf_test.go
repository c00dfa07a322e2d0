package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/scheduler/framework"
	st "github.com/kubetab/kubetab/core/scheduler/testing"
	"github.com/kubetab/kubetab/core/store"
)

// BenchmarkSchedulingBasic is shaped like upstream's scheduler_perf
// SchedulingBasic (test/integration/scheduler_perf/config/performance-config.yaml):
// nodes from templates/node-default.yaml (capacity 4 cpu, 32Gi, 110 pods;
// no allocatable, so the capacity counts), initPods existing pods and b.N
// measured pods from templates/pod-default.yaml (requests 100m, 500Mi). The
// existing pods are created already bound, so the clock measures only the
// measured pods: from the first create to the last bind seen by an
// informer (the scheduler's own), as upstream's throughput collector does
// with an informer. The profile is the full default one. Run with
//
//	GOMAXPROCS=2 go test -run XXX -bench SchedulingBasic/1000Nodes -benchtime 10000x ./core/scheduler/
//	GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" \
//	    -run XXX -bench SchedulingBasic/1000Nodes -benchtime 10000x ./core/scheduler/
//
// and read pods/s (upstream's threshold on 5,000 nodes is 270 pods/s).
// Most of the time per pod is the API server's (creating the pod, JSON for
// every watch event, the binding, the Scheduled event);
// BenchmarkSchedulingCycle measures the scheduler's share alone.
func BenchmarkSchedulingBasic(b *testing.B) {
	for _, tc := range []struct {
		name             string
		nodes, initPods  int
		decisionsPerPods int
	}{
		{name: "500Nodes", nodes: 500, initPods: 500},
		{name: "1000Nodes", nodes: 1000, initPods: 1000},
		{name: "1000NodesNoDecisionRecord", nodes: 1000, initPods: 1000, decisionsPerPods: -1},
		{name: "5000Nodes", nodes: 5000, initPods: 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchmarkScheduling(b, tc.nodes, tc.initPods, tc.decisionsPerPods)
		})
	}
}

func perfPod(name, node string) *v1.Pod {
	p := st.MakePod().Name(name).Node(node).Req(res{v1.ResourceCPU: "100m", v1.ResourceMemory: "500Mi"}).Obj()
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
	p.UID = ""
	return p
}

func benchmarkScheduling(b *testing.B, numNodes, initPods, decisionsPerPod int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	c := client.New(reg, "scheduler-perf")
	ns := &v1.Namespace{}
	ns.Name = "default"
	if _, err := c.Namespaces().Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	for i := range numNodes {
		n := st.MakeNode().Name(fmt.Sprintf("scheduler-perf-%d", i)).Obj()
		n.Status.Capacity = st.ResourceList(res{v1.ResourcePods: "110", v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi"})
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
		n.UID = ""
		if _, err := c.Nodes().Create(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
	for i := range initPods {
		if _, err := c.Pods().Create(ctx, perfPod(fmt.Sprintf("init-%d", i), fmt.Sprintf("scheduler-perf-%d", i%numNodes))); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Config{Client: client.New(reg, "default-scheduler"), DecisionsPerPod: decisionsPerPod})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(time.Minute)
	for s.Cache().NodeCount() != numNodes || s.Cache().PodCount() != initPods {
		if time.Now().After(deadline) {
			b.Fatalf("cache: %d nodes, %d pods", s.Cache().NodeCount(), s.Cache().PodCount())
		}
		time.Sleep(time.Millisecond)
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := c.Pods().Create(ctx, perfPod(fmt.Sprintf("measured-%d", i), "")); err != nil {
			b.Fatal(err)
		}
	}
	// Done when the scheduler's own pod informer has seen every measured
	// pod bound (upstream's collector watches with an informer of its own;
	// here a second watch would double the API server's JSON decoding per
	// event, which is not the scheduler's work).
	want := initPods + b.N
	deadline = time.Now().Add(10 * time.Minute)
	for s.Cache().BoundPodCount() < want {
		if time.Now().After(deadline) {
			b.Fatalf("measured pods not bound within 10 minutes: %d of %d", s.Cache().BoundPodCount(), want)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pods/s")
}

// BenchmarkSchedulingCycle measures the scheduling cycle alone (snapshot,
// filters, scores, decision record, assume), without the API server: the
// same cluster shape as SchedulingBasic, one pod per op. Its ns/op bounds
// what the scheduling loop can do; SchedulingBasic adds the API server's
// share (creating, binding, watching), which runs beside it.
func BenchmarkSchedulingCycle(b *testing.B) {
	for _, tc := range []struct {
		name            string
		nodes, initPods int
	}{
		{name: "1000Nodes", nodes: 1000, initPods: 1000},
		{name: "5000Nodes", nodes: 5000, initPods: 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(Config{Client: client.New(reg, "default-scheduler")})
			if err != nil {
				b.Fatal(err)
			}
			for i := range tc.nodes {
				n := st.MakeNode().Name(fmt.Sprintf("scheduler-perf-%d", i)).Obj()
				n.Status.Capacity = st.ResourceList(res{v1.ResourcePods: "110", v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi"})
				s.cache.AddNode(n)
			}
			for i := range tc.initPods {
				p := perfPod(fmt.Sprintf("init-%d", i), fmt.Sprintf("scheduler-perf-%d", i%tc.nodes))
				p.UID = types.UID(p.Name)
				_ = s.cache.AddPod(p)
			}
			pods := make([]*framework.QueuedPodInfo, b.N)
			for i := range pods {
				p := perfPod(fmt.Sprintf("measured-%d", i), "")
				p.UID = types.UID(p.Name)
				pods[i] = &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(p), Attempts: 1}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				p := pods[i]
				s.cache.UpdateSnapshot(s.snapshot)
				rec := s.decisions.start(p, time.Time{}, s.snapshot.NumNodes(), s.fwk)
				result, err := s.schedulePod(ctx, framework.NewCycleState(), p.Pod, rec)
				if err != nil {
					b.Fatal(err)
				}
				rec.SelectedNode = result.SuggestedHost
				s.decisions.add(rec)
				assumed := p.Pod.DeepCopy()
				assumed.Spec.NodeName = result.SuggestedHost
				if err := s.cache.AssumePod(assumed); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
