package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation helpers shared by the strategies: the generic parts of
// upstream's pkg/apis/core/validation and pkg/apis/apps/validation, written
// over the v1 types (upstream validates its internal types; the field paths
// and messages are the same). apimachinery provides the metadata, name,
// label and selector checks; what it lacks is written here.

// metaFields are the field selectors every resource supports
// (upstream: generic.ObjectMetaFieldsSet).
func metaFields(obj metav1.Object) fields.Set {
	f := fields.Set{"metadata.name": obj.GetName()}
	if obj.GetNamespace() != "" {
		f["metadata.namespace"] = obj.GetNamespace()
	}
	return f
}

func validateMeta(obj metav1.Object, namespaced bool) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessor(obj, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// validateMetaName is validateMeta with another name rule (DNS-1035 labels
// for Services, ...).
func validateMetaName(obj metav1.Object, namespaced bool, name apivalidation.ValidateNameFunc) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessor(obj, namespaced, name, field.NewPath("metadata"))
}

func validateMetaUpdate(obj, old metav1.Object, namespaced bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))
	return append(errs, validateMeta(obj, namespaced)...)
}

// immutable is upstream's ValidateImmutableField: "field is immutable".
func immutable(newVal, oldVal any, p *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(newVal, oldVal) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, newVal, apivalidation.FieldImmutableErrorMsg)}
}

// validateNonNegative: "must be greater than or equal to 0".
func validateNonNegative(v int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, p)
}

// validateLabelSelector is apimachinery's ValidateLabelSelector with the
// options upstream's workload validation uses.
func validateLabelSelector(sel *metav1.LabelSelector, p *field.Path) field.ErrorList {
	return metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, p)
}

// validateSelectorMatchesTemplate is what the apps/v1 workloads share: a
// required, non-empty selector that selects the template's labels. what
// names the kind in upstream's "empty selector is invalid for <what>".
func validateSelectorMatchesTemplate(sel *metav1.LabelSelector, tmplLabels map[string]string, what string, p *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p.Child("selector"), "")}
	}
	errs := validateLabelSelector(sel, p.Child("selector"))
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p.Child("selector"), sel, "empty selector is invalid for "+what))
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err == nil && !selector.Empty() && !selector.Matches(labels.Set(tmplLabels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), tmplLabels, "`selector` does not match template `labels`"))
	}
	return errs
}

// validatePodTemplate checks a pod template's labels, annotations and spec.
func validatePodTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, p.Child("metadata", "annotations"))...)
	return append(errs, ValidatePodSpec(&t.Spec, p.Child("spec"))...)
}

// validatePositiveIntOrPercent is upstream's ValidatePositiveIntOrPercent.
func validatePositiveIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	switch v.Type {
	case intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
		return errs
	case intstr.Int:
		return validateNonNegative(int64(v.IntValue()), p)
	}
	return field.ErrorList{field.Invalid(p, v, "must be an integer or percentage (e.g '5%')")}
}

// percentValue returns the number of a "25%" value.
func percentValue(v *intstr.IntOrString) (int, bool) {
	if v == nil || v.Type != intstr.String || !strings.HasSuffix(v.StrVal, "%") {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &n); err != nil {
		return 0, false
	}
	return n, true
}

// intOrPercentValue is the number of an int or a percentage.
func intOrPercentValue(v *intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	if v == nil {
		return 0
	}
	return v.IntValue()
}

// notMoreThan100Percent is upstream's IsNotMoreThan100Percent.
func notMoreThan100Percent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}

// validatePortNumOrName checks a targetPort: a number in 1-65535 or an IANA
// service name.
func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
	default:
		errs = append(errs, field.InternalError(p, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}

var supportedProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}

func validateProtocol(proto corev1.Protocol, p *field.Path) field.ErrorList {
	if proto == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !hasString(supportedProtocols, string(proto)) {
		return field.ErrorList{field.NotSupported(p, proto, supportedProtocols)}
	}
	return nil
}

// validateDataKey checks a ConfigMap or Secret key (IsConfigMapKey).
func validateDataKey(key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(p, key, msg))
	}
	return errs
}

// validateLegacyIP checks an IP in a field that predates strict IP
// validation (clusterIPs, externalIPs, endpoint addresses): upstream's
// IsValidIPForLegacyField with strict validation on.
func validateLegacyIP(p *field.Path, ip string) field.ErrorList {
	return validation.IsValidIPForLegacyField(p, ip, true, nil)
}
