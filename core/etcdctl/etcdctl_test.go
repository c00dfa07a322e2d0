package etcdctl

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixture is a small cluster's store, written the way kube-apiserver writes:
//
//	rev 2  create namespace default
//	rev 3  create pod web-1          rev 6  update pod web-1 (status)
//	rev 4  create pod web-2          rev 7  delete pod web-2
//	rev 5  create deployment web     rev 8  create pod web-3
func fixture(t testing.TB) *store.Store {
	t.Helper()
	s := store.New(store.Config{})
	must := func(_ store.KeyValue, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Create("/registry/namespaces/default", []byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"default"}}`)))
	must(s.Create("/registry/pods/default/web-1", []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default"},"status":{"phase":"Pending"}}`)))
	must(s.Create("/registry/pods/default/web-2", []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-2","namespace":"default"},"status":{"phase":"Pending"}}`)))
	must(s.Create("/registry/deployments/default/web", []byte(`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"default"}}`)))
	must(s.Update("/registry/pods/default/web-1", []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default"},"status":{"phase":"Running"}}`), 3))
	must(s.Delete("/registry/pods/default/web-2", 0))
	must(s.Create("/registry/pods/default/web-3", []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-3","namespace":"default"},"status":{"phase":"Pending"}}`)))
	return s
}

// run runs one command line and renders it like a terminal session.
func run(ctx context.Context, s *store.Store, args []string, out, errOut *bytes.Buffer) int {
	return Run(ctx, args, IOStreams{Out: out, ErrOut: errOut}, s)
}

func commandLine(args []string) string {
	var quoted []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'") {
			a = strconv.Quote(a)
		}
		quoted = append(quoted, a)
	}
	return "$ etcdctl " + strings.Join(quoted, " ")
}

func render(b *strings.Builder, args []string, out, errOut string, code int) {
	fmt.Fprintf(b, "%s\n%s", commandLine(args), out)
	if errOut != "" {
		fmt.Fprintf(b, "[stderr]\n%s", errOut)
	}
	if code != 0 {
		fmt.Fprintf(b, "[exit %d]\n", code)
	}
	b.WriteString("\n")
}

func transcript(t *testing.T, s *store.Store, lines ...[]string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range lines {
		var out, errOut bytes.Buffer
		code := run(context.Background(), s, args, &out, &errOut)
		render(&b, args, out.String(), errOut.String(), code)
	}
	return b.String()
}

// golden compares got with testdata/name.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func a(line string) []string { return strings.Fields(line) }

func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*store.Store)
		lines [][]string
	}{
		{"get", nil, [][]string{
			a("get /registry/pods --prefix --keys-only"),
			a("get /registry/pods/default/web-1"),
			a("get /registry/pods --prefix --print-value-only --limit 1"),
			a("get /registry/pods/default/web-1 --rev 3"),
			a("get /registry/pods/default/web-2 --rev 4"),
			a("get /registry/pods/default/web-2"),
			a("get /registry/deployments /registry/pods/default/web-2"),
			{"get", "", "--prefix", "--keys-only"},
			a("get /registry/pods/default/web-3 --from-key --keys-only"),
		}},
		{"get-json", nil, [][]string{
			a("get /registry/pods/default/web-1 -w json"),
			a("get /registry/pods --prefix --keys-only --limit 1 -w json"),
			a("get /registry/nothing -w json"),
		}},
		{"get-errors", func(s *store.Store) { s.Compact(4) }, [][]string{
			a("get"),
			a("get /a --prefix --from-key"),
			a("get /a /b --prefix"),
			{"get", ""},
			a("get /registry/pods --prefix --rev 3"),
			a("get /registry/pods --prefix --rev 100"),
			a("get /registry/pods -w table"),
			a("get /registry/pods -w yaml"),
			a("get /registry/pods/default/web-1 --print-value-only -w json"),
			a("get /registry/pods --bogus"),
		}},
		{"endpoint-compaction", nil, [][]string{
			a("endpoint status"),
			a("endpoint status -w table"),
			a("endpoint status -w json"),
			a("--endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt endpoint status -w table"),
			a("compaction 6"),
			a("compaction 6"),
			a("compaction 99"),
			a("compaction abc"),
			a("compaction"),
			a("endpoint status -w table"),
			a("endpoint status -w fields"),
		}},
		{"read-only", nil, [][]string{
			a("put /registry/pods/default/evil {}"),
			a("del /registry/pods --prefix"),
			a("txn"),
			a("snapshot save /tmp/x.db"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fixture(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			golden(t, tc.name, transcript(t, s, tc.lines...))
		})
	}
}

func TestReadOnly(t *testing.T) {
	s := fixture(t)
	for _, line := range []string{"put /x y", "del /registry/pods/default/web-1", "txn"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), s, a(line), &out, &errOut); code != ExitError {
			t.Fatalf("%s: exit %d", line, code)
		}
	}
	if s.Revision() != 8 {
		t.Fatalf("etcdctl wrote to the store: revision %d", s.Revision())
	}
}

// syncBuffer is an output a test can wait on while a watch writes to it.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLines waits until the output has n lines. The deadline only keeps a
// broken watch from hanging the test.
func (b *syncBuffer) waitLines(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for strings.Count(b.String(), "\n") < n {
		select {
		case <-b.wrote:
		case <-deadline:
			t.Fatalf("waited for %d lines, have:\n%s", n, b.String())
		}
	}
}

func TestWatchGolden(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		write func(*store.Store) // writes made while the watch runs
		lines int                // lines of output to wait for before Ctrl-C
	}{
		{"replay and follow a prefix", a("watch /registry/pods --prefix --rev 2"),
			func(s *store.Store) { s.Create("/registry/pods/default/web-4", []byte(`{"kind":"Pod"}`)) }, 18},
		{"one key with its previous values", a("watch /registry/pods/default/web-1 --prev-kv --rev 1"),
			func(s *store.Store) { s.Delete("/registry/pods/default/web-1", 0) }, 12},
		{"json", a("watch /registry/pods/default/web-2 --rev 4 -w json"), nil, 2},
		{"a start revision in the future waits for it", a("watch /registry/ --prefix --rev 10"),
			func(s *store.Store) {
				s.Create("/registry/a", []byte("9"))
				s.Create("/registry/b", []byte("10"))
			}, 3},
	}
	var b strings.Builder
	for _, tc := range cases {
		s := fixture(t)
		ctx, cancel := context.WithCancel(context.Background())
		out, errOut := newSyncBuffer(), newSyncBuffer()
		done := make(chan int)
		go func() { done <- Run(ctx, tc.args, IOStreams{Out: out, ErrOut: errOut}, s) }()
		// Writes go in once the watch is registered: it shows as a watcher.
		waitWatchers(t, s, 1)
		if tc.write != nil {
			tc.write(s)
		}
		out.waitLines(t, tc.lines)
		cancel() // Ctrl-C
		code := <-done
		fmt.Fprintf(&b, "# %s\n", tc.name)
		render(&b, tc.args, out.String(), errOut.String(), code)
	}
	golden(t, "watch", b.String())
}

func TestWatchErrors(t *testing.T) {
	s := fixture(t)
	s.Compact(5)
	golden(t, "watch-errors", transcript(t, s,
		a("watch"),
		a("watch /a /b /c"),
		a("watch /a /b --prefix"),
		a("watch /registry --prefix --rev 3"),
		a("watch /registry -w table"),
	))
}

// A watcher dropped for falling behind is cancelled by the server.
func TestWatchDroppedWatcher(t *testing.T) {
	s := store.New(store.Config{WatcherQueueLimit: 2})
	out := &stuckWriter{started: make(chan struct{}), release: make(chan struct{})}
	var errOut bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() { done <- Run(ctx, a("watch /k --prefix"), IOStreams{Out: out, ErrOut: &errOut}, s) }()
	waitWatchers(t, s, 1)
	s.Create("/k0", nil)
	<-out.started // etcdctl is stuck printing the first event
	// The pump may hold one event on its way to etcdctl; then two fill the
	// queue and the next one overflows it.
	for i := 1; i <= 4; i++ {
		s.Create(fmt.Sprint("/k", i), nil)
	}
	close(out.release)
	if code := <-done; code != ExitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	want := "watch was canceled (store: watcher fell too far behind and was dropped)\nError: watch is canceled by the server\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut.String(), want)
	}
}

// stuckWriter blocks its first write until released: a terminal nobody reads.
type stuckWriter struct {
	once             sync.Once
	started, release chan struct{}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.started)
		<-w.release
	})
	return len(p), nil
}

// waitWatchers waits until the store has n open watches. The deadline only
// keeps a broken command from hanging the test.
func waitWatchers(t *testing.T, s *store.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Status().Watchers < n {
		if time.Now().After(deadline) {
			t.Fatalf("no watch registered")
		}
		time.Sleep(time.Millisecond)
	}
}
