// Package util holds what the Endpoints and EndpointSlice controllers
// share: which pods back a Service, on which port, and which Services to
// look at again when a pod changes.
//
// Upstream counterpart: k8s.io/endpointslice/util (controller_utils.go) and
// FindPort of k8s.io/kubernetes/pkg/api/v1/pod.
package util

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ShouldPodBeInEndpoints reports whether a pod is an endpoint at all (ready
// or not): it has an IP, has not finished (Succeeded or Failed), and, unless
// includeTerminating, is not being deleted.
func ShouldPodBeInEndpoints(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// ShouldSetHostname: a pod with spec.hostname whose spec.subdomain names
// the (headless) Service gets a DNS name <hostname>.<service>.
func ShouldSetHostname(pod *corev1.Pod, svc *corev1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace
}

// IsPodReady reports the pod's Ready condition.
func IsPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodIP is the pod's IP of the family (IPv4 here), from status.podIPs or
// status.podIP.
func PodIP(pod *corev1.Pod) string {
	for _, ip := range pod.Status.PodIPs {
		if ip.IP != "" {
			return ip.IP
		}
	}
	return pod.Status.PodIP
}

// FindPort resolves a Service port's targetPort on a pod: a number is
// itself, a name is the containerPort of that name and protocol (in the
// containers, then the restartable init containers).
func FindPort(pod *corev1.Pod, svcPort *corev1.ServicePort) (int, error) {
	switch svcPort.TargetPort.Type {
	case intstr.String:
		name := svcPort.TargetPort.StrVal
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			for _, p := range c.Ports {
				if p.Name == name && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
	case intstr.Int:
		return svcPort.TargetPort.IntValue(), nil
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

// ServiceSelects reports whether a Service with a selector picks the pod.
// A Service without one (its endpoints are managed by hand) picks nothing.
func ServiceSelects(svc *corev1.Service, pod *corev1.Pod) bool {
	if svc.Spec.Selector == nil || svc.Namespace != pod.Namespace {
		return false
	}
	return labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels))
}

// PodServiceMemberships returns the keys ("namespace/name") of the Services
// among services that select pod.
func PodServiceMemberships(services []*corev1.Service, pod *corev1.Pod) sets.Set[string] {
	out := sets.New[string]()
	for _, svc := range services {
		if ServiceSelects(svc, pod) {
			out.Insert(svc.Namespace + "/" + svc.Name)
		}
	}
	return out
}

// ServicesToUpdateOnPodChange returns the Services to sync after a pod
// changed: none if nothing an endpoint shows changed; those selecting the
// old or new labels otherwise.
func ServicesToUpdateOnPodChange(services []*corev1.Service, old, cur *corev1.Pod) sets.Set[string] {
	if cur.ResourceVersion == old.ResourceVersion {
		return nil
	}
	endpointChanged := PodEndpointChanged(old, cur)
	labelsChanged := !equality.Semantic.DeepEqual(old.Labels, cur.Labels)
	if !endpointChanged && !labelsChanged {
		return nil
	}
	out := PodServiceMemberships(services, cur)
	if labelsChanged {
		out = out.Union(PodServiceMemberships(services, old))
	}
	return out
}

// PodEndpointChanged reports whether a change of a pod changes its endpoint:
// readiness, IP, node, hostname, deletion or phase.
func PodEndpointChanged(old, cur *corev1.Pod) bool {
	if (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) {
		return true
	}
	if IsPodReady(old) != IsPodReady(cur) || PodIP(old) != PodIP(cur) || old.Status.Phase != cur.Status.Phase {
		return true
	}
	if old.Spec.NodeName != cur.Spec.NodeName || old.Spec.Hostname != cur.Spec.Hostname || old.Spec.Subdomain != cur.Spec.Subdomain {
		return true
	}
	return !equality.Semantic.DeepEqual(containerPorts(old), containerPorts(cur))
}

func containerPorts(p *corev1.Pod) [][]corev1.ContainerPort {
	var out [][]corev1.ContainerPort
	for _, c := range p.Spec.Containers {
		out = append(out, c.Ports)
	}
	return out
}
