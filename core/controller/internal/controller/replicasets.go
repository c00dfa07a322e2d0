package controller

import (
	appsv1 "k8s.io/api/apps/v1"
)

// Replicas is *spec.replicas, with the API default 1 for nil.
func Replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// ReplicaSetsByCreationTimestamp sorts oldest first, then by name.
type ReplicaSetsByCreationTimestamp []*appsv1.ReplicaSet

func (o ReplicaSetsByCreationTimestamp) Len() int      { return len(o) }
func (o ReplicaSetsByCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsByCreationTimestamp) Less(i, j int) bool {
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

// ReplicaSetsBySizeOlder sorts largest first; among equals, oldest first
// (the order to scale down in).
type ReplicaSetsBySizeOlder []*appsv1.ReplicaSet

func (o ReplicaSetsBySizeOlder) Len() int      { return len(o) }
func (o ReplicaSetsBySizeOlder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsBySizeOlder) Less(i, j int) bool {
	if Replicas(o[i].Spec.Replicas) == Replicas(o[j].Spec.Replicas) {
		return ReplicaSetsByCreationTimestamp(o).Less(i, j)
	}
	return Replicas(o[i].Spec.Replicas) > Replicas(o[j].Spec.Replicas)
}

// ReplicaSetsBySizeNewer sorts largest first; among equals, newest first
// (the order to scale up in).
type ReplicaSetsBySizeNewer []*appsv1.ReplicaSet

func (o ReplicaSetsBySizeNewer) Len() int      { return len(o) }
func (o ReplicaSetsBySizeNewer) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsBySizeNewer) Less(i, j int) bool {
	if Replicas(o[i].Spec.Replicas) == Replicas(o[j].Spec.Replicas) {
		return ReplicaSetsByCreationTimestamp(o).Less(j, i)
	}
	return Replicas(o[i].Spec.Replicas) > Replicas(o[j].Spec.Replicas)
}

// FilterActiveReplicaSets returns the replica sets that want pods.
func FilterActiveReplicaSets(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && Replicas(rs.Spec.Replicas) > 0 {
			out = append(out, rs)
		}
	}
	return out
}
