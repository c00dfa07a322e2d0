package deployment_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/deployment"
	"github.com/kubetab/kubetab/core/controller/internal/controller"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/replicaset"
)

// start runs the Deployment and ReplicaSet controllers.
func start(t *testing.T, e *controllertest.Env) {
	t.Helper()
	dc, err := deployment.New(deployment.Config{Client: e.ClientFor(deployment.Component), Clock: e.Clock, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rsc, err := replicaset.New(replicaset.Config{Client: e.ClientFor(replicaset.Component), Clock: e.Clock, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("deployment", dc.Run)
	e.Start("replicaset", rsc.Run)
}

func create(t *testing.T, e *controllertest.Env, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	out, err := e.Client.Deployments().Create(e.Ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func get(t *testing.T, e *controllertest.Env, name string) *appsv1.Deployment {
	t.Helper()
	d, err := e.Client.Deployments().Get(e.Ctx, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func update(t *testing.T, e *controllertest.Env, name string, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
	t.Helper()
	return controllertest.Update(e,
		func() (*appsv1.Deployment, error) { return e.Client.Deployments().Get(e.Ctx, "default", name) },
		func(d *appsv1.Deployment) (*appsv1.Deployment, error) { return e.Client.Deployments().Update(e.Ctx, d) },
		mutate)
}

// expectedRSName is <deployment>-<pod-template-hash of its stored template>.
func expectedRSName(t *testing.T, e *controllertest.Env, name string) string {
	d := get(t, e, name)
	return name + "-" + controller.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
}

func rsByName(e *controllertest.Env, name string) *appsv1.ReplicaSet {
	for _, rs := range e.ReplicaSets("default") {
		if rs.Name == name {
			return rs
		}
	}
	return nil
}

// waitStatus waits until the Deployment's status, for its current
// generation, has the wanted counts.
func waitStatus(t *testing.T, e *controllertest.Env, name string, want appsv1.DeploymentStatus) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	e.Eventually("status of "+name, func() (bool, string) {
		d = get(t, e, name)
		s := d.Status
		got := fmt.Sprintf("replicas=%d updated=%d ready=%d available=%d unavailable=%d observedGeneration=%d/%d",
			s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, s.UnavailableReplicas, s.ObservedGeneration, d.Generation)
		return s.Replicas == want.Replicas && s.UpdatedReplicas == want.UpdatedReplicas && s.ReadyReplicas == want.ReadyReplicas &&
			s.AvailableReplicas == want.AvailableReplicas && s.UnavailableReplicas == want.UnavailableReplicas &&
			s.ObservedGeneration == d.Generation, got
	})
	return d
}

func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// waitCondition waits for a condition with status, reason and message.
func waitCondition(t *testing.T, e *controllertest.Env, name string, ct appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string) {
	t.Helper()
	e.Eventually(fmt.Sprintf("%s=%s (%s)", ct, status, reason), func() (bool, string) {
		c := condition(get(t, e, name), ct)
		if c == nil {
			return false, "no condition"
		}
		return c.Status == status && c.Reason == reason && c.Message == message,
			fmt.Sprintf("%s %s %q", c.Status, c.Reason, c.Message)
	})
}

// waitConditionOneOf is waitCondition with any of messages.
func waitConditionOneOf(t *testing.T, e *controllertest.Env, name string, ct appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string, messages ...string) {
	t.Helper()
	e.Eventually(fmt.Sprintf("%s=%s (%s)", ct, status, reason), func() (bool, string) {
		c := condition(get(t, e, name), ct)
		if c == nil {
			return false, "no condition"
		}
		return c.Status == status && c.Reason == reason && slices.Contains(messages, c.Message),
			fmt.Sprintf("%s %s %q", c.Status, c.Reason, c.Message)
	})
}

func TestDeploymentCreatesReplicaSetAndPods(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	d := create(t, e, controllertest.MakeDeployment("web").Replicas(3).Obj())
	rsName := expectedRSName(t, e, "web")
	hash := strings.TrimPrefix(rsName, "web-")

	e.Eventually("3 pods", func() (bool, string) { n := len(e.Pods("default")); return n == 3, fmt.Sprint(n) })
	rss := e.ReplicaSets("default")
	if len(rss) != 1 || rss[0].Name != rsName {
		t.Fatalf("replica sets %v, want exactly %s", names(rss), rsName)
	}
	rs := rss[0]
	for what, v := range map[string]string{
		"labels":           rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
		"selector":         rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey],
		"template labels":  rs.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
		"revision":         rs.Annotations[deployment.RevisionAnnotation] + ":1",
		"desired-replicas": rs.Annotations[deployment.DesiredReplicasAnnotation] + ":3",
		"max-replicas":     rs.Annotations[deployment.MaxReplicasAnnotation] + ":4", // 3 + 25% surge, rounded up
		"selector app":     rs.Spec.Selector.MatchLabels["app"] + ":web",
		"template app":     rs.Spec.Template.Labels["app"] + ":web",
		"replicas":         fmt.Sprint(*rs.Spec.Replicas) + ":3",
	} {
		want := hash
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			v, want = v[:i], v[i+1:]
		}
		if v != want {
			t.Errorf("replica set %s: %s = %q, want %q", rs.Name, what, v, want)
		}
	}
	if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("replica set controller ref %+v, want Deployment web blocking owner deletion", ref)
	}
	for _, p := range e.Pods("default") {
		ref := metav1.GetControllerOf(p)
		if p.GenerateName != rsName+"-" || p.Spec.NodeName != "" || ref == nil || ref.UID != rs.UID ||
			p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
			t.Errorf("pod %s: generateName %q, nodeName %q, controller %+v, labels %v", p.Name, p.GenerateName, p.Spec.NodeName, ref, p.Labels)
		}
	}
	if ok, msg := e.HasEvent("default", "ScalingReplicaSet", "Scaled up replica set "+rsName+" from 0 to 3"); !ok {
		t.Error(msg)
	}

	// No kubelet yet: nothing is available.
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, UnavailableReplicas: 3})
	waitCondition(t, e, "web", appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
	waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", rsName))

	e.RunReadyKubelet()
	d = waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
	waitCondition(t, e, "web", appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.")
	waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", rsName))
	if rev := d.Annotations[deployment.RevisionAnnotation]; rev != "1" {
		t.Errorf("deployment revision %q, want 1", rev)
	}
	if d.Generation != 1 {
		t.Errorf("generation %d: the controller's writes must not change the spec", d.Generation)
	}
}

func names(rss []*appsv1.ReplicaSet) []string {
	var out []string
	for _, rs := range rss {
		out = append(out, fmt.Sprintf("%s(%d)", rs.Name, *rs.Spec.Replicas))
	}
	sort.Strings(out)
	return out
}

func TestScaleUpAndDownWithRanking(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	create(t, e, controllertest.MakeDeployment("web").Replicas(3).Obj())
	rsName := expectedRSName(t, e, "web")
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, UnavailableReplicas: 3})

	update(t, e, "web", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr[int32](5) })
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 5, UpdatedReplicas: 5, UnavailableReplicas: 5})
	e.Eventually("scale-up event", func() (bool, string) {
		return e.HasEvent("default", "ScalingReplicaSet", "Scaled up replica set "+rsName+" from 3 to 5")
	})
	if rs := rsByName(e, rsName); rs.Annotations[deployment.DesiredReplicasAnnotation] != "5" || rs.Annotations[deployment.MaxReplicasAnnotation] != "7" {
		t.Errorf("annotations after scaling to 5: %v, want desired 5, max 7", rs.Annotations)
	}

	// Give the pods different worth: only the first is scheduled, running
	// and ready, the second is scheduled and running; the rest wait for a node.
	pods := e.Pods("default")
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for i, p := range pods[:2] {
		if err := e.Client.Bind(e.Ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: "default"},
			Target: corev1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("node-%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.SetPodStatus(pods[0], corev1.PodRunning, true)
	e.SetPodStatus(pods[1], corev1.PodRunning, false)
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 5, UpdatedReplicas: 5, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 4})

	update(t, e, "web", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr[int32](1) })
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1})
	active := e.ActivePods("default")
	if len(active) != 1 || active[0].Name != pods[0].Name {
		var got []string
		for _, p := range active {
			got = append(got, p.Name)
		}
		t.Errorf("pods left %v, want the running, ready one: %s", got, pods[0].Name)
	}
	e.Eventually("scale-down event", func() (bool, string) {
		return e.HasEvent("default", "ScalingReplicaSet", "Scaled down replica set "+rsName+" from 5 to 1")
	})
}

// rsHistory records every state of the ReplicaSets of the namespace, in
// order, from a watch: enough to check what held at every instant.
type rsHistory struct {
	mu     sync.Mutex
	states []map[string]*appsv1.ReplicaSet
}

// States returns the states seen so far.
func (h *rsHistory) States() []map[string]*appsv1.ReplicaSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]*appsv1.ReplicaSet(nil), h.states...)
}

func watchReplicaSets(t *testing.T, e *controllertest.Env) *rsHistory {
	w, err := e.Client.ReplicaSets().Watch(e.Ctx, "default", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &rsHistory{}
	cur := map[string]*appsv1.ReplicaSet{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			rs, ok := ev.Object.(*appsv1.ReplicaSet)
			if !ok {
				continue
			}
			next := map[string]*appsv1.ReplicaSet{}
			for k, v := range cur {
				next[k] = v
			}
			if ev.Type == watch.Deleted {
				delete(next, rs.Name)
			} else {
				next[rs.Name] = rs
			}
			cur = next
			h.mu.Lock()
			h.states = append(h.states, next)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return h
}

func TestRollout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        *appsv1.Deployment
		maxTotal int32 // spec.replicas summed over ReplicaSets, at most
		recreate bool
		firstEv  string // the first event of the rollout, %s: new, %o: old
	}{{
		name:     "rolling 25%/25%",
		d:        controllertest.MakeDeployment("web").Replicas(4).Obj(),
		maxTotal: 5, // surge 25% of 4 = 1
		firstEv:  "Scaled up replica set %s from 0 to 1",
	}, {
		name:     "rolling surge 0, unavailable 1",
		d:        controllertest.MakeDeployment("web").Replicas(4).Rolling(intstr.FromInt32(0), intstr.FromInt32(1)).Obj(),
		maxTotal: 4,
		firstEv:  "Scaled down replica set %o from 4 to 3",
	}, {
		name:     "rolling surge 50%, unavailable 0",
		d:        controllertest.MakeDeployment("web").Replicas(4).Rolling(intstr.FromString("50%"), intstr.FromInt32(0)).Obj(),
		maxTotal: 6,
		firstEv:  "Scaled up replica set %s from 0 to 2",
	}, {
		name:     "recreate",
		d:        controllertest.MakeDeployment("web").Replicas(4).Recreate().Obj(),
		maxTotal: 4,
		recreate: true,
		firstEv:  "Scaled down replica set %o from 4 to 0",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := controllertest.NewEnv(t)
			start(t, e)
			e.RunReadyKubelet()
			create(t, e, tc.d)
			oldName := expectedRSName(t, e, "web")
			waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 4, UpdatedReplicas: 4, ReadyReplicas: 4, AvailableReplicas: 4})
			history := watchReplicaSets(t, e)

			update(t, e, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "hello:v2" })
			newName := expectedRSName(t, e, "web")
			if newName == oldName {
				t.Fatalf("the new template hashes like the old one: %s", newName)
			}
			d := waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 4, UpdatedReplicas: 4, ReadyReplicas: 4, AvailableReplicas: 4})
			if tc.recreate {
				// Upstream's syncRolloutStatus estimates progress only while
				// Replicas != UpdatedReplicas. When the old ReplicaSet's status
				// drops from 4 to 0 in one update (its pods all deleted at
				// once), a Recreate rollout never shows that: the condition
				// keeps NewReplicaSetAvailable and its message, which may still
				// name the old ReplicaSet. kubetab does the same.
				waitConditionOneOf(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable",
					fmt.Sprintf("ReplicaSet %q has successfully progressed.", newName), fmt.Sprintf("ReplicaSet %q has successfully progressed.", oldName))
			} else {
				waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", newName))
			}
			e.Eventually("old replica set at 0", func() (bool, string) {
				old, cur := rsByName(e, oldName), rsByName(e, newName)
				return old != nil && cur != nil && *old.Spec.Replicas == 0 && old.Status.Replicas == 0 && *cur.Spec.Replicas == 4,
					fmt.Sprint(names(e.ReplicaSets("default")))
			})
			if rev := d.Annotations[deployment.RevisionAnnotation]; rev != "2" {
				t.Errorf("deployment revision %q, want 2", rev)
			}
			if rev := rsByName(e, newName).Annotations[deployment.RevisionAnnotation]; rev != "2" {
				t.Errorf("new replica set revision %q, want 2", rev)
			}
			if rev := rsByName(e, oldName).Annotations[deployment.RevisionAnnotation]; rev != "1" {
				t.Errorf("old replica set revision %q, want 1", rev)
			}
			for _, p := range e.ActivePods("default") {
				if p.Spec.Containers[0].Image != "hello:v2" {
					t.Errorf("pod %s still runs %s", p.Name, p.Spec.Containers[0].Image)
				}
			}
			// What held at every instant of the rollout.
			for i, s := range history.States() {
				var total int32
				for _, rs := range s {
					total += *rs.Spec.Replicas
				}
				if total > tc.maxTotal {
					t.Errorf("state %d: %d replicas in all (%v), more than %d", i, total, describe(s), tc.maxTotal)
				}
				if tc.recreate && s[oldName] != nil && s[newName] != nil && s[oldName].Status.Replicas > 0 && *s[newName].Spec.Replicas > 0 {
					t.Errorf("state %d: Recreate runs old and new together: %v", i, describe(s))
				}
			}
			ev := strings.NewReplacer("%s", newName, "%o", oldName).Replace(tc.firstEv)
			if ok, msg := e.HasEvent("default", "ScalingReplicaSet", ev); !ok {
				t.Error(msg)
			}
		})
	}
}

func describe(s map[string]*appsv1.ReplicaSet) string {
	var out []string
	for name, rs := range s {
		out = append(out, fmt.Sprintf("%s spec=%d status=%d available=%d", name, *rs.Spec.Replicas, rs.Status.Replicas, rs.Status.AvailableReplicas))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func TestPausedDeploymentDoesNotRollOut(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	e.RunReadyKubelet()
	create(t, e, controllertest.MakeDeployment("web").Replicas(2).Obj())
	oldName := expectedRSName(t, e, "web")
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})

	update(t, e, "web", func(d *appsv1.Deployment) {
		d.Spec.Paused = true
		d.Spec.Template.Spec.Containers[0].Image = "hello:v2"
		d.Spec.Replicas = ptr[int32](3) // scaling still works while paused
	})
	waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionUnknown, "DeploymentPaused", "Deployment is paused")
	// The template changed, so no pod is "updated" while paused.
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
	if rss := e.ReplicaSets("default"); len(rss) != 1 || rss[0].Name != oldName {
		t.Fatalf("replica sets while paused: %v, want only %s", names(rss), oldName)
	}

	update(t, e, "web", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	newName := expectedRSName(t, e, "web")
	waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", newName))
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
}

func TestProgressDeadlineExceeded(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	d := controllertest.MakeDeployment("web").Replicas(2).Obj()
	d.Spec.ProgressDeadlineSeconds = ptr[int32](30)
	create(t, e, d)
	rsName := expectedRSName(t, e, "web")
	// No kubelet: the pods never become ready, so the rollout stalls.
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, UnavailableReplicas: 2})
	e.Step = 0
	e.Clock.Step(31 * time.Second) // the controller asked to look again at the deadline
	e.Step = 10 * time.Millisecond
	waitCondition(t, e, "web", appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded", fmt.Sprintf("ReplicaSet %q has timed out progressing.", rsName))
}

func TestAdoptsOrphanReplicaSet(t *testing.T) {
	e := controllertest.NewEnv(t)
	// A ReplicaSet with the Deployment's template and no owner, as
	// `kubectl delete deployment web --cascade=orphan` leaves behind. It
	// exists before the controllers start, so their caches hold it.
	orphan := controllertest.MakeReplicaSet("web-orphan").Replicas(2).Obj()
	orphan.Spec.Selector.MatchLabels = map[string]string{"app": "web"}
	orphan.Spec.Template = controllertest.MakeDeployment("web").Obj().Spec.Template
	orphan.Labels = map[string]string{"app": "web"}
	if _, err := e.Client.ReplicaSets().Create(e.Ctx, orphan); err != nil {
		t.Fatal(err)
	}
	start(t, e)
	d := create(t, e, controllertest.MakeDeployment("web").Replicas(3).Obj())
	e.Eventually("adoption", func() (bool, string) {
		ref := metav1.GetControllerOf(rsByName(e, "web-orphan"))
		return ref != nil && ref.UID == d.UID, fmt.Sprintf("controller %+v", ref)
	})
	// Its template is the Deployment's, so it is the new ReplicaSet: it is
	// scaled to 3 and gets revision 1; no other ReplicaSet is created.
	waitStatus(t, e, "web", appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, UnavailableReplicas: 3})
	if rss := e.ReplicaSets("default"); len(rss) != 1 || rss[0].Annotations[deployment.RevisionAnnotation] != "1" {
		t.Errorf("replica sets %v, want the adopted one only, with revision 1", names(rss))
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := deployment.New(deployment.Config{}); err == nil {
		t.Error("New without a client: no error")
	}
	e := controllertest.NewEnv(t)
	if _, err := deployment.New(deployment.Config{Client: e.Client, Workers: -2}); err == nil {
		t.Error("New with -2 workers: no error")
	}
	dc, err := deployment.New(deployment.Config{Client: e.Client})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	cancel()
	if err := dc.Run(ctx); err != nil {
		t.Errorf("Run with a done context: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
