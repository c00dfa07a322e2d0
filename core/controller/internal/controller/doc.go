// Package controller holds what every kubetab controller shares: the worker
// loop, expectations, the pod-template hash, pod ranking and ownership
// (adopt / release).
//
// Upstream counterpart: k8s.io/kubernetes/pkg/controller, mainly
// controller_utils.go (ControllerExpectations, ActivePods, ComputeHash,
// FilterActivePods, PodControl) and controller_ref_manager.go
// (BaseControllerRefManager.ClaimObject).
//
// Every controller in core/controller has the same shape, the one
// kube-controller-manager's controllers have:
//
//	informers ──events──▶ handlers ──keys──▶ queue ──▶ workers ──▶ Reconcile(key)
//	(list+watch cache)    (cheap: only          (dedup,    (block on     (reads the caches,
//	                       enqueue keys)         back-off)  queue.Get)    writes through the API)
//
// The handlers never act on an event: an event only says "look at this key
// again". Reconcile reads the current state from the caches and moves the
// world one step toward the spec (level-based, not edge-based), so a missed
// or repeated event costs nothing.
package controller
