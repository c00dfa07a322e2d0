package registry

import (
	"context"

	"github.com/kubetab/kubetab/core/step"
)

// Step mode (package core/step) holds the writes of the control plane's
// components here, at the entrance of every write the registry serves
// (Create, Update, Delete, Bind, UpdateScale), before anything is read,
// checked or locked: a held write has done nothing yet, and nothing waits
// for it but its caller.
//
// Who is a component: the in-process client (core/client), which the
// controllers, the scheduler and the kubelets use, marks its calls with
// AsComponent. A request over HTTP (the learner's kubectl, the console,
// curl) never carries the mark and is never held. Upstream would tell them
// apart by the authenticated user (system:kube-scheduler,
// system:node:node-1, system:serviceaccount:kube-system:...); the in-process
// door is kubetab's equivalent of a component's credentials.

// SetStepGate installs the step-mode gate; nil removes it.
func (r *Registry) SetStepGate(g *step.Gate) { r.step.Store(g) }

// StepGate is the step-mode gate, or nil.
func (r *Registry) StepGate() *step.Gate { return r.step.Load() }

type componentKey struct{}

// AsComponent marks ctx as a call of the named control-plane component
// through the in-process client.
func AsComponent(ctx context.Context, name string) context.Context {
	if name == "" || ComponentOf(ctx) == name {
		return ctx
	}
	return context.WithValue(ctx, componentKey{}, name)
}

// ComponentOf is the component that marked ctx (AsComponent), or "".
func ComponentOf(ctx context.Context) string {
	c, _ := ctx.Value(componentKey{}).(string)
	return c
}

type admittedKey struct{}

// hold waits at the step-mode gate if the write is a component's and step
// mode is on. The returned ctx marks the write as let through, so writes
// the registry makes on its behalf (Bind's update of the pod, a scale's
// update) do not wait a second time.
func (s *Store) hold(ctx context.Context, verb, subresource, namespace, name string) (context.Context, error) {
	g := s.reg.step.Load()
	who := ComponentOf(ctx)
	if g == nil || who == "" || ctx.Value(admittedKey{}) != nil {
		return ctx, nil
	}
	res := s.Resource.TraceName()
	if subresource != "" {
		res += "/" + subresource
	}
	if err := g.Hold(ctx, step.Write{Component: who, Verb: verb, Resource: res, Namespace: namespace, Name: name}); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, admittedKey{}, true), nil
}
