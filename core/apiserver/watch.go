package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// Watches
//
// A watch streams newline-delimited JSON events ({"type":"ADDED","object":
// {...}}), flushing each one (upstream: handlers/watch.go over the watch
// cache, storage/cacher). Where it starts:
//
//	resourceVersion   sendInitialEvents   stream
//	"" or "0"         - (or true)         ADDED for every object now, then changes
//	N                 -                   the changes after revision N
//	                                      (410 Gone "too old resource version"
//	                                      once N is compacted)
//	""/N              true                ADDED for every object now (at >= N),
//	                                      a BOOKMARK marked k8s.io/initial-events-end,
//	                                      then changes
//
// With allowWatchBookmarks=true the stream also carries BOOKMARK events: an
// empty object of the kind whose metadata.resourceVersion says "you have seen
// every change up to here", so a client that reconnects can resume from it
// rather than relist. They come every BookmarkInterval and shortly before the
// watch times out, as the cacher sends them.
//
// A watch ends after timeoutSeconds, or after a random time between
// MinRequestTimeout and twice that (upstream spreads reconnects the same way),
// or when its resource stops being served (a CRD deleted or changed).
// A watcher too slow to keep up is dropped by the store; it gets an ERROR
// event (410 Expired) and must list again, like a reflector does.

// watch serves a watch request.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, st *registry.Store, info requestInfo) error {
	p, err := parseListParams(r, st, "watch")
	if err != nil {
		return err
	}
	if info.Out.mediaType != "application/json" {
		return notAcceptable{[]string{"application/json"}} // YAML does not stream
	}
	fromRV, err := parseResourceVersion(p.ResourceVersion)
	if err != nil {
		return err
	}
	kv := s.reg.KV()
	prefix := st.KeyPrefix(namespaceOf(st, info))
	sendInitial := p.ResourceVersion == "" || p.ResourceVersion == "0"
	if p.SendInitialEvents != nil {
		sendInitial = *p.SendInitialEvents
	}
	// The initial state and the watch meet at one revision: list at rev, then
	// watch the events after rev (the store replays any written meanwhile).
	var initial []store.KeyValue
	after := fromRV
	if sendInitial {
		initial, after = kv.List(prefix)
		if fromRV > after {
			return tooLargeResourceVersion(fromRV, after)
		}
	} else if after == 0 {
		after = kv.Revision()
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sw, err := kv.Watch(ctx, prefix, after)
	switch {
	case errors.Is(err, store.ErrCompacted):
		return apierrors.NewResourceExpired("too old resource version: " + p.ResourceVersion + " (" + strconv.FormatInt(kv.CompactedRevision(), 10) + ")")
	case errors.Is(err, store.ErrFuture):
		return tooLargeResourceVersion(after, kv.Revision())
	case err != nil:
		return apierrors.NewInternalError(err)
	}
	defer sw.Stop()

	ws := &watchStream{s: s, ctx: r.Context(), w: w, st: st, out: info.Out, rv: after}
	ws.flusher, _ = w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	ws.flush()

	for _, kv := range initial {
		obj, err := st.DecodeKV(kv)
		if err != nil {
			ws.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
			return nil
		}
		if st.Matches(obj, p.ListOptions) && !ws.send(watch.Event{Type: watch.Added, Object: obj}) {
			return nil
		}
	}
	if p.SendInitialEvents != nil && *p.SendInitialEvents && p.AllowWatchBookmarks {
		if !ws.bookmark(true) {
			return nil
		}
	}

	timeout := s.watchTimeout(p)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// Bookmarks every BookmarkInterval, and one more just before the
	// deadline, so a client that reconnects after the timeout resumes from
	// as late as possible.
	finalBookmark := time.Now().Add(timeout - 2*time.Second)
	nextBookmark := func() time.Duration {
		d := s.cfg.BookmarkInterval
		if until := time.Until(finalBookmark); until > 0 && until < d {
			d = until
		}
		return d
	}
	var bookmarks <-chan time.Time
	resetBookmark := func() {}
	gone, endRev := st.Gone(), int64(0)
	if p.AllowWatchBookmarks {
		t := time.NewTimer(nextBookmark())
		defer t.Stop()
		bookmarks = t.C
		resetBookmark = func() { t.Reset(nextBookmark()) }
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			return nil
		case <-gone:
			// The resource is no longer served (its CRD was deleted or
			// changed): the stream ends, as upstream's storage teardown
			// ends it, and a client that watches again finds out why. The
			// changes made before are delivered first: the store's
			// Progress event at this revision comes after all of them.
			gone, endRev = nil, kv.Revision()
			sw.RequestProgress()
		case <-bookmarks:
			// The store answers with a Progress event in order with the
			// watch's events; its revision is what the bookmark carries.
			sw.RequestProgress()
			resetBookmark()
		case ev, ok := <-sw.ResultChan():
			if !ok {
				if err := sw.Err(); err != nil {
					// The reader fell behind and the store dropped it: it must
					// relist, as when the watch cache drops a watcher.
					ws.send(watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired(err.Error()).ErrStatus})
				}
				return nil
			}
			if ev.Type == store.Progress {
				if gone == nil && ev.Revision() >= endRev {
					return nil
				}
				ws.rv = max(ws.rv, ev.Revision())
				if p.AllowWatchBookmarks && !ws.bookmark(false) {
					return nil
				}
				continue
			}
			out, visible, err := st.WatchEvent(ev, p.ListOptions)
			if err != nil {
				ws.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return nil
			}
			ws.rv = ev.Revision()
			if visible && !ws.send(out) {
				return nil
			}
		}
	}
}

// watchTimeout is timeoutSeconds, or upstream's default: a random duration
// in [MinRequestTimeout, 2*MinRequestTimeout).
func (s *Server) watchTimeout(p listParams) time.Duration {
	if p.TimeoutSeconds != nil && *p.TimeoutSeconds > 0 {
		return time.Duration(*p.TimeoutSeconds) * time.Second
	}
	return time.Duration(float64(s.cfg.MinRequestTimeout) * (rand.Float64() + 1))
}

// watchStream writes the events of one watch.
type watchStream struct {
	s       *Server
	ctx     context.Context // the request's: it names the client for the trace
	w       http.ResponseWriter
	flusher http.Flusher
	st      *registry.Store
	out     output
	// rv is the revision up to which the client has seen every change: the
	// start revision, then that of the last store event of the watched
	// prefix (shown to the client or not) or of the store's last Progress
	// event, which vouches for everything up to it.
	rv int64
}

func (ws *watchStream) flush() {
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
}

// bookmark sends a BOOKMARK at ws.rv; initialEnd marks the end of the
// initial events (sendInitialEvents=true).
func (ws *watchStream) bookmark(initialEnd bool) bool {
	obj := ws.st.Resource.New()
	acc, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	acc.SetResourceVersion(strconv.FormatInt(ws.rv, 10))
	if initialEnd {
		acc.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	obj.GetObjectKind().SetGroupVersionKind(ws.st.Resource.GroupVersionKind())
	return ws.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// send writes one event and flushes it; false means the client is gone.
func (ws *watchStream) send(ev watch.Event) bool {
	ws.st.TraceWatch(ws.ctx, ev)
	obj := ev.Object
	if ev.Type != watch.Error && ev.Type != watch.Bookmark {
		switch ws.out.shape {
		case shapeTable:
			t, err := toTable(obj, ws.out, ws.s.now())
			if err != nil {
				obj = &apierrors.NewInternalError(err).ErrStatus
			} else {
				obj = t
			}
		case shapeMetadata:
			if m, err := asMetadata(obj); err == nil {
				obj = m
			}
		}
	}
	if st, ok := obj.(*metav1.Status); ok {
		st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	line, err := json.Marshal(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		return false
	}
	if _, err := ws.w.Write(append(line, '\n')); err != nil {
		return false
	}
	ws.flush()
	return true
}

// zeroOf returns a new zero value of obj's type.
func zeroOf(obj runtime.Object) runtime.Object {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		return reflect.New(t.Elem()).Interface().(runtime.Object)
	}
	return obj
}
