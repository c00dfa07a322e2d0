package registry

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runningPod is a Pod as the kubelet leaves it: spec, status, conditions,
// an owner and managed fields, so the codec's cost is that of a real one.
func runningPod() *corev1.Pod {
	now := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	yes := true
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4b9c6f5d-x2x8q", Namespace: "default", UID: "0b7c7d1e-5c1a-4f3e-9a55-2f0c1d2e3f40",
			GenerateName: "web-7d4b9c6f5d-", CreationTimestamp: now,
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d4b9c6f5d"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c6f5d", UID: "1c2d", Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{}}}}`)}}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", ServiceAccountName: "default", RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources:              corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
				VolumeMounts:           []corev1.VolumeMount{{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath: "/dev/termination-log", ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.2", PodIP: "10.244.1.5", StartTime: &now, QOSClass: corev1.PodQOSBurstable,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, Image: "nginx:1.27", ImageID: "sha256:0123", ContainerID: "kubetab://abc", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
		},
	}
}

// BenchmarkStorageCodec: a running Pod through the store's encoding and
// back, as every write and every cache miss does (the protobuf code of
// k8s.io/api). Under GOOS=js it is the price of the build's inlining flags.
func BenchmarkStorageCodec(b *testing.B) {
	pod := runningPod()
	data, err := marshalStorage(pod)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := marshalStorage(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		for b.Loop() {
			var out corev1.Pod
			if err := unmarshalStorage(data, &out, "Pod"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
