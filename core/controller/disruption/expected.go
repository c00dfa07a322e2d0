package disruption

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// How many pods a budget expects, and how many of them must be healthy
// (upstream: getExpectedPodCount, getExpectedScale and the finders).
//
//	spec                   expectedPods              desiredHealthy
//	minAvailable: 2        len(selected pods)        2
//	minAvailable: "50%"    Σ scale of controllers    ⌈50% × expected⌉
//	maxUnavailable: 1      Σ scale of controllers    expected - 1 (≥ 0)
//	maxUnavailable: "30%"  Σ scale of controllers    expected - ⌈30% × expected⌉ (≥ 0)
//	neither                0                         0
//
// Percentages always round up, so "50%" of 3 pods keeps 2 available
// (minAvailable) or lets 2 go (maxUnavailable). A controller's scale is its
// spec.replicas, read from the informers for Deployments (through the pod's
// ReplicaSet), ReplicaSets of their own and StatefulSets, and from the scale
// subresource for any other kind (one without a scale subresource, a Job
// for one, is an error). Pods without a controller are left out of the sum
// and reported in an UnmanagedPods event.

// getExpectedPodCount is upstream's getExpectedPodCount.
func (dc *Controller) getExpectedPodCount(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expectedCount, desiredHealthy int32, unmanagedPods []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expectedCount, unmanagedPods, err = dc.getExpectedScale(ctx, pdb, pods)
		if err != nil {
			return
		}
		var maxUnavailable int
		maxUnavailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expectedCount), true)
		if err != nil {
			return
		}
		desiredHealthy = max(expectedCount-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil:
		if pdb.Spec.MinAvailable.Type == intstr.Int {
			desiredHealthy = pdb.Spec.MinAvailable.IntVal
			expectedCount = int32(len(pods))
			return
		}
		expectedCount, unmanagedPods, err = dc.getExpectedScale(ctx, pdb, pods)
		if err != nil {
			return
		}
		var minAvailable int
		minAvailable, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expectedCount), true)
		if err != nil {
			return
		}
		desiredHealthy = int32(minAvailable)
	}
	return
}

// getExpectedScale sums the scale of the controllers of pods, each
// controller once.
func (dc *Controller) getExpectedScale(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expectedCount int32, unmanagedPods []string, err error) {
	controllerScale := map[types.UID]int32{}
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanagedPods = append(unmanagedPods, pod.Name)
			continue
		}
		if _, ok := controllerScale[ref.UID]; ok {
			continue
		}
		found := false
		for _, finder := range dc.finders() {
			var cs *controllerAndScale
			if cs, err = finder(ctx, ref, pod.Namespace); err != nil {
				return
			}
			if cs != nil {
				controllerScale[cs.uid] = cs.scale
				found = true
				break
			}
		}
		if !found {
			err = fmt.Errorf("found no controllers for pod %q", pod.Name)
			return
		}
	}
	for _, n := range controllerScale {
		expectedCount += n
	}
	return
}

// controllerAndScale is a controller found for a pod, and its scale.
type controllerAndScale struct {
	uid   types.UID
	scale int32
}

// podControllerFinder finds the controller a controller reference names;
// nil (and no error) when the reference is not of its kind or names no
// live object.
type podControllerFinder func(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error)

// finders are tried in upstream's order (without ReplicationControllers,
// which kubetab does not serve): the informers first, the scale
// subresource last.
func (dc *Controller) finders() []podControllerFinder {
	return []podControllerFinder{dc.getPodDeployment, dc.getPodReplicaSet, dc.getPodStatefulSet, dc.getScaleController}
}

// getPodReplicaSet finds a ReplicaSet that no Deployment controls.
func (dc *Controller) getPodReplicaSet(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	if ok, err := verifyGroupKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, ok := dc.rsInformer.Get(namespace, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil, nil
	}
	if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
		return nil, nil // counted through its Deployment
	}
	return &controllerAndScale{rs.UID, replicas(rs.Spec.Replicas)}, nil
}

// getPodDeployment finds the Deployment behind a pod's ReplicaSet: during a
// rollout the pods of both ReplicaSets count toward the Deployment's scale
// once.
func (dc *Controller) getPodDeployment(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	if ok, err := verifyGroupKind(ref, "ReplicaSet", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	rs, ok := dc.rsInformer.Get(namespace, ref.Name)
	if !ok || rs.UID != ref.UID {
		return nil, nil
	}
	owner := metav1.GetControllerOf(rs)
	if owner == nil {
		return nil, nil
	}
	if ok, err := verifyGroupKind(owner, "Deployment", "apps", "extensions"); !ok || err != nil {
		return nil, err
	}
	d, ok := dc.dInformer.Get(rs.Namespace, owner.Name)
	if !ok || d.UID != owner.UID {
		return nil, nil
	}
	return &controllerAndScale{d.UID, replicas(d.Spec.Replicas)}, nil
}

func (dc *Controller) getPodStatefulSet(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	if ok, err := verifyGroupKind(ref, "StatefulSet", "apps"); !ok || err != nil {
		return nil, err
	}
	ss, ok := dc.ssInformer.Get(namespace, ref.Name)
	if !ok || ss.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{ss.UID, replicas(ss.Spec.Replicas)}, nil
}

// getScaleController reads the scale subresource of any other kind the API
// server serves (upstream goes through the REST mapper and the scale
// client; here the registry is both).
func (dc *Controller) getScaleController(ctx context.Context, ref *metav1.OwnerReference, namespace string) (*controllerAndScale, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	st, ok := dc.client.Registry().ForKind(gv.WithKind(ref.Kind))
	if !ok {
		return nil, &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, SearchedVersions: []string{gv.Version}}
	}
	res := st.Resource
	if !res.HasSubresource("scale") {
		return nil, fmt.Errorf("%s does not implement the scale subresource", res.GroupResource().String())
	}
	scale, err := dc.client.GetScale(ctx, res.Group, res.Resource, namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if scale.UID != ref.UID {
		return nil, nil
	}
	return &controllerAndScale{scale.UID, scale.Spec.Replicas}, nil
}

// verifyGroupKind reports whether ref names kind in one of groups.
func verifyGroupKind(ref *metav1.OwnerReference, kind string, groups ...string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	if ref.Kind != kind {
		return false, nil
	}
	for _, g := range groups {
		if g == gv.Group {
			return true, nil
		}
	}
	return false, nil
}

func replicas(n *int32) int32 {
	if n == nil {
		return 1 // the API server defaults it; a cache object always has it
	}
	return *n
}
