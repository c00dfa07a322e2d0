// Package defaultbinder holds the plugin that binds a pod to its node
// through the API server (upstream:
// pkg/scheduler/framework/plugins/defaultbinder/default_binder.go).
package defaultbinder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "DefaultBinder"

// DefaultBinder creates a Binding (POST /api/v1/namespaces/<ns>/pods/<name>/binding).
// The API server then sets spec.nodeName and the PodScheduled condition in one
// write; the kubelet of that node sees the pod through its watch and starts it.
// The scheduler itself never writes spec.nodeName.
type DefaultBinder struct {
	handle framework.Handle
}

var _ framework.BindPlugin = (*DefaultBinder)(nil)

// New is the plugin's factory.
func New(_ context.Context, h framework.Handle) (framework.Plugin, error) {
	return &DefaultBinder{handle: h}, nil
}

// Name implements framework.Plugin.
func (*DefaultBinder) Name() string { return Name }

// Bind implements framework.BindPlugin. The binding carries the pod's UID, so
// a pod deleted and re-created under the same name is not bound by mistake.
func (b *DefaultBinder) Bind(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	return framework.AsStatus(b.handle.ClientSet().Bind(ctx, binding))
}
