package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// Lists, page by page
//
// A list answers with the objects under one key prefix at one revision of the
// store. With ?limit=N the answer holds at most N objects and, when more
// remain, metadata.continue: an opaque token naming the revision the first
// page was read at and the key to start after. Every later page is read at
// that same revision, so the pages together are one consistent snapshot even
// while other clients write (upstream: k8s.io/apiserver/pkg/storage/etcd3,
// GetList, and storage/continue.go):
//
//	GET /api/v1/pods?limit=2            rev 40: a b | c d e
//	  items a b, continue={rv:40, start:"default/b\x00"}, remainingItemCount 3
//	(someone deletes c at rev 41)
//	GET /api/v1/pods?limit=2&continue=… still rev 40: c d | e
//
// If the store has compacted that revision away, the next page is 410 Gone
// with a fresh token that continues at the current revision (and so may be
// inconsistent), as kube-apiserver does.
//
// resourceVersion and resourceVersionMatch choose the revision of a list
// without continue:
//
//	resourceVersion  match          read at
//	""               -              the current revision
//	"0"              -              the current revision (upstream: any, from its cache)
//	N                "" (no limit)  the current revision, which must be >= N
//	N                NotOlderThan   the current revision, which must be >= N
//	N                Exact, or ""   exactly N (410 Gone once compacted)
//	                 with a limit

// listParams are the query parameters of list and watch (metav1.ListOptions).
type listParams struct {
	registry.ListOptions // selectors, resourceVersion, allowWatchBookmarks

	Watch                bool
	Limit                int64
	Continue             string
	ResourceVersionMatch metav1.ResourceVersionMatch
	TimeoutSeconds       *int64
	SendInitialEvents    *bool
}

// selectorsEmpty reports whether the list selects everything, the only case
// in which remainingItemCount can be exact.
func (p listParams) selectorsEmpty() bool {
	return (p.LabelSelector == nil || p.LabelSelector.Empty()) && (p.FieldSelector == nil || p.FieldSelector.Empty())
}

// queryBool reads a boolean query parameter the way the API's parameter codec
// does: present and not "false" or "0" is true.
func queryBool(q map[string][]string, name string) (value, present bool) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false, false
	}
	switch strings.ToLower(v[0]) {
	case "false", "0":
		return false, true
	}
	return true, true
}

// queryInt64 reads an integer query parameter.
func queryInt64(q map[string][]string, name string) (*int64, error) {
	v, ok := q[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return &n, nil
}

// parseListParams reads and validates the list options of a list, watch or
// deletecollection. Unknown parameters are ignored, as upstream.
func parseListParams(r *http.Request, st *registry.Store, verb string) (listParams, error) {
	q := r.URL.Query()
	var p listParams
	if ls := q.Get("labelSelector"); ls != "" {
		sel, err := labels.Parse(ls)
		if err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		p.LabelSelector = sel
	}
	if fs := q.Get("fieldSelector"); fs != "" {
		sel, err := fields.ParseSelector(fs)
		if err != nil {
			return p, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		known := st.Resource.Strategy.Fields(st.Resource.New())
		known["metadata.namespace"] = ""
		for _, req := range sel.Requirements() {
			if _, ok := known[req.Field]; !ok {
				return p, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		p.FieldSelector = sel
	}
	p.ResourceVersion = q.Get("resourceVersion")
	p.ResourceVersionMatch = metav1.ResourceVersionMatch(q.Get("resourceVersionMatch"))
	p.Continue = q.Get("continue")
	p.AllowWatchBookmarks, _ = queryBool(q, "allowWatchBookmarks")
	p.Watch = verb == "watch"
	if v, ok := queryBool(q, "sendInitialEvents"); ok {
		p.SendInitialEvents = &v
	}
	limit, err := queryInt64(q, "limit")
	if err != nil {
		return p, err
	}
	if limit != nil && *limit > 0 {
		p.Limit = *limit
	}
	if p.TimeoutSeconds, err = queryInt64(q, "timeoutSeconds"); err != nil {
		return p, err
	}
	// The API's own rules for these combinations, with its wording.
	errs := metainternalvalidation.ValidateListOptions(&internalversion.ListOptions{
		ResourceVersion: p.ResourceVersion, ResourceVersionMatch: p.ResourceVersionMatch,
		Continue: p.Continue, Limit: p.Limit, Watch: p.Watch, SendInitialEvents: p.SendInitialEvents,
	}, true)
	if len(errs) > 0 {
		return p, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return p, nil
}

// Messages of k8s.io/apiserver/pkg/storage/etcd3/errors.go.
const (
	expiredList          = "The resourceVersion for the provided list is too old."
	inconsistentContinue = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// parseResourceVersion reads a resourceVersion parameter; "" is 0.
func parseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: resourceVersion: Invalid value: %q: %v", rv, err))
	}
	return int64(n), nil
}

// tooLargeResourceVersion is what kube-apiserver answers when a client asks
// for a revision newer than the store has (504, with a retry hint; see
// k8s.io/apiserver/pkg/storage/errors.go).
func tooLargeResourceVersion(want, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", want, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

// listObjects reads one page of a list (see the top of this file).
func (s *Server) listObjects(st *registry.Store, namespace string, p listParams) (runtime.Object, error) {
	prefix := st.KeyPrefix(namespace)
	fromRV, err := parseResourceVersion(p.ResourceVersion)
	if err != nil {
		return nil, err
	}
	limit := p.Limit
	if p.ResourceVersion == "0" && p.Continue == "" {
		// Upstream serves resourceVersion=0 from its watch cache, which
		// answers with the whole list and ignores limit.
		limit = 0
	}
	var startKey string
	var withRev int64 // 0: the current revision
	switch {
	case p.Continue != "":
		key, rv, err := decodeContinue(p.Continue, prefix)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if p.ResourceVersion != "" && p.ResourceVersion != "0" {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		startKey = key
		if rv > 0 { // rv -1: continue at the current revision
			withRev = rv
		}
	case p.ResourceVersion != "":
		switch p.ResourceVersionMatch {
		case metav1.ResourceVersionMatchExact:
			withRev = fromRV
		case "":
			if limit > 0 && fromRV > 0 {
				withRev = fromRV // legacy: a paged list at a resourceVersion is exact
			}
		}
	}
	kvs, rev, current, err := s.readPrefix(prefix, withRev)
	switch {
	case errors.Is(err, store.ErrCompacted) && p.Continue != "":
		token, terr := encodeContinue(startKey, prefix, -1)
		if terr != nil {
			return nil, apierrors.NewInternalError(terr)
		}
		gone := apierrors.NewResourceExpired(inconsistentContinue)
		gone.ErrStatus.ListMeta.Continue = token
		return nil, gone
	case errors.Is(err, store.ErrCompacted):
		return nil, apierrors.NewResourceExpired(expiredList)
	case errors.Is(err, store.ErrFuture):
		return nil, tooLargeResourceVersion(withRev, current)
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	if fromRV > current {
		return nil, tooLargeResourceVersion(fromRV, current)
	}
	first := sort.Search(len(kvs), func(i int) bool { return kvs[i].Key >= startKey })
	items := make([]runtime.Object, 0, min(len(kvs)-first, 1024))
	var lastKey string
	hasMore := false
	for _, kv := range kvs[first:] {
		if limit > 0 && int64(len(items)) >= limit {
			hasMore = true
			break
		}
		lastKey = kv.Key
		obj, err := st.DecodeKV(kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if st.Matches(obj, p.ListOptions) {
			items = append(items, obj)
		}
	}
	list := st.Resource.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lacc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lacc.SetResourceVersion(strconv.FormatInt(rev, 10))
	if hasMore {
		next, err := encodeContinue(lastKey+"\x00", prefix, rev)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		lacc.SetContinue(next)
		if p.selectorsEmpty() {
			// With selectors the count of what remains would be a guess;
			// upstream leaves it out then.
			n := int64(len(kvs)-first) - limit
			lacc.SetRemainingItemCount(&n)
		}
	}
	list.GetObjectKind().SetGroupVersionKind(st.Resource.GroupVersionKind().GroupVersion().WithKind(st.Resource.Kind + "List"))
	return list, nil
}

// readPrefix returns the keys under prefix at revision rev (0: now), the
// revision read at and the store's current revision.
func (s *Server) readPrefix(prefix string, rev int64) (kvs []store.KeyValue, at, current int64, err error) {
	kv := s.reg.KV()
	kvs, at, err = kv.ListAt(prefix, rev)
	if rev == 0 && err == nil {
		return kvs, at, at, nil
	}
	return kvs, at, kv.Revision(), err
}

// continueToken is the decoded form of metadata.continue (upstream:
// k8s.io/apiserver/pkg/storage/continue.go): the revision of the first page
// and the key, relative to the list's prefix, to start at.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// Errors about continue tokens, with upstream's wording.
var (
	errInvalidStartRV     = errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	errEmptyStartKey      = errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	errGenericInvalidKey  = errors.New("continue key is not valid")
	errUnrecognizedFormat = errors.New("continue key is not valid: server does not recognize this encoded version")
)

// encodeContinue makes the token for a list that starts again at key.
func encodeContinue(key, keyPrefix string, rev int64) (string, error) {
	next := strings.TrimPrefix(key, keyPrefix)
	if next == key {
		return "", fmt.Errorf("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(&continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: next})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// decodeContinue returns the key to start at and the revision to read at
// (-1: the current one). The key cannot climb out of keyPrefix.
func decodeContinue(token, keyPrefix string) (fromKey string, rev int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errGenericInvalidKey, err)
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return "", 0, fmt.Errorf("%w %v", errUnrecognizedFormat, c.APIVersion)
	}
	if c.ResourceVersion == 0 {
		return "", 0, errInvalidStartRV
	}
	if c.StartKey == "" {
		return "", 0, errEmptyStartKey
	}
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if cleaned := path.Clean(key); cleaned != key {
		return "", 0, fmt.Errorf("continue key is not valid: %v", c.StartKey)
	}
	return keyPrefix + key[1:], c.ResourceVersion, nil
}
