package kubelet

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet keeps a Lease named after its node in kube-node-lease,
// renewed every 10 s, owned by the Node; a stopped kubelet stops renewing
// and a restarted one goes on.
func TestNodeLease(t *testing.T) {
	n := newTestNode(t)
	if _, err := n.c.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: corev1.NamespaceNodeLease}}); err != nil {
		t.Fatal(err)
	}
	get := func() *coordinationv1.Lease {
		l, err := n.leases().Get(context.Background(), corev1.NamespaceNodeLease, "node-1")
		if err != nil {
			return nil
		}
		return l
	}
	renewedAt := func(at time.Time) func() bool {
		return func() bool {
			l := get()
			return l != nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.Equal(at)
		}
	}
	// The namespace appeared after the first attempt: the retry (100 ms
	// later on the kubelet's clock) creates the Lease.
	n.clk.Step(100 * time.Millisecond)
	waitFor(t, "lease created", func() bool { return get() != nil })
	l := get()
	node, err := n.c.Nodes().Get(context.Background(), "", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "node-1" ||
		l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != NodeLeaseDurationSeconds {
		t.Errorf("lease spec = %+v, want holder node-1, duration 40", l.Spec)
	}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].APIVersion != "v1" ||
		l.OwnerReferences[0].Name != "node-1" || l.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease owners = %+v, want the Node node-1 (%s)", l.OwnerReferences, node.UID)
	}

	// Every 10 s the renewTime moves to the kubelet's now.
	for i := 0; i < 3; i++ {
		n.clk.Step(NodeLeaseRenewInterval)
		waitFor(t, "lease renewed", renewedAt(n.clk.Now()))
	}

	// Stopped: Run has returned with its goroutines, so nothing renews the
	// Lease any more.
	n.stop()
	last := get().Spec.RenewTime.Time
	n.clk.Step(5 * NodeLeaseRenewInterval)
	if got := get().Spec.RenewTime.Time; !got.Equal(last) {
		t.Errorf("a stopped kubelet renewed its lease: %v, was %v", got, last)
	}

	// Started again: it renews at once.
	n.stop = n.start(t)
	waitFor(t, "lease renewed after restart", renewedAt(n.clk.Now()))
}
