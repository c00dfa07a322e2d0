package wal

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kubetab/kubetab/core/store"
)

// Writes, deletes, transactions and checkpoints survive a reopen exactly.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, l, err := Open(dir, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Create("/a", []byte("1"))
	s.Create("/b", []byte("2"))
	s.Update("/a", []byte("3"), 0)
	if err := l.Checkpoint(s); err != nil {
		t.Fatal(err)
	}
	s.Delete("/b", 0)
	s.Txn(store.TxnRequest{Then: []store.Op{store.OpPut("/c", []byte("4")), store.OpPut("/d", []byte("5"))}})
	s.Txn(store.TxnRequest{Then: []store.Op{store.OpDelete("/zz")}}) // deletes nothing: not logged
	want, _ := s.List("/")
	rev := s.Revision()
	l.Close()

	s2, l2, err := Open(dir, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	got, rev2 := s2.List("/")
	if rev2 != rev || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reopened at %d: %v; want %d: %v", rev2, got, rev, want)
	}
	if segs, _ := listSegments(dir); len(segs) != 2 {
		t.Fatalf("segments after a checkpoint and a reopen: %v", segs)
	}
}

// A torn last record (a write cut off by a crash) is dropped; the rest
// stays.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	s, l, err := Open(dir, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Create("/a", []byte("1"))
	s.Create("/b", []byte("2"))
	l.Close()
	segs, _ := listSegments(dir)
	path := filepath.Join(dir, segs[len(segs)-1])
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-3], 0o600)
	s2, l2, err := Open(dir, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if _, err := s2.Get("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get("/b"); err == nil {
		t.Fatal("the torn record was applied")
	}
	if _, err := s2.Create("/c", []byte("3")); err != nil {
		t.Fatal(err)
	}
}

// TestCrashWriter is the child of TestKill9LosesNoAcknowledgedWrite: it
// writes under load and prints "ack KEY VALUE" after each write returns.
func TestCrashWriter(t *testing.T) {
	dir := os.Getenv("KUBETAB_WAL_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestKill9LosesNoAcknowledgedWrite")
	}
	run := os.Getenv("KUBETAB_WAL_CRASH_RUN")
	s, l, err := Open(dir, store.Config{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	var mu sync.Mutex // one line at a time on stdout
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key := fmt.Sprintf("/crash/%s/%d/%d", run, g, i)
				val := fmt.Sprintf("v%d", i)
				if _, err := s.Create(key, []byte(val)); err != nil {
					fmt.Println("write:", err)
					os.Exit(2)
				}
				if i%3 == 2 { // an update of an older key, acknowledged too
					prev := fmt.Sprintf("/crash/%s/%d/%d", run, g, i-2)
					if _, err := s.Update(prev, []byte("u"), 0); err != nil {
						os.Exit(2)
					}
					mu.Lock()
					fmt.Println("ack", prev, "u")
					mu.Unlock()
				}
				mu.Lock()
				fmt.Println("ack", key, val)
				mu.Unlock()
				if g == 0 && i%150 == 149 {
					if err := l.Checkpoint(s); err != nil {
						os.Exit(2)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// kill -9 under write load, 20 times on one data directory: after each,
// reopening finds every acknowledged write (the WAL is synced before a
// write returns), and the store goes on from there.
func TestKill9LosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 20 writer processes")
	}
	if runtime.GOOS == "js" {
		t.Skip("js/wasm has no processes to kill; the log's durability is a native concern (kubetab cluster --data-dir)")
	}
	dir := t.TempDir()
	acked := map[string]string{}
	total := 0
	for run := 0; run < 20; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$", "-test.v=false")
		cmd.Env = append(os.Environ(), "KUBETAB_WAL_CRASH_DIR="+dir, fmt.Sprintf("KUBETAB_WAL_CRASH_RUN=%d", run))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Kill after a random number of acknowledgements (not a time).
		killAfter := 50 + rand.Intn(400)
		n := 0
		for line := range lines {
			if k, ok := strings.CutPrefix(line, "ack "); ok {
				key, val, _ := strings.Cut(k, " ")
				acked[key] = val
				n++
				if n == killAfter {
					cmd.Process.Kill() // SIGKILL: no chance to flush anything
				}
			} else if line != "ready" && line != "" && !strings.HasPrefix(line, "PASS") && !strings.HasPrefix(line, "ok") {
				t.Fatalf("run %d: writer said %q", run, line)
			}
		}
		cmd.Wait()
		total += n
		s, l, err := Open(dir, store.Config{})
		if err != nil {
			t.Fatalf("run %d: reopen: %v", run, err)
		}
		for key, val := range acked {
			kv, err := s.Get(key)
			// The update to "u" may have been written and not yet
			// acknowledged: a later value is no loss.
			if err != nil || (string(kv.Value) != val && string(kv.Value) != "u") {
				t.Fatalf("run %d: acknowledged %s=%s, after kill -9: %q, %v", run, key, val, kv.Value, err)
			}
		}
		l.Close()
	}
	t.Logf("20 kill -9 runs, %d acknowledged writes, none lost", total)
}
