package util

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFindPort(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
			{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
		}}},
		InitContainers: []corev1.Container{{RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001, Protocol: corev1.ProtocolTCP}}}},
	}}
	for _, tc := range []struct {
		name   string
		target intstr.IntOrString
		proto  corev1.Protocol
		want   int
		ok     bool
	}{
		{"number", intstr.FromInt32(9090), corev1.ProtocolTCP, 9090, true},
		{"name", intstr.FromString("http"), corev1.ProtocolTCP, 8080, true},
		{"name with another protocol", intstr.FromString("dns"), corev1.ProtocolTCP, 0, false},
		{"name, UDP", intstr.FromString("dns"), corev1.ProtocolUDP, 53, true},
		{"sidecar port", intstr.FromString("proxy"), corev1.ProtocolTCP, 15001, true},
		{"unknown name", intstr.FromString("grpc"), corev1.ProtocolTCP, 0, false},
	} {
		got, err := FindPort(pod, &corev1.ServicePort{TargetPort: tc.target, Protocol: tc.proto})
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%s: FindPort = %d, %v; want %d (found %v)", tc.name, got, err, tc.want, tc.ok)
		}
	}
}

func TestShouldPodBeInEndpoints(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name        string
		pod         corev1.Pod
		terminating bool
		want        bool
	}{
		{"running with IP", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}, false, true},
		{"no IP", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, false, false},
		{"succeeded", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.0.0.1"}}, true, false},
		{"failed", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, PodIP: "10.0.0.1"}}, true, false},
		{"terminating, excluded", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}, false, false},
		{"terminating, included", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}, true, true},
	} {
		if got := ShouldPodBeInEndpoints(&tc.pod, tc.terminating); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
