package main

import (
	"bytes"
	"context"
	"io"
	"net"
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
	go func() { done <- serve(ctx, "127.0.0.1:0", "", nil, out) }()

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

// startServe runs serve with a kiosk config until the test ends and returns
// its base URL and what it printed.
func startServeWith(t *testing.T, addr string, kiosk *kioskConfig) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, addr, "", kiosk, out) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := out.String()
		if i := strings.Index(s, "http://"); i >= 0 {
			if j := strings.Index(s[i:], "\n"); j >= 0 {
				return strings.TrimSpace(s[i : i+j]), out
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no address: %q", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeKiosk: --kiosk serves kiosk.json (its presence makes the page a
// kiosk) and says so; without it there is no kiosk.json.
func TestServeKiosk(t *testing.T) {
	if !site.Built() {
		t.Skip("the site is not built")
	}
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	url, out := startServeWith(t, "127.0.0.1:0", &kioskConfig{IdleSeconds: 300})
	if code, body := get(url + "kiosk.json"); code != http.StatusOK || body != `{"idleSeconds":300}` {
		t.Errorf("GET kiosk.json with --kiosk: %d %q", code, body)
	}
	if !strings.Contains(out.String(), "kiosk mode: New student button, reset after 5m0s without input") {
		t.Errorf("serve --kiosk printed %q", out.String())
	}
	plain, _ := startServeWith(t, "127.0.0.1:0", nil)
	if code, _ := get(plain + "kiosk.json"); code != http.StatusNotFound {
		t.Errorf("GET kiosk.json without --kiosk: %d, want 404", code)
	}
}

// TestShareURLs: loopback has nothing to share; a specific address is
// itself; 0.0.0.0 is every non-loopback IPv4 address of the machine.
func TestShareURLs(t *testing.T) {
	if got := shareURLs(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}); got != nil {
		t.Errorf("loopback: %v", got)
	}
	if got := shareURLs(&net.TCPAddr{IP: net.IPv4(192, 168, 1, 20), Port: 8080}); len(got) != 1 || got[0] != "http://192.168.1.20:8080/" {
		t.Errorf("192.168.1.20: %v", got)
	}
	for _, u := range shareURLs(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}) {
		if strings.HasPrefix(u, "http://127.") || !strings.HasSuffix(u, ":8080/") {
			t.Errorf("0.0.0.0: %q", u)
		}
	}
}
