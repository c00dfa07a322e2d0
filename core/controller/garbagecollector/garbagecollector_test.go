package garbagecollector_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/deployment"
	"github.com/kubetab/kubetab/core/controller/garbagecollector"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/replicaset"
)

func startGC(t *testing.T, e *controllertest.Env) {
	t.Helper()
	gc, err := garbagecollector.New(garbagecollector.Config{Client: e.ClientFor(garbagecollector.Component), Clock: e.Clock, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("garbagecollector", gc.Run)
}

// startAll runs the Deployment and ReplicaSet controllers and the collector,
// and creates Deployment web with 3 pods.
func startAll(t *testing.T, e *controllertest.Env) {
	t.Helper()
	dc, err := deployment.New(deployment.Config{Client: e.ClientFor(deployment.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	rsc, err := replicaset.New(replicaset.Config{Client: e.ClientFor(replicaset.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("deployment", dc.Run)
	e.Start("replicaset", rsc.Run)
	startGC(t, e)
	if _, err := e.Client.Deployments().Create(e.Ctx, controllertest.MakeDeployment("web").Replicas(3).Obj()); err != nil {
		t.Fatal(err)
	}
	e.Eventually("3 pods", func() (bool, string) { n := len(e.Pods("default")); return n == 3, fmt.Sprint(n) })
}

func deleteDeployment(t *testing.T, e *controllertest.Env, policy *metav1.DeletionPropagation) {
	t.Helper()
	var opts *metav1.DeleteOptions
	if policy != nil {
		opts = &metav1.DeleteOptions{PropagationPolicy: policy}
	}
	if err := e.Client.Deployments().Delete(e.Ctx, "default", "web", opts); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, e *controllertest.Env) {
	t.Helper()
	e.Eventually("deployment, replica set and pods gone", func() (bool, string) {
		_, err := e.Client.Deployments().Get(e.Ctx, "default", "web")
		rss, pods := len(e.ReplicaSets("default")), len(e.Pods("default"))
		return apierrors.IsNotFound(err) && rss == 0 && pods == 0, fmt.Sprintf("deployment: %v, %d replica sets, %d pods", err, rss, pods)
	})
}

func TestBackgroundDeletion(t *testing.T) {
	e := controllertest.NewEnv(t)
	startAll(t, e)
	deleteDeployment(t, e, nil) // kubectl's default: background
	waitGone(t, e)
}

func TestOrphanDeletion(t *testing.T) {
	e := controllertest.NewEnv(t)
	startAll(t, e)
	rsName := e.ReplicaSets("default")[0].Name
	orphan := metav1.DeletePropagationOrphan
	deleteDeployment(t, e, &orphan)
	e.Eventually("deployment gone, replica set orphaned", func() (bool, string) {
		_, err := e.Client.Deployments().Get(e.Ctx, "default", "web")
		rs, rsErr := e.Client.ReplicaSets().Get(e.Ctx, "default", rsName)
		if rsErr != nil {
			return false, rsErr.Error()
		}
		return apierrors.IsNotFound(err) && len(rs.OwnerReferences) == 0,
			fmt.Sprintf("deployment: %v, replica set owners %+v", err, rs.OwnerReferences)
	})
	// The pods stay with their ReplicaSet, which keeps running them.
	if n := len(e.ActivePods("default")); n != 3 {
		t.Errorf("%d pods after orphaning, want 3", n)
	}
	for _, p := range e.Pods("default") {
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Name != rsName {
			t.Errorf("pod %s: controller %+v, want %s", p.Name, ref, rsName)
		}
	}
}

// deletions records the resourceVersions at which objects were created
// and deleted.
type deletions struct {
	mu      sync.Mutex
	rv      map[string]int64 // deleted
	created map[string]int64
}

func (d *deletions) watch(t *testing.T, e *controllertest.Env, kind string, w watch.Interface) {
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			acc, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			n, _ := strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
			d.mu.Lock()
			switch ev.Type {
			case watch.Deleted:
				d.rv[kind+"/"+acc.GetName()] = n
			case watch.Added:
				d.created[kind+"/"+acc.GetName()] = n
			}
			d.mu.Unlock()
		}
	}()
}

func TestForegroundDeletion(t *testing.T) {
	e := controllertest.NewEnv(t)
	startAll(t, e)
	d := &deletions{rv: map[string]int64{}, created: map[string]int64{}}
	for kind, w := range map[string]func() (watch.Interface, error){
		"deployment": func() (watch.Interface, error) {
			return e.Client.Deployments().Watch(e.Ctx, "default", client.ListOptions{ResourceVersion: "1"})
		},
		"replicaset": func() (watch.Interface, error) {
			return e.Client.ReplicaSets().Watch(e.Ctx, "default", client.ListOptions{ResourceVersion: "1"})
		},
		"pod": func() (watch.Interface, error) {
			return e.Client.Pods().Watch(e.Ctx, "default", client.ListOptions{ResourceVersion: "1"})
		},
	} {
		wi, err := w()
		if err != nil {
			t.Fatal(err)
		}
		d.watch(t, e, kind, wi)
	}
	rsBefore := e.ReplicaSets("default")[0].Name
	foreground := metav1.DeletePropagationForeground
	deleteDeployment(t, e, &foreground)
	waitGone(t, e)
	// A last pod, deleted after everything: once the watch shows its
	// deletion, it has shown every earlier pod deletion.
	if _, err := e.Client.Pods().Create(e.Ctx, controllertest.MakePod("sentinel").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Pods().Delete(e.Ctx, "default", "sentinel", nil); err != nil {
		t.Fatal(err)
	}
	rsName := "replicaset/" + rsBefore
	e.Eventually("the deletions seen", func() (bool, string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.rv["deployment/web"] > 0 && d.rv[rsName] > 0 && d.rv["pod/sentinel"] > 0, fmt.Sprint(d.rv)
	})
	delete(d.rv, "pod/sentinel")
	// Owners go after their dependents: no pod existed when the ReplicaSet
	// went, and the ReplicaSet went before the Deployment. (The ReplicaSet
	// controller may create a replacement pod before it sees its
	// ReplicaSet being deleted, even after the ReplicaSet is gone: such a
	// pod is collected as garbage, as upstream.)
	d.mu.Lock()
	defer d.mu.Unlock()
	rs, dep := d.rv[rsName], d.rv["deployment/web"]
	if rs > dep {
		t.Errorf("the replica set went at %d, after the deployment at %d", rs, dep)
	}
	pods := 0
	for name, deleted := range d.rv {
		if !strings.HasPrefix(name, "pod/") {
			continue
		}
		pods++
		if created := d.created[name]; created < rs && rs < deleted {
			t.Errorf("%s existed (%d..%d) when its replica set went at %d", name, created, deleted, rs)
		}
	}
	if pods < 3 {
		t.Errorf("%d pod deletions seen, want at least 3", pods)
	}
}

func TestOwnerReferences(t *testing.T) {
	e := controllertest.NewEnv(t)
	startGC(t, e)
	node, err := e.Client.Nodes().Create(e.Ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	if err != nil {
		t.Fatal(err)
	}
	live, err := e.Client.ReplicaSets().Create(e.Ctx, controllertest.MakeReplicaSet("live").Obj())
	if err != nil {
		t.Fatal(err)
	}
	ref := func(kind, apiVersion, name string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
	}
	liveRef := ref("ReplicaSet", "apps/v1", "live", live.UID)
	for _, tc := range []struct {
		name       string
		owners     []metav1.OwnerReference
		wantGone   bool
		wantOwners []types.UID
	}{
		{"owner exists", []metav1.OwnerReference{liveRef}, false, []types.UID{live.UID}},
		{"owner never existed", []metav1.OwnerReference{ref("ReplicaSet", "apps/v1", "ghost", "ghost-uid")}, true, nil},
		{"owner re-created (other uid)", []metav1.OwnerReference{ref("ReplicaSet", "apps/v1", "live", "old-uid")}, true, nil},
		{"one of two owners gone", []metav1.OwnerReference{liveRef, ref("ReplicaSet", "apps/v1", "ghost", "ghost-uid")}, false, []types.UID{live.UID}},
		{"cluster-scoped owner exists", []metav1.OwnerReference{ref("Node", "v1", "node-1", node.UID)}, false, []types.UID{node.UID}},
		{"owner of a kind not served", []metav1.OwnerReference{ref("Widget", "example.com/v1", "w", "w-uid")}, false, []types.UID{"w-uid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := controllertest.MakePod("p")
			w.Name = fmt.Sprintf("p-%d", len(tc.name))
			for _, o := range tc.owners {
				w.Owner(o)
			}
			pod, err := e.Client.Pods().Create(e.Ctx, w.Obj())
			if err != nil {
				t.Fatal(err)
			}
			// A marker created after the pod: once the collector has seen the
			// marker, it has seen the pod and had the chance to act on it.
			marker, err := e.Client.Pods().Create(e.Ctx, controllertest.MakePod(pod.Name+"-marker").
				Owner(ref("Pod", "v1", pod.Name+"-nothing", "nothing-uid")).Obj())
			if err != nil {
				t.Fatal(err)
			}
			e.Eventually("the marker collected", func() (bool, string) {
				_, err := e.Client.Pods().Get(e.Ctx, "default", marker.Name)
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
			e.Eventually("the pod handled", func() (bool, string) {
				got, err := e.Client.Pods().Get(e.Ctx, "default", pod.Name)
				if tc.wantGone {
					return apierrors.IsNotFound(err), fmt.Sprint(err)
				}
				if err != nil {
					return false, err.Error()
				}
				var uids []types.UID
				for _, r := range got.OwnerReferences {
					uids = append(uids, r.UID)
				}
				return fmt.Sprint(uids) == fmt.Sprint(tc.wantOwners), fmt.Sprintf("owners %v, want %v", uids, tc.wantOwners)
			})
		})
	}
}

func TestNewValidates(t *testing.T) {
	e := controllertest.NewEnv(t)
	for _, tc := range []struct {
		name string
		cfg  garbagecollector.Config
	}{
		{"no client", garbagecollector.Config{}},
		{"negative workers", garbagecollector.Config{Client: e.Client, Workers: -1}},
		{"resource not served", garbagecollector.Config{Client: e.Client, Resources: []schema.GroupResource{{Group: "example.com", Resource: "widgets"}}}},
	} {
		if _, err := garbagecollector.New(tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
