package trace

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestRecorderRing(t *testing.T) {
	r := New(3, testingclock.NewFakePassiveClock(t0))
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		r.Record(Hop{Kind: Request, Name: n})
	}
	hops, next, lost := r.Since(0)
	if got := names(hops); got != "c d e" || next != 5 || lost != 2 {
		t.Fatalf("Since(0) = %q, next %d, lost %d; want \"c d e\", 5, 2", got, next, lost)
	}
	if hops[0].Seq != 3 || !hops[0].Time.Equal(t0) {
		t.Fatalf("first kept hop: seq %d time %v", hops[0].Seq, hops[0].Time)
	}
	hops, next, lost = r.Since(3)
	if got := names(hops); got != "d e" || next != 5 || lost != 0 {
		t.Fatalf("Since(3) = %q, next %d, lost %d", got, next, lost)
	}
	if hops, next, _ := r.Since(5); len(hops) != 0 || next != 5 {
		t.Fatalf("Since(5) = %d hops, next %d", len(hops), next)
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	r.Record(Hop{}) // must not panic
	if hops, next, lost := r.Since(7); hops != nil || next != 7 || lost != 0 {
		t.Fatalf("nil Since = %v %d %d", hops, next, lost)
	}
}

func TestWait(t *testing.T) {
	r := New(10, nil)
	w := r.Wait(0)
	select {
	case <-w:
		t.Fatal("Wait(0) fired with nothing recorded")
	default:
	}
	r.Record(Hop{})
	select {
	case <-w:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait(0) did not fire after a hop")
	}
	select {
	case <-r.Wait(0): // already recorded: at once
	default:
		t.Fatal("Wait(0) with a hop recorded did not fire at once")
	}
}

func TestComponent(t *testing.T) {
	ctx := WithComponent(context.Background(), "kube-scheduler")
	if got := Component(ctx); got != "kube-scheduler" {
		t.Fatalf("Component = %q", got)
	}
	if got := Component(WithComponent(ctx, "")); got != "kube-scheduler" {
		t.Fatalf("an empty name replaced the component: %q", got)
	}
	if got := Component(context.Background()); got != "" {
		t.Fatalf("Component of a bare context = %q", got)
	}
}

func TestWhat(t *testing.T) {
	for _, tc := range []struct {
		hop  Hop
		want string
	}{
		{Hop{Kind: Request, Verb: "create", Resource: "deployments.apps", Namespace: "default", Name: "web"}, "create deployments.apps default/web"},
		{Hop{Kind: Write, Verb: "put", Key: "/registry/deployments/default/web", Namespace: "default", Name: "web", Revision: 512}, "put /registry/deployments/default/web (rev 512)"},
		{Hop{Kind: Response, Code: 201, Resource: "pods/binding", Namespace: "default", Name: "web-1"}, "201 Created pods/binding default/web-1"},
		{Hop{Kind: Response, Code: 409, Resource: "pods", Namespace: "default", Name: "x", Detail: "the object has been modified"}, "409 Conflict pods default/x: the object has been modified"},
		{Hop{Kind: Watch, Verb: "ADDED", Resource: "pods", Namespace: "default", Name: "web-1", Revision: 9}, "ADDED pods default/web-1 (rev 9)"},
		{Hop{Kind: Decision, Verb: "schedule", Resource: "pods", Namespace: "default", Name: "web-1", Detail: "node-2 (3 of 3 nodes evaluated fit)"}, "schedule pods default/web-1: node-2 (3 of 3 nodes evaluated fit)"},
		{Hop{Kind: Request, Verb: "list", Resource: "pods", Namespace: "kube-system"}, "list pods -n kube-system"},
	} {
		if got := What(tc.hop); got != tc.want {
			t.Errorf("What(%+v) = %q, want %q", tc.hop, got, tc.want)
		}
	}
}

func TestRunFilters(t *testing.T) {
	r := New(100, testingclock.NewFakePassiveClock(t0))
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "create", Resource: "deployments.apps", Namespace: "default", Name: "web"})
	r.Record(Hop{Kind: Write, From: APIServer, To: Etcd, Verb: "put", Resource: "deployments.apps", Namespace: "default", Name: "web", Key: "/registry/deployments/default/web", Revision: 10})
	r.Record(Hop{Kind: Watch, From: APIServer, To: "deployment-controller", Verb: "ADDED", Resource: "deployments.apps", Namespace: "default", Name: "web", Revision: 10})
	r.Record(Hop{Kind: Request, From: "replicaset-controller", To: APIServer, Verb: "create", Resource: "pods", Namespace: "default", Name: "web-5d9c7b8f6-x2x7k"})
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "create", Resource: "services", Namespace: "default", Name: "website"})
	r.Record(Hop{Kind: Decision, From: "kube-scheduler", Verb: "schedule", Resource: "pods", Namespace: "default", Name: "db-0", Detail: "node-1"})
	r.Record(Hop{Kind: Watch, From: APIServer, To: "kube-scheduler", Verb: "MODIFIED", Resource: "pods", Namespace: "default", Name: "db-0", Revision: 11})
	r.Record(Hop{Kind: Watch, From: APIServer, To: "kubelet/node-1", Verb: "MODIFIED", Resource: "pods", Namespace: "default", Name: "db-0", Revision: 11})

	for _, tc := range []struct {
		args      []string
		want      []string // substrings, in order
		wantNot   []string
		wantLines int // hop lines
	}{
		{args: nil, wantLines: 7},
		{args: []string{"web"}, want: []string{"kubectl", "etcd", "deployment-controller", "web-5d9c7b8f6-x2x7k"}, wantNot: []string{"website", "db-0"}, wantLines: 4},
		{args: []string{"pods"}, want: []string{"web-5d9c7b8f6-x2x7k", "db-0"}, wantLines: 3},
		{args: []string{"deploy/web"}, wantLines: 3},
		{args: []string{"web", "--kind=request,write"}, wantNot: []string{"ADDED"}, wantLines: 3},
		{args: []string{"--tail=2"}, want: []string{"db-0", "2 watchers"}, wantLines: 2},
		// One change delivered to two watchers is one line naming both.
		{args: []string{"db-0", "--kind=watch"}, want: []string{"2 watchers", "MODIFIED pods default/db-0 (rev 11): kube-scheduler, kubelet/node-1"}, wantLines: 1},
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), r, tc.args, IOStreams{Out: &out, ErrOut: &errOut}); code != 0 {
			t.Errorf("trace %v: exit %d, %s", tc.args, code, errOut.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.HasPrefix(lines[0], "TIME") {
			t.Errorf("trace %v: header %q", tc.args, lines[0])
		}
		if got := len(lines) - 1; got != tc.wantLines {
			t.Errorf("trace %v: %d hops, want %d:\n%s", tc.args, got, tc.wantLines, out.String())
		}
		rest := out.String()
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("trace %v: %q missing or out of order:\n%s", tc.args, w, out.String())
				break
			}
			rest = rest[i+len(w):]
		}
		for _, w := range tc.wantNot {
			if strings.Contains(out.String(), w) {
				t.Errorf("trace %v: shows %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}

func TestRunBadInput(t *testing.T) {
	r := New(10, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"a", "b"}, "error: at most one NAME or TYPE/NAME, got 2 arguments"},
		{[]string{"widgets/x"}, `error: unknown resource type "widgets"`},
		{[]string{"--kind=gossip"}, `error: unknown kind "gossip"`},
		{[]string{"--nope"}, "error: unknown flag: --nope"},
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), r, tc.args, IOStreams{Out: &out, ErrOut: &errOut}); code != 1 {
			t.Errorf("trace %v: exit %d, want 1", tc.args, code)
		}
		if !strings.HasPrefix(errOut.String(), tc.want) {
			t.Errorf("trace %v: stderr %q, want prefix %q", tc.args, errOut.String(), tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("trace %v: printed %q", tc.args, out.String())
		}
	}
}

func TestRunFollow(t *testing.T) {
	r := New(10, nil)
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "get", Resource: "pods", Namespace: "default", Name: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan int)
	go func() { done <- Run(ctx, r, []string{"-f"}, IOStreams{Out: &out, ErrOut: &out}) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "default/a") {
		if time.Now().After(deadline) {
			t.Fatalf("no first hop: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "get", Resource: "pods", Namespace: "default", Name: "b"})
	for !strings.Contains(out.String(), "default/b") {
		if time.Now().After(deadline) {
			t.Fatalf("a followed hop did not show: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func names(hops []Hop) string {
	var s []string
	for _, h := range hops {
		s = append(s, h.Name)
	}
	return strings.Join(s, " ")
}

// trace NAME starts at the object's (latest) creation and prints every
// matching hop from there, however many; --tail still cuts.
func TestRunNameStartsAtCreation(t *testing.T) {
	r := New(1000, testingclock.NewFakePassiveClock(t0))
	// An older web, created and deleted: not this web's story.
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "create", Resource: "deployments.apps", Namespace: "default", Name: "web"})
	r.Record(Hop{Kind: Request, From: "kubelet/node-1", To: APIServer, Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-old-1"})
	r.Record(Hop{Kind: Request, From: "kubectl", To: APIServer, Verb: "create", Resource: "deployments.apps", Namespace: "default", Name: "web", Detail: "the second"})
	for i := 0; i < 80; i++ {
		r.Record(Hop{Kind: Request, From: "kubelet/node-1", To: APIServer, Verb: "create", Resource: "events", Namespace: "default", Name: fmt.Sprintf("web-5d9c7b8f6-x2x7k.%d", i)})
	}
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), r, []string{"web"}, IOStreams{Out: &out, ErrOut: &errOut}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+81 || !strings.Contains(lines[1], "create deployments.apps default/web: the second") || strings.Contains(out.String(), "web-old-1") {
		t.Fatalf("trace web printed %d lines, first %q:\n%s", len(lines), lines[1], out.String())
	}
	out.Reset()
	Run(context.Background(), r, []string{"web", "--tail=3"}, IOStreams{Out: &out, ErrOut: &errOut})
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 3 {
		t.Fatalf("trace web --tail=3 printed %d hops", n)
	}
	// An exact name matches its own creation too (here, one event).
	out.Reset()
	Run(context.Background(), r, []string{"web-5d9c7b8f6-x2x7k.1"}, IOStreams{Out: &out, ErrOut: &errOut})
	if n := strings.Count(strings.TrimSpace(out.String()), "\n"); n != 1 {
		t.Fatalf("trace of an event: %d hops:\n%s", n, out.String())
	}
}
