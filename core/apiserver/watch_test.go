package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// newTestServerWith is newTestServer with a changed Config.
func newTestServerWith(t *testing.T, change func(*Config)) (*httptest.Server, *registry.Registry) {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"default", "other"} {
		if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, registry.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Registry: reg}
	change(&cfg)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, reg
}

// watchEvent is one decoded line of a watch stream.
type watchEvent struct {
	Type   string
	Object struct {
		Kind     string
		Metadata metav1.ObjectMeta
		Code     int
		Message  string
	}
}

// openWatch starts a watch and returns its events, read in the background.
// The channel closes when the stream ends.
func openWatch(t *testing.T, url string) <-chan watchEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("watch %s: %d", url, resp.StatusCode)
	}
	out := make(chan watchEvent, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev watchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return
			}
			out <- ev
		}
	}()
	return out
}

// next returns the next event, failing after a generous deadline.
func next(t *testing.T, events <-chan watchEvent) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no watch event")
	}
	return watchEvent{}
}

// Bookmarks carry a resourceVersion the client has seen everything up to,
// and it advances with writes the client does not see (another namespace),
// through the store's progress notifications.
func TestWatchBookmarks(t *testing.T) {
	srv, reg := newTestServerWith(t, func(c *Config) { c.BookmarkInterval = 10 * time.Millisecond })
	start := reg.KV().Revision()
	events := openWatch(t, fmt.Sprintf("%s/api/v1/namespaces/default/pods?watch=true&allowWatchBookmarks=true&resourceVersion=%d", srv.URL, start))
	ev := next(t, events)
	if ev.Type != "BOOKMARK" || ev.Object.Kind != "Pod" || ev.Object.Metadata.ResourceVersion != strconv.FormatInt(start, 10) {
		t.Fatalf("first bookmark: %+v", ev)
	}
	body := strings.Replace(podJSON, `"name":"web"`, `"name":"elsewhere"`, 1)
	if code, out, _ := do(t, "POST", srv.URL+"/api/v1/namespaces/other/pods", "application/json", body); code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	written := reg.KV().Revision()
	for {
		ev := next(t, events)
		if ev.Type != "BOOKMARK" {
			t.Fatalf("unexpected %s for %s", ev.Type, ev.Object.Metadata.Name)
		}
		rv, _ := strconv.ParseInt(ev.Object.Metadata.ResourceVersion, 10, 64)
		if rv >= written {
			break
		}
	}
}

// Without allowWatchBookmarks there are none.
func TestWatchNoBookmarksUnlessAllowed(t *testing.T) {
	srv, _ := newTestServerWith(t, func(c *Config) { c.BookmarkInterval = time.Millisecond })
	events := openWatch(t, srv.URL+"/api/v1/namespaces/default/pods?watch=1")
	createPods(t, srv.URL, "a")
	if ev := next(t, events); ev.Type != "ADDED" || ev.Object.Metadata.Name != "a" {
		t.Fatalf("got %+v", ev)
	}
}

// sendInitialEvents=true (client-go's WatchList): the current objects, then
// a bookmark marking the end of them, then changes.
func TestWatchSendInitialEvents(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "a", "b")
	events := openWatch(t, srv.URL+"/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	var got []string
	for len(got) < 3 {
		ev := next(t, events)
		got = append(got, ev.Type+":"+ev.Object.Metadata.Name+ev.Object.Metadata.Annotations[metav1.InitialEventsAnnotationKey])
	}
	if strings.Join(got, " ") != "ADDED:a ADDED:b BOOKMARK:true" {
		t.Fatalf("events %v", got)
	}
	createPods(t, srv.URL, "c")
	if ev := next(t, events); ev.Type != "ADDED" || ev.Object.Metadata.Name != "c" {
		t.Fatalf("after initial events: %+v", ev)
	}
}

func TestWatchErrors(t *testing.T) {
	srv, reg := newTestServer(t)
	createPods(t, srv.URL, "a")
	old := reg.KV().Revision()
	createPods(t, srv.URL, "b", "c")
	if err := reg.KV().Compact(reg.KV().Revision() - 1); err != nil {
		t.Fatal(err)
	}
	base := srv.URL + "/api/v1/namespaces/default/pods?watch=true&"
	cases := []struct {
		query string
		code  int
		msg   string
	}{
		{fmt.Sprintf("resourceVersion=%d", old), 410, fmt.Sprintf("too old resource version: %d (", old)},
		{fmt.Sprintf("resourceVersion=%d", reg.KV().Revision()+5), 504, "Too large resource version"},
		{"resourceVersionMatch=NotOlderThan", 422, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{"sendInitialEvents=true", 422, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{"resourceVersion=x", 400, "invalid resource version"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			code, body, _ := do(t, "GET", base+tc.query, "", "")
			var st metav1.Status
			_ = json.Unmarshal([]byte(body), &st)
			if code != tc.code || !strings.Contains(st.Message, tc.msg) {
				t.Fatalf("%d %s; want %d containing %q", code, body, tc.code, tc.msg)
			}
		})
	}
	// A watch from a retained revision replays what came after it.
	events := openWatch(t, fmt.Sprintf("%s/api/v1/namespaces/default/pods?watch=true&resourceVersion=%d", srv.URL, reg.KV().Revision()-1))
	if ev := next(t, events); ev.Type != "ADDED" || ev.Object.Metadata.Name != "c" {
		t.Fatalf("replay: %+v", ev)
	}
}

// timeoutSeconds ends the stream (cleanly: no error event).
func TestWatchTimeoutSeconds(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "a")
	events := openWatch(t, srv.URL+"/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1")
	if ev := next(t, events); ev.Type != "ADDED" {
		t.Fatalf("got %+v", ev)
	}
	select {
	case ev, ok := <-events:
		if ok {
			t.Fatalf("event after the initial state: %+v", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end")
	}
}

// Watches negotiate too: metadata-only watches serve metadata informers.
func TestWatchPartialObjectMetadata(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "a")
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.Contains(line, `"kind":"PartialObjectMetadata"`) || !strings.Contains(line, `"name":"a"`) || strings.Contains(line, `"spec"`) {
		t.Fatalf("event: %s", line)
	}
}
