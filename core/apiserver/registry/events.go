package registry

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// --- events.k8s.io/v1 Events (pkg/registry/events/event, pkg/apis/events/v1) ---
//
// Upstream serves core/v1 and events.k8s.io/v1 Events from one storage: both
// API versions convert to the same internal type, which is written to etcd
// under /registry/events as core/v1. kubetab does the same with a Codec: an
// events.k8s.io Event is converted to a core/v1 Event on every write and back
// on every read, so the two APIs are two views of the same objects (create
// one with `kubectl create -f` in either version and both lists show it, with
// one resourceVersion). The field names differ:
//
//	events.k8s.io/v1          core/v1
//	regarding             <-> involvedObject
//	note                  <-> message
//	deprecatedSource      <-> source
//	deprecatedFirstTimestamp, deprecatedLastTimestamp, deprecatedCount
//	                      <-> firstTimestamp, lastTimestamp, count
//
// Validation is upstream's ValidateEventCreate with the request version: an
// events.k8s.io request must use eventTime, reportingController,
// reportingInstance and action, and leave the deprecated fields unset; its
// field paths name the core/v1 fields, as upstream's do.

func eventsV1Resource() *Resource {
	return &Resource{
		Group: eventsv1.GroupName, Version: "v1", Kind: "Event", Resource: "events", Singular: "event",
		Namespaced: true, ShortNames: []string{"ev"}, KeyPrefix: "/registry/events", NoGeneration: true,
		New:      func() runtime.Object { return &eventsv1.Event{} },
		NewList:  func() runtime.Object { return &eventsv1.EventList{} },
		Strategy: eventsV1Strategy{},
		Codec: &Codec{
			Storage:     corev1.SchemeGroupVersion.WithKind("Event"),
			NewStorage:  func() runtime.Object { return &corev1.Event{} },
			ToStorage:   func(obj runtime.Object) runtime.Object { return EventToCore(obj.(*eventsv1.Event)) },
			FromStorage: func(obj runtime.Object) runtime.Object { return EventFromCore(obj.(*corev1.Event)) },
		},
	}
}

// EventToCore converts an events.k8s.io/v1 Event to core/v1
// (upstream Convert_v1_Event_To_core_Event, through the internal type).
func EventToCore(in *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          *in.ObjectMeta.DeepCopy(),
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Related != nil {
		r := *in.Related
		out.Related = &r
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	out.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	return out
}

// EventFromCore converts a core/v1 Event to events.k8s.io/v1.
func EventFromCore(in *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		ObjectMeta:               *in.ObjectMeta.DeepCopy(),
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Related != nil {
		r := *in.Related
		out.Related = &r
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	out.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	return out
}

type eventsV1Strategy struct{}

func (eventsV1Strategy) PrepareForCreate(obj runtime.Object)      {}
func (eventsV1Strategy) PrepareForUpdate(obj, old runtime.Object) {}

func (eventsV1Strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateEvent(EventToCore(obj.(*eventsv1.Event)), true)
}

func (eventsV1Strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validateEventUpdate(EventToCore(obj.(*eventsv1.Event)), EventToCore(old.(*eventsv1.Event)))
}

// Fields are upstream's field label conversions for events.k8s.io/v1
// (pkg/apis/events/v1/conversion.go): the core/v1 selectable fields under
// their events.k8s.io names.
func (eventsV1Strategy) Fields(obj runtime.Object) fields.Set {
	ev := obj.(*eventsv1.Event)
	f := metaFields(ev)
	f["regarding.kind"] = ev.Regarding.Kind
	f["regarding.namespace"] = ev.Regarding.Namespace
	f["regarding.name"] = ev.Regarding.Name
	f["regarding.uid"] = string(ev.Regarding.UID)
	f["regarding.apiVersion"] = ev.Regarding.APIVersion
	f["regarding.resourceVersion"] = ev.Regarding.ResourceVersion
	f["regarding.fieldPath"] = ev.Regarding.FieldPath
	f["reason"] = ev.Reason
	f["reportingController"] = ev.ReportingController
	f["type"] = ev.Type
	return f
}
