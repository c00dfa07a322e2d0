package kubectl

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDescribeGolden(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	// A pod with more to show: resources, env, a probe, a volume, a restart.
	p := &corev1.Pod{}
	p.Name, p.Namespace = "busy", "default"
	p.Annotations = map[string]string{"example.com/note": "hello"}
	p.Spec.Containers = []corev1.Container{{
		Name: "app", Image: "hello:2", Command: []string{"/hello"}, Args: []string{"--port=8080"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env:   []corev1.EnvVar{{Name: "MODE", Value: "demo"}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/tmp"}},
	}}
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p = e.create(p).(*corev1.Pod)
	p = e.runPod(p, "node-1", "10.244.1.3")
	p.Status.ContainerStatuses[0].RestartCount = 1
	p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: p.CreationTimestamp, FinishedAt: p.CreationTimestamp}
	e.setStatus(p)
	e.event(p, "Warning", "BackOff", "Back-off restarting failed container app", "kubelet")

	golden(t, "describe", e.transcript(
		"describe pod web-7d4b9-x2x8q",
		"describe pods busy",
		"describe pod web-7d4b9-k5zq7 --show-events=false",
		"describe deployment web",
		"describe rs web-7d4b9",
		"describe node node-1",
		"describe ns team-a",
		"describe pods web",
		"describe pod nope",
		"describe",
	))
}
