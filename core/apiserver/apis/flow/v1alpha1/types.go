// Package v1alpha1 is the flow.kubetab.dev/v1alpha1 API: what the control
// plane is doing, as read-only (and, for step mode, writable) resources of
// the API server, so the page, curl and the real kubectl read the cluster's
// inner workings through the same door as its objects.
//
//	hops           the trace (core/trace): one object per arrow of the diagram
//	storekeys      etcd's keys: revisions, version and the value decoded
//	stepmodes      the single "cluster" object: step mode on or off, Step, Continue
//	pendingwrites  the component writes step mode holds at the API server
//
// None of them is stored in the store (they would trace and version
// themselves): the API server reads them from the component that has them,
// as it reads pods/log from a kubelet. The protocol (list, watch,
// resourceVersion, field selectors, 410 Gone) is written down in
// docs/api.md.
//
// Upstream counterpart: none; these are kubetab's teaching APIs. Their
// shape follows upstream's conventions (TypeMeta, ObjectMeta, List with
// ListMeta, watch events, meta.k8s.io Table) so any Kubernetes client can
// read them.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group.
const GroupName = "flow.kubetab.dev"

// SchemeGroupVersion is the group and version served.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// ObjectReference names the object a hop or a key concerns. Resource is
// plural and carries its group ("pods", "deployments.apps", "pods/binding"
// for a subresource).
type ObjectReference struct {
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// Hop is one hop of the trace. Its name and resourceVersion are its
// sequence number (decimal): hops are never modified, so a watch only ever
// sees ADDED, and the resourceVersion of a list of hops is the newest
// hop's.
type Hop struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Seq orders the hops, from 1.
	Seq uint64 `json:"seq"`
	// Time is the cluster's clock when the hop was recorded.
	Time metav1.MicroTime `json:"time"`
	// Type is request, response, write, watch, call or decision
	// (core/trace.Kind).
	Type string `json:"type"`
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Verb string `json:"verb,omitempty"`
	// Object is what the hop is about, if anything.
	Object *ObjectReference `json:"object,omitempty"`
	// Key and Revision: the etcd key of a write and the store revision of
	// the write behind the hop.
	Key      string `json:"key,omitempty"`
	Revision int64  `json:"revision,omitempty"`
	// Code is a response's HTTP status.
	Code   int    `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// HopList is a list of hops, oldest first.
type HopList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Hop `json:"items"`
}

// StoreKey is one key of the store (etcd) as it is now. Its name is the
// key without its leading "/" and with every "/" turned into "."
// (/registry/deployments/default/web is registry.deployments.default.web),
// because a name cannot hold a "/"; its resourceVersion is the key's
// modRevision.
type StoreKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Key string `json:"key"`
	// CreateRevision is the revision of the write that created the key,
	// ModRevision that of its last write; Version counts its writes since
	// it was created (1 for a new key). As in etcd.
	CreateRevision int64 `json:"createRevision"`
	ModRevision    int64 `json:"modRevision"`
	Version        int64 `json:"version"`
	// Object is the Kubernetes object the key holds.
	Object *ObjectReference `json:"object,omitempty"`
	// Size is the stored value's length in bytes.
	Size int `json:"size"`
	// Encoding is how the value is stored: "protobuf" (what etcdctl
	// prints: the bytes start with "k8s\x00") or "json".
	Encoding string `json:"encoding,omitempty"`
	// Value is the stored value decoded to its object (JSON); in a DELETED
	// watch event, the key's last value. Absent for a key no resource keeps.
	Value runtime.RawExtension `json:"value,omitempty"`
}

// StoreKeyList is a list of keys, sorted by key, at one revision.
type StoreKeyList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta.ResourceVersion is the store's revision the list was read at.
	metav1.ListMeta `json:"metadata,omitempty"`
	// CompactRevision is the oldest revision the store can still read: a
	// watch from before it gets 410 Gone.
	CompactRevision int64      `json:"compactRevision"`
	Items           []StoreKey `json:"items"`
}

// StoreKeyHistory is the storekeys/NAME/history subresource: every write of
// the key the store still holds, oldest first.
type StoreKeyHistory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Key string `json:"key"`
	// Revision is the store's revision when this was read; CompactRevision
	// the oldest one it can still read. Writes before CompactRevision are
	// gone (except the value a read at CompactRevision still needs).
	Revision        int64              `json:"revision"`
	CompactRevision int64              `json:"compactRevision"`
	Revisions       []StoreKeyRevision `json:"revisions"`
}

// StoreKeyRevision is one write of a key.
type StoreKeyRevision struct {
	// Type is PUT or DELETE (etcd's event types).
	Type           string `json:"type"`
	CreateRevision int64  `json:"createRevision"`
	ModRevision    int64  `json:"modRevision"`
	// Version is 0 for a DELETE, as etcd reports a deleted key.
	Version int64 `json:"version"`
	Size    int   `json:"size,omitempty"`
	// Value is the decoded object a PUT wrote.
	Value runtime.RawExtension `json:"value,omitempty"`
}

// StepModeName is the name of the one StepMode object.
const StepModeName = "cluster"

// StepMode is the cluster's step mode (one object, named "cluster"). While
// spec.enabled is true, every write a control-plane component asks the API
// server for is held there until a Step releases it (the oldest first, or
// the one named) or Continue releases them all and turns step mode off;
// and the cluster's clock stands still, so timers, backoffs, leases and
// probes freeze with the writes. The learner's own requests (kubectl over
// HTTP) are never held.
type StepMode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StepModeSpec   `json:"spec"`
	Status            StepModeStatus `json:"status"`
}

// StepModeSpec is what the learner sets.
type StepModeSpec struct {
	Enabled bool `json:"enabled"`
}

// StepModeStatus is what the API server reports.
type StepModeStatus struct {
	// Pending are the held writes, oldest first.
	Pending []PendingWriteSpec `json:"pending"`
	// Released counts the writes released since the cluster started.
	Released uint64 `json:"released"`
	// ClockPaused is true while the cluster's clock stands still; Time is
	// the cluster's time.
	ClockPaused bool             `json:"clockPaused"`
	Time        metav1.MicroTime `json:"time"`
}

// PendingWrite is a held write. Its name is "pw-" and its ID; a watch sees
// ADDED when the write is held and DELETED when it is released (or its
// caller gave up). The resourceVersion of pendingwrites counts those changes.
type PendingWrite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PendingWriteSpec `json:"spec"`
}

// PendingWriteSpec describes a held write.
type PendingWriteSpec struct {
	// ID orders the held writes, from 1.
	ID uint64 `json:"id"`
	// Component is the writer ("replicaset-controller", "kubelet/node-1").
	Component string `json:"component"`
	// Verb is create, update, patch or delete.
	Verb string `json:"verb"`
	// Object is what it writes (Resource with a subresource: pods/binding,
	// pods/status).
	Object ObjectReference `json:"object"`
	// Since is the cluster's time when the write was held.
	Since metav1.MicroTime `json:"since"`
}

// PendingWriteList is a list of held writes, oldest first.
type PendingWriteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PendingWrite `json:"items"`
}
