package openapi

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schemas from Go types
//
// Upstream runs openapi-gen over the comments of k8s.io/api at build time and
// compiles the result into kube-apiserver. kubetab reads the same facts at
// run time from what the Go types carry:
//
//	Go                                        OpenAPI
//	json:"replicas,omitempty"                 property "replicas", optional
//	json:"containers" (no omitempty)          listed in "required"
//	json:",inline" / embedded struct          its properties, flattened
//	patchStrategy:"merge" patchMergeKey:"name"  x-kubernetes-patch-strategy / -merge-key
//	func (Pod) SwaggerDoc() map[string]string descriptions (generated from the comments)
//	func (Pod) OpenAPIModelName() string      the definition's name, io.k8s.api.core.v1.Pod
//	OpenAPISchemaType/Format, OpenAPIV3OneOfTypes  Time, Quantity, IntOrString ...
//	a json.Marshaler with none of those       a free-form object (RawExtension, FieldsV1)
//
// What only lives in comments and source is not here: +optional on a field
// without omitempty (such a field is listed as required), +listType and
// +listMapKey (lists are described by their patch strategy instead, which
// is what strategic merge patch and server-side apply fall back to),
// +default, and +enum (the constants of an enum type are not visible to
// reflection, so there is no "enum" list).

// refPrefix is where a v3 document keeps its schemas.
const refPrefix = "#/components/schemas/"

// Interfaces the types of k8s.io/api and apimachinery implement for openapi-gen.
type (
	modelNamer    interface{ OpenAPIModelName() string }
	swaggerDoccer interface{ SwaggerDoc() map[string]string }
	schemaTyper   interface {
		OpenAPISchemaType() []string
		OpenAPISchemaFormat() string
	}
	oneOfTyper interface{ OpenAPIV3OneOfTypes() []string }
)

var (
	byteSliceType = reflect.TypeOf([]byte(nil))
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// schemaGen collects the definitions of a set of Go types.
type schemaGen struct {
	// defs holds the v3 form of every definition, by model name.
	defs map[string]*spec.Schema
	// v2 holds the definitions whose v2 form differs (oneOf is v3 only).
	v2 map[string]*spec.Schema
	// byType remembers the model name of each type already defined.
	byType map[reflect.Type]string
}

func newSchemaGen() *schemaGen {
	return &schemaGen{defs: map[string]*spec.Schema{}, v2: map[string]*spec.Schema{}, byType: map[reflect.Type]string{}}
}

// modelName is the definition name of t: its OpenAPIModelName, or its
// package path turned around the way openapi-gen does
// (k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod).
func modelName(t reflect.Type) string {
	if m, ok := reflect.Zero(t).Interface().(modelNamer); ok {
		return m.OpenAPIModelName()
	}
	pkg := t.PkgPath()
	domain, rest, _ := strings.Cut(pkg, "/")
	parts := strings.Split(domain, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	name := strings.Join(parts, ".")
	if rest != "" {
		name += "." + strings.ReplaceAll(rest, "/", ".")
	}
	return name + "." + t.Name()
}

func swaggerDoc(t reflect.Type) map[string]string {
	if d, ok := reflect.Zero(t).Interface().(swaggerDoccer); ok {
		return d.SwaggerDoc()
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isNamedSchema reports whether t gets a definition of its own (and is
// referenced by $ref) rather than being inlined: structs, and named types
// that describe themselves (OpenAPISchemaType).
func isNamedSchema(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" {
		return false
	}
	if _, ok := reflect.Zero(t).Interface().(schemaTyper); ok {
		return true
	}
	return t.Kind() == reflect.Struct
}

// define adds the definition of t (and of everything it refers to) and
// returns its name.
func (g *schemaGen) define(t reflect.Type) string {
	t = deref(t)
	if name, ok := g.byType[t]; ok {
		return name
	}
	name := modelName(t)
	g.byType[t] = name
	s := &spec.Schema{}
	g.defs[name] = s
	docs := swaggerDoc(t)
	s.Description = docs[""]
	zero := reflect.Zero(t).Interface()
	if st, ok := zero.(schemaTyper); ok {
		v2 := &spec.Schema{}
		v2.Description = s.Description
		v2.Type = st.OpenAPISchemaType()
		v2.Format = st.OpenAPISchemaFormat()
		if oo, ok := zero.(oneOfTyper); ok {
			// v3 says "one of these types"; v2 cannot, and keeps the plain type.
			for _, typ := range oo.OpenAPIV3OneOfTypes() {
				s.OneOf = append(s.OneOf, spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}}})
			}
			s.Format = v2.Format
			g.v2[name] = v2
		} else {
			*s = *v2
		}
		return name
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		s.Type = spec.StringOrArray{"object"}
		return name
	}
	s.Type = spec.StringOrArray{"object"}
	g.addFields(s, t, docs)
	sort.Strings(s.Required)
	return name
}

// addFields adds the properties of struct t to s, flattening embedded ones.
func (g *schemaGen) addFields(s *spec.Schema, t reflect.Type, docs map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			if ft := deref(f.Type); ft.Kind() == reflect.Struct {
				g.addFields(s, ft, swaggerDoc(ft))
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		optional := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		prop := g.property(f.Type, docs[name], !optional)
		if ps := f.Tag.Get("patchStrategy"); ps != "" {
			prop.AddExtension("x-kubernetes-patch-strategy", ps)
		}
		if mk := f.Tag.Get("patchMergeKey"); mk != "" {
			prop.AddExtension("x-kubernetes-patch-merge-key", mk)
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties[name] = prop
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// property is the schema of a field of type t: a reference (wrapped in allOf
// when it has a description or default beside it, as v3 requires) or an
// inline schema. required fields of value type get their zero value as
// default, struct-valued ones {} (as upstream's documents have).
func (g *schemaGen) property(t reflect.Type, description string, required bool) spec.Schema {
	s := g.inline(t)
	def := g.defaultFor(t, required)
	if s.Ref.String() != "" && (description != "" || def != nil) {
		s = spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{s}}}
	}
	s.Description = description
	s.Default = def
	return s
}

// defaultFor is the default a value-typed field shows: {} for an object,
// the zero value of a required scalar, nothing for pointers.
func (g *schemaGen) defaultFor(t reflect.Type, required bool) any {
	if t.Kind() == reflect.Pointer {
		return nil
	}
	if isNamedSchema(t) {
		if _, ok := reflect.Zero(t).Interface().(schemaTyper); ok {
			return nil
		}
		if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
			return nil
		}
		return map[string]any{}
	}
	if !required {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return ""
	case reflect.Bool:
		return false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 0
	case reflect.Float32, reflect.Float64:
		return 0.0
	}
	return nil
}

// inline is the schema of a value of type t: a $ref for named schemas, the
// type itself otherwise.
func (g *schemaGen) inline(t reflect.Type) spec.Schema {
	t = deref(t)
	if isNamedSchema(t) {
		return *spec.RefSchema(refPrefix + g.define(t))
	}
	var s spec.Schema
	switch t.Kind() {
	case reflect.String:
		s.Type = spec.StringOrArray{"string"}
	case reflect.Bool:
		s.Type = spec.StringOrArray{"boolean"}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		s.Type, s.Format = spec.StringOrArray{"integer"}, "int32"
	case reflect.Int64, reflect.Uint, reflect.Uint64:
		s.Type, s.Format = spec.StringOrArray{"integer"}, "int64"
	case reflect.Float32:
		s.Type, s.Format = spec.StringOrArray{"number"}, "float"
	case reflect.Float64:
		s.Type, s.Format = spec.StringOrArray{"number"}, "double"
	case reflect.Slice, reflect.Array:
		if t == byteSliceType || (t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8) {
			s.Type, s.Format = spec.StringOrArray{"string"}, "byte"
			break
		}
		item := g.element(t.Elem())
		s.Type = spec.StringOrArray{"array"}
		s.Items = &spec.SchemaOrArray{Schema: &item}
	case reflect.Map:
		item := g.element(t.Elem())
		s.Type = spec.StringOrArray{"object"}
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &item}
	case reflect.Struct:
		// An anonymous struct: inline its properties.
		s.Type = spec.StringOrArray{"object"}
		g.addFields(&s, t, nil)
	case reflect.Interface:
		// Anything (upstream: runtime.Object fields are RawExtensions).
	}
	return s
}

// element is the schema of a list item or map value, with its default.
func (g *schemaGen) element(t reflect.Type) spec.Schema {
	s := g.inline(t)
	def := g.defaultFor(t, true)
	if def == nil {
		return s
	}
	if s.Ref.String() != "" {
		s = spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{s}}}
	}
	s.Default = def
	return s
}
