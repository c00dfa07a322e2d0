package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetab/kubetab/site"
)

// syncBuffer is a bytes.Buffer that serve can write while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServe starts `kubetab serve` on a free loopback port, fetches the page,
// and stops it by cancelling its context (what Ctrl-C does).
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", "", out) }()

	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" {
		if i := strings.Index(out.String(), "http://"); i >= 0 && strings.HasSuffix(out.String(), "\n") {
			url = strings.TrimSpace(out.String()[i:])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no address: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if site.Built() {
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "kubetab") {
			t.Errorf("GET /: %d %.100q", res.StatusCode, body)
		}
	} else if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "build.sh build") {
		t.Errorf("GET / of an unbuilt site: %d %q", res.StatusCode, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}
