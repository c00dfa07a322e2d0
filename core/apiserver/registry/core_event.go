package registry

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- core/v1 events (pkg/registry/core/event/strategy.go,
// pkg/apis/core/validation/events.go) ---
//
// core/v1 and events.k8s.io/v1 Events are one resource served in two shapes
// over one key space, /registry/events: see events.go for the other shape.

type eventStrategy struct{}

func (eventStrategy) PrepareForCreate(obj runtime.Object)      {}
func (eventStrategy) PrepareForUpdate(obj, old runtime.Object) {}

// Validate is ValidateEventCreate for requests in core/v1: the legacy rules
// only (kubetab also checks the object's name, which upstream leaves to the
// clients of this old API).
func (eventStrategy) Validate(obj runtime.Object) field.ErrorList {
	ev := obj.(*corev1.Event)
	return append(validateMeta(ev, true), validateEvent(ev, false)...)
}

func (s eventStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	ev := obj.(*corev1.Event)
	return append(validateMetaUpdate(ev, old.(*corev1.Event), true), validateEvent(ev, false)...)
}

func (eventStrategy) Fields(obj runtime.Object) fields.Set {
	return eventFields(obj.(*corev1.Event))
}

// eventFields is upstream's event ToSelectableFields.
func eventFields(ev *corev1.Event) fields.Set {
	f := metaFields(ev)
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	f["involvedObject.kind"] = ev.InvolvedObject.Kind
	f["involvedObject.namespace"] = ev.InvolvedObject.Namespace
	f["involvedObject.name"] = ev.InvolvedObject.Name
	f["involvedObject.uid"] = string(ev.InvolvedObject.UID)
	f["involvedObject.apiVersion"] = ev.InvolvedObject.APIVersion
	f["involvedObject.resourceVersion"] = ev.InvolvedObject.ResourceVersion
	f["involvedObject.fieldPath"] = ev.InvolvedObject.FieldPath
	f["reason"] = ev.Reason
	f["reportingComponent"] = ev.ReportingController // the core/v1 field name
	f["source"] = source
	f["type"] = ev.Type
	return f
}

// Limits of events.k8s.io events (pkg/apis/core/validation/events.go).
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

// validateEvent is ValidateEventCreate: strict is true for requests in
// events.k8s.io/v1, which must use the new fields only.
func validateEvent(ev *corev1.Event, strict bool) field.ErrorList {
	errs := legacyValidateEvent(ev)
	if !strict {
		return errs
	}
	errs = append(errs, validateMeta(ev, true)...)
	errs = append(errs, validateEventSeries(ev)...)
	if ev.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if ev.Type != corev1.EventTypeNormal && ev.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", ev.Type)))
	}
	if !ev.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !ev.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if ev.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if ev.Source.Component != "" || ev.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// validateEventUpdate is ValidateEventUpdate for events.k8s.io/v1: an event
// is immutable but for its series.
func validateEventUpdate(ev, old *corev1.Event) field.ErrorList {
	errs := legacyValidateEvent(ev)
	errs = append(errs, validateMetaUpdate(ev, old, true)...)
	if !reflect.DeepEqual(ev.Series, old.Series) {
		errs = append(errs, validateEventSeries(ev)...)
	}
	for _, f := range []struct {
		path     string
		now, was any
	}{
		{"involvedObject", ev.InvolvedObject, old.InvolvedObject},
		{"reason", ev.Reason, old.Reason},
		{"message", ev.Message, old.Message},
		{"source", ev.Source, old.Source},
		{"firstTimestamp", ev.FirstTimestamp, old.FirstTimestamp},
		{"lastTimestamp", ev.LastTimestamp, old.LastTimestamp},
		{"count", ev.Count, old.Count},
		{"type", ev.Type, old.Type},
		{"eventTime", ev.EventTime, old.EventTime},
		{"action", ev.Action, old.Action},
		{"related", ev.Related, old.Related},
		{"reportingController", ev.ReportingController, old.ReportingController},
		{"reportingInstance", ev.ReportingInstance, old.ReportingInstance},
	} {
		errs = append(errs, immutable(f.now, f.was, field.NewPath(f.path))...)
	}
	return errs
}

func validateEventSeries(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if ev.Series != nil {
		if ev.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if ev.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	return errs
}

// legacyValidateEvent is what every event must pass, in either API.
func legacyValidateEvent(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		// An old-style event: its namespace must match its object's.
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		if ev.ReportingController == "" {
			errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
		}
		for _, msg := range validation.IsQualifiedName(ev.ReportingController) {
			errs = append(errs, field.Invalid(field.NewPath("reportingController"), ev.ReportingController, msg))
		}
		if ev.ReportingInstance == "" {
			errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
		}
		if len(ev.ReportingInstance) > eventReportingInstanceLimit {
			errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", eventReportingInstanceLimit)))
		}
		if ev.Action == "" {
			errs = append(errs, field.Required(field.NewPath("action"), ""))
		}
		if len(ev.Action) > eventActionLimit {
			errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", eventActionLimit)))
		}
		if ev.Reason == "" {
			errs = append(errs, field.Required(field.NewPath("reason"), ""))
		}
		if len(ev.Reason) > eventReasonLimit {
			errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", eventReasonLimit)))
		}
		if len(ev.Message) > eventNoteLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteLimit)))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(ev.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ev.Namespace, msg))
	}
	return errs
}
