package apiserver

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
	"github.com/kubetab/kubetab/core/trace"
)

// hops serves the trace (core/trace) as the resource hops: each hop an
// object named by its Seq, which is also its resourceVersion. The recorder
// keeps the latest hops in a ring, so a watch from a Seq the ring has
// overwritten gets 410 Gone, like a watch from a compacted revision.
//
//	kubectl get hops --field-selector object.name=web,type=write
//	kubectl get --raw '/apis/flow.kubetab.dev/v1alpha1/hops?watch=1&resourceVersion=120'
var hopsResource = &flowResource{
	resource: "hops", singular: "hop", kind: "Hop", listKind: "HopList",
	verbs:  []string{"get", "list", "watch"},
	fields: []string{"type", "from", "to", "verb", "object.resource", "object.namespace", "object.name", "key", "revision"},
	columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "The hop's sequence number."},
		{Name: "Type", Type: "string", Description: "request, response, write, watch, call or decision."},
		{Name: "From", Type: "string"},
		{Name: "To", Type: "string"},
		{Name: "Verb", Type: "string"},
		{Name: "Object", Type: "string", Description: "resource/namespace/name"},
		{Name: "Revision", Type: "integer", Description: "The store revision behind the hop."},
		{Name: "Code", Type: "integer", Priority: 1},
		{Name: "Key", Type: "string", Priority: 1},
		{Name: "Detail", Type: "string", Priority: 1},
	},
	served: func(s *Server) bool { return s.reg.Trace() != nil },
	list: func(s *Server, rv int64) ([]flowObject, int64, error) {
		// A list at rv holds the kept hops up to rv: hops never change,
		// so nothing else differs between then and now.
		hops, last, _ := s.reg.Trace().Since(0)
		if rv > int64(last) {
			return nil, int64(last), tooLargeResourceVersion(rv, int64(last))
		}
		out := make([]flowObject, 0, len(hops))
		for _, h := range hops {
			if rv > 0 && int64(h.Seq) > rv {
				break
			}
			out = append(out, hopObject(h))
		}
		if rv > 0 {
			last = uint64(rv)
		}
		return out, int64(last), nil
	},
	watch: func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error) {
		rec := s.reg.Trace()
		_, last, lost := rec.Since(uint64(rv))
		if rv > int64(last) {
			return nil, tooLargeResourceVersion(rv, int64(last))
		}
		if lost > 0 {
			return nil, tooOld(rv, int64(uint64(rv)+lost))
		}
		ch := make(chan flowEvent, 64)
		go func() {
			defer close(ch)
			seq := uint64(rv)
			for {
				select {
				case <-ctx.Done():
					return
				case <-rec.Wait(seq):
				}
				hops, next, lost := rec.Since(seq)
				if lost > 0 {
					// The ring overtook this reader: it must list again.
					ch <- flowEvent{err: tooOld(int64(seq), int64(seq+lost))}
					return
				}
				for _, h := range hops {
					select {
					case ch <- flowEvent{typ: watch.Added, obj: hopObject(h), rv: int64(h.Seq)}:
					case <-ctx.Done():
						return
					}
				}
				seq = next
			}
		}()
		return ch, nil
	},
	get: func(s *Server, name string) (flowObject, error) {
		seq, err := strconv.ParseUint(name, 10, 64)
		if err == nil && seq > 0 {
			if hops, _, _ := s.reg.Trace().Since(seq - 1); len(hops) > 0 && hops[0].Seq == seq {
				return hopObject(hops[0]), nil
			}
		}
		return flowObject{}, apierrors.NewNotFound(schema.GroupResource{Group: flowGV.Group, Resource: "hops"}, name)
	},
}

// hopObject is a trace hop as a Hop object.
func hopObject(h trace.Hop) flowObject {
	name := strconv.FormatUint(h.Seq, 10)
	m := metav1.ObjectMeta{Name: name, ResourceVersion: name, CreationTimestamp: metav1.NewTime(h.Time)}
	hop := &flowv1alpha1.Hop{
		TypeMeta:   metav1.TypeMeta{Kind: "Hop", APIVersion: flowGV.String()},
		ObjectMeta: m,
		Seq:        h.Seq, Time: metav1.NewMicroTime(h.Time), Type: string(h.Kind),
		From: h.From, To: h.To, Verb: h.Verb, Key: h.Key, Revision: h.Revision, Code: h.Code, Detail: h.Detail,
	}
	object := ""
	if h.Resource != "" || h.Name != "" {
		hop.Object = &flowv1alpha1.ObjectReference{Resource: h.Resource, Namespace: h.Namespace, Name: h.Name}
		object = h.Resource + "/" + h.Name
		if h.Namespace != "" {
			object = h.Resource + "/" + h.Namespace + "/" + h.Name
		}
	}
	rev := ""
	if h.Revision != 0 {
		rev = strconv.FormatInt(h.Revision, 10)
	}
	return flowObject{
		obj: hop, name: name, order: fmt.Sprintf("%020d", h.Seq), rv: int64(h.Seq), meta: m,
		fields: fields.Set{
			"type": string(h.Kind), "from": h.From, "to": h.To, "verb": h.Verb,
			"object.resource": h.Resource, "object.namespace": h.Namespace, "object.name": h.Name,
			"key": h.Key, "revision": rev,
		},
		cells: []any{name, string(h.Kind), h.From, h.To, h.Verb, object, h.Revision, h.Code, h.Key, h.Detail},
	}
}
