// Package snapshot carries a whole cluster between places: the browser's
// IndexedDB (the page's cluster survives a reload), a file (export and
// import), and a share link (a small cluster in a URL, so a teacher can
// hand every student the same starting point).
//
// Upstream counterpart: `etcdctl snapshot save` and `etcdutl snapshot
// restore`, the way a real cluster is backed up and brought back: the state
// of a Kubernetes cluster is its etcd, nothing else. The bytes are the
// store's own snapshot format (core/store: magic, format version, every
// key with its revisions, SHA-256), restored by core/cluster
// (Config.Snapshot), which also refuses a value no resource can decode.
//
// A share link packs the same bytes smaller:
//
//	https://…/#cluster=1.<base64url( deflate( snapshot without events ) )>
//	                   │  └ RFC 4648 §5, no padding: safe in a URL
//	                   └ the link's format version
//
// Events are left out of links: they are a log of what happened, not
// state, they take most of a small cluster's bytes, and kube-apiserver
// drops them after an hour anyway (--event-ttl). A link is refused when it
// would be longer than MaxLink characters, and a link read back may expand
// to at most MaxExpanded bytes, so a crafted link (a "zip bomb": a few KB
// that inflate to gigabytes) cannot exhaust the tab's memory.
package snapshot

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubetab/kubetab/core/store"
)

const (
	// LinkVersion is the share link's format version, before the dot.
	LinkVersion = "1"
	// MaxLink is the longest link payload (after "#cluster=") written or
	// read: 16 KiB of URL, which every browser and chat client carries.
	MaxLink = 16 << 10
	// MaxExpanded is the most bytes a link may inflate to.
	MaxExpanded = 4 << 20
	// FragmentKey names the link's payload in the URL fragment.
	FragmentKey = "cluster"
)

// Errors, each wrapped with the detail.
var (
	// ErrLinkTooLarge: the cluster does not fit a link (export a file).
	ErrLinkTooLarge = errors.New("snapshot: the cluster is too large for a share link")
	// ErrBadLink: the link is damaged, truncated or of another version.
	ErrBadLink = errors.New("snapshot: bad share link")
)

// eventsPrefix is where the events live in the store.
const eventsPrefix = "/registry/events/"

// ForLink returns snap (a store snapshot) without its events: what a link
// carries. snap is checked as the store checks it.
func ForLink(snap []byte) ([]byte, error) {
	s := store.New(store.Config{})
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		return nil, err
	}
	kvs, _ := s.List(eventsPrefix)
	for _, kv := range kvs {
		if _, err := s.Delete(kv.Key, kv.ModRevision); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := s.Snapshot(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// EncodeLink packs a store snapshot into a link payload ("1.…"): the
// events dropped, the rest deflated and base64url-encoded. A payload longer
// than MaxLink is ErrLinkTooLarge, with the sizes.
func EncodeLink(snap []byte) (string, error) {
	small, err := ForLink(snap)
	if err != nil {
		return "", err
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		return "", err
	}
	w.Write(small)
	if err := w.Close(); err != nil {
		return "", err
	}
	link := LinkVersion + "." + base64.RawURLEncoding.EncodeToString(z.Bytes())
	if len(link) > MaxLink {
		return "", fmt.Errorf("%w: %d KB of link (the limit is %d KB; export it to a file instead)", ErrLinkTooLarge, (len(link)+1023)/1024, MaxLink/1024)
	}
	return link, nil
}

// DecodeLink unpacks a link payload to a store snapshot, checked as the
// store checks one (core/cluster checks its objects when it starts from
// it). Anything wrong is ErrBadLink with what is wrong.
func DecodeLink(link string) ([]byte, error) {
	bad := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrBadLink}, args...)...)
	}
	if len(link) > MaxLink {
		return bad("%d KB is longer than a link may be (%d KB)", (len(link)+1023)/1024, MaxLink/1024)
	}
	version, payload, ok := strings.Cut(link, ".")
	if !ok || version == "" {
		return bad("no format version")
	}
	if version != LinkVersion {
		return bad("format version %q (this kubetab reads version %s)", version, LinkVersion)
	}
	z, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return bad("not base64url: %v", err)
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxExpanded+1))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return bad("truncated")
	case err != nil:
		return bad("not compressed data: %v", err)
	case len(data) > MaxExpanded:
		return bad("it expands to more than %d MB", MaxExpanded>>20)
	}
	if err := store.New(store.Config{}).Restore(bytes.NewReader(data)); err != nil {
		return bad("%v", err)
	}
	return data, nil
}

// Check tells whether data is a store snapshot this kubetab reads (magic,
// version, checksum, key order and revisions), without keeping it: a file
// picked for import is checked before the running cluster is touched.
func Check(data []byte) error {
	return store.New(store.Config{}).Restore(bytes.NewReader(data))
}
