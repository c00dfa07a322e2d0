package openapi

import (
	"encoding/json"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Custom resources
//
// A custom resource has no Go type to reflect over: its schema is its
// CRD's openAPIV3Schema. Upstream publishes it (apiextensions-apiserver's
// pkg/controller/openapi/builder) under a name made of the reversed group,
// the version and the kind, with the fields every object has added:
//
//	com.example.stable.v1.CronTab      the CRD's schema + apiVersion, kind,
//	                                   metadata ($ref ObjectMeta)
//	com.example.stable.v1.CronTabList  apiVersion, items ($ref CronTab), kind,
//	                                   metadata ($ref ListMeta)
//
// which is what `kubectl explain crontab.spec` reads.

// defineObject defines r's object (or list) and returns its name.
func (g *schemaGen) defineObject(r Resource, list bool) string {
	if r.Schema == nil {
		if list {
			return g.define(reflect.TypeOf(r.List))
		}
		return g.define(reflect.TypeOf(r.Object))
	}
	name := customModelName(r.Group, r.Version, r.Kind)
	if list {
		name += "List"
	}
	if _, ok := g.defs[name]; ok {
		return name
	}
	str := func(desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Description: desc}}
	}
	ref := func(t reflect.Type, desc string) spec.Schema {
		// A $ref with a description, as upstream: allOf of the reference.
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc,
			AllOf:       []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(refPrefix + g.define(t))}}},
		}}
	}
	docs := metav1.TypeMeta{}.SwaggerDoc()
	s := &spec.Schema{}
	if list {
		s.Description = r.Kind + "List is a list of " + r.Kind
		s.Type = spec.StringOrArray{"object"}
		s.Required = []string{"items"}
		s.Properties = map[string]spec.Schema{
			"apiVersion": str(docs["apiVersion"]),
			"kind":       str(docs["kind"]),
			"metadata":   ref(reflect.TypeOf(metav1.ListMeta{}), "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"),
			"items": {SchemaProps: spec.SchemaProps{
				Type:        spec.StringOrArray{"array"},
				Description: "List of " + strings.ToLower(r.Resource) + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				Items:       &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(refPrefix + g.defineObject(r, false))}}},
			}},
		}
		g.defs[name] = s
		return name
	}
	if err := json.Unmarshal(r.Schema, s); err != nil {
		s = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	}
	if s.Properties == nil {
		s.Properties = map[string]spec.Schema{}
	}
	s.Properties["apiVersion"] = str(docs["apiVersion"])
	s.Properties["kind"] = str(docs["kind"])
	s.Properties["metadata"] = ref(reflect.TypeOf(metav1.ObjectMeta{}), "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
	g.defs[name] = s
	return name
}

// customModelName is upstream's name for a custom resource's definition:
// stable.example.com/v1 CronTab is com.example.stable.v1.CronTab.
func customModelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + version + "." + kind
}
