package openapi

import (
	"reflect"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Operations
//
// Every served resource gets the paths and operations kube-apiserver
// documents for it (upstream: k8s.io/apiserver/pkg/endpoints/installer.go),
// each with x-kubernetes-action and x-kubernetes-group-version-kind, so
// clients can find "the PATCH of apps/v1 Deployment" and read which query
// parameters it takes. kubectl does exactly that before `apply`: if the PATCH
// lists fieldValidation, it lets the server validate (--validate=strict);
// if its request body lists application/strategic-merge-patch+json, it
// computes a strategic merge patch from the schema's patch strategies.
//
//	/apis/apps/v1/namespaces/{namespace}/deployments         GET list, POST create, DELETE deletecollection
//	/apis/apps/v1/deployments                                 GET list (all namespaces)
//	/apis/apps/v1/namespaces/{namespace}/deployments/{name}   GET read, PUT replace, PATCH, DELETE
//	/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale   per subresource
//
// Query parameters come from the option types themselves (metav1.ListOptions,
// CreateOptions, ...), with their SwaggerDoc descriptions, as upstream
// derives them.

// Subresource is a subresource of a served resource.
type Subresource struct {
	Name  string   // "status", "scale", "log", ...
	Verbs []string // get, update, patch, create
	// Object is the kind the subresource reads and writes (autoscaling/v1
	// Scale for scale, with its Group, Version and Kind); nil means the
	// parent's. For log, which answers text, it is the options type whose
	// fields are the query parameters (PodLogOptions), and Kind is empty.
	Object               any
	Group, Version, Kind string
}

// Resource is one served resource.
type Resource struct {
	Group, Version, Kind string
	Resource             string // plural: "deployments"
	Namespaced           bool
	// Verbs of the resource itself: get list watch create update patch
	// delete deletecollection.
	Verbs        []string
	Subresources []Subresource
	// Object and List are values (or pointers) of the Go types served.
	Object, List any
	// Schema, when set, describes the objects instead of Object's Go type:
	// the JSON of a CRD version's openAPIV3Schema. The definitions are
	// named as upstream names them (com.example.stable.v1.CronTab), with
	// apiVersion, kind and metadata added, and a list definition beside.
	Schema []byte
}

func (r Resource) groupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// pathPrefix is /api/v1 or /apis/<group>/<version>.
func pathPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// opPrefix is the operationId stem of a group version: AppsV1, CoreV1,
// NetworkingV1 (networking.k8s.io), RbacAuthorizationV1.
func opPrefix(group, version string) string {
	g := strings.TrimSuffix(group, ".k8s.io")
	if g == "" {
		g = "core"
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(g, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	b.WriteString(upperFirst(version))
	return b.String()
}

// tag is the operation tag: apps_v1, core_v1, rbacAuthorization_v1.
func tag(group, version string) string {
	p := opPrefix(group, version)
	p = strings.TrimSuffix(p, upperFirst(version))
	return string(unicode.ToLower(rune(p[0]))) + p[1:] + "_" + version
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Descriptions of upstream's path parameters.
const (
	nameParamDoc      = "name of the "
	namespaceParamDoc = "object name and auth scope, such as for teams and projects"
	prettyParamDoc    = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."
)

// queryParams lists the query parameters an options struct stands for, with
// their descriptions, as upstream derives them from the same types. skip
// names fields that are not query parameters.
func queryParams(opts any, skip ...string) []*spec3.Parameter {
	t := reflect.TypeOf(opts)
	docs := swaggerDoc(t)
	var out []*spec3.Parameter
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" || containsString(skip, name) {
			continue
		}
		typ := "string"
		ft := deref(f.Type)
		switch ft.Kind() {
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			typ = "integer"
		case reflect.Struct:
			if _, ok := reflect.Zero(ft).Interface().(schemaTyper); !ok {
				continue // Preconditions: body only
			}
		}
		out = append(out, queryParam(name, typ, docs[name]))
	}
	return sortParams(out)
}

func queryParam(name, typ, doc string) *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: "query", Description: doc,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, UniqueItems: true}},
	}}
}

func pathParam(name, doc string) *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: name, In: "path", Description: doc, Required: true,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, UniqueItems: true}},
	}}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortParams(ps []*spec3.Parameter) []*spec3.Parameter {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// The query parameters of each verb.
var (
	listParams   = queryParams(metav1.ListOptions{})
	createParams = queryParams(metav1.CreateOptions{})
	updateParams = queryParams(metav1.UpdateOptions{})
	patchParams  = queryParams(metav1.PatchOptions{})
	deleteParams = queryParams(metav1.DeleteOptions{})
	// deletecollection takes both, without watch-only ones.
	deleteCollectionParams = sortParams(append(append([]*spec3.Parameter{}, deleteParams...),
		queryParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks")...))
)

// Media types kubetab reads and writes.
var (
	responseTypes     = []string{"application/json", "application/yaml"}
	listResponseTypes = []string{"application/json", "application/yaml", "application/json;stream=watch"}
	patchTypes        = []string{
		"application/apply-patch+yaml", "application/json-patch+json",
		"application/merge-patch+json", "application/strategic-merge-patch+json",
	}
)

func content(types []string, ref string) map[string]*spec3.MediaType {
	out := map[string]*spec3.MediaType{}
	for _, t := range types {
		out[t] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: spec.RefSchema(ref)}}
	}
	return out
}

func response(description string, types []string, ref string) *spec3.Response {
	r := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: description}}
	if ref != "" {
		r.Content = content(types, ref)
	}
	return r
}

// operation builds one operation. codes maps status codes to descriptions.
func operation(id, action, description, tagName string, gvk map[string]any, params []*spec3.Parameter, body *spec3.RequestBody, out string, types []string, codes ...int) *spec3.Operation {
	op := &spec3.Operation{OperationProps: spec3.OperationProps{
		OperationId: id, Description: description, Tags: []string{tagName},
		Parameters: params, RequestBody: body,
		Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
			401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}},
		}}},
	}}
	for _, c := range codes {
		op.Responses.StatusCodeResponses[c] = response(statusText(c), types, out)
	}
	op.AddExtension("x-kubernetes-action", action)
	op.AddExtension("x-kubernetes-group-version-kind", gvk)
	return op
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	}
	return ""
}

func gvkExt(group, version, kind string) map[string]any {
	return map[string]any{"group": group, "version": version, "kind": kind}
}

func bodyOf(types []string, ref string) *spec3.RequestBody {
	return &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content(types, ref), Required: true}}
}

// addPaths adds the paths of r to paths, defining the types it refers to.
func (g *schemaGen) addPaths(paths map[string]*spec3.Path, r Resource) {
	gv := opPrefix(r.Group, r.Version)
	tg := tag(r.Group, r.Version)
	objRef := refPrefix + g.defineObject(r, false)
	has := func(v string) bool { return len(r.Verbs) == 0 || containsString(r.Verbs, v) }
	listRef := ""
	if has("list") {
		listRef = refPrefix + g.defineObject(r, true)
	}
	statusRef := refPrefix + g.define(reflect.TypeOf(metav1.Status{}))
	deleteRef := refPrefix + g.define(reflect.TypeOf(metav1.DeleteOptions{}))
	patchRef := refPrefix + g.define(reflect.TypeOf(metav1.Patch{}))
	gvk := gvkExt(r.Group, r.Version, r.Kind)

	prefix := pathPrefix(r.Group, r.Version)
	collection := prefix + "/" + r.Resource
	scope := ""
	common := []*spec3.Parameter{queryParam("pretty", "string", prettyParamDoc)}
	if r.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + r.Resource
		scope = "Namespaced"
		common = []*spec3.Parameter{pathParam("namespace", namespaceParamDoc), common[0]}
		// Across all namespaces: list only.
		if has("list") {
			paths[prefix+"/"+r.Resource] = &spec3.Path{PathProps: spec3.PathProps{
				Get:        operation("list"+gv+r.Kind+"ForAllNamespaces", "list", "list or watch objects of kind "+r.Kind, tg, gvk, listParams, nil, listRef, listResponseTypes, 200),
				Parameters: []*spec3.Parameter{common[1]},
			}}
		}
	}
	coll := &spec3.Path{PathProps: spec3.PathProps{Parameters: common}}
	if has("list") {
		coll.Get = operation("list"+gv+scope+r.Kind, "list", "list or watch objects of kind "+r.Kind, tg, gvk, listParams, nil, listRef, listResponseTypes, 200)
	}
	if has("create") {
		coll.Post = operation("create"+gv+scope+r.Kind, "post", "create "+article(r.Kind)+" "+r.Kind, tg, gvk, createParams, bodyOf([]string{"*/*"}, objRef), objRef, responseTypes, 200, 201, 202)
	}
	if has("deletecollection") {
		coll.Delete = operation("delete"+gv+"Collection"+scope+r.Kind, "deletecollection", "delete collection of "+r.Kind, tg, gvk, deleteCollectionParams,
			&spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content([]string{"*/*"}, deleteRef)}}, statusRef, responseTypes, 200)
	}
	paths[collection] = coll

	item := &spec3.Path{PathProps: spec3.PathProps{Parameters: append([]*spec3.Parameter{pathParam("name", nameParamDoc+r.Kind)}, common...)}}
	if has("get") {
		item.Get = operation("read"+gv+scope+r.Kind, "get", "read the specified "+r.Kind, tg, gvk, nil, nil, objRef, responseTypes, 200)
	}
	if has("update") {
		item.Put = operation("replace"+gv+scope+r.Kind, "put", "replace the specified "+r.Kind, tg, gvk, updateParams, bodyOf([]string{"*/*"}, objRef), objRef, responseTypes, 200, 201)
	}
	if has("patch") {
		item.Patch = operation("patch"+gv+scope+r.Kind, "patch", "partially update the specified "+r.Kind, tg, gvk, patchParams, bodyOf(r.patchTypes(), patchRef), objRef, responseTypes, 200, 201)
	}
	if has("delete") {
		item.Delete = operation("delete"+gv+scope+r.Kind, "delete", "delete "+article(r.Kind)+" "+r.Kind, tg, gvk, deleteParams,
			&spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content([]string{"*/*"}, deleteRef)}}, statusRef, responseTypes, 200, 202)
	}
	if item.Get != nil || item.Put != nil || item.Patch != nil || item.Delete != nil {
		paths[collection+"/{name}"] = item // a create-only review has no item path
	}

	for _, sub := range r.Subresources {
		g.addSubresourcePaths(paths, r, sub, collection, scope, common)
	}
}

// addSubresourcePaths adds /{name}/<subresource>.
func (g *schemaGen) addSubresourcePaths(paths map[string]*spec3.Path, r Resource, sub Subresource, collection, scope string, common []*spec3.Parameter) {
	gv := opPrefix(r.Group, r.Version)
	tg := tag(r.Group, r.Version)
	kind, group, version := r.Kind, r.Group, r.Version
	ref := refPrefix + g.defineObject(r, false)
	if sub.Object != nil && sub.Kind != "" {
		kind, group, version = sub.Kind, sub.Group, sub.Version
		ref = refPrefix + g.define(reflect.TypeOf(sub.Object))
	}
	gvk := gvkExt(group, version, kind)
	suffix := upperFirst(sub.Name)
	patchRef := refPrefix + g.define(reflect.TypeOf(metav1.Patch{}))
	p := &spec3.Path{PathProps: spec3.PathProps{Parameters: append([]*spec3.Parameter{pathParam("name", nameParamDoc+kind)}, common...)}}
	if sub.Name == "log" {
		// Text, with the parameters of PodLogOptions (sub.Object).
		var params []*spec3.Parameter
		if sub.Object != nil {
			params = queryParams(sub.Object)
		}
		op := operation("read"+gv+scope+r.Kind+suffix, "get", "read log of the specified "+r.Kind, tg, gvk, params, nil, "", nil, 200)
		op.Responses.StatusCodeResponses[200].Content = map[string]*spec3.MediaType{
			"text/plain": {MediaTypeProps: spec3.MediaTypeProps{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}}},
		}
		p.Get = op
		paths[collection+"/{name}/"+sub.Name] = p
		return
	}
	for _, verb := range sub.Verbs {
		switch verb {
		case "get":
			p.Get = operation("read"+gv+scope+r.Kind+suffix, "get", "read "+sub.Name+" of the specified "+r.Kind, tg, gvk, nil, nil, ref, responseTypes, 200)
		case "update":
			p.Put = operation("replace"+gv+scope+r.Kind+suffix, "put", "replace "+sub.Name+" of the specified "+r.Kind, tg, gvk, updateParams, bodyOf([]string{"*/*"}, ref), ref, responseTypes, 200, 201)
		case "patch":
			p.Patch = operation("patch"+gv+scope+r.Kind+suffix, "patch", "partially update "+sub.Name+" of the specified "+r.Kind, tg, gvk, patchParams, bodyOf(r.patchTypes(), patchRef), ref, responseTypes, 200, 201)
		case "create":
			p.Post = operation("create"+gv+scope+r.Kind+suffix, "post", "create "+sub.Name+" of "+article(r.Kind)+" "+r.Kind, tg, gvk, createParams, bodyOf([]string{"*/*"}, ref), ref, responseTypes, 200, 201, 202)
		}
	}
	paths[collection+"/{name}/"+sub.Name] = p
}

// patchTypes are the patch media types r accepts: custom resources have
// no patch strategies, and take no strategic merge patch (kubectl, seeing
// it missing, sends a JSON merge patch).
func (r Resource) patchTypes() []string {
	if r.Schema == nil {
		return patchTypes
	}
	var out []string
	for _, t := range patchTypes {
		if t != "application/strategic-merge-patch+json" {
			out = append(out, t)
		}
	}
	return out
}

// article is "a" or "an", as upstream's descriptions say ("create an Event").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an"
	}
	return "a"
}
