package kubelet

import (
	"github.com/kubetab/kubetab/core/trace"
	"k8s.io/apimachinery/pkg/types"
)

// The kubelet's hops in the trace (core/trace): its calls to the network
// plugin (CNI ADD and DEL) and to the container runtime (CRI PullImage,
// CreateContainer, StartContainer, StopContainer). Its API requests are
// traced by its client like every component's.

// Where the kubelet's calls go, as the trace names them.
const (
	traceCNI = "cni"
	traceCRI = "cri"
)

// traceCall records a call from this kubelet to to ("cni" or "cri") about a
// pod.
func (kl *Kubelet) traceCall(to, verb, namespace, name, detail string) {
	rec := kl.client.Registry().Trace()
	if rec == nil {
		return
	}
	rec.Record(trace.Hop{Kind: trace.Call, From: kl.client.UserAgent, To: to, Verb: verb, Resource: "pods", Namespace: namespace, Name: name, Detail: detail})
}

// podName is the namespace and name of a pod the kubelet knows by UID.
func (kl *Kubelet) podName(uid types.UID) (namespace, name string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil && rec.pod != nil {
		return rec.pod.Namespace, rec.pod.Name
	}
	return "", ""
}
