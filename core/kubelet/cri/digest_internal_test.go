package cri

import "testing"

// TestContentDigest: an image content's digest is worked out once and kept
// by its identity: two contents in one allocation (same length, other
// offset) keep their own digests, a copy gets its own, and a digest
// recorded ahead (KnownDigest) is the one given.
func TestContentDigest(t *testing.T) {
	buf := []byte("aaaabbbb")
	a, b := buf[:4], buf[4:]
	if contentDigest(a) != Digest(a) || contentDigest(b) != Digest(b) || contentDigest(a) == contentDigest(b) {
		t.Fatalf("two contents of one allocation share a digest: %s %s", contentDigest(a), contentDigest(b))
	}
	c := append([]byte(nil), a...)
	if contentDigest(c) != Digest(a) {
		t.Errorf("a copy's digest = %s, want %s", contentDigest(c), Digest(a))
	}
	known := []byte("the module")
	KnownDigest(known, "sha256:recorded")
	if got := contentDigest(known); got != "sha256:recorded" {
		t.Errorf("after KnownDigest, contentDigest = %s", got)
	}
	if contentDigest(nil) != Digest(nil) {
		t.Error("empty content")
	}
}
