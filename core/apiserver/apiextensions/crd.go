package apiextensions

import (
	"fmt"
	"regexp"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetab/kubetab/core/apiserver/registry"
)

// Group is apiextensions.k8s.io.
const Group = apiextensionsv1.GroupName

// CleanupFinalizer holds a deleted CRD until its objects are gone
// (upstream: apiextensionsv1.CustomResourceCleanupFinalizer).
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// CRDResource is the customresourcedefinitions resource, cluster-scoped,
// short name crd, stored under upstream's key prefix.
func CRDResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Kind: "CustomResourceDefinition",
		Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		KeyPrefix:    "/registry/apiextensions.k8s.io/customresourcedefinitions",
		Subresources: []string{"status"},
		New:          func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		NewList:      func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		Strategy:     crdStrategy{},
	}
}

// crdStrategy is upstream's pkg/registry/customresourcedefinition strategy.
type crdStrategy struct{}

var (
	_ registry.Strategy       = crdStrategy{}
	_ registry.StatusStrategy = crdStrategy{}
	_ registry.Terminator     = crdStrategy{}
)

// setDefaults is the v1 defaulting (SetDefaults_CustomResourceDefinition*):
// singular and listKind from the kind, conversion None.
func setDefaults(crd *apiextensionsv1.CustomResourceDefinition) {
	n := &crd.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
}

// addStoredVersion records the storage version in status.storedVersions, as
// upstream does on create and on every update: a version once stored stays
// listed until an administrator migrates the objects.
func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			for _, s := range crd.Status.StoredVersions {
				if s == v.Name {
					return
				}
			}
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			return
		}
	}
}

func (crdStrategy) PrepareForCreate(obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	setDefaults(crd)
	addStoredVersion(crd)
}

func (crdStrategy) PrepareForUpdate(obj, old runtime.Object) {
	crd, o := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = o.Status
	setDefaults(crd)
	if !apiequality.Semantic.DeepEqual(crd.Spec, o.Spec) {
		crd.Generation = o.Generation + 1
	}
	addStoredVersion(crd)
}

func (crdStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	crd, o := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	crd.Spec = o.Spec
	// Labels and annotations are not status; finalizers may change here, as
	// upstream's status strategy lets them: the finalizer controller
	// records InstanceDeletionCompleted and drops its finalizer in one write.
	crd.Labels, crd.Annotations = o.Labels, o.Annotations
}

func (crdStrategy) Validate(obj runtime.Object) field.ErrorList {
	return validateCRD(obj.(*apiextensionsv1.CustomResourceDefinition))
}

func (crdStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	crd, o := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	errs := validateCRD(crd)
	spec := field.NewPath("spec")
	if o.Status.AcceptedNames.Kind != "" || isEstablished(o) {
		if crd.Spec.Group != o.Spec.Group {
			errs = append(errs, field.Invalid(spec.Child("group"), crd.Spec.Group, "field is immutable"))
		}
		if crd.Spec.Names.Plural != o.Spec.Names.Plural {
			errs = append(errs, field.Invalid(spec.Child("names", "plural"), crd.Spec.Names.Plural, "field is immutable"))
		}
	}
	if crd.Spec.Scope != o.Spec.Scope && isEstablished(o) {
		errs = append(errs, field.Invalid(spec.Child("scope"), crd.Spec.Scope, "field is immutable"))
	}
	return errs
}

func (crdStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return nil
}

func (crdStrategy) Fields(obj runtime.Object) fields.Set {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	return fields.Set{"metadata.name": crd.Name}
}

// Terminate is the first delete of a CRD (upstream: the CRD REST's Delete):
// it keeps the CRD with the cleanup finalizer and a Terminating condition
// until the controller has deleted every object of the resource.
func (crdStrategy) Terminate(obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !hasFinalizer(crd) {
		crd.Finalizers = append(crd.Finalizers, CleanupFinalizer)
	}
	if c := condition(crd, apiextensionsv1.Terminating); c == nil || c.Status != apiextensionsv1.ConditionTrue {
		setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason:  "InstanceDeletionPending",
			Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
		}, metav1.Now())
	}
}

// Finalized: the controller has removed the cleanup finalizer of a CRD
// being deleted.
func (crdStrategy) Finalized(obj runtime.Object) bool {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	return crd.DeletionTimestamp != nil && !hasFinalizer(crd)
}

func hasFinalizer(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, f := range crd.Finalizers {
		if f == CleanupFinalizer {
			return true
		}
	}
	return false
}

func condition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition sets or replaces a condition; lastTransitionTime changes only
// when the status does (upstream's SetCRDCondition).
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition, now metav1.Time) {
	c.LastTransitionTime = now
	if old := condition(crd, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}

func isEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	c := condition(crd, apiextensionsv1.Established)
	return c != nil && c.Status == apiextensionsv1.ConditionTrue
}

// kindPattern is what a kind may look like: mixed case DNS-1035-ish.
var kindPattern = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// validateCRD is upstream's ValidateCustomResourceDefinition, for what v1
// allows: names, group, scope, versions (exactly one storage version, each
// with a structural schema), subresources and printer columns.
func validateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	errs := metavalidation.ValidateObjectMeta(&crd.ObjectMeta, false, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	g := crd.Spec.Group
	switch {
	case g == "":
		errs = append(errs, field.Required(spec.Child("group"), ""))
	default:
		for _, msg := range validation.IsDNS1123Subdomain(g) {
			errs = append(errs, field.Invalid(spec.Child("group"), g, msg))
		}
		if len(strings.Split(g, ".")) < 2 {
			errs = append(errs, field.Invalid(spec.Child("group"), g, "should be a domain with at least one dot"))
		}
	}
	switch crd.Spec.Scope {
	case "":
		errs = append(errs, field.Required(spec.Child("scope"), ""))
	case apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped:
	default:
		errs = append(errs, field.NotSupported(spec.Child("scope"), crd.Spec.Scope, []string{"Cluster", "Namespaced"}))
	}
	errs = append(errs, validateNames(crd.Spec.Names, spec.Child("names"))...)
	vp := spec.Child("versions")
	if len(crd.Spec.Versions) == 0 {
		errs = append(errs, field.Invalid(vp, crd.Spec.Versions, "must have exactly one version marked as storage version"))
	}
	storage := 0
	seen := sets.New[string]()
	for i, v := range crd.Spec.Versions {
		p := vp.Index(i)
		if v.Storage {
			storage++
		}
		if seen.Has(v.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, "must appear only once"))
		}
		seen.Insert(v.Name)
		if v.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		for _, msg := range validation.IsDNS1035Label(v.Name) {
			if v.Name != "" {
				errs = append(errs, field.Invalid(p.Child("name"), v.Name, msg))
			}
		}
		sp := p.Child("schema", "openAPIV3Schema")
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			errs = append(errs, field.Required(sp, "schemas are required"))
		} else {
			errs = append(errs, validateStructural(v.Schema.OpenAPIV3Schema, sp, true)...)
		}
		errs = append(errs, validateSubresources(v.Subresources, p.Child("subresources"))...)
		for j, c := range v.AdditionalPrinterColumns {
			cp := p.Child("additionalPrinterColumns").Index(j)
			if c.Name == "" {
				errs = append(errs, field.Required(cp.Child("name"), ""))
			}
			if !sets.New("integer", "number", "string", "boolean", "date").Has(c.Type) {
				errs = append(errs, field.NotSupported(cp.Child("type"), c.Type, []string{"boolean", "date", "integer", "number", "string"}))
			}
			if c.JSONPath == "" {
				errs = append(errs, field.Required(cp.Child("jsonPath"), ""))
			} else if _, err := parseJSONPath(c.JSONPath); err != nil {
				errs = append(errs, field.Invalid(cp.Child("jsonPath"), c.JSONPath, err.Error()))
			}
		}
	}
	if len(crd.Spec.Versions) > 0 && storage != 1 {
		errs = append(errs, field.Invalid(vp, crd.Spec.Versions, "must have exactly one version marked as storage version"))
	}
	if c := crd.Spec.Conversion; c != nil && c.Strategy != apiextensionsv1.NoneConverter {
		errs = append(errs, field.NotSupported(spec.Child("conversion", "strategy"), c.Strategy, []string{"None"}))
	}
	return errs
}

func validateNames(n apiextensionsv1.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(name string, value string, required bool) {
		if value == "" {
			if required {
				errs = append(errs, field.Required(p.Child(name), ""))
			}
			return
		}
		for _, msg := range validation.IsDNS1035Label(value) {
			errs = append(errs, field.Invalid(p.Child(name), value, msg))
		}
	}
	label("plural", n.Plural, true)
	label("singular", n.Singular, false)
	if n.Plural != "" && n.Plural != strings.ToLower(n.Plural) {
		errs = append(errs, field.Invalid(p.Child("plural"), n.Plural, "must be lowercase"))
	}
	for i, s := range n.ShortNames {
		for _, msg := range validation.IsDNS1035Label(s) {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, msg))
		}
	}
	kind := func(name, value string) {
		if value == "" {
			errs = append(errs, field.Required(p.Child(name), ""))
			return
		}
		if !kindPattern.MatchString(value) {
			errs = append(errs, field.Invalid(p.Child(name), value, "may have mixed case, but should otherwise match: "+kindPattern.String()[1:len(kindPattern.String())-1]))
		}
	}
	kind("kind", n.Kind)
	kind("listKind", n.ListKind)
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	return errs
}

func validateSubresources(s *apiextensionsv1.CustomResourceSubresources, p *field.Path) field.ErrorList {
	if s == nil || s.Scale == nil {
		return nil
	}
	var errs field.ErrorList
	sp := p.Child("scale")
	check := func(name, path, prefix string) {
		switch {
		case path == "":
			errs = append(errs, field.Required(sp.Child(name), ""))
		case !strings.HasPrefix(path, prefix):
			errs = append(errs, field.Invalid(sp.Child(name), path, fmt.Sprintf("should be a json path under %s", strings.TrimSuffix(prefix, "."))))
		}
		if _, err := parseJSONPath(path); path != "" && err != nil {
			errs = append(errs, field.Invalid(sp.Child(name), path, err.Error()))
		}
	}
	check("specReplicasPath", s.Scale.SpecReplicasPath, ".spec.")
	check("statusReplicasPath", s.Scale.StatusReplicasPath, ".status.")
	if l := s.Scale.LabelSelectorPath; l != nil && *l != "" {
		if !strings.HasPrefix(*l, ".spec.") && !strings.HasPrefix(*l, ".status.") {
			errs = append(errs, field.Invalid(sp.Child("labelSelectorPath"), *l, "should be a json path under either .spec or .status"))
		}
	}
	return errs
}
