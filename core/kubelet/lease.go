package kubelet

// The node lease: the kubelet's cheap heartbeat.
//
// Upstream counterpart: k8s.io/component-helpers/apimachinery/lease
// (controller.go), which the kubelet runs as its nodeLeaseController
// (pkg/kubelet/kubelet.go, NodeLeaseDurationSeconds in KubeletConfiguration).
//
// Posting the whole node status every 10 s is expensive on a big cluster (a
// Node object is kilobytes: images, conditions, addresses), so since
// Kubernetes 1.14 each kubelet also keeps a tiny coordination.k8s.io/v1
// Lease, named after its node, in the kube-node-lease namespace:
//
//	kubectl get lease -n kube-node-lease node-1 -o yaml
//	spec:
//	  holderIdentity: node-1
//	  leaseDurationSeconds: 40
//	  renewTime: "2026-11-29T09:00:10.000000Z"   ← moves every 10 s
//
// renewTime moves every leaseDurationSeconds/4 = 10 s. The node lifecycle
// controller (core/controller/nodelifecycle) reads it: a node whose Lease and
// Ready condition have both stood still for its grace period is marked
// Unknown ("Kubelet stopped posting node status.") and tainted unreachable.
// A stopped kubelet (Run's context cancelled) stops renewing, like a machine
// whose power was cut.

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
)

const (
	// NodeLeaseDurationSeconds is the Lease's leaseDurationSeconds
	// (KubeletConfiguration nodeLeaseDurationSeconds, default 40).
	NodeLeaseDurationSeconds = 40
	// NodeLeaseRenewInterval is how often the Lease is renewed: a quarter of
	// its duration (upstream's renewIntervalFraction 0.25), 10 s.
	NodeLeaseRenewInterval = NodeLeaseDurationSeconds * time.Second / 4
	// leaseMaxUpdateRetries bounds the optimistic updates of one renewal
	// before the Lease is read again (upstream maxUpdateRetries).
	leaseMaxUpdateRetries = 5
	// leaseMaxBackoff caps the wait between attempts to create or read the
	// Lease (upstream maxBackoff).
	leaseMaxBackoff = 7 * time.Second
)

func (kl *Kubelet) leases() client.Resource[*coordinationv1.Lease] {
	return client.For[*coordinationv1.Lease](kl.client, coordinationv1.GroupName, "leases")
}

// leaseLoop renews the node's Lease now and then every
// NodeLeaseRenewInterval until ctx is done (upstream: controller.Run, a
// wait.JitterUntil of sync). latest is the last Lease written, so a renewal
// is usually a single update with no read.
func (kl *Kubelet) leaseLoop(ctx context.Context) {
	t := kl.clock.NewTicker(NodeLeaseRenewInterval)
	defer t.Stop()
	var latest *coordinationv1.Lease
	for {
		latest = kl.syncLease(ctx, latest)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// syncLease renews the Lease and returns it as written (nil when it could
// not be written; the next period tries again). With a cached Lease it
// first tries one update from it; otherwise (or on failure) it makes sure
// the Lease exists, then updates it with retries on conflicts.
func (kl *Kubelet) syncLease(ctx context.Context, latest *coordinationv1.Lease) *coordinationv1.Lease {
	if latest != nil {
		if l, err := kl.renewLease(ctx, latest); err == nil {
			return l
		}
	}
	lease, created := kl.backoffEnsureLease(ctx)
	if lease == nil || created {
		return lease // a new Lease was just created with a fresh renewTime
	}
	for i := 0; i < leaseMaxUpdateRetries; i++ {
		l, err := kl.renewLease(ctx, lease)
		if err == nil {
			return l
		}
		if !apierrors.IsConflict(err) {
			return nil
		}
		if lease, err = kl.leases().Get(ctx, corev1.NamespaceNodeLease, kl.nodeName); err != nil {
			return nil
		}
	}
	return nil
}

// renewLease writes base with renewTime now (and the owner reference to the
// Node, if it was missing).
func (kl *Kubelet) renewLease(ctx context.Context, base *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return kl.leases().Update(ctx, kl.newLease(ctx, base))
}

// backoffEnsureLease gets or creates the Lease, retrying with a back-off
// (100 ms doubling up to 7 s) until it works or ctx is done. created
// reports whether this call created it.
func (kl *Kubelet) backoffEnsureLease(ctx context.Context) (lease *coordinationv1.Lease, created bool) {
	delay := 100 * time.Millisecond
	for {
		lease, created, err := kl.ensureLease(ctx)
		if err == nil {
			return lease, created
		}
		t := kl.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C():
		}
		delay = min(2*delay, leaseMaxBackoff)
	}
}

func (kl *Kubelet) ensureLease(ctx context.Context) (*coordinationv1.Lease, bool, error) {
	lease, err := kl.leases().Get(ctx, corev1.NamespaceNodeLease, kl.nodeName)
	if apierrors.IsNotFound(err) {
		lease, err = kl.leases().Create(ctx, kl.newLease(ctx, nil))
		if err != nil {
			return nil, false, fmt.Errorf("create node lease: %w", err)
		}
		return lease, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get node lease: %w", err)
	}
	return lease, false, nil
}

// newLease is base (or a new Lease) held by this node, renewed now. The
// Lease is owned by the Node, so deleting the Node lets the garbage
// collector delete its Lease (upstream: setNodeOwnerFunc).
func (kl *Kubelet) newLease(ctx context.Context, base *coordinationv1.Lease) *coordinationv1.Lease {
	var lease *coordinationv1.Lease
	if base == nil {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kl.nodeName, Namespace: corev1.NamespaceNodeLease}}
	} else {
		lease = base.DeepCopy()
	}
	holder, duration := kl.nodeName, int32(NodeLeaseDurationSeconds)
	lease.Spec.HolderIdentity = &holder
	lease.Spec.LeaseDurationSeconds = &duration
	now := metav1.NewMicroTime(kl.clock.Now())
	lease.Spec.RenewTime = &now
	if len(lease.OwnerReferences) == 0 {
		if node, err := kl.client.Nodes().Get(ctx, "", kl.nodeName); err == nil {
			lease.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Node", Name: node.Name, UID: node.UID,
			}}
		}
	}
	return lease
}
