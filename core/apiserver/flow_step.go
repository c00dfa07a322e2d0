package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	flowv1alpha1 "github.com/kubetab/kubetab/core/apiserver/apis/flow/v1alpha1"
	"github.com/kubetab/kubetab/core/step"
)

// Step mode's API (package core/step holds the writes; registry/step.go
// is where they wait):
//
//	kubectl patch stepmode cluster --type=merge -p '{"spec":{"enabled":true}}'   on (the clock stops)
//	kubectl get pendingwrites [-w]                                              what waits
//	kubectl create --raw /apis/flow.kubetab.dev/v1alpha1/stepmodes/cluster/step -f /dev/null
//	    release the oldest held write (?id=N: that one); answers the StepMode
//	kubectl create --raw /apis/flow.kubetab.dev/v1alpha1/stepmodes/cluster/continue -f /dev/null
//	    release them all, step mode off (the clock runs again)
//
// The resourceVersion of both resources counts the gate's changes (a write
// held, a write released, step mode on or off), so a watch resumes where it
// left off; a watch of stepmodes gets a MODIFIED for each of them.

var (
	stepModesGR     = schema.GroupResource{Group: flowGV.Group, Resource: "stepmodes"}
	pendingWritesGR = schema.GroupResource{Group: flowGV.Group, Resource: "pendingwrites"}
)

var stepModesResource = &flowResource{
	resource: "stepmodes", singular: "stepmode", kind: "StepMode", listKind: "StepModeList",
	verbs:        []string{"get", "list", "watch", "patch", "update"},
	subresources: []string{"step", "continue"},
	columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Enabled", Type: "boolean"},
		{Name: "Pending", Type: "integer", Description: "Writes held now."},
		{Name: "Released", Type: "integer", Description: "Writes released so far."},
		{Name: "Clock", Type: "string", Description: "The cluster's clock: running or paused."},
	},
	served: func(s *Server) bool { return s.reg.StepGate() != nil },
	list: func(s *Server, rv int64) ([]flowObject, int64, error) {
		st := s.reg.StepGate().Status()
		return []flowObject{stepModeObject(st, nil)}, int64(st.Seq), nil
	},
	watch: func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error) {
		return gateWatch(ctx, s.reg.StepGate(), rv, func(g *step.Gate, _ step.Change) flowEvent {
			return flowEvent{typ: watch.Modified, obj: stepModeObject(g.Status(), nil)}
		})
	},
	serveNamed: func(s *Server, w http.ResponseWriter, r *http.Request, name, sub string) {
		if name != flowv1alpha1.StepModeName {
			writeError(w, r, apierrors.NewNotFound(stepModesGR, name))
			return
		}
		s.serveStepMode(w, r, sub)
	},
}

var pendingWritesResource = &flowResource{
	resource: "pendingwrites", singular: "pendingwrite", kind: "PendingWrite", listKind: "PendingWriteList",
	verbs:  []string{"get", "list", "watch"},
	fields: []string{"spec.component", "spec.verb", "spec.object.resource", "spec.object.namespace", "spec.object.name"},
	columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Component", Type: "string", Description: "Who asks for the write."},
		{Name: "Verb", Type: "string"},
		{Name: "Resource", Type: "string"},
		{Name: "Namespace", Type: "string"},
		{Name: "Object", Type: "string"},
	},
	served: func(s *Server) bool { return s.reg.StepGate() != nil },
	list: func(s *Server, rv int64) ([]flowObject, int64, error) {
		st := s.reg.StepGate().Status()
		if rv > int64(st.Seq) {
			return nil, 0, tooLargeResourceVersion(rv, int64(st.Seq))
		}
		out := make([]flowObject, 0, len(st.Pending))
		for _, p := range st.Pending {
			out = append(out, pendingObject(p, int64(st.Seq)))
		}
		return out, int64(st.Seq), nil
	},
	watch: func(ctx context.Context, s *Server, rv int64) (<-chan flowEvent, error) {
		return gateWatch(ctx, s.reg.StepGate(), rv, func(_ *step.Gate, c step.Change) flowEvent {
			if c.Toggled {
				return flowEvent{} // step mode on or off: no write held or released
			}
			typ := watch.Added
			if !c.Held {
				typ = watch.Deleted
			}
			return flowEvent{typ: typ, obj: pendingObject(c.Pending, int64(c.Seq))}
		})
	},
}

// gateWatch streams the gate's changes after rv, each turned into an event.
func gateWatch(ctx context.Context, g *step.Gate, rv int64, event func(*step.Gate, step.Change) flowEvent) (<-chan flowEvent, error) {
	_, last, lost := g.Changes(uint64(rv))
	if rv > int64(last) {
		return nil, tooLargeResourceVersion(rv, int64(last))
	}
	if lost {
		return nil, tooOld(rv, int64(last))
	}
	ch := make(chan flowEvent, 16)
	go func() {
		defer close(ch)
		seq := uint64(rv)
		for {
			select {
			case <-ctx.Done():
				return
			case <-g.Wait(seq):
			}
			changes, next, lost := g.Changes(seq)
			if lost {
				ch <- flowEvent{err: tooOld(int64(seq), int64(next))}
				return
			}
			for _, c := range changes {
				ev := event(g, c)
				if ev.obj.obj == nil {
					continue // nothing to tell this watch
				}
				ev.rv = int64(c.Seq)
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
			seq = next
		}
	}()
	return ch, nil
}

func pendingName(id uint64) string { return "pw-" + strconv.FormatUint(id, 10) }

func pendingSpec(p step.Pending) flowv1alpha1.PendingWriteSpec {
	return flowv1alpha1.PendingWriteSpec{
		ID: p.ID, Component: p.Write.Component, Verb: p.Write.Verb,
		Object: flowv1alpha1.ObjectReference{Resource: p.Write.Resource, Namespace: p.Write.Namespace, Name: p.Write.Name},
		Since:  metav1.NewMicroTime(p.Since),
	}
}

func pendingObject(p step.Pending, rv int64) flowObject {
	name := pendingName(p.ID)
	m := metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatInt(rv, 10), CreationTimestamp: metav1.NewTime(p.Since)}
	pw := &flowv1alpha1.PendingWrite{
		TypeMeta:   metav1.TypeMeta{Kind: "PendingWrite", APIVersion: flowGV.String()},
		ObjectMeta: m, Spec: pendingSpec(p),
	}
	w := p.Write
	return flowObject{
		obj: pw, name: name, order: fmt.Sprintf("%020d", p.ID), rv: rv, meta: m,
		fields: fields.Set{"spec.component": w.Component, "spec.verb": w.Verb, "spec.object.resource": w.Resource, "spec.object.namespace": w.Namespace, "spec.object.name": w.Name},
		cells:  []any{name, w.Component, w.Verb, w.Resource, w.Namespace, w.Name},
	}
}

func stepModeObject(st step.Status, _ *step.Pending) flowObject {
	rv := strconv.FormatUint(st.Seq, 10)
	m := metav1.ObjectMeta{Name: flowv1alpha1.StepModeName, ResourceVersion: rv}
	sm := &flowv1alpha1.StepMode{
		TypeMeta:   metav1.TypeMeta{Kind: "StepMode", APIVersion: flowGV.String()},
		ObjectMeta: m,
		Spec:       flowv1alpha1.StepModeSpec{Enabled: st.Enabled},
		Status: flowv1alpha1.StepModeStatus{
			Pending: []flowv1alpha1.PendingWriteSpec{}, Released: st.Released,
			ClockPaused: st.Paused, Time: metav1.NewMicroTime(st.Now),
		},
	}
	for _, p := range st.Pending {
		sm.Status.Pending = append(sm.Status.Pending, pendingSpec(p))
	}
	clk := "running"
	if st.Paused {
		clk = "paused"
	}
	return flowObject{obj: sm, name: m.Name, order: m.Name, rv: int64(st.Seq), meta: m,
		cells: []any{m.Name, st.Enabled, len(st.Pending), st.Released, clk}}
}

// serveStepMode serves the writes of stepmodes/cluster: PUT and PATCH of
// spec.enabled, and POST of its step and continue subresources.
func (s *Server) serveStepMode(w http.ResponseWriter, r *http.Request, sub string) {
	g := s.reg.StepGate()
	answer := func() { writeJSON(w, http.StatusOK, stepModeObject(g.Status(), nil).obj) }
	switch {
	case sub == "step" && r.Method == http.MethodPost:
		var id uint64
		if v := r.URL.Query().Get("id"); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid id %q: want the number of a pending write", v)))
				return
			}
			id = n
		}
		if _, err := g.Step(id); err != nil {
			if errors.Is(err, step.ErrNotPending) {
				writeError(w, r, apierrors.NewNotFound(pendingWritesGR, pendingName(id)))
				return
			}
			writeError(w, r, apierrors.NewConflict(stepModesGR, flowv1alpha1.StepModeName, err))
			return
		}
		answer()
	case sub == "continue" && r.Method == http.MethodPost:
		g.Continue()
		answer()
	case sub == "" && (r.Method == http.MethodPut || r.Method == http.MethodPatch):
		body, err := s.readBody(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		cur, _ := json.Marshal(stepModeObject(g.Status(), nil).obj)
		next := body
		if r.Method == http.MethodPatch {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			pt := types.PatchType(mt)
			if pt != types.JSONPatchType && pt != types.MergePatchType {
				// What kube-apiserver answers for a custom resource, which
				// has no strategic merge patch either.
				writeError(w, r, &apierrors.StatusError{ErrStatus: metav1.Status{
					Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
					Message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json",
				}})
				return
			}
			if next, err = applyPatch(pt, cur, body, nil); err != nil {
				writeError(w, r, err)
				return
			}
		}
		var sm flowv1alpha1.StepMode
		if err := json.Unmarshal(next, &sm); err != nil {
			writeError(w, r, apierrors.NewBadRequest(err.Error()))
			return
		}
		if sm.Name != "" && sm.Name != flowv1alpha1.StepModeName {
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sm.Name, flowv1alpha1.StepModeName)))
			return
		}
		g.SetEnabled(sm.Spec.Enabled)
		answer()
	default:
		writeError(w, r, apierrors.NewMethodNotSupported(stepModesGR, verbOfMethod(r.Method, true)))
	}
}
