package apiserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

func TestEviction(t *testing.T) {
	srv, reg := newTestServer(t)
	base := srv.URL + "/api/v1/namespaces/default/pods"
	if code, body, _ := do(t, "POST", base, "application/json", podJSON); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	const ev = `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web","namespace":"default"}}`
	for _, tc := range []struct {
		name, url, body string
		code            int
		msg             string
	}{
		{"name mismatch", base + "/web/eviction", strings.Replace(ev, `"name":"web"`, `"name":"other"`, 1), 400, "name in URL does not match name in Eviction object"},
		{"dry run", base + "/web/eviction?dryRun=All", ev, 201, `"status":"Success"`},
		{"dry run in the body", base + "/web/eviction", strings.Replace(ev, `}}`, `},"deleteOptions":{"dryRun":["All"]}}`, 1), 201, `"status":"Success"`},
		{"evict", base + "/web/eviction", ev, 201, `"status":"Success"`},
		{"gone", base + "/web/eviction", ev, 404, `pods \"web\" not found`},
	} {
		code, body, _ := do(t, "POST", tc.url, "application/json", tc.body)
		if code != tc.code || !strings.Contains(body, tc.msg) {
			t.Errorf("%s: %d %s; want %d containing %q", tc.name, code, body, tc.code, tc.msg)
		}
		if strings.HasPrefix(tc.name, "dry run") && reg.KV().Count("/registry/pods/") != 1 {
			t.Errorf("%s deleted the pod", tc.name)
		}
	}
	if n := reg.KV().Count("/registry/pods/"); n != 0 {
		t.Fatalf("%d pods left after the eviction", n)
	}
}

// evictionEnv is an API server on a fake clock with pods web-1..web-N that
// run Ready on node-1, and a PodDisruptionBudget "web" over them whose
// status the test writes, standing in for the disruption controller.
type evictionEnv struct {
	t     *testing.T
	url   string
	reg   *registry.Registry
	clock *testingclock.FakeClock
}

func newEvictionEnv(t *testing.T, pods int) *evictionEnv {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{}), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Registry: reg, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	e := &evictionEnv{t: t, url: srv.URL, reg: reg, clock: clk}
	e.create("", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	for i := 1; i <= pods; i++ {
		e.pod("web-"+string(rune('0'+i)), corev1.PodRunning, true)
	}
	return e
}

func (e *evictionEnv) create(group, resource string, obj runtime.Object) {
	e.t.Helper()
	acc, _ := meta.Accessor(obj)
	if _, err := e.reg.MustLookup(group, resource).Create(context.Background(), acc.GetNamespace(), obj, registry.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// pod creates a pod bound to node-1 with phase and Ready as given.
func (e *evictionEnv) pod(name string, phase corev1.PodPhase, ready bool) {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "hello", Image: "hello:1.0"}}},
	}
	e.create("", "pods", p)
	st := e.reg.MustLookup("", "pods")
	obj, err := st.Get(context.Background(), "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	p = obj.(*corev1.Pod)
	p.Status.Phase = phase
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if _, err := st.Update(context.Background(), p, registry.UpdateOptions{Subresource: "status"}); err != nil {
		e.t.Fatal(err)
	}
}

// budget creates PodDisruptionBudget name selecting app=web with
// minAvailable 2, and writes the status the controller would compute from
// healthy of expected pods.
func (e *evictionEnv) budget(name string, healthy, expected int32) {
	e.t.Helper()
	two := intstr.FromInt32(2)
	e.create("policy", "poddisruptionbudgets", &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	})
	e.setBudgetStatus(name, healthy, expected)
}

func (e *evictionEnv) setBudgetStatus(name string, healthy, expected int32) {
	e.t.Helper()
	p := e.getBudget(name)
	p.Status.ObservedGeneration = p.Generation
	p.Status.CurrentHealthy, p.Status.DesiredHealthy, p.Status.ExpectedPods = healthy, 2, expected
	p.Status.DisruptionsAllowed = max(healthy-2, 0)
	p.Status.DisruptedPods = nil
	registry.UpdateDisruptionAllowedCondition(p, e.clock.Now())
	if _, err := e.reg.MustLookup("policy", "poddisruptionbudgets").Update(context.Background(), p, registry.UpdateOptions{Subresource: "status"}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *evictionEnv) getBudget(name string) *policyv1.PodDisruptionBudget {
	e.t.Helper()
	obj, err := e.reg.MustLookup("policy", "poddisruptionbudgets").Get(context.Background(), "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return obj.(*policyv1.PodDisruptionBudget)
}

func (e *evictionEnv) getPod(name string) *corev1.Pod {
	e.t.Helper()
	obj, err := e.reg.MustLookup("", "pods").Get(context.Background(), "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return obj.(*corev1.Pod)
}

// evict POSTs an Eviction of pod and returns the code, the decoded Status
// and the Retry-After header.
func (e *evictionEnv) evict(pod, query string) (int, metav1.Status, string) {
	e.t.Helper()
	body := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"` + pod + `","namespace":"default"}}`
	code, resp, hdr := do(e.t, "POST", e.url+"/api/v1/namespaces/default/pods/"+pod+"/eviction"+query, "application/json", body)
	var st metav1.Status
	if err := json.Unmarshal([]byte(resp), &st); err != nil {
		e.t.Fatalf("evict %s: %d %s: %v", pod, code, resp, err)
	}
	return code, st, hdr.Get("Retry-After")
}

// TestEvictionHonoursDisruptionBudget: with minAvailable 2 over 3 healthy
// pods, one eviction is allowed and spends the budget in the same step;
// the next is refused with upstream's 429 until the controller has seen the
// replacement.
func TestEvictionHonoursDisruptionBudget(t *testing.T) {
	e := newEvictionEnv(t, 3)
	e.budget("web", 3, 3)

	code, st, _ := e.evict("web-1", "")
	if code != 201 || st.Status != metav1.StatusSuccess {
		t.Fatalf("first eviction: %d %+v", code, st)
	}
	pdb := e.getBudget("web")
	if pdb.Status.DisruptionsAllowed != 0 {
		t.Errorf("disruptionsAllowed %d after the eviction, want 0", pdb.Status.DisruptionsAllowed)
	}
	if at, ok := pdb.Status.DisruptedPods["web-1"]; !ok || !at.Time.Equal(e.clock.Now()) {
		t.Errorf("disruptedPods %v, want web-1 at %v", pdb.Status.DisruptedPods, e.clock.Now())
	}
	if c := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition); c == nil ||
		c.Status != metav1.ConditionFalse || c.Reason != policyv1.InsufficientPodsReason {
		t.Errorf("DisruptionAllowed condition %+v, want False InsufficientPods", c)
	}
	evicted := e.getPod("web-1")
	if evicted.DeletionTimestamp == nil {
		t.Error("web-1 is not being deleted")
	}
	if c := podCondition(evicted, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue ||
		c.Reason != "EvictionByEvictionAPI" || c.Message != "Eviction API: evicting" {
		t.Errorf("web-1 DisruptionTarget condition %+v", c)
	}

	code, st, retry := e.evict("web-2", "")
	if code != 429 || st.Reason != metav1.StatusReasonTooManyRequests ||
		st.Message != "Cannot evict pod as it would violate the pod's disruption budget." || retry != "" {
		t.Fatalf("second eviction: %d %+v Retry-After %q", code, st, retry)
	}
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
		st.Details.Causes[0].Message != "The disruption budget web needs 2 healthy pods and has 3 currently" {
		t.Errorf("second eviction's cause: %+v", st.Details)
	}
	if p := e.getPod("web-2"); p.DeletionTimestamp != nil || podCondition(p, corev1.DisruptionTarget) != nil {
		t.Errorf("a refused eviction touched web-2: %+v", p.Status.Conditions)
	}

	// The controller sees web-1 go and its replacement Ready: one more.
	e.setBudgetStatus("web", 3, 3)
	if code, st, _ := e.evict("web-2", "?dryRun=All"); code != 201 {
		t.Fatalf("dry-run eviction: %d %+v", code, st)
	}
	if p := e.getBudget("web"); p.Status.DisruptionsAllowed != 1 || len(p.Status.DisruptedPods) != 0 {
		t.Errorf("a dry-run eviction wrote the budget: %+v", p.Status)
	}
	if code, st, _ := e.evict("web-2", ""); code != 201 {
		t.Fatalf("eviction after the controller's update: %d %+v", code, st)
	}
}

func TestEvictionSpecialCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(e *evictionEnv)
		pod     string
		code    int
		message string
		cause   string
		retry   string
		deleted bool
	}{
		{
			name:  "status older than the spec",
			setup: func(e *evictionEnv) { e.budget("web", 3, 3); e.bumpGeneration("web") },
			pod:   "web-1", code: 429,
			message: "Cannot evict pod as it would violate the pod's disruption budget.",
			cause:   "The disruption budget web is still being processed by the server.", retry: "10",
		},
		{
			name:  "two budgets",
			setup: func(e *evictionEnv) { e.budget("web", 3, 3); e.budget("web-too", 3, 3) },
			pod:   "web-1", code: 500,
			message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
		},
		{
			name:  "pending pod ignores the budget",
			setup: func(e *evictionEnv) { e.pod("web-new", corev1.PodPending, false); e.budget("web", 2, 3) },
			pod:   "web-new", code: 201, deleted: true,
		},
		{
			name:  "finished pod ignores the budget",
			setup: func(e *evictionEnv) { e.pod("web-done", corev1.PodSucceeded, false); e.budget("web", 2, 3) },
			pod:   "web-done", code: 201, deleted: true,
		},
		{
			name: "unready pod of a healthy application",
			setup: func(e *evictionEnv) {
				e.pod("web-sick", corev1.PodRunning, false)
				e.budget("web", 2, 3) // 2 healthy of 2 desired: nothing left to spend
			},
			pod: "web-sick", code: 201, deleted: true,
		},
		{
			name: "unready pod of a disrupted application",
			setup: func(e *evictionEnv) {
				e.pod("web-sick", corev1.PodRunning, false)
				e.budget("web", 1, 3)
			},
			pod: "web-sick", code: 429,
			message: "Cannot evict pod as it would violate the pod's disruption budget.",
			cause:   "The disruption budget web needs 2 healthy pods and has 1 currently",
		},
		{
			name: "unready pod with AlwaysAllow",
			setup: func(e *evictionEnv) {
				e.pod("web-sick", corev1.PodRunning, false)
				e.budget("web", 1, 3)
				p := e.getBudget("web")
				p.Spec.UnhealthyPodEvictionPolicy = ptrTo(policyv1.AlwaysAllow)
				if _, err := e.reg.MustLookup("policy", "poddisruptionbudgets").Update(context.Background(), p, registry.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				e.setBudgetStatus("web", 1, 3)
			},
			pod: "web-sick", code: 201, deleted: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEvictionEnv(t, 2)
			tc.setup(e)
			before := e.getBudget("web").Status.DisruptionsAllowed
			code, st, retry := e.evict(tc.pod, "")
			if code != tc.code || (tc.message != "" && st.Message != tc.message) || retry != tc.retry {
				t.Fatalf("%d %+v Retry-After %q; want %d %q Retry-After %q", code, st, retry, tc.code, tc.message, tc.retry)
			}
			if tc.cause != "" && (st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Message != tc.cause) {
				t.Errorf("causes %+v, want %q", st.Details, tc.cause)
			}
			_, err := e.reg.MustLookup("", "pods").Get(context.Background(), "default", tc.pod)
			gone := err != nil || e.getPod(tc.pod).DeletionTimestamp != nil
			if gone != tc.deleted {
				t.Errorf("pod deleted: %v, want %v", gone, tc.deleted)
			}
			if after := e.getBudget("web").Status.DisruptionsAllowed; after != before {
				t.Errorf("disruptionsAllowed %d -> %d; these evictions spend nothing", before, after)
			}
		})
	}
}

// Two evictions racing for the last allowed disruption: the budget's
// status write is a compare-and-swap, so exactly one wins.
func TestEvictionRace(t *testing.T) {
	for round := range 5 {
		e := newEvictionEnv(t, 3)
		e.budget("web", 3, 3)
		var wg sync.WaitGroup
		codes := make([]int, 3)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _, _ = e.evict("web-"+string(rune('1'+i)), "")
			}()
		}
		wg.Wait()
		allowed, refused := 0, 0
		for _, c := range codes {
			switch c {
			case 201:
				allowed++
			case 429:
				refused++
			}
		}
		if allowed != 1 || refused != 2 {
			t.Fatalf("round %d: codes %v; want one 201 and two 429", round, codes)
		}
		if p := e.getBudget("web"); p.Status.DisruptionsAllowed != 0 || len(p.Status.DisruptedPods) != 1 {
			t.Fatalf("round %d: budget status %+v", round, p.Status)
		}
	}
}

func (e *evictionEnv) bumpGeneration(name string) {
	e.t.Helper()
	p := e.getBudget(name)
	one := intstr.FromInt32(1)
	p.Spec.MinAvailable = &one
	if _, err := e.reg.MustLookup("policy", "poddisruptionbudgets").Update(context.Background(), p, registry.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
