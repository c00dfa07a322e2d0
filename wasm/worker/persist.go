//go:build js && wasm

package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/session"
	"github.com/kubetab/kubetab/core/snapshot"
	"github.com/kubetab/kubetab/core/store"
)

// persistDoor keeps the page's cluster across reloads and moves it to and
// from files and links (site/src/worker.js documents the messages;
// site/src/persist/ is the page's side):
//
//	kubetabHost.save(u8, json {lesson, revision, ms, wallMs, unsealed})
//	    the store's snapshot (core/store's format) after changes, throttled:
//	    at most every 2 s, once the revision has not moved for 1 s (or 10 s
//	    after the first unsaved change, on a cluster that never rests);
//	    worker.js writes it to IndexedDB. ms is the worker time it took (the
//	    thread held, without the event loop's turns it gave), wallMs its
//	    wall time. unsealed: u8 is the snapshot without its trailing SHA-256
//	    (store.SnapshotBody), which worker.js appends with WebCrypto (native,
//	    off this thread) before it writes; where WebCrypto is missing (a
//	    page that is not a secure context) Go hashes and u8 is whole.
//	context.binding.flushSave()
//	    save now if anything changed (the page is being hidden)
//	context.binding.resetCluster(id) → kubetabHost.persisted(id, 'reset', '', error)
//	    a fresh cluster with the default nodes, saved at once
//	context.binding.exportSnapshot(id) → kubetabHost.exported(id, u8)
//	context.binding.importSnapshot(id, u8) → kubetabHost.persisted(id, 'import', '', error)
//	context.binding.shareLink(id) → kubetabHost.persisted(id, 'link', link, error)
//	context.binding.openLink(id, payload) → kubetabHost.persisted(id, 'open', '', error)
//	    import: the bytes checked (core/snapshot, then every object by
//	    core/cluster) before the running cluster is replaced; a bad file or
//	    link changes nothing and error says why.
//
// The saved cluster is the page's cluster, with the lesson it was prepared
// for (lesson, ” for none): resetLesson makes a lesson's fresh cluster and
// it is saved from then on; a reload into the same lesson keeps it.
type persistDoor struct {
	h    *host
	sess *session.Session

	mu     sync.Mutex // guards lesson
	lesson string     // the lesson the current cluster was prepared for

	force chan struct{} // a save now (flush, reset, import)

	webCrypto bool // worker.js seals saves with crypto.subtle (see save)
}

// Restored is what the worker found saved when it started: the page shows
// it (site/src/worker.js's 'restored' message).
type Restored struct {
	// Bytes is the saved snapshot's size; 0 when nothing was saved.
	Bytes int `json:"bytes"`
	// Lesson is the lesson the saved cluster was prepared for.
	Lesson string `json:"lesson"`
	// Error, when not empty, is why the saved cluster could not be used
	// (the page got a fresh one).
	Error string `json:"error,omitempty"`
	// Revision is the restored store's revision.
	Revision int64 `json:"revision"`
	// MS is the worker time from the start of session.New to a launched
	// cluster with its caches filled (restored or fresh).
	MS float64 `json:"ms"`
}

// Saved reads what worker.js found in IndexedDB before it started the Go
// program: globalThis.kubetabSaved = {data: Uint8Array|null, lesson,
// error}. Nothing saved (or no IndexedDB) is nil data.
func Saved() (data []byte, lesson string, loadErr string) {
	v, err := safejs.Global().Get("kubetabSaved")
	if err != nil || v.IsUndefined() || v.IsNull() {
		return nil, "", ""
	}
	if e, err := v.Get("error"); err == nil && e.Type() == safejs.TypeString {
		loadErr, _ = e.String()
	}
	if l, err := v.Get("lesson"); err == nil && l.Type() == safejs.TypeString {
		lesson, _ = l.String()
	}
	d, err := v.Get("data")
	if err != nil || d.IsUndefined() || d.IsNull() {
		return nil, lesson, loadErr
	}
	n, err := d.Length()
	if err != nil {
		return nil, lesson, "the saved cluster is not bytes"
	}
	data = make([]byte, n)
	if _, err := safejs.CopyBytesToGo(data, d); err != nil {
		return nil, lesson, "the saved cluster is not bytes"
	}
	return data, lesson, loadErr
}

// StartSession makes the page's session from what was saved: the saved
// cluster when it is good, else a fresh one and the reason in Restored.
func StartSession(ctx context.Context, cfg session.Config) (*session.Session, Restored, error) {
	data, lesson, loadErr := Saved()
	r := Restored{Bytes: len(data), Lesson: lesson, Error: loadErr}
	if data != nil {
		start := time.Now()
		c := cfg
		c.Cluster.Snapshot = data
		sess, err := session.New(ctx, c)
		if err == nil {
			r.MS = float64(time.Since(start).Microseconds()) / 1000
			r.Revision = sess.Cluster().Store.Revision()
			return sess, r, nil
		}
		if !errors.Is(err, cluster.ErrBadSnapshot) {
			return nil, r, err
		}
		r.Error, r.Lesson = strings.TrimPrefix(err.Error(), "session: new cluster: "), ""
	}
	start := time.Now()
	sess, err := session.New(ctx, cfg)
	r.MS = float64(time.Since(start).Microseconds()) / 1000
	return sess, r, err
}

func newPersistDoor(h *host, sess *session.Session, lesson string) *persistDoor {
	return &persistDoor{h: h, sess: sess, lesson: lesson, force: make(chan struct{}, 1), webCrypto: hasWebCrypto()}
}

// setLesson names the lesson the cluster now belongs to and saves soon.
func (d *persistDoor) setLesson(slug string) {
	d.mu.Lock()
	d.lesson = slug
	d.mu.Unlock()
	d.saveNow()
}

func (d *persistDoor) saveNow() {
	select {
	case d.force <- struct{}{}:
	default:
	}
}

// Throttle of the saves.
const (
	savePoll     = 500 * time.Millisecond
	saveEvery    = 2 * time.Second  // at most one save in this
	saveQuiet    = time.Second      // after the revision stopped moving this long
	saveAtLatest = 10 * time.Second // or this long after the first unsaved change
)

// run saves the cluster after changes until ctx ends.
func (d *persistDoor) run(ctx context.Context) {
	defer d.h.recoverTo("save")
	var (
		lastStore    *store.Store
		lastRev      int64
		lastChange   time.Time
		firstUnsaved time.Time
		lastSave     time.Time
	)
	t := time.NewTicker(savePoll)
	defer t.Stop()
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.force:
			forced = true
		}
		c := d.sess.Cluster()
		now := time.Now()
		if rev := c.Store.Revision(); c.Store != lastStore || rev != lastRev {
			lastStore, lastRev, lastChange = c.Store, rev, now
			if firstUnsaved.IsZero() {
				firstUnsaved = now
			}
		}
		if firstUnsaved.IsZero() {
			continue
		}
		due := now.Sub(lastSave) >= saveEvery &&
			(now.Sub(lastChange) >= saveQuiet || now.Sub(firstUnsaved) >= saveAtLatest)
		if !forced && !due {
			continue
		}
		if err := d.save(c); err != nil {
			fmt.Fprintf(os.Stderr, "kubetab: save the cluster: %v\n", err)
			continue
		}
		lastSave, firstUnsaved = time.Now(), time.Time{}
	}
}

// save hands the cluster's snapshot to worker.js.
func (d *persistDoor) save(c *cluster.Cluster) error {
	start := time.Now()
	var buf bytes.Buffer
	snap := c.Store.SnapshotTimed
	if d.webCrypto {
		snap = c.Store.SnapshotBody
	}
	held, err := snap(&buf)
	if err != nil {
		return err
	}
	rev := c.Store.Revision()
	copyStart := time.Now()
	u8, err := d.h.bytes(buf.Bytes())
	if err != nil {
		return err
	}
	held += time.Since(copyStart)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	d.mu.Lock()
	lesson := d.lesson
	d.mu.Unlock()
	d.h.call("save", u8, mustJSON(map[string]any{"lesson": lesson, "revision": rev, "ms": ms(held), "wallMs": ms(time.Since(start)), "unsealed": d.webCrypto}))
	return nil
}

func (d *persistDoor) reply(id int, what, value string, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	d.h.call("persisted", id, what, value, msg)
}

func (d *persistDoor) flush(args []safejs.Value) any {
	d.saveNow()
	return nil
}

func (d *persistDoor) resetCluster(args []safejs.Value) any {
	id := idArg(args, "resetCluster")
	d.goReport("resetCluster", func() {
		err := d.sess.Reset(context.Background(), nil)
		if err == nil {
			d.setLesson("")
		}
		d.reply(id, "reset", "", err)
	})
	return nil
}

func (d *persistDoor) exportSnapshot(args []safejs.Value) any {
	id := idArg(args, "exportSnapshot")
	// In a goroutine: encoding a snapshot gives the JS event loop turns
	// (core/eventloop), which cannot happen inside this callback.
	d.goReport("exportSnapshot", func() {
		var buf bytes.Buffer
		if err := d.sess.Cluster().Snapshot(&buf); err != nil {
			d.reply(id, "export", "", err)
			return
		}
		u8, err := d.h.bytes(buf.Bytes())
		if err != nil {
			d.reply(id, "export", "", err)
			return
		}
		d.h.call("exported", id, u8)
	})
	return nil
}

func (d *persistDoor) importSnapshot(args []safejs.Value) any {
	id := idArg(args, "importSnapshot")
	if len(args) < 2 {
		panic("importSnapshot(id, u8) called without bytes")
	}
	n, err := args[1].Length()
	if err != nil {
		panic(fmt.Sprintf("importSnapshot: %v", err))
	}
	data := make([]byte, n)
	if _, err := safejs.CopyBytesToGo(data, args[1]); err != nil {
		panic(fmt.Sprintf("importSnapshot: %v", err))
	}
	d.goReport("importSnapshot", func() { d.reply(id, "import", "", d.restore(data)) })
	return nil
}

func (d *persistDoor) shareLink(args []safejs.Value) any {
	id := idArg(args, "shareLink")
	d.goReport("shareLink", func() {
		var buf bytes.Buffer
		if err := d.sess.Cluster().Snapshot(&buf); err != nil {
			d.reply(id, "link", "", err)
			return
		}
		link, err := snapshot.EncodeLink(buf.Bytes())
		d.reply(id, "link", link, err)
	})
	return nil
}

func (d *persistDoor) openLink(args []safejs.Value) any {
	id := idArg(args, "openLink")
	if len(args) < 2 {
		panic("openLink(id, payload) called without a payload")
	}
	payload, err := args[1].String()
	if err != nil {
		panic(fmt.Sprintf("openLink: %v", err))
	}
	d.goReport("openLink", func() {
		data, err := snapshot.DecodeLink(payload)
		if err == nil {
			err = d.restore(data)
		}
		d.reply(id, "open", "", err)
	})
	return nil
}

// restore replaces the cluster with a checked snapshot's, saved at once.
func (d *persistDoor) restore(data []byte) error {
	if err := snapshot.Check(data); err != nil {
		return err
	}
	if err := d.sess.Restore(context.Background(), data); err != nil {
		return err
	}
	d.setLesson("")
	return nil
}

func (d *persistDoor) goReport(where string, fn func()) {
	go func() {
		defer d.h.recoverTo(where)
		fn()
	}()
}

// hasWebCrypto reports whether the worker has crypto.subtle (only a secure
// context does: https, or localhost).
func hasWebCrypto() bool {
	c, err := safejs.Global().Get("crypto")
	if err != nil || c.IsUndefined() || c.IsNull() {
		return false
	}
	sub, err := c.Get("subtle")
	return err == nil && !sub.IsUndefined() && !sub.IsNull()
}
