package deployment_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/deployment"
	"github.com/kubetab/kubetab/core/controller/garbagecollector"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/trace"
)

// TestRecreateAfterOrphanDeleteAdoptsOldReplicaSet: scale a Deployment
// 3 -> 5 -> 2, delete it with --cascade=orphan (wait until it is gone, as
// kubectl does), and create the same Deployment again at once. The new
// Deployment must adopt the orphaned ReplicaSet as its new ReplicaSet (same
// template, same name) and create no other: no hash collision, no second
// ReplicaSet scaled to 0. The race depends on the order in which the
// controller's caches see the events, so the test runs the scenario many
// times; a writer saw the bug once in five runs by hand.
func TestRecreateAfterOrphanDeleteAdoptsOldReplicaSet(t *testing.T) {
	const runs = 15
	for i := range runs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			e := controllertest.NewEnv(t)
			start(t, e)
			gc, err := garbagecollector.New(garbagecollector.Config{Client: e.ClientFor(garbagecollector.Component), Clock: e.Clock, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			e.Start("garbagecollector", gc.Run)
			e.RunReadyKubelet()

			create(t, e, controllertest.MakeDeployment("web").Replicas(3).Obj())
			rsName := expectedRSName(t, e, "web")
			waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
			for _, n := range []int32{5, 2} {
				update(t, e, "web", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(n) })
				waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n})
			}
			orphan := metav1.DeletePropagationOrphan
			if err := e.Client.Deployments().Delete(e.Ctx, "default", "web", &metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
				t.Fatal(err)
			}
			e.Eventually("web deleted", func() (bool, string) {
				_, err := e.Client.Deployments().Get(e.Ctx, "default", "web")
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			d := create(t, e, controllertest.MakeDeployment("web").Replicas(2).Obj())
			waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
			e.Eventually("one adopted replica set", func() (bool, string) {
				rss := e.ReplicaSets("default")
				if len(rss) != 1 || rss[0].Name != rsName {
					return false, fmt.Sprintf("replica sets %v, want only %s", describeAll(rss), rsName)
				}
				ref := metav1.GetControllerOf(rss[0])
				return ref != nil && ref.UID == d.UID, fmt.Sprintf("controller of %s: %+v", rsName, ref)
			})
			if got := get(t, e, "web"); got.Status.CollisionCount != nil {
				t.Errorf("collisionCount = %d, want none", *got.Status.CollisionCount)
			}
		})
	}
}

func describeAll(rss []*appsv1.ReplicaSet) []string {
	var out []string
	for _, rs := range rss {
		out = append(out, fmt.Sprintf("%s(replicas %d)", rs.Name, *rs.Spec.Replicas))
	}
	return out
}

// TestStaleOwnerOfSameTemplateIsNoHashCollision is the race above made
// deterministic: the Deployment's ReplicaSet web-<hash> still names the
// previous Deployment web as its controller when the new one is synced (the
// collector has not orphaned it yet, or the controller's cache has not seen
// that). Creating web-<hash> fails with AlreadyExists; that is no hash
// collision (the template is the same, so a new hash would only make a
// second ReplicaSet of one template): the controller must retry until the
// ReplicaSet is an orphan, then adopt it. Bumping collisionCount (the bug)
// left two ReplicaSets, the new one scaled to 0.
func TestStaleOwnerOfSameTemplateIsNoHashCollision(t *testing.T) {
	e := controllertest.NewTracedEnv(t)
	// The Deployment is created before the controllers start, so its stored
	// (defaulted) template gives the hash.
	d := create(t, e, controllertest.MakeDeployment("web").Replicas(2).Obj())
	tmpl := d
	hash := controller.ComputeHash(&d.Spec.Template, nil)
	old := controllertest.MakeReplicaSet("web-" + hash).Replicas(2).Obj()
	old.Labels = map[string]string{"app": "web", appsv1.DefaultDeploymentUniqueLabelKey: hash}
	old.Spec.Selector.MatchLabels = old.Labels
	old.Spec.Template = *tmpl.Spec.Template.DeepCopy()
	old.Spec.Template.Labels = old.Labels
	old.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-of-the-deleted-web", Controller: ptr(true)}}
	if _, err := e.Client.ReplicaSets().Create(e.Ctx, old); err != nil {
		t.Fatal(err)
	}
	start(t, e)
	// Wait until the controller has tried to create web-<hash> and got 409.
	e.Eventually("the controller's create of web-"+hash+" answered 409", func() (bool, string) {
		hops, _, _ := e.Trace.Since(0)
		for _, h := range hops {
			if h.Kind == trace.Response && h.To == deployment.Component && h.Resource == "replicasets.apps" && h.Name == "web-"+hash && h.Code == 409 {
				return true, ""
			}
		}
		return false, "no such response yet"
	})
	// Now the collector orphans it, as it does for --cascade=orphan.
	rs := rsByName(e, "web-"+hash)
	rs.OwnerReferences = nil
	if _, err := e.Client.ReplicaSets().Update(e.Ctx, rs); err != nil {
		t.Fatal(err)
	}
	e.Eventually("adoption of web-"+hash+" as the only replica set", func() (bool, string) {
		rss := e.ReplicaSets("default")
		if len(rss) != 1 {
			return false, fmt.Sprint(describeAll(rss))
		}
		ref := metav1.GetControllerOf(rss[0])
		return ref != nil && ref.UID == d.UID, fmt.Sprintf("controller %+v", ref)
	})
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, UnavailableReplicas: 2})
	got := get(t, e, "web")
	if got.Status.CollisionCount != nil {
		t.Errorf("collisionCount = %d, want none (no hash collision happened)", *got.Status.CollisionCount)
	}
	if rss := e.ReplicaSets("default"); len(rss) != 1 {
		t.Errorf("replica sets %v, want only web-%s", describeAll(rss), hash)
	}
}
