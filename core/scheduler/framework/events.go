package framework

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
)

// EventResource is the kind of object a cluster event is about.
type EventResource string

// Event resources (upstream has more: PVs, storage classes, DRA ...).
const (
	Pod  EventResource = "Pod"
	Node EventResource = "Node"
	// WildCard matches every resource.
	WildCard EventResource = "*"
)

// ActionType is what happened to the object, as bits so a plugin can register
// several at once (Add | UpdateNodeAllocatable).
type ActionType int64

// Action types (upstream: pkg/scheduler/framework/events.go, types.go).
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdatePodLabel
	UpdatePodScaleDown

	// All matches every action.
	All ActionType = 1<<iota - 1
	// Update is every kind of update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition |
		UpdateNodeAnnotation | UpdatePodLabel | UpdatePodScaleDown
)

// ClusterEvent is a change in the cluster that may make an unschedulable pod
// schedulable: a node added, a pod deleted ...
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	// Label names the event in logs and in the queue's record ("NodeAdd").
	Label string
}

// Match reports whether a plugin's registered event e covers the event that
// happened (resource equal or wildcard, and some action bit in common).
func (e ClusterEvent) Match(happened ClusterEvent) bool {
	if e.Resource != WildCard && happened.Resource != WildCard && e.Resource != happened.Resource {
		return false
	}
	return e.ActionType&happened.ActionType != 0
}

// The events the scheduler's informers report to the queue.
var (
	NodeAdd                     = ClusterEvent{Resource: Node, ActionType: Add, Label: "NodeAdd"}
	NodeDelete                  = ClusterEvent{Resource: Node, ActionType: Delete, Label: "NodeDelete"}
	NodeAllocatableChange       = ClusterEvent{Resource: Node, ActionType: UpdateNodeAllocatable, Label: "NodeAllocatableChange"}
	NodeLabelChange             = ClusterEvent{Resource: Node, ActionType: UpdateNodeLabel, Label: "NodeLabelChange"}
	NodeTaintChange             = ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint, Label: "NodeTaintChange"}
	NodeConditionChange         = ClusterEvent{Resource: Node, ActionType: UpdateNodeCondition, Label: "NodeConditionChange"}
	NodeAnnotationChange        = ClusterEvent{Resource: Node, ActionType: UpdateNodeAnnotation, Label: "NodeAnnotationChange"}
	NodeSpecUnschedulableChange = ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint, Label: "NodeSpecUnschedulableChange"}
	AssignedPodAdd              = ClusterEvent{Resource: Pod, ActionType: Add, Label: "AssignedPodAdd"}
	AssignedPodLabelChange      = ClusterEvent{Resource: Pod, ActionType: UpdatePodLabel, Label: "AssignedPodLabelChange"}
	AssignedPodScaleDown        = ClusterEvent{Resource: Pod, ActionType: UpdatePodScaleDown, Label: "AssignedPodScaleDown"}
	AssignedPodDelete           = ClusterEvent{Resource: Pod, ActionType: Delete, Label: "AssignedPodDelete"}
	// UnschedulableTimeout moves pods that waited too long in the
	// unschedulable set, whatever rejected them.
	UnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}
)

// NodeSchedulingPropertiesChange lists the events a node update amounts to;
// none when nothing the scheduler looks at changed (a heartbeat, say). Upstream:
// pkg/scheduler/eventhandlers.go nodeSchedulingPropertiesChange.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []ClusterEvent {
	var events []ClusterEvent
	if newNode.Spec.Unschedulable != oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable {
		events = append(events, NodeSpecUnschedulableChange)
	}
	if !reflect.DeepEqual(newNode.Status.Allocatable, oldNode.Status.Allocatable) {
		events = append(events, NodeAllocatableChange)
	}
	if !reflect.DeepEqual(newNode.Labels, oldNode.Labels) {
		events = append(events, NodeLabelChange)
	}
	if !reflect.DeepEqual(newNode.Spec.Taints, oldNode.Spec.Taints) {
		events = append(events, NodeTaintChange)
	}
	if !nodeConditionsEqual(newNode.Status.Conditions, oldNode.Status.Conditions) {
		events = append(events, NodeConditionChange)
	}
	if !reflect.DeepEqual(newNode.Annotations, oldNode.Annotations) {
		events = append(events, NodeAnnotationChange)
	}
	return events
}

// nodeConditionsEqual compares types and statuses only: heartbeat times
// change every few seconds and must not wake the queue.
func nodeConditionsEqual(a, b []v1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(a))
	for _, c := range a {
		m[c.Type] = c.Status
	}
	for _, c := range b {
		if s, ok := m[c.Type]; !ok || s != c.Status {
			return false
		}
	}
	return true
}
