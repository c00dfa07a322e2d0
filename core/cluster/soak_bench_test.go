package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/wasm/images"
)

// The soak's length and pace: a classroom hour at 20x (three minutes of
// real time). Shorter runs for a quick look: -soak.minutes=15.
var (
	soak        = flag.Bool("soak", false, "run BenchmarkClassroomHour (minutes of real time; `-bench .` skips it otherwise)")
	soakMinutes = flag.Int("soak.minutes", 60, "BenchmarkClassroomHour: cluster minutes to run")
	soakSpeed   = flag.Int("soak.speed", 20, "BenchmarkClassroomHour: cluster seconds per real second")
)

// BenchmarkClassroomHour is #15's soak: a scripted classroom hour on the
// injected clock at 20x speed, with what a class does all the time:
// deployments created, scaled, rolled out and deleted, a crash-looping
// deployment the whole hour, watches opened and closed, `kubectl get
// pods` through the HTTP API. It reports the live heap (after a GC) ten
// cluster minutes in and at the end; the end must be within 20 % of the
// first (a leak grows with the hour, the first ten minutes hold the
// caches and the compiled images).
//
//	go test -run '^$' -bench ClassroomHour -benchtime 1x ./core/cluster -soak
func BenchmarkClassroomHour(b *testing.B) {
	if !*soak {
		b.Skip("the classroom hour takes three minutes: run it with -soak")
	}
	for i := 0; i < b.N; i++ {
		at10, end := classroomHour(b, *soakMinutes, *soakSpeed)
		b.ReportMetric(at10/(1<<20), "heap-MB-10min")
		b.ReportMetric(end/(1<<20), "heap-MB-end")
		growth := (end - at10) / at10 * 100
		b.ReportMetric(growth, "growth-%")
		if *soakMinutes >= 60 && growth > 20 {
			b.Errorf("live heap grew %.1f %% from minute 10 (%.1f MB) to the end (%.1f MB)", growth, at10/(1<<20), end/(1<<20))
		}
	}
}

// liveHeap is the heap still reachable after a full GC, in bytes.
func liveHeap() float64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// classroomHour runs the script for minutes cluster minutes and returns
// the live heap at minute 10 and at the end.
func classroomHour(b *testing.B, minutes, speed int) (at10, end float64) {
	b.StopTimer()
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	c, err := cluster.New(cluster.Config{Images: images.New(), Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	cl := c.Client("soak")
	if _, err := cl.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "class"}}); err != nil {
		b.Fatal(err)
	}
	deps := client.For[*appsv1.Deployment](cl, "apps", "deployments")
	deployment := func(name, image string, replicas int32, args ...string) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "class"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image, Args: args}}},
				},
			},
		}
	}
	// change retries a read-modify-write on conflicts.
	change := func(name string, mutate func(*appsv1.Deployment)) {
		for i := 0; i < 10; i++ {
			d, err := deps.Get(ctx, "class", name)
			if err != nil {
				return
			}
			mutate(d)
			if _, err = deps.Update(ctx, d); err == nil {
				return
			}
		}
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}

	// The clock runs at speed x: a step of 100 ms every 100/speed ms.
	stepDone := make(chan struct{})
	go func() {
		defer close(stepDone)
		tick := time.NewTicker(100 * time.Millisecond / time.Duration(speed))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				clk.Step(100 * time.Millisecond)
			}
		}
	}()
	waitMinute := func(m int) {
		for clk.Since(start) < time.Duration(m)*time.Minute {
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}

	_, err = deps.Create(ctx, deployment("crashy", "crash", 2, "--after=2"))
	must(err)
	b.StartTimer()
	for m := 0; m < minutes; m++ {
		waitMinute(m)
		web := fmt.Sprintf("web-%d", m/10)
		switch m % 10 {
		case 0:
			_, err := deps.Create(ctx, deployment(web, "hello", 3))
			must(err)
		case 2:
			change(web, func(d *appsv1.Deployment) { n := int32(6); d.Spec.Replicas = &n })
		case 4:
			change(web, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "hello:2.0" })
		case 6:
			change(web, func(d *appsv1.Deployment) { n := int32(2); d.Spec.Replicas = &n })
		case 8:
			must(deps.Delete(ctx, "class", web, nil))
		}
		// Every minute: a learner's `kubectl get pods` over HTTP and a
		// watch that follows the pods for a few cluster seconds.
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/class/pods", nil)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		c.API.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("get pods: %d %s", rec.Code, rec.Body.String())
		}
		w, err := cl.Pods().Watch(ctx, "class", client.ListOptions{})
		must(err)
		deadline := time.After(200 * time.Millisecond)
	follow:
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					break follow
				}
			case <-deadline:
				break follow
			}
		}
		w.Stop()
		if m == 10 {
			b.StopTimer()
			at10 = liveHeap()
			b.StartTimer()
		}
	}
	waitMinute(minutes)
	b.StopTimer()
	end = liveHeap()
	if at10 == 0 {
		at10 = end
	}
	cancel()
	<-stepDone
	return at10, end
}
