// Package openapi generates the OpenAPI documents kube-apiserver serves at
// /openapi/v2 and /openapi/v3, by reflecting over the Go types the API
// server serves (k8s.io/api), at the first request rather than at build time.
//
// Upstream counterpart: k8s.io/kube-openapi (builder3, handler3; the
// definitions come from openapi-gen's zz_generated.openapi.go) as
// k8s.io/apiserver/pkg/server/routes/openapi.go installs it.
//
// Clients need these documents more than it seems. The real kubectl, before
// `kubectl apply -f`, fetches /openapi/v3 (a list of group versions) and then
// the document of the object's group version, to learn that the server
// validates fields itself (the fieldValidation parameter of the PATCH
// operation) and how to compute a strategic merge patch (the patch strategy
// and merge key of each list); `kubectl explain deployment.spec.replicas`
// reads the descriptions from the same document. Server-side apply needs the
// same schemas to know which lists are maps keyed by name.
//
//	GET /openapi/v3                   {"paths":{"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=9F2..."}}}
//	GET /openapi/v3/apis/apps/v1      components.schemas (io.k8s.api.apps.v1.Deployment ...) + paths
//	GET /openapi/v2                   everything in one Swagger 2.0 document (JSON, or protobuf
//	                                  as client-go's OpenAPISchema asks for it)
//
// The documents are built once, lazily, and cached with their hash (a
// client that asks with the current ?hash= may cache forever).
package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Config configures a Spec.
type Config struct {
	// Title and Version fill the documents' info ("Kubernetes", "v1.37.2").
	Title, Version string
	// Resources returns what the API server serves; it is called on every
	// request, and the documents are rebuilt when the answer changes.
	Resources func() []Resource
}

// Spec builds and caches the OpenAPI documents of a set of resources.
type Spec struct {
	cfg Config

	mu         sync.Mutex // guards doc and generation
	doc        *documents
	generation uint64
}

// New returns a Spec.
func New(cfg Config) (*Spec, error) {
	if cfg.Resources == nil {
		return nil, fmt.Errorf("openapi: Config.Resources is required")
	}
	if cfg.Title == "" {
		cfg.Title = "Kubernetes"
	}
	return &Spec{cfg: cfg}, nil
}

// documents is one generation of the documents.
type documents struct {
	key        string // the resources they describe
	generation uint64
	// defs are all definitions, v3 form; v2defs the ones that differ in v2.
	defs, v2defs map[string]*spec.Schema
	paths        map[string]*spec3.Path
	// groups are the v3 documents by path ("apis/apps/v1"), built lazily.
	groups map[string]*groupDoc
	order  []string

	// defJSON caches each definition's JSON: group version documents share
	// most of their schemas (every one has ObjectMeta; apps/v1 has PodSpec).
	defMu   sync.Mutex
	defJSON map[string][]byte

	v2once         sync.Once
	v2json, v2pb   []byte
	v2err          error
	v2hash, v3hash string
}

// groupDoc is the v3 document of one group version.
type groupDoc struct {
	once sync.Once
	gv   string // apps/v1, or v1 for the core group
	data []byte
	hash string
	err  error
}

// resourcesKey identifies a list of resources (cheaply: it runs on every
// request that needs the documents).
func resourcesKey(rs []Resource) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Group)
		b.WriteByte('/')
		b.WriteString(r.Version)
		b.WriteByte('/')
		b.WriteString(r.Resource)
		b.Write(r.Schema)
		for _, sub := range r.Subresources {
			b.WriteByte('/')
			b.WriteString(sub.Name)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// current returns the documents of the current resources, generating the
// definitions and paths when they changed.
func (s *Spec) current() *documents {
	rs := s.cfg.Resources()
	key := resourcesKey(rs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.doc != nil && s.doc.key == key {
		return s.doc
	}
	g := newSchemaGen()
	d := &documents{key: key, paths: map[string]*spec3.Path{}, groups: map[string]*groupDoc{}, defJSON: map[string][]byte{}}
	type gvKey struct{ group, version string }
	var gvs []gvKey
	seen := map[gvKey]bool{}
	for _, r := range rs {
		g.addPaths(d.paths, r)
		addGVK(g.defs[g.defineObject(r, false)], r.Group, r.Version, r.Kind)
		if r.List != nil || r.Schema != nil { // the reviews have no list
			addGVK(g.defs[g.defineObject(r, true)], r.Group, r.Version, r.Kind+"List")
		}
		for _, sub := range r.Subresources {
			if sub.Object != nil && sub.Kind != "" {
				setGVK(g, sub.Object, sub.Group, sub.Version, sub.Kind)
			}
		}
		k := gvKey{r.Group, r.Version}
		if !seen[k] {
			seen[k] = true
			gvs = append(gvs, k)
		}
	}
	// Types every group version shares carry the GVK of each.
	for _, k := range gvs {
		setGVK(g, metav1.DeleteOptions{}, k.group, k.version, "DeleteOptions")
		g.addDiscoveryPath(d.paths, k.group, k.version)
	}
	setGVK(g, metav1.Status{}, "", "v1", "Status")
	for _, k := range gvs {
		p := strings.TrimPrefix(pathPrefix(k.group, k.version), "/")
		gv := k.version
		if k.group != "" {
			gv = k.group + "/" + k.version
		}
		d.groups[p] = &groupDoc{gv: gv}
		d.order = append(d.order, p)
	}
	d.defs, d.v2defs = g.defs, g.v2
	s.generation++
	d.generation = s.generation
	s.doc = d
	return d
}

// setGVK appends a group-version-kind to the definition of obj's type.
func setGVK(g *schemaGen, obj any, group, version, kind string) {
	addGVK(g.defs[g.define(reflect.TypeOf(obj))], group, version, kind)
}

func addGVK(def *spec.Schema, group, version, kind string) {
	list, _ := def.Extensions["x-kubernetes-group-version-kind"].([]any)
	for _, x := range list {
		if m := x.(map[string]any); m["group"] == group && m["version"] == version && m["kind"] == kind {
			return
		}
	}
	def.AddExtension("x-kubernetes-group-version-kind", append(list, map[string]any{"group": group, "version": version, "kind": kind}))
}

// addDiscoveryPath documents GET /apis/<group>/<version>/ (APIResourceList).
func (g *schemaGen) addDiscoveryPath(paths map[string]*spec3.Path, group, version string) {
	ref := refPrefix + g.define(reflect.TypeOf(metav1.APIResourceList{}))
	op := operation("get"+opPrefix(group, version)+"APIResources", "", "get available resources", tag(group, version), nil, nil, nil, ref, responseTypes, 200)
	delete(op.Extensions, "x-kubernetes-action")
	delete(op.Extensions, "x-kubernetes-group-version-kind")
	paths[pathPrefix(group, version)+"/"] = &spec3.Path{PathProps: spec3.PathProps{Get: op}}
}

// Definitions returns every definition (v3 form, refs to
// #/components/schemas/NAME), keyed by name: the models server-side apply
// builds its type converter from. The caller must not modify them. The
// generation changes whenever the definitions are rebuilt.
func (s *Spec) Definitions() (defs map[string]*spec.Schema, generation uint64) {
	d := s.current()
	return d.defs, d.generation
}

// V3Paths lists the group-version documents: path ("apis/apps/v1") to its
// URL with the current hash, as GET /openapi/v3 answers.
func (s *Spec) V3Paths() (map[string]string, error) {
	d := s.current()
	out := map[string]string{}
	for _, p := range d.order {
		gd, err := d.group(p)
		if err != nil {
			return nil, err
		}
		out[p] = "/openapi/v3/" + p + "?hash=" + gd.hash
	}
	return out, nil
}

// V3 returns the v3 document of a group version path ("api/v1",
// "apis/apps/v1") as JSON, and its hash; ok is false for unknown paths.
func (s *Spec) V3(path string) (data []byte, hash string, ok bool, err error) {
	d := s.current()
	if _, ok := d.groups[path]; !ok {
		return nil, "", false, nil
	}
	gd, err := d.group(path)
	if err != nil {
		return nil, "", true, err
	}
	return gd.data, gd.hash, true, nil
}

// group builds (once) the document of one group version: its paths and
// every definition they reach.
func (d *documents) group(path string) (*groupDoc, error) {
	gd := d.groups[path]
	gd.once.Do(func() {
		prefix := "/" + path + "/"
		paths := &spec3.Paths{Paths: map[string]*spec3.Path{}}
		need := map[string]bool{}
		for p, item := range d.paths {
			if strings.HasPrefix(p, prefix) {
				paths.Paths[p] = item
				collectRefsFromPath(item, d.defs, need)
			}
		}
		gd.data, gd.err = d.encodeV3(paths, need)
		gd.hash = hashOf(gd.data)
	})
	return gd, gd.err
}

// encodeV3 writes a v3 document (what spec3.OpenAPI would marshal to), with
// the schemas from the per-definition cache.
func (d *documents) encodeV3(paths *spec3.Paths, need map[string]bool) ([]byte, error) {
	names := make([]string, 0, len(need))
	for name := range need {
		names = append(names, name)
	}
	sort.Strings(names)
	pathsJSON, err := paths.MarshalJSON() // directly: encoding/json would re-validate it
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"openapi":"3.0.0","info":{"title":"Kubernetes","version":"unversioned"},"paths":`)
	b.Write(pathsJSON)
	b.WriteString(`,"components":{"schemas":{`)
	for i, name := range names {
		def, err := d.definitionJSON(name)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(def)
	}
	b.WriteString("}}}")
	return b.Bytes(), nil
}

// definitionJSON returns the JSON of one definition, encoding it once.
func (d *documents) definitionJSON(name string) ([]byte, error) {
	d.defMu.Lock()
	defer d.defMu.Unlock()
	if data, ok := d.defJSON[name]; ok {
		return data, nil
	}
	data, err := d.defs[name].MarshalJSON()
	if err != nil {
		return nil, err
	}
	d.defJSON[name] = data
	return data, nil
}

func hashOf(data []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(data))
}

// collectRefsFromPath marks every definition the operations of p reach.
func collectRefsFromPath(p *spec3.Path, defs map[string]*spec.Schema, need map[string]bool) {
	for _, op := range []*spec3.Operation{p.Get, p.Put, p.Post, p.Delete, p.Patch} {
		if op == nil {
			continue
		}
		if op.RequestBody != nil {
			for _, mt := range op.RequestBody.Content {
				collectRefs(mt.Schema, defs, need)
			}
		}
		if op.Responses != nil {
			for _, r := range op.Responses.StatusCodeResponses {
				for _, mt := range r.Content {
					collectRefs(mt.Schema, defs, need)
				}
			}
		}
	}
}

// collectRefs marks the definitions s refers to, transitively.
func collectRefs(s *spec.Schema, defs map[string]*spec.Schema, need map[string]bool) {
	if s == nil {
		return
	}
	if ref := s.Ref.String(); ref != "" {
		name := strings.TrimPrefix(ref, refPrefix)
		if !need[name] {
			need[name] = true
			collectRefs(defs[name], defs, need)
		}
	}
	for k := range s.Properties {
		p := s.Properties[k]
		collectRefs(&p, defs, need)
	}
	for i := range s.AllOf {
		collectRefs(&s.AllOf[i], defs, need)
	}
	if s.Items != nil {
		collectRefs(s.Items.Schema, defs, need)
	}
	if s.AdditionalProperties != nil {
		collectRefs(s.AdditionalProperties.Schema, defs, need)
	}
}

// Swagger 2.0
//
// The v2 document is the v3 one in the older dialect: definitions under
// #/definitions/, a $ref beside its description instead of inside allOf,
// parameters with their type inline and the request body as an "in: body"
// parameter. It is built from the same definitions and paths.

// V2 returns the Swagger 2.0 document as JSON, its protobuf form (gnostic's
// openapi_v2.Document, what client-go's OpenAPISchema decodes; nil in the
// browser build, see v2proto.go) and its hash.
func (s *Spec) V2() (jsonData, protoData []byte, hash string, err error) {
	d := s.current()
	d.v2once.Do(func() { d.v2json, d.v2pb, d.v2hash, d.v2err = d.buildV2() })
	return d.v2json, d.v2pb, d.v2hash, d.v2err
}

func (d *documents) buildV2() (jsonData, protoData []byte, hash string, err error) {
	defs := map[string]any{}
	for name, def := range d.defs {
		src := def
		if v2, ok := d.v2defs[name]; ok {
			src = v2
		}
		m, err := toMap(src)
		if err != nil {
			return nil, nil, "", err
		}
		defs[name] = toV2Schema(m)
	}
	paths := map[string]any{}
	for p, item := range d.paths {
		m, err := v2Path(item)
		if err != nil {
			return nil, nil, "", err
		}
		paths[p] = m
	}
	doc := map[string]any{
		"swagger":     "2.0",
		"info":        map[string]any{"title": "Kubernetes", "version": "unversioned"},
		"paths":       paths,
		"definitions": defs,
	}
	jsonData, err = json.Marshal(doc)
	if err != nil {
		return nil, nil, "", err
	}
	protoData, err = v2Protobuf(jsonData)
	if err != nil {
		return nil, nil, "", err
	}
	return jsonData, protoData, hashOf(jsonData), nil
}

// toMap turns any JSON-able value into generic maps.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// toV2Schema rewrites a v3 schema (as maps) into v2: refs to #/definitions/,
// allOf-wrapped refs unwrapped, oneOf dropped.
func toV2Schema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if all, ok := x["allOf"].([]any); ok && len(all) == 1 {
			if inner, ok := all[0].(map[string]any); ok && inner["$ref"] != nil {
				delete(x, "allOf")
				x["$ref"] = inner["$ref"]
			}
		}
		for k, val := range x {
			if k == "$ref" {
				if s, ok := val.(string); ok {
					x[k] = "#/definitions/" + strings.TrimPrefix(s, refPrefix)
				}
				continue
			}
			x[k] = toV2Schema(val)
		}
		return x
	case []any:
		for i := range x {
			x[i] = toV2Schema(x[i])
		}
		return x
	}
	return v
}

// v2Path turns a v3 path item into a v2 one.
func v2Path(p *spec3.Path) (map[string]any, error) {
	out := map[string]any{}
	if len(p.Parameters) > 0 {
		out["parameters"] = v2Params(p.Parameters)
	}
	for method, op := range map[string]*spec3.Operation{"get": p.Get, "put": p.Put, "post": p.Post, "delete": p.Delete, "patch": p.Patch} {
		if op == nil {
			continue
		}
		o := map[string]any{
			"description": op.Description, "operationId": op.OperationId, "tags": op.Tags,
			"schemes": []string{"https"},
		}
		for k, v := range op.Extensions {
			o[k] = v
		}
		params := v2Params(op.Parameters)
		var produces []string
		if op.RequestBody != nil {
			var consumes []string
			var schema *spec.Schema
			for mt, m := range op.RequestBody.Content {
				consumes = append(consumes, mt)
				schema = m.Schema
			}
			sort.Strings(consumes)
			o["consumes"] = consumes
			sm, err := toMap(schema)
			if err != nil {
				return nil, err
			}
			params = append([]any{map[string]any{"name": "body", "in": "body", "required": op.RequestBody.Required, "schema": toV2Schema(sm)}}, params...)
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		responses := map[string]any{}
		for code, r := range op.Responses.StatusCodeResponses {
			rm := map[string]any{"description": r.Description}
			for mt, m := range r.Content {
				if !containsString(produces, mt) {
					produces = append(produces, mt)
				}
				sm, err := toMap(m.Schema)
				if err != nil {
					return nil, err
				}
				rm["schema"] = toV2Schema(sm)
			}
			responses[fmt.Sprint(code)] = rm
		}
		sort.Strings(produces)
		if len(produces) > 0 {
			o["produces"] = produces
		}
		o["responses"] = responses
		out[method] = o
	}
	return out, nil
}

func v2Params(ps []*spec3.Parameter) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		m := map[string]any{"name": p.Name, "in": p.In, "uniqueItems": true}
		if p.Description != "" {
			m["description"] = p.Description
		}
		if p.Required {
			m["required"] = true
		}
		if p.Schema != nil && len(p.Schema.Type) > 0 {
			m["type"] = p.Schema.Type[0]
		}
		out = append(out, m)
	}
	return out
}
