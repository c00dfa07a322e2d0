package apiextensions

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Structural schemas
//
// apiextensions.k8s.io/v1 requires every version's openAPIV3Schema to be
// structural: every node says its type (unless it is
// x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields), an
// object lists its properties or one additionalProperties schema, an array
// its items. With that, one walk of the object against the schema can do
// the three things the API server does to a custom resource:
//
//	prune    drop the fields the schema does not know (upstream:
//	         pkg/apiserver/schema/pruning), unless a node preserves them
//	default  fill absent fields from the schema's default values
//	         (pkg/apiserver/schema/defaulting); a null that is not nullable
//	         counts as absent
//	validate check type, enum, required, bounds, lengths and pattern, with
//	         kube-openapi's wording turned into field errors as upstream's
//	         pkg/apiserver/validation does:
//
//	spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10
//	spec.cronSpec: Invalid value: "integer": spec.cronSpec in body must be of type string: "integer"
//	spec.image: Required value
//
// At the root, apiVersion, kind and metadata are the API server's: never
// pruned, and checked by the usual ObjectMeta validation instead.

// schemaTypes are the types a structural schema may name.
var schemaTypes = []string{"array", "boolean", "integer", "number", "object", "string"}

// validateStructural checks that a CRD's schema is structural (upstream:
// pkg/apiserver/schema.ValidateStructural), and that its defaults and
// patterns are usable. p names the schema in the CRD.
func validateStructural(s *apiextensionsv1.JSONSchemaProps, p *field.Path, root bool) field.ErrorList {
	var errs field.ErrorList
	special := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields || s.XIntOrString
	switch {
	case s.Type == "" && root:
		errs = append(errs, field.Required(p.Child("type"), "must not be empty at the root"))
	case s.Type == "" && !special:
		errs = append(errs, field.Required(p.Child("type"), "must not be empty for specified object fields"))
	case root && s.Type != "object":
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
	case s.Type != "" && !contains(schemaTypes, s.Type):
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, schemaTypes))
	}
	if s.Type == "array" && s.Items == nil {
		errs = append(errs, field.Required(p.Child("items"), "must be specified"))
	}
	if len(s.Properties) > 0 && s.AdditionalProperties != nil && (s.AdditionalProperties.Schema != nil || !s.AdditionalProperties.Allows) {
		errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
	}
	if s.Ref != nil {
		errs = append(errs, field.Forbidden(p.Child("$ref"), "$ref is not supported"))
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), s.Pattern, "must be a valid regular expression, but isn't: "+err.Error()))
		}
	}
	if s.Default != nil {
		if root {
			errs = append(errs, field.Forbidden(p.Child("default"), "must not be set at the root"))
		} else if v, err := decodeJSON(s.Default); err != nil {
			errs = append(errs, field.Invalid(p.Child("default"), string(s.Default.Raw), err.Error()))
		} else {
			for _, e := range validateValue(v, s, "default") {
				errs = append(errs, field.Invalid(p.Child("default"), v, e.Detail))
			}
		}
	}
	errs = append(errs, validateJunctors(s, p, intOrStringAnyOf(s), intOrStringAllOf(s))...)
	if root {
		errs = append(errs, completeness(s, s, p, p)...)
	}
	for _, k := range sortedKeys(s.Properties) {
		c := s.Properties[k]
		errs = append(errs, validateStructural(&c, p.Child("properties").Key(k), false)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateStructural(s.Items.Schema, p.Child("items"), false)...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		errs = append(errs, validateStructural(s.AdditionalProperties.Schema, p.Child("additionalProperties"), false)...)
	}
	return errs
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Value validations: allOf, anyOf, oneOf and not
//
// The four junctors combine schemas, JSON Schema's logic:
//
//	allOf  every schema must hold       anyOf  at least one must hold
//	oneOf  exactly one must hold        not    the schema must not hold
//
// In a structural schema they may only restrict what the schema around
// them already declares: they are value validations, never a second
// description of the object's shape. So inside a junctor there is no type,
// no additionalProperties, default, title, description or nullable, none of
// the x-kubernetes- extensions, and no metadata; and a property a junctor
// at the root names must be a property of the schema itself
// (upstream: pkg/apiserver/schema/validation.go validateNestedValueValidation
// and complete.go). A CRD that breaks the rules is refused:
//
//	spec.versions[0].schema.openAPIV3Schema.properties[spec].oneOf[0].type: Forbidden: must be empty to be structural
//	spec.versions[0].schema.openAPIV3Schema.properties[spec]: Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.anyOf[0].properties[spec]
//
// The one exception is the way an int-or-string is spelt out:
// anyOf: [{type: integer}, {type: string}], alone or first of an allOf.
//
// A custom object that fails one gets kube-openapi's message, which names
// the failing value's path in the body; the field of the error is the
// object's (<nil>), as upstream reports it:
//
//	<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid
//	spec.cronSpec: Required value

// intOrStringAnyOf reports the anyOf: [{type: integer}, {type: string}]
// of an int-or-string, whose types a structural schema allows.
func intOrStringAnyOf(s *apiextensionsv1.JSONSchemaProps) bool {
	return isIntOrStringPair(s.AnyOf)
}

// intOrStringAllOf reports the same pair as the anyOf of the first allOf.
func intOrStringAllOf(s *apiextensionsv1.JSONSchemaProps) bool {
	return len(s.AllOf) > 0 && isIntOrStringPair(s.AllOf[0].AnyOf)
}

func isIntOrStringPair(alts []apiextensionsv1.JSONSchemaProps) bool {
	return len(alts) == 2 &&
		apiequality.Semantic.DeepEqual(alts[0], apiextensionsv1.JSONSchemaProps{Type: "integer"}) &&
		apiequality.Semantic.DeepEqual(alts[1], apiextensionsv1.JSONSchemaProps{Type: "string"})
}

// validateJunctors checks the junctors of s (upstream:
// validateValueValidation); skipAnyOf and skipFirstAllOfAnyOf are the
// int-or-string exceptions.
func validateJunctors(s *apiextensionsv1.JSONSchemaProps, p *field.Path, skipAnyOf, skipFirstAllOfAnyOf bool) field.ErrorList {
	var errs field.ErrorList
	if !skipAnyOf {
		for i := range s.AnyOf {
			errs = append(errs, validateNested(&s.AnyOf[i], p.Child("anyOf").Index(i), false)...)
		}
	}
	for i := range s.AllOf {
		errs = append(errs, validateNested(&s.AllOf[i], p.Child("allOf").Index(i), skipFirstAllOfAnyOf && i == 0)...)
	}
	for i := range s.OneOf {
		errs = append(errs, validateNested(&s.OneOf[i], p.Child("oneOf").Index(i), false)...)
	}
	if s.Not != nil {
		errs = append(errs, validateNested(s.Not, p.Child("not"), false)...)
	}
	return errs
}

// validateNested checks one schema inside a junctor: it may only say what
// values must look like (upstream: validateNestedValueValidation).
func validateNested(s *apiextensionsv1.JSONSchemaProps, p *field.Path, skipAnyOf bool) field.ErrorList {
	errs := validateJunctors(s, p, skipAnyOf, false)
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateNested(s.Items.Schema, p.Child("items"), false)...)
	}
	for _, k := range sortedKeys(s.Properties) {
		c := s.Properties[k]
		errs = append(errs, validateNested(&c, p.Child("properties").Key(k), false)...)
	}
	forbid := func(child, detail string) { errs = append(errs, field.Forbidden(p.Child(child), detail)) }
	if s.Type != "" {
		forbid("type", "must be empty to be structural")
	}
	if s.AdditionalProperties != nil {
		forbid("additionalProperties", "must be undefined to be structural")
	}
	if s.Default != nil {
		forbid("default", "must be undefined to be structural")
	}
	if s.Title != "" {
		forbid("title", "must be empty to be structural")
	}
	if s.Description != "" {
		forbid("description", "must be empty to be structural")
	}
	if s.Nullable {
		forbid("nullable", "must be false to be structural")
	}
	if preserves(s) {
		forbid("x-kubernetes-preserve-unknown-fields", "must be false to be structural")
	}
	if s.XEmbeddedResource {
		forbid("x-kubernetes-embedded-resource", "must be false to be structural")
	}
	if s.XIntOrString {
		forbid("x-kubernetes-int-or-string", "must be false to be structural")
	}
	if len(s.XListMapKeys) > 0 {
		forbid("x-kubernetes-list-map-keys", "must be empty to be structural")
	}
	if s.XListType != nil {
		forbid("x-kubernetes-list-type", "must be undefined to be structural")
	}
	if s.XMapType != nil {
		forbid("x-kubernetes-map-type", "must be undefined to be structural")
	}
	if len(s.XValidations) > 0 {
		forbid("x-kubernetes-validations", "must be empty to be structural")
	}
	if _, ok := s.Properties["metadata"]; ok {
		errs = append(errs, field.Forbidden(p.Child("properties").Key("metadata"), "must not be specified in a nested context"))
	}
	if s.Ref != nil {
		forbid("$ref", "$ref is not supported")
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), s.Pattern, "must be a valid regular expression, but isn't: "+err.Error()))
		}
	}
	return errs
}

// completeness checks that every property and items a junctor of v names
// exists in the structural schema s (upstream: complete.go, which checks
// the junctors of the root). sp is s's path, vp v's.
func completeness(v, s *apiextensionsv1.JSONSchemaProps, sp, vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	nested := func(n *apiextensionsv1.JSONSchemaProps, np *field.Path) {
		errs = append(errs, nestedCompleteness(n, s, sp, np)...)
	}
	if v.Not != nil {
		nested(v.Not, vp.Child("not"))
	}
	for i := range v.AllOf {
		nested(&v.AllOf[i], vp.Child("allOf").Index(i))
	}
	for i := range v.AnyOf {
		nested(&v.AnyOf[i], vp.Child("anyOf").Index(i))
	}
	for i := range v.OneOf {
		nested(&v.OneOf[i], vp.Child("oneOf").Index(i))
	}
	return errs
}

func nestedCompleteness(v, s *apiextensionsv1.JSONSchemaProps, sp, vp *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(sp, "because it is defined in "+vp.String())}
	}
	errs := completeness(v, s, sp, vp)
	if v.Items != nil && v.Items.Schema != nil {
		var si *apiextensionsv1.JSONSchemaProps
		if s.Items != nil {
			si = s.Items.Schema
		}
		errs = append(errs, nestedCompleteness(v.Items.Schema, si, sp.Child("items"), vp.Child("items"))...)
	}
	for _, k := range sortedKeys(v.Properties) {
		vf := v.Properties[k]
		sf, ok := s.Properties[k]
		if !ok {
			errs = append(errs, field.Required(sp.Child("properties").Key(k), "because it is defined in "+vp.Child("properties").Key(k).String()))
			continue
		}
		errs = append(errs, nestedCompleteness(&vf, &sf, sp.Child("properties").Key(k), vp.Child("properties").Key(k))...)
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func decodeJSON(j *apiextensionsv1.JSON) (any, error) {
	var v any
	err := utiljson.Unmarshal(j.Raw, &v)
	return v, err
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// isRootMeta reports the root fields the API server owns.
func isRootMeta(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// prune drops, in place, the fields of v that s does not specify.
func prune(v any, s *apiextensionsv1.JSONSchemaProps, root bool) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if root && isRootMeta(k) {
				continue
			}
			if ps, ok := s.Properties[k]; ok {
				prune(child, &ps, false)
				continue
			}
			if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				prune(child, ap.Schema, false)
				continue
			}
			if preserves(s) || s.AdditionalProperties != nil && ap(s) {
				continue
			}
			delete(x, k)
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, it := range x {
				prune(it, s.Items.Schema, false)
			}
		}
	}
}

// ap reports an additionalProperties: true.
func ap(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.AdditionalProperties.Allows && s.AdditionalProperties.Schema == nil
}

// applyDefaults sets, in place, the defaults of absent fields of v.
func applyDefaults(v any, s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, ps := range s.Properties {
			cur, ok := x[k]
			if ps.Default != nil && (!ok || cur == nil && !ps.Nullable) {
				if d, err := decodeJSON(ps.Default); err == nil {
					x[k] = runtime.DeepCopyJSONValue(d)
				}
			}
		}
		for k, child := range x {
			if ps, ok := s.Properties[k]; ok {
				applyDefaults(child, &ps)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				applyDefaults(child, ap.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, it := range x {
				applyDefaults(it, s.Items.Schema)
			}
		}
	}
}

// validateObject validates a whole custom resource (its JSON map).
func validateObject(obj map[string]any, s *apiextensionsv1.JSONSchemaProps) field.ErrorList {
	body := make(map[string]any, len(obj))
	for k, v := range obj {
		if !isRootMeta(k) {
			body[k] = v
		}
	}
	return validateValue(body, s, "")
}

// validateValue checks v against s; name is v's path in the body
// ("spec.cronSpec", "" at the root, "spec.list[1]").
func validateValue(v any, s *apiextensionsv1.JSONSchemaProps, name string) field.ErrorList {
	var c checker
	return c.value(v, s, name)
}

// checker walks a value against a schema. matches counts the schema nodes
// it checked: of the alternatives of a failed anyOf or oneOf, the errors
// of the one that matched furthest are reported, as kube-openapi reports
// its result with the highest MatchCount.
type checker struct{ matches int }

func (c *checker) value(v any, s *apiextensionsv1.JSONSchemaProps, name string) field.ErrorList {
	c.matches++
	var errs field.ErrorList
	path := fieldPath(name)
	label := name
	if label == "" {
		label = "."
	}
	if v == nil {
		if s.Nullable || s.Type == "" {
			return nil
		}
		return field.ErrorList{field.TypeInvalid(path, "null", fmt.Sprintf("%s in body must be of type %s: %q", label, s.Type, "null"))}
	}
	got := jsonType(v)
	switch {
	case s.XIntOrString:
		if got != "integer" && got != "string" {
			return field.ErrorList{field.TypeInvalid(path, got, fmt.Sprintf("%s in body must be of type integer,string: %q", label, got))}
		}
	case s.Type == "" || s.Type == got || s.Type == "number" && got == "integer":
	case s.Type == "integer" && got == "number" && isIntegral(v):
	default:
		return field.ErrorList{field.TypeInvalid(path, got, fmt.Sprintf("%s in body must be of type %s: %q", label, s.Type, got))}
	}
	errs = append(errs, c.junctors(v, s, name)...)
	if len(s.Enum) > 0 {
		ok := false
		var supported []string
		for _, e := range s.Enum {
			ev, err := decodeJSON(&e)
			if err != nil {
				continue
			}
			if equalJSON(ev, v) {
				ok = true
			}
			if str, isStr := ev.(string); isStr {
				supported = append(supported, str)
			} else {
				supported = append(supported, string(e.Raw))
			}
		}
		if !ok {
			errs = append(errs, field.NotSupported(path, v, supported))
		}
	}
	switch x := v.(type) {
	case string:
		n := int64(utf8.RuneCountInString(x))
		if s.MaxLength != nil && n > *s.MaxLength {
			errs = append(errs, field.TooLong(path, x, int(*s.MaxLength)))
		}
		if s.MinLength != nil && n < *s.MinLength {
			errs = append(errs, field.Invalid(path, x, fmt.Sprintf("%s in body should be at least %d chars long", label, *s.MinLength)))
		}
		if s.Pattern != "" {
			if re, err := compilePattern(s.Pattern); err == nil && !re.MatchString(x) {
				errs = append(errs, field.Invalid(path, x, fmt.Sprintf("%s in body should match '%s'", label, s.Pattern)))
			}
		}
	case int64, float64:
		f := toFloat(v)
		if s.Maximum != nil {
			if s.ExclusiveMaximum && f >= *s.Maximum {
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("%s in body should be less than %v", label, *s.Maximum)))
			} else if !s.ExclusiveMaximum && f > *s.Maximum {
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("%s in body should be less than or equal to %v", label, *s.Maximum)))
			}
		}
		if s.Minimum != nil {
			if s.ExclusiveMinimum && f <= *s.Minimum {
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("%s in body should be greater than %v", label, *s.Minimum)))
			} else if !s.ExclusiveMinimum && f < *s.Minimum {
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("%s in body should be greater than or equal to %v", label, *s.Minimum)))
			}
		}
		if s.MultipleOf != nil && *s.MultipleOf != 0 {
			if q := f / *s.MultipleOf; q != math.Trunc(q) {
				errs = append(errs, field.Invalid(path, v, fmt.Sprintf("%s in body should be a multiple of %v", label, *s.MultipleOf)))
			}
		}
	case []any:
		if s.MaxItems != nil && int64(len(x)) > *s.MaxItems {
			errs = append(errs, field.TooMany(path, len(x), int(*s.MaxItems)))
		}
		if s.MinItems != nil && int64(len(x)) < *s.MinItems {
			errs = append(errs, field.Invalid(path, x, fmt.Sprintf("%s in body should have at least %d items", label, *s.MinItems)))
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i, it := range x {
				errs = append(errs, c.value(it, s.Items.Schema, fmt.Sprintf("%s[%d]", name, i))...)
			}
		}
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				errs = append(errs, field.Required(fieldPath(join(name, r)), ""))
			}
		}
		if s.MaxProperties != nil && int64(len(x)) > *s.MaxProperties {
			errs = append(errs, field.TooMany(path, len(x), int(*s.MaxProperties)))
		}
		if s.MinProperties != nil && int64(len(x)) < *s.MinProperties {
			errs = append(errs, field.Invalid(path, len(x), fmt.Sprintf("%s in body should have at least %d properties", label, *s.MinProperties)))
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := s.Properties[k]; ok {
				errs = append(errs, c.value(x[k], &ps, join(name, k))...)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				errs = append(errs, c.value(x[k], ap.Schema, join(name, k))...)
			} else if ap != nil && !ap.Allows && !preserves(s) {
				errs = append(errs, field.Forbidden(fieldPath(join(name, k)), fmt.Sprintf("%s.%s in body is a forbidden property", label, k)))
			}
		}
	}
	return errs
}

// junctors checks v against the allOf, anyOf, oneOf and not of s, with
// kube-openapi's messages (pkg/validation/validate/schema_props.go):
//
//	anyOf  none holds     "spec" must validate at least one schema (anyOf)
//	                      and the errors of the closest alternative
//	oneOf  none holds     "spec" must validate one and only one schema (oneOf). Found none valid
//	                      and the errors of the closest alternative
//	       two hold       ... (oneOf). Found 2 valid alternatives
//	allOf  one fails      its errors, and "spec" must validate all the schemas (allOf)
//	       all fail       ... (allOf). None validated
//	not    it holds       "spec" must not validate the schema (not)
//
// The junctor errors are reported on the object (field <nil>) with an
// empty value, as upstream converts kube-openapi's composite errors.
func (c *checker) junctors(v any, s *apiextensionsv1.JSONSchemaProps, name string) field.ErrorList {
	var errs field.ErrorList
	composite := func(format string, args ...any) {
		errs = append(errs, field.Invalid(nil, "", fmt.Sprintf("%q "+format, append([]any{name}, args...)...)))
	}
	// try checks v against one alternative with a checker of its own.
	try := func(alt *apiextensionsv1.JSONSchemaProps) (field.ErrorList, int) {
		var sub checker
		e := sub.value(v, alt, name)
		c.matches += sub.matches
		return e, sub.matches
	}
	if len(s.AnyOf) > 0 {
		var best field.ErrorList
		bestMatches, ok := -1, false
		for i := range s.AnyOf {
			e, m := try(&s.AnyOf[i])
			if len(e) == 0 {
				ok = true
				break
			}
			if m > bestMatches {
				best, bestMatches = e, m
			}
		}
		if !ok {
			composite("must validate at least one schema (anyOf)")
			errs = append(errs, best...)
		}
	}
	if len(s.OneOf) > 0 {
		var best field.ErrorList
		bestMatches, valid := -1, 0
		for i := range s.OneOf {
			e, m := try(&s.OneOf[i])
			if len(e) == 0 {
				valid++
				continue
			}
			if valid == 0 && m > bestMatches {
				best, bestMatches = e, m
			}
		}
		switch valid {
		case 1:
		case 0:
			composite("must validate one and only one schema (oneOf). Found none valid")
			errs = append(errs, best...)
		default:
			composite("must validate one and only one schema (oneOf). Found %d valid alternatives", valid)
		}
	}
	if len(s.AllOf) > 0 {
		valid := 0
		for i := range s.AllOf {
			e, _ := try(&s.AllOf[i])
			if len(e) == 0 {
				valid++
			}
			errs = append(errs, e...)
		}
		switch valid {
		case len(s.AllOf):
		case 0:
			composite("must validate all the schemas (allOf). None validated")
		default:
			composite("must validate all the schemas (allOf)")
		}
	}
	if s.Not != nil {
		if e, _ := try(s.Not); len(e) == 0 {
			composite("must not validate the schema (not)")
		}
	}
	return errs
}

func join(name, key string) string {
	if name == "" {
		return key
	}
	return name + "." + key
}

// fieldPath turns a body path into a field.Path (the error's field).
func fieldPath(name string) *field.Path {
	if name == "" {
		return nil
	}
	return field.NewPath(name)
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int, int32:
		return "integer"
	case float64, float32:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func isIntegral(v any) bool {
	f, ok := v.(float64)
	return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func equalJSON(a, b any) bool {
	if (jsonType(a) == "integer" || jsonType(a) == "number") && (jsonType(b) == "integer" || jsonType(b) == "number") {
		return toFloat(a) == toFloat(b)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !equalJSON(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// patterns caches compiled schema patterns (they are checked on every write).
var patterns sync.Map // string -> *regexp.Regexp

func compilePattern(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	patterns.Store(p, re)
	return re, nil
}

// jsonPath is a parsed simple JSONPath: .spec.replicas, .spec.list[0],
// .status.conditions[*].type. Printer columns and the scale subresource's
// paths use this subset of JSONPath (upstream accepts the whole of
// client-go's util/jsonpath; the subset keeps the browser build small).
type jsonPath []pathStep

type pathStep struct {
	key   string
	index int // -1: none; -2: [*]
}

func parseJSONPath(p string) (jsonPath, error) {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
		p = p[1 : len(p)-1]
	}
	if !strings.HasPrefix(p, ".") {
		return nil, fmt.Errorf("must be a simple json path starting with .")
	}
	var out jsonPath
	for _, seg := range strings.Split(p[1:], ".") {
		key, rest, _ := strings.Cut(seg, "[")
		if key == "" && rest == "" {
			return nil, fmt.Errorf("must be a simple json path starting with .")
		}
		if key != "" {
			out = append(out, pathStep{key: key, index: -1})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("unterminated array index in %q", seg)
			}
			if idx == "*" {
				out = append(out, pathStep{index: -2})
			} else {
				n := 0
				if _, err := fmt.Sscanf(idx, "%d", &n); err != nil || n < 0 {
					return nil, fmt.Errorf("invalid array index %q", idx)
				}
				out = append(out, pathStep{index: n})
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out, nil
}

// eval returns the values the path selects in v (several with [*]).
func (p jsonPath) eval(v any) []any {
	cur := []any{v}
	for _, st := range p {
		var next []any
		for _, c := range cur {
			switch {
			case st.index == -1:
				if m, ok := c.(map[string]any); ok {
					if x, ok := m[st.key]; ok {
						next = append(next, x)
					}
				}
			case st.index == -2:
				if l, ok := c.([]any); ok {
					next = append(next, l...)
				}
			default:
				if l, ok := c.([]any); ok && st.index < len(l) {
					next = append(next, l[st.index])
				}
			}
		}
		cur = next
	}
	return cur
}
