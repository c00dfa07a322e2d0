package controller

import (
	corev1 "k8s.io/api/core/v1"
)

// IsPodTerminal reports whether a pod has finished: Succeeded or Failed.
func IsPodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
