package session_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
	"github.com/kubetab/kubetab/wasm/images"
)

// newSession starts a session that stops when the test ends.
func newSession(t *testing.T, cfg session.Config) *session.Session {
	t.Helper()
	if cfg.Images == nil {
		cfg.Images = images.New()
	}
	cfg.WaitForCaches = true
	s, err := session.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// run runs console input and returns what it printed.
func run(t *testing.T, s *session.Session, input string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code = s.Run(ctx, input, console.Streams{Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// mustRun runs console input that must succeed.
func mustRun(t *testing.T, s *session.Session, input string) string {
	t.Helper()
	out, errOut, code := run(t, s, input)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", input, code, out, errOut)
	}
	return out
}

// eventually runs a console line until its output contains want.
func eventually(t *testing.T, s *session.Session, line, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, errOut, _ := run(t, s, line)
		if strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q; last:\n%s%s", line, want, out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 1
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: hello
        image: hello
`

// kubectl -f reads the console's files, those the page or a lesson put
// there included, and a missing one answers as upstream kubectl does.
func TestKubectlReadsTheConsoleFiles(t *testing.T) {
	files := console.NewFiles()
	s := newSession(t, session.Config{Files: files})
	if s.Files() != files {
		t.Fatal("Files() is not the Config's Files")
	}
	if err := files.WriteFile("app/d.yaml", []byte(deployment)); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "kubectl apply -f app/"); got != "deployment.apps/d created\n" {
		t.Errorf("apply -f app/ printed %q", got)
	}
	eventually(t, s, "kubectl get deploy d -o jsonpath={.status.readyReplicas}", "1")

	_, errOut, code := run(t, s, "kubectl apply -f my-app.yaml")
	if code != 1 || errOut != "error: the path \"my-app.yaml\" does not exist\n" {
		t.Errorf("apply -f my-app.yaml = %d %q", code, errOut)
	}
}

// The lesson's path: a here-document writes a manifest, kubectl applies
// it, and a pipe feeds one kubectl's YAML to another's -f -.
func TestHeredocApplyAndPipes(t *testing.T) {
	s := newSession(t, session.Config{})
	script := "cat <<EOF > d.yaml\n" + deployment + "EOF\nkubectl apply -f d.yaml"
	if got := mustRun(t, s, script); got != "deployment.apps/d created\n" {
		t.Errorf("apply printed %q", got)
	}
	if got := mustRun(t, s, "ls"); got != "d.yaml\n" {
		t.Errorf("ls = %q", got)
	}
	if got := mustRun(t, s, "kubectl get deploy d -o jsonpath={.spec.replicas}"); got != "1" {
		t.Errorf("replicas = %q", got)
	}
	// Round trip through a pipe. The YAML carries the resourceVersion, so
	// (as upstream) it conflicts if a controller wrote in between: wait for
	// the Deployment to settle.
	eventually(t, s, "kubectl get deploy d -o jsonpath={.status.readyReplicas}", "1")
	if got := mustRun(t, s, "kubectl get deploy d -o yaml | kubectl apply -f -"); got != "deployment.apps/d configured\n" && got != "deployment.apps/d unchanged\n" {
		t.Errorf("get -o yaml | apply -f - printed %q", got)
	}
	// A change made in the pipe reaches the cluster.
	mustRun(t, s, "kubectl get deploy d -o yaml | grep -v resourceVersion > d2.yaml")
	mustRun(t, s, "kubectl scale deploy d --replicas=2 && kubectl get deploy d -o jsonpath={.spec.replicas} > n.txt")
	if got := mustRun(t, s, "cat n.txt"); got != "2" {
		t.Errorf("n.txt = %q", got)
	}
	eventually(t, s, "kubectl get pods -l app=d --no-headers | grep -c Running", "2")
	if got := mustRun(t, s, "kubectl get pods -l app=d -o name | wc -l"); got != "2\n" {
		t.Errorf("pods | wc -l = %q", got)
	}
	_, errOut, code := run(t, s, "kubectl get deploy nope 2>&1 | grep -c NotFound; kubectl get deploy nope 2>/dev/null || echo gone")
	if code != 0 || errOut != "" {
		t.Errorf("= %d %q", code, errOut)
	}
}

// kubectl get -w | grep streams in the console, and Ctrl-C ends both.
func TestWatchThroughGrep(t *testing.T) {
	s := newSession(t, session.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan int)
	go func() {
		done <- s.Run(ctx, "kubectl get pods -w | grep --line-buffered watched", console.Streams{Out: &out, ErrOut: &out})
	}()
	mustRun(t, s, "kubectl run watched --image=hello")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "watched") {
		if time.Now().After(deadline) {
			t.Fatalf("the watch did not reach grep: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C did not end kubectl get -w | grep")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The lesson "a Pending pod schedules once a node joins", in console
// commands: a pod too big for the nodes stays Pending (Insufficient cpu);
// `node add` a bigger one and it runs there.
func TestNodeAddSchedulesAPendingPod(t *testing.T) {
	s := newSession(t, session.Config{})
	mustRun(t, s, `cat <<'EOF' | kubectl apply -f -
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  containers:
  - name: hello
    image: hello
    resources:
      requests:
        cpu: "6"
EOF`)
	eventually(t, s, "kubectl get events --field-selector reason=FailedScheduling", "Insufficient cpu")
	if got := mustRun(t, s, "kubectl get pod big -o jsonpath={.status.phase}"); got != "Pending" {
		t.Fatalf("big is %q before the node joins", got)
	}
	if got := mustRun(t, s, "node add node-4 --cpu=8 --memory=16Gi --label size=big"); got != "node/node-4 added: kubectl get nodes shows it Ready in a moment\n" {
		t.Errorf("node add printed %q", got)
	}
	eventually(t, s, "kubectl get pod big -o jsonpath={.spec.nodeName}/{.status.phase}", "node-4/Running")
	eventually(t, s, "kubectl get nodes -l size=big --no-headers", "node-4   Ready")

	// node remove: the Node object goes at once.
	out := mustRun(t, s, "node remove node-4 && kubectl get nodes -o name")
	if !strings.Contains(out, "node/node-4 removed") || strings.Contains(out, "node/node-4\n") {
		t.Errorf("node remove then get nodes printed %q", out)
	}
	if _, _, code := run(t, s, "kubectl get node node-4"); code != 1 {
		t.Errorf("kubectl get node node-4 after remove: exit %d", code)
	}
}

// Reset with nodes makes a fresh cluster of those nodes and empties the
// files; Reset(nil) goes back to the Config's nodes. The shell, its files
// and the handler stay the same values.
func TestResetWithNodes(t *testing.T) {
	s := newSession(t, session.Config{})
	files := s.Files()
	mustRun(t, s, "echo x > notes.txt; kubectl create namespace old")
	ctx := context.Background()
	err := s.Reset(ctx, []cluster.NodeSpec{
		{Name: "worker-a", CPU: resource.MustParse("2"), Labels: map[string]string{"zone": "a"}},
		{Name: "worker-b", Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Files() != files || len(files.List()) != 0 {
		t.Errorf("after Reset: files %q (same value: %v)", files.List(), s.Files() == files)
	}
	eventually(t, s, "kubectl get nodes -o jsonpath={.items[*].metadata.name}", "worker-a worker-b")
	if got := mustRun(t, s, "kubectl get node worker-b -o jsonpath={.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect}"); got != "dedicated=db:NoSchedule" {
		t.Errorf("worker-b taint = %q", got)
	}
	if got := mustRun(t, s, "kubectl get node worker-a -o jsonpath={.status.capacity.cpu}/{.metadata.labels.zone}"); got != "2/a" {
		t.Errorf("worker-a = %q", got)
	}
	if _, _, code := run(t, s, "kubectl get namespace old"); code != 1 {
		t.Error("the old cluster's namespace is still there")
	}
	// Bad nodes change nothing.
	if err := s.Reset(ctx, []cluster.NodeSpec{{Name: "Bad_Name"}}); err == nil {
		t.Error("Reset with a bad node name succeeded")
	}
	if err := s.Reset(ctx, []cluster.NodeSpec{}); err == nil {
		t.Error("Reset with no nodes succeeded")
	}
	if got := mustRun(t, s, "kubectl get nodes -o name | wc -l"); got != "2\n" {
		t.Errorf("after refused Resets: %q nodes", got)
	}
	if err := s.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "kubectl get nodes -o jsonpath={.items[*].metadata.name}", "node-1 node-2 node-3")
}

// Restore brings back the cluster a snapshot holds, with its nodes; a bad
// one changes nothing.
func TestRestore(t *testing.T) {
	s := newSession(t, session.Config{})
	ctx := context.Background()
	if err := s.Reset(ctx, []cluster.NodeSpec{{Name: "worker-a"}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "kubectl create namespace kept")
	var snap bytes.Buffer
	if err := s.Cluster().Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "kubectl create namespace later")
	if err := s.Restore(ctx, snap.Bytes()); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "kubectl get namespaces -o name", "namespace/kept")
	if out := mustRun(t, s, "kubectl get namespaces -o name"); strings.Contains(out, "later") {
		t.Errorf("namespace/later after Restore: %s", out)
	}
	eventually(t, s, "kubectl get nodes -o jsonpath={.items[*].metadata.name}", "worker-a")
	before := s.Cluster()
	for _, bad := range [][]byte{nil, []byte("garbage"), snap.Bytes()[:snap.Len()/2]} {
		if err := s.Restore(ctx, bad); !errors.Is(err, cluster.ErrBadSnapshot) {
			t.Errorf("Restore(%d bytes): %v", len(bad), err)
		}
	}
	if s.Cluster() != before {
		t.Error("a refused Restore replaced the cluster")
	}
	// The session's next fresh cluster is fresh: not the snapshot again.
	if err := s.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, code := run(t, s, "kubectl get namespace kept"); code != 1 {
		t.Error("Reset after Restore kept the snapshot's namespace")
	}
}
