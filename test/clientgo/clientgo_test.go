package clientgo_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/store"
	"github.com/kubetab/kubetab/wasm/images"
)

// testCluster is a whole kubetab cluster (store, API server, controllers,
// scheduler and one node) behind an httptest server, and a client-go
// clientset that talks to it over HTTP as any Kubernetes client would.
type testCluster struct {
	c   *cluster.Cluster
	cs  kubernetes.Interface
	cfg *rest.Config // what cs was made from, for other clients (dynamic)
}

// startCluster starts a cluster whose store keeps history events (0: the
// default). It stops when the test ends, after everything the test
// registered later (informers) has stopped.
func startCluster(t *testing.T, history int) *testCluster {
	t.Helper()
	return startClusterWith(t, history, "")
}

// startClusterWith is startCluster with the clientset's request content
// type ("" is client-go's default for built-in types: protobuf).
func startClusterWith(t *testing.T, history int, contentType string) *testCluster {
	t.Helper()
	c, err := cluster.New(cluster.Config{Nodes: 1, Images: images.New(), Store: store.Config{HistoryLimit: history}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	// The API server as `kubetab cluster` serves it: client-go brings the
	// admin's bearer token, as the kubeconfig kubetab writes.
	srv := httptest.NewServer(c.API)
	t.Cleanup(func() {
		cancel()
		srv.CloseClientConnections()
		srv.Close()
	})
	// QPS < 0 turns off client-go's client-side rate limiter: the churn is
	// thousands of requests.
	cfg := &rest.Config{Host: srv.URL, BearerToken: c.AdminToken(), QPS: -1, UserAgent: "kubetab-clientgo-test", ContentConfig: rest.ContentConfig{ContentType: contentType}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &testCluster{c: c, cs: cs, cfg: cfg}
}

// parkedPod is a pod that no component touches: it names a scheduler that
// does not run, so kube-scheduler leaves it Pending (no status write), and
// it is bound to no node, so no kubelet runs it and PodGC does not collect it
// as an orphan (a pod on a missing node goes after 40 s, which a slow run of
// a churn test outlives).
func parkedPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulerName: "parked",
			Containers:    []corev1.Container{{Name: "app", Image: "hello"}},
		},
	}
}

func deployment(name string, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "hello"}}},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// event is one informer notification (or one write the test made).
type event struct {
	typ  string // ADD, UPDATE, DELETE
	name string
	rv   string // the object's resourceVersion; not compared for DELETE
}

func (e event) String() string { return e.typ + " " + e.name + "@" + e.rv }

func (e event) same(o event) bool {
	return e.typ == o.typ && e.name == o.name && (e.typ == "DELETE" || e.rv == o.rv)
}

// recorder keeps what an informer's handler was told, in order.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(typ string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
		typ = "DELETE-UNKNOWN" // a delete the watch missed; a relist found it
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	r.mu.Lock()
	r.events = append(r.events, event{typ: typ, name: m.GetName(), rv: m.GetResourceVersion()})
	r.mu.Unlock()
}

func (r *recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.add("ADD", obj) },
		UpdateFunc: func(_, obj any) { r.add("UPDATE", obj) },
		DeleteFunc: func(obj any) { r.add("DELETE", obj) },
	}
}

func (r *recorder) snapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// waitFor polls cond until it holds; it fails the test after a deadline
// (a bound on a hang, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestInformersSeeChurnInOrder: a shared informer factory syncs pods and
// deployments, and its handlers see every add, update and delete of a
// 1,000-object churn, in the order the writes happened.
func TestInformersSeeChurnInOrder(t *testing.T) {
	// JSON bodies, so that this test is about ordering alone;
	// TestDeleteWithDefaultClient covers client-go's protobuf requests.
	tc := startClusterWith(t, 0, "application/json")
	ctx := context.Background()
	const ns = "default"
	churn := map[string]string{"churn": "yes"}

	factory := informers.NewSharedInformerFactoryWithOptions(tc.cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "churn=yes" }))
	pods, deploys := &recorder{}, &recorder{}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(pods.handler()); err != nil {
		t.Fatal(err)
	}
	if _, err := factory.Apps().V1().Deployments().Informer().AddEventHandler(deploys.handler()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			t.Fatalf("informer for %v never synced", typ)
		}
	}

	// The churn: 500 pods and 500 deployments, each created, then
	// relabelled, and half of each kind deleted, with the objects' steps
	// interleaved at random (a fixed seed, so a failure can be replayed).
	const objects = 1000
	type step struct{ obj, n int } // n: 0 create, 1 update, 2 delete
	var queue []step
	next := make([]int, objects)
	rng := rand.New(rand.NewSource(1))
	var live []int
	for i := 0; i < objects; i++ {
		live = append(live, i)
	}
	for len(live) > 0 {
		k := rng.Intn(len(live))
		i := live[k]
		queue = append(queue, step{obj: i, n: next[i]})
		next[i]++
		last := 1 // create, update
		if (i/2)%2 == 0 {
			last = 2 // and delete: half the pods, half the deployments
		}
		if next[i] > last {
			live = append(live[:k], live[k+1:]...)
		}
	}

	var wantPods, wantDeploys []event
	zero := int64(0)
	for _, s := range queue {
		isPod := s.obj%2 == 0
		name := fmt.Sprintf("churn-%04d", s.obj)
		patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"step":"%d"}}}`, s.n))
		var ev event
		var obj metav1.Object
		var err error
		switch {
		case isPod && s.n == 0:
			obj, err = tc.cs.CoreV1().Pods(ns).Create(ctx, parkedPod(name, churn), metav1.CreateOptions{})
			ev.typ = "ADD"
		case isPod && s.n == 1:
			obj, err = tc.cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
			ev.typ = "UPDATE"
		case isPod:
			err = tc.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			ev.typ = "DELETE"
		case s.n == 0:
			obj, err = tc.cs.AppsV1().Deployments(ns).Create(ctx, deployment(name, churn), metav1.CreateOptions{})
			ev.typ = "ADD"
		case s.n == 1:
			obj, err = tc.cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
			ev.typ = "UPDATE"
		default:
			err = tc.cs.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{})
			ev.typ = "DELETE"
		}
		if err != nil {
			t.Fatalf("step %+v on %s: %v", s, name, err)
		}
		ev.name = name
		if obj != nil {
			ev.rv = obj.GetResourceVersion()
		}
		if isPod {
			wantPods = append(wantPods, ev)
		} else {
			wantDeploys = append(wantDeploys, ev)
		}
	}

	// Nothing but the test writes to the parked pods: their informer must
	// report exactly the test's writes. The deployment controller also
	// writes the deployments' status, so there the test's writes must
	// appear in order among the controller's.
	waitFor(t, "the pod informer to catch up", func() bool { return len(pods.snapshot()) >= len(wantPods) })
	gotPods := pods.snapshot()
	if len(gotPods) != len(wantPods) {
		t.Errorf("pod informer saw %d events, the test made %d writes", len(gotPods), len(wantPods))
	}
	for i := range min(len(gotPods), len(wantPods)) {
		if !gotPods[i].same(wantPods[i]) {
			t.Fatalf("pod event %d: informer saw %v, the test wrote %v (around: %v)", i, gotPods[i], wantPods[i], gotPods[max(0, i-2):min(len(gotPods), i+3)])
		}
	}

	var gotDeploys []event
	waitFor(t, "the deployment informer to see every write", func() bool {
		gotDeploys = deploys.snapshot()
		return isSubsequence(wantDeploys, gotDeploys) == len(wantDeploys)
	})
	for _, e := range gotDeploys {
		if strings.HasPrefix(e.typ, "DELETE-UNKNOWN") {
			t.Errorf("the deployment informer missed a delete and relisted: %v", e)
		}
	}
	checkIncreasing(t, "pod", gotPods)
	checkIncreasing(t, "deployment", gotDeploys)

	// And the informers' caches hold exactly what the server holds.
	podList, err := tc.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "churn=yes"})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := factory.Core().V1().Pods().Lister().Pods(ns).List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(podList.Items) != objects/4 || len(cached) != len(podList.Items) {
		t.Errorf("server has %d churn pods, the informer's cache %d; want %d", len(podList.Items), len(cached), objects/4)
	}
	cachedDeploys, err := factory.Apps().V1().Deployments().Lister().Deployments(ns).List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(cachedDeploys) != objects/4 {
		t.Errorf("the deployment informer's cache has %d churn deployments, want %d", len(cachedDeploys), objects/4)
	}
}

// TestDeleteWithDefaultClient: client-go's typed clients send built-in
// types, DeleteOptions included, as protobuf by default (so does the real
// kubectl's `delete`); the server must read them.
func TestDeleteWithDefaultClient(t *testing.T) {
	tc := startCluster(t, 0)
	ctx := context.Background()
	deploys := tc.cs.AppsV1().Deployments("default")
	if _, err := deploys.Create(ctx, deployment("proto", nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with protobuf body: %v", err)
	}
	policy := metav1.DeletePropagationBackground
	if err := deploys.Delete(ctx, "proto", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("delete with protobuf DeleteOptions: %v", err)
	}
	if _, err := deploys.Get(ctx, "proto", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v, want NotFound", err)
	}
}

// isSubsequence returns how many of want appear, in order, in got.
func isSubsequence(want, got []event) int {
	n := 0
	for _, g := range got {
		if n < len(want) && want[n].same(g) {
			n++
		}
	}
	return n
}

// checkIncreasing checks that each object's resourceVersions only grow, as
// the store's revisions do.
func checkIncreasing(t *testing.T, kind string, events []event) {
	t.Helper()
	last := map[string]int64{}
	for _, e := range events {
		rv, err := strconv.ParseInt(e.rv, 10, 64)
		if err != nil {
			t.Errorf("%s %s: resourceVersion %q is not a revision", kind, e.name, e.rv)
			continue
		}
		if rv < last[e.name] || (rv == last[e.name] && e.typ != "DELETE") {
			t.Errorf("%s %s: %s at resourceVersion %d after %d", kind, e.name, e.typ, rv, last[e.name])
		}
		last[e.name] = rv
	}
}

// TestStaleUpdateConflicts: an update carrying an old resourceVersion is
// refused with 409 Conflict and upstream's message, and changes nothing.
func TestStaleUpdateConflicts(t *testing.T) {
	tc := startCluster(t, 0)
	ctx := context.Background()
	pods := tc.cs.CoreV1().Pods("default")
	created, err := pods.Create(ctx, parkedPod("stale", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh := created.DeepCopy()
	fresh.Labels = map[string]string{"writer": "first"}
	updated, err := pods.Update(ctx, fresh, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := created.DeepCopy()
	stale.Labels = map[string]string{"writer": "second"}
	_, err = pods.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with resourceVersion %s after %s: got %v, want 409 Conflict", created.ResourceVersion, updated.ResourceVersion, err)
	}
	want := `Operation cannot be fulfilled on pods "stale": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("conflict message:\n got %q\nwant %q", err.Error(), want)
	}
	got, err := pods.Get(ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["writer"] != "first" || got.ResourceVersion != updated.ResourceVersion {
		t.Errorf("after the refused update: labels %v at %s, want writer=first at %s", got.Labels, got.ResourceVersion, updated.ResourceVersion)
	}
}

// TestWatchFromCompactedRevision: with a small store history, a watch from
// a revision that has been compacted away answers 410 Gone ("too old
// resource version"), and a reflector that meets it relists and recovers.
func TestWatchFromCompactedRevision(t *testing.T) {
	const history = 50
	tc := startCluster(t, history)
	ctx := context.Background()
	pods := tc.cs.CoreV1().Pods("default")
	first, err := pods.Create(ctx, parkedPod("old", map[string]string{"gen": "0"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := first.ResourceVersion
	for i := 1; i <= 3*history; i++ {
		patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"gen":"%d"}}}`, i))
		if _, err := pods.Patch(ctx, "old", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A plain watch from the compacted revision.
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV})
	switch {
	case err != nil:
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("watch from compacted revision %s: %v, want 410 Gone", oldRV, err)
		}
	default:
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type != watch.Error {
				t.Fatalf("watch from compacted revision %s: got %v %T, want an ERROR event", oldRV, ev.Type, ev.Object)
			}
			st := apierrors.FromObject(ev.Object)
			if !apierrors.IsResourceExpired(st) && !apierrors.IsGone(st) {
				t.Fatalf("watch from compacted revision %s: error event %v, want 410 Gone", oldRV, st)
			}
			if !strings.Contains(st.Error(), "too old resource version") {
				t.Errorf("410 message %q does not say \"too old resource version\"", st.Error())
			}
		case <-time.After(time.Minute):
			t.Fatal("watch from a compacted revision: no event")
		}
		w.Stop()
	}

	// A reflector whose list is stale (as if the client had been away
	// while the history moved on): its watch meets 410, and it must relist
	// and carry on.
	lw := &listOnly{ListWatch: cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := pods.List(ctx, o)
			if err == nil && listsSeen.Add(1) == 1 {
				l.ResourceVersion = oldRV
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			watchesSeen.Add(1)
			return pods.Watch(ctx, o)
		},
	}}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	rec := &recorder{}
	if _, err := inf.AddEventHandler(rec.handler()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { inf.Run(stop); close(done) }()
	t.Cleanup(func() { close(stop); <-done })

	waitFor(t, "the reflector to relist after 410", func() bool { return listsSeen.Load() >= 2 })
	if _, err := pods.Create(ctx, parkedPod("after-relist", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the recovered informer to see a new pod", func() bool {
		_, ok, _ := inf.GetStore().GetByKey("default/after-relist")
		return ok
	})
	obj, ok, _ := inf.GetStore().GetByKey("default/old")
	if !ok || obj.(*corev1.Pod).Labels["gen"] != strconv.Itoa(3*history) {
		t.Errorf("after relisting the cache has %v, want pod old with gen=%d", obj, 3*history)
	}
	if watchesSeen.Load() < 2 {
		t.Errorf("the reflector watched %d times; want a watch before and after the relist", watchesSeen.Load())
	}
}

var listsSeen, watchesSeen atomic.Int32

// listOnly is a ListWatch that tells the reflector not to use the
// streaming list (WatchList), so that it lists and then watches from the
// list's resourceVersion: the path that meets 410 and relists.
type listOnly struct{ cache.ListWatch }

func (*listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// TestConcurrentReadModifyWrite: 8 writers each add 25 to a counter in an
// annotation by read-modify-write with retry.RetryOnConflict; optimistic
// concurrency must lose none of the 200 increments.
func TestConcurrentReadModifyWrite(t *testing.T) {
	tc := startCluster(t, 0)
	ctx := context.Background()
	pods := tc.cs.CoreV1().Pods("default")
	p := parkedPod("counter", nil)
	p.Annotations = map[string]string{"count": "0"}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 25
	// Many steps: eight writers on one object conflict a lot. (No Cap: a
	// Backoff that reaches its cap stops retrying.)
	backoff := wait.Backoff{Steps: 1000, Duration: time.Millisecond, Factor: 1, Jitter: 2}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := retry.RetryOnConflict(backoff, func() error {
					cur, err := pods.Get(ctx, "counter", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n, err := strconv.Atoi(cur.Annotations["count"])
					if err != nil {
						return err
					}
					cur.Annotations["count"] = strconv.Itoa(n + 1)
					cur.Annotations[fmt.Sprintf("writer-%d", w)] = strconv.Itoa(i + 1)
					_, err = pods.Update(ctx, cur, metav1.UpdateOptions{})
					if apierrors.IsConflict(err) {
						conflicts.Add(1)
					}
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, increment %d: %w", w, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := pods.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["count"] != strconv.Itoa(writers*each) {
		t.Errorf("count = %s after %d increments (%d conflicts retried)", got.Annotations["count"], writers*each, conflicts.Load())
	}
	for w := 0; w < writers; w++ {
		if got.Annotations[fmt.Sprintf("writer-%d", w)] != strconv.Itoa(each) {
			t.Errorf("writer %d's last increment is %s, want %d", w, got.Annotations[fmt.Sprintf("writer-%d", w)], each)
		}
	}
	t.Logf("%d increments, %d conflicts retried", writers*each, conflicts.Load())
}

// client-go authenticates with the kubeconfig's bearer token; a wrong one
// is 401 Unauthorized, and none at all is system:anonymous (403).
func TestBearerToken(t *testing.T) {
	tc := startCluster(t, 0)
	ctx := context.Background()
	who, err := tc.cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != "kubetab-admin" {
		t.Fatalf("whoami: %+v %v", who, err)
	}
	wrong := rest.CopyConfig(tc.cfg)
	wrong.BearerToken = "not-the-token"
	cs, err := kubernetes.NewForConfig(wrong)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("wrong token: %v, want 401 Unauthorized", err)
	}
	anon := rest.CopyConfig(tc.cfg)
	anon.BearerToken = ""
	cs, err = kubernetes.NewForConfig(anon)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "system:anonymous" cannot list resource "pods"`) {
		t.Errorf("anonymous: %v, want 403 for system:anonymous", err)
	}
	if v, err := cs.Discovery().ServerVersion(); err != nil || v.GitVersion == "" {
		t.Errorf("anonymous /version: %v %v", v, err)
	}
}
