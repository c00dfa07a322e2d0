package framework

// NodeInfoLister reads the NodeInfos of a snapshot (upstream:
// pkg/scheduler/framework/listers.go).
type NodeInfoLister interface {
	// List returns every node of the snapshot, in the snapshot's order.
	List() ([]*NodeInfo, error)
	// Get returns one node, or an error if it is not in the snapshot.
	Get(nodeName string) (*NodeInfo, error)
}

// SharedLister is the snapshot as plugins see it.
type SharedLister interface {
	NodeInfos() NodeInfoLister
}
