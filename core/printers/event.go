package printers

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event columns in upstream's order since 1.23: what `kubectl get events`
// shows (LAST SEEN TYPE REASON OBJECT MESSAGE) first, the rest for -o wide.
var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
	{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
	{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
	{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
}

func init() {
	Register(&corev1.Event{}, eventColumns, printEvent)
	Register(&eventsv1.Event{}, eventColumns, printEventsV1)
}

// printEventsV1 prints an events.k8s.io/v1 Event with the same columns: the
// two APIs are one resource upstream, printed from one internal type.
func printEventsV1(obj runtime.Object, now time.Time) ([]any, error) {
	ev := obj.(*eventsv1.Event)
	core := &corev1.Event{
		ObjectMeta: ev.ObjectMeta, InvolvedObject: ev.Regarding, Reason: ev.Reason, Message: ev.Note,
		Source: ev.DeprecatedSource, FirstTimestamp: ev.DeprecatedFirstTimestamp, LastTimestamp: ev.DeprecatedLastTimestamp,
		Count: ev.DeprecatedCount, Type: ev.Type, EventTime: ev.EventTime, Action: ev.Action,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance,
	}
	if ev.Series != nil {
		core.Series = &corev1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return printEvent(core, now)
}

// printEvent is upstream's printEvent. An event written by the newer
// events.k8s.io API has eventTime and series instead of first/last
// timestamps and count; both shapes print the same.
func printEvent(obj runtime.Object, now time.Time) ([]any, error) {
	ev := obj.(*corev1.Event)
	first := Age(ev.FirstTimestamp, now)
	if ev.FirstTimestamp.IsZero() {
		first = MicroAge(ev.EventTime, now)
	}
	last := Age(ev.LastTimestamp, now)
	if ev.LastTimestamp.IsZero() {
		last = first
	}
	count := ev.Count
	if ev.Series != nil {
		last = MicroAge(ev.Series.LastObservedTime, now)
		count = ev.Series.Count
	} else if count == 0 {
		count = 1 // singleton events of the new API have no count
	}
	target := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		target = fmt.Sprintf("%s/%s", target, ev.InvolvedObject.Name)
	}
	return []any{
		last, ev.Type, ev.Reason, target, ev.InvolvedObject.FieldPath,
		EventSource(ev.Source, ev.ReportingController, ev.ReportingInstance),
		strings.TrimSpace(ev.Message), first, int64(count), ev.Name,
	}, nil
}

// EventSource formats an event's source as "component, host", falling back to
// the reporting controller and instance (upstream formatEventSource).
func EventSource(es corev1.EventSource, reportingController, reportingInstance string) string {
	component, instance := es.Component, es.Host
	if component == "" {
		component = reportingController
	}
	if instance == "" {
		instance = reportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// MicroAge is Age for a MicroTime.
func MicroAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return HumanDuration(now.Sub(t.Time))
}
