package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the informer indexes controllers share.
const (
	// NamespaceIndex indexes objects by namespace.
	NamespaceIndex = "namespace"
	// ControllerUIDIndex indexes objects by the UID of their controller
	// reference (orphans are not indexed).
	ControllerUIDIndex = "controller-uid"
)

// IndexByNamespace is the NamespaceIndex function.
func IndexByNamespace[T Object](obj T) []string { return []string{obj.GetNamespace()} }

// IndexByControllerUID is the ControllerUIDIndex function.
func IndexByControllerUID[T Object](obj T) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}
