package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubetab/kubetab/core/kubelet"
	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// A cluster from a snapshot (Config.Snapshot) is a whole cluster restarted:
// etcd restored from its backup, then every control-plane program and every
// machine started again. What a real cluster does then, and so this one:
//
//	etcd            every object at the snapshot's revision; the history is
//	                gone (a watch from an older resourceVersion gets 410 Gone)
//	kube-apiserver  serves it; its bootstrap objects are made again only if
//	                missing (the default namespaces, the kubernetes Service)
//	controllers     list and reconcile from there: nothing is re-created that
//	                is already there, a Deployment keeps its ReplicaSet
//	kubelets        register their existing Node again and post a fresh
//	                status and Lease; the machine rebooted: its container
//	                runtime recovers its records (containerd keeps them on
//	                disk; here they are what the kubelet last reported,
//	                kubelet.RecoveredContainers) but no process, so every
//	                container is exited (255, Unknown) and each pod bound to
//	                the node gets a new sandbox (event SandboxChanged; a pod
//	                IP from the node's podCIDR, maybe not the one it had)
//	                and its containers start again under its restartPolicy:
//	                restartCount + 1, lastState the lost container (a pod
//	                with restartPolicy Never that was running ends Failed)
//	node lifecycle  gives every node a full grace period from the time it
//	                first sees it, not from the Lease's old renewTime, so no
//	                node is marked unreachable for the time the cluster was off
//
// The nodes are the snapshot's Node objects: a node added with `node add`
// comes back, a removed one does not.

// Snapshot writes the cluster's store as a snapshot (store.Snapshot's
// format): what Config.Snapshot restores.
func (c *Cluster) Snapshot(w io.Writer) error { return c.Store.Snapshot(w) }

// The allocators' own keys (core/apiserver/registry allocator.go), JSON
// objects no served resource keeps, and the kind each holds.
var allocatorKeys = []struct{ prefix, kind string }{
	{"/registry/ipaddresses/", "IPAddress"},
	{"/registry/ranges/", "RangeAllocation"},
}

// checkAllocatorKey accepts an allocator's key holding its kind of object
// under the key's name.
func checkAllocatorKey(key string, value []byte) error {
	for _, a := range allocatorKeys {
		name, ok := strings.CutPrefix(key, a.prefix)
		if !ok {
			continue
		}
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(value, &obj); err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		if obj.Kind != a.kind {
			return fmt.Errorf("key %s holds a %q, not a %s", key, obj.Kind, a.kind)
		}
		if a.kind == "IPAddress" && obj.Metadata.Name != name {
			return fmt.Errorf("key %s holds IPAddress %q", key, obj.Metadata.Name)
		}
		return nil
	}
	return fmt.Errorf("key %s: no resource of the API server keeps it", key)
}

// adoptSnapshotNodes checks every key of the restored store and takes the
// nodes from its Node objects. Called by New before the cluster is shared.
func (c *Cluster) adoptSnapshotNodes() error {
	kvs, _ := c.Store.List("/")
	var nodes []*corev1.Node
	for _, kv := range kvs {
		s, namespace, name := c.Registry.StoreOfKey(kv.Key)
		if s == nil {
			if err := checkAllocatorKey(kv.Key, kv.Value); err != nil {
				return err
			}
			continue
		}
		obj, err := s.DecodeCurrent(kv) // shared, read only here
		if err != nil {
			return fmt.Errorf("key %s: %w", kv.Key, err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Errorf("key %s: %w", kv.Key, err)
		}
		if m.GetName() != name || m.GetNamespace() != namespace {
			return fmt.Errorf("key %s holds %s/%s", kv.Key, m.GetNamespace(), m.GetName())
		}
		switch o := obj.(type) {
		case *corev1.Node:
			nodes = append(nodes, o)
		case *corev1.Pod:
			if o.Spec.NodeName != "" {
				if c.recovered == nil {
					c.recovered = map[string][]cri.RecoveredContainer{}
				}
				c.recovered[o.Spec.NodeName] = append(c.recovered[o.Spec.NodeName], kubelet.RecoveredContainers(o)...)
			}
		}
	}
	if len(nodes) == 0 {
		return nil // every node was removed: the Config's nodes join afresh
	}
	if len(nodes) > maxNodeIndex {
		return fmt.Errorf("%d nodes: a cluster makes at most %d", len(nodes), maxNodeIndex)
	}
	// The nodes in the order they were made (their number), as Nodes lists them.
	index := func(n *corev1.Node) int {
		if p, err := netip.ParsePrefix(n.Spec.PodCIDR); err == nil && p.Addr().Is4() {
			b := p.Addr().As4()
			if b[0] == 10 && b[1] == 244 && b[2] >= 1 && int(b[2]) <= maxNodeIndex {
				return int(b[2])
			}
		}
		return 0
	}
	sort.SliceStable(nodes, func(i, j int) bool { return index(nodes[i]) < index(nodes[j]) })
	c.nodes, c.nextIndex = nil, 1
	for _, n := range nodes {
		if i := index(n); i >= c.nextIndex {
			c.nextIndex = i + 1
		}
	}
	used := map[int]bool{}
	for _, n := range nodes {
		spec := NodeSpec{Name: n.Name, CPU: n.Status.Capacity[corev1.ResourceCPU], Memory: n.Status.Capacity[corev1.ResourceMemory]}
		i := index(n)
		if i == 0 || used[i] {
			// No podCIDR of ours (or a duplicate): a new number, as a new machine.
			ns, err := c.newNodeLocked(spec)
			if err != nil {
				return err
			}
			c.nodes = append(c.nodes, ns)
			used[c.nextIndex-1] = true
			continue
		}
		used[i] = true
		if spec.CPU.IsZero() {
			spec.CPU = c.cfg.NodeCPU
		}
		if spec.Memory.IsZero() {
			spec.Memory = c.cfg.NodeMemory
		}
		ip := fmt.Sprintf("172.18.0.%d", i+1)
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address != "" {
				ip = a.Address
			}
		}
		if err := spec.Validate(); err != nil {
			return err
		}
		c.nodes = append(c.nodes, nodeSpec{NodeSpec: spec, podCIDR: fmt.Sprintf("10.244.%d.0/24", i), ip: ip})
	}
	return nil
}
