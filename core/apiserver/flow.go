package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
)

// The flow.kubetab.dev API: the trace, the store and step mode, served as
// resources (see package core/apiserver/apis/flow/v1alpha1 for their shape
// and docs/api.md for the protocol). They are not kept in the store: each
// is read from the part of the cluster that has it (the trace recorder, the
// store's index, the step-mode gate), so this file carries its own small
// list and watch over a flowResource rather than the registry's:
//
//	flowResource.list   every object now, in order, and the resourceVersion
//	flowResource.watch  the changes after a resourceVersion, or 410 Gone
//
// The requests are not traced: watching the trace must not add to it.

// flowObject is one object of a flow resource as list and watch handle it.
type flowObject struct {
	obj    any // the object, JSON-encodable
	name   string
	order  string     // sorts the list; the continue token resumes after it
	rv     int64      // the object's resourceVersion
	fields fields.Set // what field selectors match
	cells  []any      // its Table row
	meta   metav1.ObjectMeta
}

// flowEvent is one watch event; err ends the watch with an ERROR event.
type flowEvent struct {
	typ watch.EventType
	obj flowObject
	rv  int64 // the resourceVersion after the event (bookmarks)
	err error
}

// flowResource is one resource of flow.kubetab.dev.
type flowResource struct {
	resource, singular, kind, listKind string
	shortNames                         []string
	verbs                              []string
	subresources                       []string
	// fields are the field selector labels the resource supports, besides
	// metadata.name.
	fields  []string
	columns []metav1.TableColumnDefinition
	// list returns every object at resourceVersion rv (0: now), in order,
	// and the resourceVersion of the answer.
	list func(s *Server, rv int64) ([]flowObject, int64, error)
	// watch streams the changes after rv until ctx ends; it fails before
	// streaming when rv is too old (410 Gone) or too new.
	watch func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error)
	// get returns one object (nil: use list).
	get func(s *Server, name string) (flowObject, error)
	// serveNamed serves the other verbs on one object and its
	// subresources (nil: read-only).
	serveNamed func(s *Server, w http.ResponseWriter, r *http.Request, name, sub string)
	// served says whether the cluster has what the resource shows (nil:
	// always).
	served func(s *Server) bool
	// gv is the resource's group and version; zero means
	// flow.kubetab.dev/v1alpha1 (scheduling.kubetab.dev's schedulingqueues
	// is served by the same list and watch, schedqueue.go).
	gv schema.GroupVersion
}

func (fr *flowResource) groupVersion() schema.GroupVersion {
	if fr.gv.Empty() {
		return flowGV
	}
	return fr.gv
}

func (s *Server) flowResources() []*flowResource {
	return []*flowResource{hopsResource, pendingWritesResource, stepModesResource, storeKeysResource}
}

func (s *Server) flowResource(name string) *flowResource {
	for _, fr := range s.flowResources() {
		if fr.resource == name && (fr.served == nil || fr.served(s)) {
			return fr
		}
	}
	return nil
}

func (s *Server) flowServedResources() []*flowResource {
	var out []*flowResource
	for _, fr := range s.flowResources() {
		if fr.served == nil || fr.served(s) {
			out = append(out, fr)
		}
	}
	return out
}

var flowGV = flowv1alpha1.SchemeGroupVersion

// flowServed lets discovery (discovery.go) list the group.
func (s *Server) flowServed() bool { return len(s.flowServedResources()) > 0 }

// flowAPIResources is the APIResourceList of flow.kubetab.dev/v1alpha1.
func (s *Server) flowAPIResources() []metav1.APIResource {
	var out []metav1.APIResource
	for _, fr := range s.flowServedResources() {
		out = append(out, metav1.APIResource{Name: fr.resource, SingularName: fr.singular, Kind: fr.kind, Verbs: fr.verbs, ShortNames: fr.shortNames})
		for _, sub := range fr.subresources {
			out = append(out, metav1.APIResource{Name: fr.resource + "/" + sub, Kind: fr.kind, Verbs: flowSubVerbs(sub)})
		}
	}
	return out
}

// flowSubVerbs: history is read (get), step and continue are acts (create).
func flowSubVerbs(sub string) []string {
	if sub == "history" {
		return []string{"get"}
	}
	return []string{"create"}
}

// flowDiscovery is the aggregated discovery entry of flow.kubetab.dev.
func (s *Server) flowDiscovery() apidiscoveryv2.APIGroupDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: flowGV.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, fr := range s.flowServedResources() {
		rd := apidiscoveryv2.APIResourceDiscovery{
			Resource: fr.resource, ResponseKind: &metav1.GroupVersionKind{Group: flowGV.Group, Version: flowGV.Version, Kind: fr.kind},
			Scope: apidiscoveryv2.ScopeCluster, SingularResource: fr.singular, Verbs: fr.verbs, ShortNames: fr.shortNames,
		}
		for _, sub := range fr.subresources {
			verbs := flowSubVerbs(sub)
			rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub, Verbs: verbs,
				ResponseKind: &metav1.GroupVersionKind{Group: flowGV.Group, Version: flowGV.Version, Kind: fr.kind},
			})
		}
		v.Resources = append(v.Resources, rd)
	}
	return apidiscoveryv2.APIGroupDiscovery{
		ObjectMeta: metav1.ObjectMeta{Name: flowGV.Group},
		Versions:   []apidiscoveryv2.APIVersionDiscovery{v},
	}
}

// flowAPI serves everything under /apis/flow.kubetab.dev/.
func (s *Server) flowAPI(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/apis/"), "/"), "/")
	switch {
	case len(segs) == 1:
		s.groupDocument(w, r, flowGV.Group)
		return
	case segs[1] != flowGV.Version || !s.flowServed():
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	case len(segs) == 2:
		s.resourceList(w, r, flowGV)
		return
	}
	fr := s.flowResource(segs[2])
	if fr == nil || len(segs) > 5 {
		writeError(w, r, notFoundPath(r.URL.Path))
		return
	}
	s.serveFlow(w, r, fr, segs[3:])
}

// serveFlow serves a request for fr; rest is the path after the
// resource: empty, [name] or [name, subresource].
func (s *Server) serveFlow(w http.ResponseWriter, r *http.Request, fr *flowResource, rest []string) {
	gr := schema.GroupResource{Group: fr.groupVersion().Group, Resource: fr.resource}
	name, sub := "", ""
	if len(rest) > 0 {
		name = rest[0]
	}
	if len(rest) > 1 {
		sub = rest[1]
		if !hasString(fr.subresources, sub) {
			writeError(w, r, notFoundPath(r.URL.Path))
			return
		}
	}
	if name == "" && r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(gr, verbOfMethod(r.Method, false)))
		return
	}
	if name != "" && (r.Method != http.MethodGet || sub != "") {
		if fr.serveNamed == nil {
			writeError(w, r, apierrors.NewMethodNotSupported(gr, verbOfMethod(r.Method, true)))
			return
		}
		fr.serveNamed(s, w, r, name, sub)
		return
	}
	watching, _ := queryBool(r.URL.Query(), "watch")
	out, err := negotiate(r, shapeTable, shapeMetadata)
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch {
	case watching:
		err = s.flowWatch(w, r, fr, out, name)
	case name != "":
		err = s.flowGet(w, r, fr, out, name)
	default:
		err = s.flowList(w, r, fr, out)
	}
	if err != nil {
		writeError(w, r, err)
	}
}

func verbOfMethod(method string, named bool) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if !named {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(method)
}

// flowSelectors reads labelSelector and fieldSelector; the field labels
// must be the resource's.
func flowSelectors(r *http.Request, fr *flowResource) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	ls, fs := labels.Everything(), fields.Everything()
	if v := q.Get("labelSelector"); v != "" {
		sel, err := labels.Parse(v)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		ls = sel
	}
	if v := q.Get("fieldSelector"); v != "" {
		sel, err := fields.ParseSelector(v)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		for _, req := range sel.Requirements() {
			if req.Field != "metadata.name" && !hasString(fr.fields, req.Field) {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		fs = sel
	}
	return ls, fs, nil
}

func flowMatches(o flowObject, ls labels.Selector, fs fields.Selector) bool {
	set := fields.Set{"metadata.name": o.name}
	for k, v := range o.fields {
		set[k] = v
	}
	return ls.Matches(labels.Set(o.meta.Labels)) && fs.Matches(set)
}

// flowContinue is the continue token of a flow list: the resourceVersion
// of the first page and the order key of the last object sent.
type flowContinue struct {
	RV    int64  `json:"rv"`
	After string `json:"after"`
}

func (s *Server) flowList(w http.ResponseWriter, r *http.Request, fr *flowResource, out output) error {
	q := r.URL.Query()
	ls, fs, err := flowSelectors(r, fr)
	if err != nil {
		return err
	}
	rvParam := q.Get("resourceVersion")
	want, err := parseResourceVersion(rvParam)
	if err != nil {
		return err
	}
	limit, err := queryInt64(q, "limit")
	if err != nil {
		return err
	}
	var after string
	at := int64(0)
	if tok := q.Get("continue"); tok != "" {
		if rvParam != "" && rvParam != "0" {
			return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		var c flowContinue
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil || c.RV <= 0 {
			return apierrors.NewBadRequest("invalid continue token")
		}
		at, after = c.RV, c.After
	} else if metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")) == metav1.ResourceVersionMatchExact {
		at = want
	}
	objs, rv, err := fr.list(s, at)
	if err != nil {
		if apierrors.IsResourceExpired(err) && after != "" {
			return apierrors.NewResourceExpired(inconsistentContinue)
		}
		return err
	}
	if at == 0 && want > rv {
		return tooLargeResourceVersion(want, rv)
	}
	var items []flowObject
	cont := ""
	for _, o := range objs {
		if after != "" && o.order <= after {
			continue
		}
		if !flowMatches(o, ls, fs) {
			continue
		}
		if limit != nil && *limit > 0 && int64(len(items)) == *limit {
			raw, _ := json.Marshal(flowContinue{RV: rv, After: items[len(items)-1].order})
			cont = base64.RawURLEncoding.EncodeToString(raw)
			break
		}
		items = append(items, o)
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(rv, 10), Continue: cont}
	switch out.shape {
	case shapeTable:
		writeEncoded(w, out, http.StatusOK, s.flowTable(r, fr, lm, items))
	case shapeMetadata:
		list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}, ListMeta: lm}
		for _, o := range items {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: o.meta})
		}
		writeEncoded(w, out, http.StatusOK, list)
	default:
		raw := make([]json.RawMessage, 0, len(items))
		for _, o := range items {
			b, err := json.Marshal(o.obj)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			raw = append(raw, b)
		}
		list := map[string]any{"kind": fr.listKind, "apiVersion": fr.groupVersion().String(), "metadata": lm, "items": raw}
		if fr == storeKeysResource {
			list["compactRevision"] = s.reg.KV().CompactedRevision()
		}
		writeEncoded(w, out, http.StatusOK, list)
	}
	return nil
}

func (s *Server) flowGet(w http.ResponseWriter, r *http.Request, fr *flowResource, out output, name string) error {
	gr := schema.GroupResource{Group: fr.groupVersion().Group, Resource: fr.resource}
	var o flowObject
	found := false
	if fr.get != nil {
		var err error
		if o, err = fr.get(s, name); err != nil {
			return err
		}
		found = true
	} else {
		objs, _, err := fr.list(s, 0)
		if err != nil {
			return err
		}
		for _, x := range objs {
			if x.name == name {
				o, found = x, true
				break
			}
		}
	}
	if !found {
		return apierrors.NewNotFound(gr, name)
	}
	switch out.shape {
	case shapeTable:
		writeEncoded(w, out, http.StatusOK, s.flowTable(r, fr, metav1.ListMeta{ResourceVersion: strconv.FormatInt(o.rv, 10)}, []flowObject{o}))
	case shapeMetadata:
		writeEncoded(w, out, http.StatusOK, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: o.meta})
	default:
		writeEncoded(w, out, http.StatusOK, o.obj)
	}
	return nil
}

// flowTable builds the meta.k8s.io Table of objs (includeObject: Metadata by
// default, None, or Object).
func (s *Server) flowTable(r *http.Request, fr *flowResource, lm metav1.ListMeta, objs []flowObject) *metav1.Table {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}, ListMeta: lm, ColumnDefinitions: fr.columns, Rows: []metav1.TableRow{}}
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	for _, o := range objs {
		row := metav1.TableRow{Cells: o.cells}
		switch include {
		case metav1.IncludeNone:
		case metav1.IncludeObject:
			raw, _ := json.Marshal(o.obj)
			row.Object = runtime.RawExtension{Raw: raw}
		default:
			row.Object = runtime.RawExtension{Object: &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: o.meta}}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// flowWatch serves a watch: with resourceVersion "" or "0", ADDED for every
// object now and then the changes; with N, the changes after N (410 Gone
// when N is older than what is kept). A name watches one object (kubectl
// get NAME -w asks with fieldSelector=metadata.name=NAME; both work).
func (s *Server) flowWatch(w http.ResponseWriter, r *http.Request, fr *flowResource, out output, name string) error {
	if out.mediaType != "application/json" {
		return notAcceptable{[]string{"application/json"}}
	}
	q := r.URL.Query()
	ls, fs, err := flowSelectors(r, fr)
	if err != nil {
		return err
	}
	if name != "" {
		fs = fields.AndSelectors(fs, fields.OneTermEqualSelector("metadata.name", name))
	}
	rvParam := q.Get("resourceVersion")
	from, err := parseResourceVersion(rvParam)
	if err != nil {
		return err
	}
	bookmarks, _ := queryBool(q, "allowWatchBookmarks")
	timeoutSeconds, err := queryInt64(q, "timeoutSeconds")
	if err != nil {
		return err
	}
	var initial []flowObject
	if rvParam == "" || rvParam == "0" {
		if initial, from, err = fr.list(s, 0); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events, err := fr.watch(ctx, s, from)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(typ watch.EventType, obj any) bool {
		raw, err := json.Marshal(obj)
		if err != nil {
			return false
		}
		line, err := json.Marshal(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}})
		if err != nil {
			return false
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	sendObj := func(typ watch.EventType, o flowObject) bool {
		switch out.shape {
		case shapeTable:
			return send(typ, s.flowTable(r, fr, metav1.ListMeta{ResourceVersion: strconv.FormatInt(o.rv, 10)}, []flowObject{o}))
		case shapeMetadata:
			return send(typ, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: o.meta})
		}
		return send(typ, o.obj)
	}
	if flusher != nil {
		flusher.Flush()
	}
	for _, o := range initial {
		if flowMatches(o, ls, fs) && !sendObj(watch.Added, o) {
			return nil
		}
	}
	timeout := time.Duration(float64(s.cfg.MinRequestTimeout) * 1.5)
	if timeoutSeconds != nil && *timeoutSeconds > 0 {
		timeout = time.Duration(*timeoutSeconds) * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var tick <-chan time.Time
	if bookmarks {
		t := time.NewTicker(s.cfg.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	rv := from
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			return nil
		case <-tick:
			bm := map[string]any{"kind": fr.kind, "apiVersion": fr.groupVersion().String(), "metadata": metav1.ObjectMeta{ResourceVersion: strconv.FormatInt(rv, 10)}}
			if !send(watch.Bookmark, bm) {
				return nil
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if ev.err != nil {
				st := statusOf(ev.err)
				st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
				st.Status = metav1.StatusFailure
				send(watch.Error, st)
				return nil
			}
			rv = max(rv, ev.rv)
			if ev.typ == "" || !flowMatches(ev.obj, ls, fs) {
				continue // progress only
			}
			if !sendObj(ev.typ, ev.obj) {
				return nil
			}
		}
	}
}

// tooOld is the 410 Gone of a watch from a resourceVersion no longer kept.
func tooOld(rv, oldest int64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, oldest))
}

// sortFlow sorts objects by their order key.
func sortFlow(objs []flowObject) {
	sort.Slice(objs, func(i, j int) bool { return objs[i].order < objs[j].order })
}
