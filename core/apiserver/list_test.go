package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createPods creates pods named by names in default, through the API.
func createPods(t *testing.T, base string, names ...string) {
	t.Helper()
	for _, n := range names {
		body := strings.Replace(podJSON, `"name":"web"`, fmt.Sprintf(`"name":%q,"labels":{"app":"web"}`, n), 1)
		if code, out, _ := do(t, "POST", base+"/api/v1/namespaces/default/pods", "application/json", body); code != 201 {
			t.Fatalf("create %s: %d %s", n, code, out)
		}
	}
}

func getPodList(t *testing.T, url string) (int, *corev1.PodList, *metav1.Status) {
	t.Helper()
	code, body, _ := do(t, "GET", url, "", "")
	if code != 200 {
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("%d %s", code, body)
		}
		return code, nil, &st
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	return code, &list, nil
}

func podNames(list *corev1.PodList) string {
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// Pages are read at the revision of the first page: a write between two
// pages does not show up in the second.
func TestListPagingIsConsistentAcrossWrites(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "a", "b", "c", "d", "e")
	base := srv.URL + "/api/v1/namespaces/default/pods"

	_, page1, _ := getPodList(t, base+"?limit=2")
	if got := podNames(page1); got != "a,b" {
		t.Fatalf("page 1: %s", got)
	}
	if page1.Continue == "" || page1.RemainingItemCount == nil || *page1.RemainingItemCount != 3 {
		t.Fatalf("page 1 meta: continue=%q remaining=%v", page1.Continue, page1.RemainingItemCount)
	}
	// Writes between the pages: c goes, f and b2 come, d changes.
	do(t, "DELETE", base+"/c", "", "")
	createPods(t, srv.URL, "f", "b2")
	do(t, "PATCH", base+"/d", "application/merge-patch+json", `{"metadata":{"labels":{"changed":"yes"}}}`)

	_, page2, _ := getPodList(t, base+"?limit=2&continue="+url.QueryEscape(page1.Continue))
	if got := podNames(page2); got != "c,d" {
		t.Fatalf("page 2 is not the snapshot of page 1: %s", got)
	}
	if page2.ResourceVersion != page1.ResourceVersion || page2.Items[1].Labels["changed"] != "" {
		t.Fatalf("page 2 read at %s (page 1 at %s), d labels %v", page2.ResourceVersion, page1.ResourceVersion, page2.Items[1].Labels)
	}
	if page2.RemainingItemCount == nil || *page2.RemainingItemCount != 1 {
		t.Fatalf("page 2 remaining %v", page2.RemainingItemCount)
	}
	_, page3, _ := getPodList(t, base+"?limit=2&continue="+url.QueryEscape(page2.Continue))
	if got := podNames(page3); got != "e" || page3.Continue != "" || page3.RemainingItemCount != nil {
		t.Fatalf("page 3: %s continue=%q remaining=%v", got, page3.Continue, page3.RemainingItemCount)
	}
	// A fresh list sees the writes.
	_, all, _ := getPodList(t, base)
	if got := podNames(all); got != "a,b,b2,d,e,f" || all.Continue != "" {
		t.Fatalf("fresh list: %s", got)
	}
}

// With a selector the server cannot know how many of the rest match, so it
// leaves remainingItemCount out, as upstream.
func TestListPagingWithSelector(t *testing.T) {
	srv, _ := newTestServer(t)
	createPods(t, srv.URL, "a", "b", "c")
	base := srv.URL + "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb&limit=2"
	_, page1, _ := getPodList(t, base)
	if podNames(page1) != "a,b" || page1.Continue == "" || page1.RemainingItemCount != nil {
		t.Fatalf("page 1: %s %q %v", podNames(page1), page1.Continue, page1.RemainingItemCount)
	}
	_, page2, _ := getPodList(t, base+"&continue="+url.QueryEscape(page1.Continue))
	if podNames(page2) != "c" || page2.Continue != "" {
		t.Fatalf("page 2: %s %q", podNames(page2), page2.Continue)
	}
}

// Once the first page's revision is compacted, the next page is 410 Gone
// with upstream's message and a token that continues at the current state.
func TestListContinueAfterCompaction(t *testing.T) {
	srv, reg := newTestServer(t)
	createPods(t, srv.URL, "a", "b", "c")
	base := srv.URL + "/api/v1/namespaces/default/pods"
	_, page1, _ := getPodList(t, base+"?limit=1")
	do(t, "DELETE", base+"/b", "", "")
	createPods(t, srv.URL, "d")
	if err := reg.KV().Compact(reg.KV().Revision()); err != nil {
		t.Fatal(err)
	}
	code, _, st := getPodList(t, base+"?limit=1&continue="+url.QueryEscape(page1.Continue))
	if code != 410 || st.Reason != metav1.StatusReasonExpired || st.Message != inconsistentContinue || st.ListMeta.Continue == "" {
		t.Fatalf("expired continue: %d %+v", code, st)
	}
	_, rest, _ := getPodList(t, base+"?continue="+url.QueryEscape(st.ListMeta.Continue))
	if got := podNames(rest); got != "c,d" {
		t.Fatalf("inconsistent continue: %s", got)
	}
}

// resourceVersion, resourceVersionMatch and continue: what each combination
// answers, with upstream's codes and wording.
func TestListResourceVersionSemantics(t *testing.T) {
	srv, reg := newTestServer(t)
	createPods(t, srv.URL, "a")
	before := reg.KV().Revision()
	createPods(t, srv.URL, "b")
	now := reg.KV().Revision()
	base := srv.URL + "/api/v1/namespaces/default/pods"
	cases := []struct {
		name  string
		query string
		code  int
		want  string // pod names, or a message fragment
	}{
		{"current", "", 200, "a,b"},
		{"zero", "resourceVersion=0", 200, "a,b"},
		{"not older than, legacy", fmt.Sprintf("resourceVersion=%d", before), 200, "a,b"},
		{"not older than", fmt.Sprintf("resourceVersion=%d&resourceVersionMatch=NotOlderThan", before), 200, "a,b"},
		{"exact", fmt.Sprintf("resourceVersion=%d&resourceVersionMatch=Exact", before), 200, "a"},
		{"legacy exact with limit", fmt.Sprintf("resourceVersion=%d&limit=5", before), 200, "a"},
		{"zero ignores limit", "resourceVersion=0&limit=1", 200, "a,b"},
		{"future", fmt.Sprintf("resourceVersion=%d", now+10), 504, fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", now+10, now)},
		{"future exact", fmt.Sprintf("resourceVersion=%d&resourceVersionMatch=Exact", now+10), 504, "Too large resource version"},
		{"match without rv", "resourceVersionMatch=NotOlderThan", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"exact zero", "resourceVersion=0&resourceVersionMatch=Exact", 422, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"unknown match", "resourceVersion=1&resourceVersionMatch=Newest", 422, `resourceVersionMatch: Unsupported value: "Newest"`},
		{"match with continue", "resourceVersion=1&resourceVersionMatch=Exact&continue=abc", 422, "resourceVersionMatch is forbidden when continue is provided"},
		{"rv with continue", "resourceVersion=5&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJiXHUwMDAwIn0", 400, "specifying resource version is not allowed when using continue"},
		{"bad continue", "continue=%21%21", 400, "invalid continue token: continue key is not valid"},
		{"continue escapes prefix", "continue=" + mustToken(t, "../kube-system/x"), 400, "invalid continue token"},
		{"send initial events on list", "sendInitialEvents=true", 422, "sendInitialEvents is forbidden for list"},
		{"bad rv", "resourceVersion=abc", 400, "invalid resource version"},
		{"bad limit", "limit=ten", 400, "invalid syntax"},
		{"unknown parameter", "color=blue", 200, "a,b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, list, st := getPodList(t, base+"?"+tc.query)
			if code != tc.code {
				t.Fatalf("code %d, want %d (%+v)", code, tc.code, st)
			}
			if list != nil {
				if got := podNames(list); got != tc.want {
					t.Fatalf("items %s, want %s", got, tc.want)
				}
				return
			}
			if int(st.Code) != tc.code || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("status %d %q, want %d containing %q", st.Code, st.Message, tc.code, tc.want)
			}
		})
	}
	// Exact at a compacted revision is gone.
	if err := reg.KV().Compact(now); err != nil {
		t.Fatal(err)
	}
	code, _, st := getPodList(t, base+fmt.Sprintf("?resourceVersion=%d&resourceVersionMatch=Exact", before))
	if code != 410 || st.Message != expiredList {
		t.Fatalf("exact compacted: %d %+v", code, st)
	}
}

func mustToken(t *testing.T, start string) string {
	t.Helper()
	return mustTokenF(start)
}

func b64(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

func TestContinueTokenRoundTrip(t *testing.T) {
	tok, err := encodeContinue("/registry/pods/default/web\x00", "/registry/pods/default/", 42)
	if err != nil {
		t.Fatal(err)
	}
	key, rv, err := decodeContinue(tok, "/registry/pods/default/")
	if err != nil || key != "/registry/pods/default/web\x00" || rv != 42 {
		t.Fatalf("%q %d %v", key, rv, err)
	}
	for _, bad := range []string{"", "@@", b64([]byte(`{"v":"meta.k8s.io/v2","rv":1,"start":"a"}`)), b64([]byte(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`)), b64([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":""}`))} {
		if _, _, err := decodeContinue(bad, "/registry/pods/"); err == nil {
			t.Errorf("token %q decoded", bad)
		}
	}
}

// FuzzDecodeContinue: a token never yields a key outside the list's prefix.
func FuzzDecodeContinue(f *testing.F) {
	f.Add(mustTokenF("a\x00"))
	f.Add(mustTokenF("../x"))
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLyJ9")
	f.Fuzz(func(t *testing.T, tok string) {
		key, _, err := decodeContinue(tok, "/registry/pods/ns/")
		if err == nil && !strings.HasPrefix(key, "/registry/pods/ns/") {
			t.Fatalf("token %q escapes the prefix: %q", tok, key)
		}
		if err == nil && strings.Contains(key, "/../") {
			t.Fatalf("token %q climbs: %q", tok, key)
		}
	})
}

func mustTokenF(start string) string {
	raw, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: 2, StartKey: start})
	return b64(raw)
}
