package snapshot_test

import (
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubetab/kubetab/core/snapshot"
	"github.com/kubetab/kubetab/core/store"
)

// storeWith makes a store holding keys (value = key's bytes unless given)
// and returns its snapshot.
func storeWith(t testing.TB, kvs map[string][]byte) []byte {
	t.Helper()
	s := store.New(store.Config{})
	for k, v := range kvs {
		if v == nil {
			v = []byte("value of " + k)
		}
		if _, err := s.Create(k, v); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := s.Snapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func keysOf(t *testing.T, snap []byte) []string {
	t.Helper()
	s, err := store.Restore(bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	kvs, _ := s.List("/")
	var keys []string
	for _, kv := range kvs {
		keys = append(keys, kv.Key+"="+string(kv.Value))
	}
	return keys
}

// A link carries every key but the events, byte for byte.
func TestLinkRoundTrip(t *testing.T) {
	snap := storeWith(t, map[string][]byte{
		"/registry/deployments/default/web":   nil,
		"/registry/pods/default/web-1":        nil,
		"/registry/events/default/web-1.abc":  nil,
		"/registry/events/default/web-1.abd":  nil,
		"/registry/configmaps/default/config": []byte(strings.Repeat("x", 5000)),
	})
	link, err := snapshot.EncodeLink(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, "1.") || strings.ContainsAny(link, "+/=#&") {
		t.Fatalf("link %q is not 1.base64url", link)
	}
	got, err := snapshot.DecodeLink(link)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/registry/configmaps/default/config=" + strings.Repeat("x", 5000),
		"/registry/deployments/default/web=value of /registry/deployments/default/web",
		"/registry/pods/default/web-1=value of /registry/pods/default/web-1",
	}
	if g := keysOf(t, got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("keys after the link:\n%v\nwant\n%v", g, want)
	}
	if err := snapshot.Check(got); err != nil {
		t.Fatal(err)
	}
}

// A cluster whose compressed snapshot exceeds the cap gets ErrLinkTooLarge
// with its size; one just under fits.
func TestLinkSizeCap(t *testing.T) {
	random := make([]byte, 20<<10) // does not compress
	rand.Read(random)
	_, err := snapshot.EncodeLink(storeWith(t, map[string][]byte{"/registry/secrets/default/big": random}))
	if !errors.Is(err, snapshot.ErrLinkTooLarge) || !strings.Contains(err.Error(), "KB of link") {
		t.Fatalf("20 KB of random bytes: %v", err)
	}
	link, err := snapshot.EncodeLink(storeWith(t, map[string][]byte{"/registry/secrets/default/small": random[:10<<10]}))
	if err != nil || len(link) > snapshot.MaxLink {
		t.Fatalf("10 KB of random bytes: %d %v", len(link), err)
	}
}

func deflate(t *testing.T, data []byte) string {
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(data)
	w.Close()
	return base64.RawURLEncoding.EncodeToString(z.Bytes())
}

// Bad links are refused with ErrBadLink and say why; nothing is returned.
func TestBadLinks(t *testing.T) {
	good, err := snapshot.EncodeLink(storeWith(t, map[string][]byte{"/registry/pods/default/a": nil}))
	if err != nil {
		t.Fatal(err)
	}
	// 10 MB of zeros deflate to about 10 KB: a link-sized bomb.
	bomb := "1." + deflate(t, make([]byte, 10<<20))
	if len(bomb) > snapshot.MaxLink {
		t.Fatalf("the bomb is %d bytes, not link-sized", len(bomb))
	}
	for _, tc := range []struct{ name, link, want string }{
		{"empty", "", "no format version"},
		{"no version", "eJzLSM3JyQcABiwCFQ", "no format version"},
		{"wrong version", "2." + strings.TrimPrefix(good, "1."), `format version "2" (this kubetab reads version 1)`},
		{"garbage", "1.!!!not base64!!!", "not base64url"},
		{"not deflate", "1." + base64.RawURLEncoding.EncodeToString([]byte("hello world, not compressed")), "not compressed data"},
		{"truncated", good[:len(good)*2/3], "truncated"},
		{"not a snapshot", "1." + deflate(t, []byte("hello")), "not a kubetab store snapshot"},
		{"bomb", bomb, "expands to more than 4 MB"},
		{"too long", "1." + strings.Repeat("A", snapshot.MaxLink), "longer than a link may be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := snapshot.DecodeLink(tc.link)
			if !errors.Is(err, snapshot.ErrBadLink) || !strings.Contains(err.Error(), tc.want) || got != nil {
				t.Fatalf("got %v (%d bytes), want ErrBadLink with %q", err, len(got), tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	snap := storeWith(t, map[string][]byte{"/registry/pods/default/a": nil})
	if err := snapshot.Check(snap); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(snap)
	bad[len(bad)-40] ^= 1
	if err := snapshot.Check(bad); !errors.Is(err, store.ErrSnapshotCorrupt) {
		t.Fatalf("a flipped bit: %v", err)
	}
}
