package daemon_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/daemon"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func start(t *testing.T, e *controllertest.Env) {
	t.Helper()
	dsc, err := daemon.New(daemon.Config{Client: e.ClientFor(daemon.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("daemon", dsc.Run)
}

func addNode(t *testing.T, e *controllertest.Env, name string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	if _, err := e.Client.Nodes().Create(e.Ctx, n); err != nil {
		t.Fatal(err)
	}
}

func makeDS(name string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: controllertest.PodTemplate(map[string]string{"app": name}, "hello"),
		},
	}
}

// podsByNode maps node name (from the pod's node affinity) to its live
// daemon pods' images.
func podsByNode(e *controllertest.Env) map[string][]string {
	out := map[string][]string{}
	for _, p := range e.ActivePods("default") {
		out[daemon.TargetNodeName(p)] = append(out[daemon.TargetNodeName(p)], p.Spec.Containers[0].Image)
	}
	return out
}

func revisions(e *controllertest.Env) []*appsv1.ControllerRevision {
	list, _, err := client.For[*appsv1.ControllerRevision](e.Client, "apps", "controllerrevisions").List(e.Ctx, "default", client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Revision < list[j].Revision })
	return list
}

func TestOnePodPerEligibleNode(t *testing.T) {
	e := controllertest.NewEnv(t)
	addNode(t, e, "node-1", map[string]string{"disk": "ssd"})
	addNode(t, e, "node-2", map[string]string{"disk": "hdd"})
	addNode(t, e, "node-3", map[string]string{"disk": "ssd"}, corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule})
	addNode(t, e, "node-4", map[string]string{"disk": "ssd"}, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	start(t, e)
	ds := makeDS("agent")
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	if _, err := daemon.DaemonSets(e.Client).Create(e.Ctx, ds); err != nil {
		t.Fatal(err)
	}
	// node-2 does not match the nodeSelector; node-3's taint is not
	// tolerated; node-4 is cordoned, which daemon pods tolerate.
	e.Eventually("pods on node-1 and node-4", func() (bool, string) {
		got := fmt.Sprint(podsByNode(e))
		return got == "map[node-1:[hello] node-4:[hello]]", got
	})
	for _, p := range e.ActivePods("default") {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s: nodeName %q, want the scheduler to bind it", p.Name, p.Spec.NodeName)
		}
		var keys []string
		for _, tol := range p.Spec.Tolerations {
			keys = append(keys, tol.Key+":"+string(tol.Effect))
		}
		want := "node.kubernetes.io/not-ready:NoExecute node.kubernetes.io/unreachable:NoExecute node.kubernetes.io/disk-pressure:NoSchedule node.kubernetes.io/memory-pressure:NoSchedule node.kubernetes.io/pid-pressure:NoSchedule node.kubernetes.io/unschedulable:NoSchedule"
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("pod %s tolerations %s, want %s", p.Name, got, want)
		}
		if p.Labels[daemon.UniqueLabelKey] == "" || p.Labels[daemon.TemplateGenerationKey] != "1" {
			t.Errorf("pod %s labels %v, want controller-revision-hash and pod-template-generation 1", p.Name, p.Labels)
		}
	}
	e.Eventually("status", func() (bool, string) {
		ds, _ := daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent")
		s := ds.Status
		got := fmt.Sprintf("desired=%d current=%d misscheduled=%d updated=%d observed=%d/%d", s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberMisscheduled, s.UpdatedNumberScheduled, s.ObservedGeneration, ds.Generation)
		return got == "desired=2 current=2 misscheduled=0 updated=2 observed=1/1", got
	})
	e.Eventually("a SuccessfulCreate event", func() (bool, string) {
		for _, ev := range e.Events("default") {
			if ev.Reason == "SuccessfulCreate" && strings.HasPrefix(ev.Message, "Created pod: agent-") && ev.Source.Component == "daemonset-controller" {
				return true, ""
			}
		}
		return false, "none"
	})
	// A new matching node gets a pod.
	addNode(t, e, "node-5", map[string]string{"disk": "ssd"})
	e.Eventually("a pod on node-5", func() (bool, string) {
		got := fmt.Sprint(podsByNode(e))
		return got == "map[node-1:[hello] node-4:[hello] node-5:[hello]]", got
	})
}

func TestRollingUpdateAndHistory(t *testing.T) {
	e := controllertest.NewEnv(t)
	for i := 1; i <= 3; i++ {
		addNode(t, e, fmt.Sprintf("node-%d", i), nil)
	}
	e.RunReadyKubelet()
	start(t, e)
	if _, err := daemon.DaemonSets(e.Client).Create(e.Ctx, makeDS("agent")); err != nil {
		t.Fatal(err)
	}
	e.Eventually("3 available", func() (bool, string) {
		ds, _ := daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent")
		return ds.Status.NumberAvailable == 3 && ds.Status.NumberReady == 3, fmt.Sprintf("%+v", ds.Status)
	})
	revs := revisions(e)
	if len(revs) != 1 || revs[0].Revision != 1 || !strings.HasPrefix(revs[0].Name, "agent-") ||
		revs[0].Name != "agent-"+revs[0].Labels[daemon.UniqueLabelKey] {
		t.Fatalf("revisions after create: %v", names(revs))
	}
	if !strings.Contains(string(revs[0].Data.Raw), `"$patch":"replace"`) {
		t.Errorf("revision data %s, want a patch replacing spec.template", revs[0].Data.Raw)
	}
	first := revs[0].Name
	update := func(image string) {
		controllertest.Update(e, func() (*appsv1.DaemonSet, error) { return daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent") },
			func(ds *appsv1.DaemonSet) (*appsv1.DaemonSet, error) {
				return daemon.DaemonSets(e.Client).Update(e.Ctx, ds)
			},
			func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = image })
	}
	update("hello:2.0")
	e.Eventually("every node on hello:2.0", func() (bool, string) {
		got := fmt.Sprint(podsByNode(e))
		ds, _ := daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent")
		return got == "map[node-1:[hello:2.0] node-2:[hello:2.0] node-3:[hello:2.0]]" && ds.Status.UpdatedNumberScheduled == 3 && ds.Status.NumberAvailable == 3, got
	})
	if revs := revisions(e); len(revs) != 2 || revs[1].Revision != 2 {
		t.Fatalf("revisions after update: %v", names(revs))
	}
	// Back to the first template: its revision is renumbered, not copied.
	update("hello")
	e.Eventually("revision 1 renumbered 3", func() (bool, string) {
		revs := revisions(e)
		return len(revs) == 2 && revs[1].Name == first && revs[1].Revision == 3, fmt.Sprint(names(revs))
	})
}

func TestMaxUnavailableHoldsOldPods(t *testing.T) {
	e := controllertest.NewEnv(t)
	for i := 1; i <= 3; i++ {
		addNode(t, e, fmt.Sprintf("node-%d", i), nil)
	}
	start(t, e)
	// No kubelet: pods never become Ready, so the update may take down
	// maxUnavailable=1 old pod (unavailable ones are replaced at once).
	ds := makeDS("agent")
	one := intstr.FromInt32(1)
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one}}
	if _, err := daemon.DaemonSets(e.Client).Create(e.Ctx, ds); err != nil {
		t.Fatal(err)
	}
	e.Eventually("3 pods", func() (bool, string) { n := len(e.ActivePods("default")); return n == 3, fmt.Sprint(n) })
	// All three Ready; afterwards nothing makes new pods Ready, so the
	// update may only ever have maxUnavailable=1 node without an available pod.
	for _, p := range e.ActivePods("default") {
		e.SetPodStatus(p, corev1.PodRunning, true)
	}
	e.Eventually("3 available", func() (bool, string) {
		ds, _ := daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent")
		return ds.Status.NumberAvailable == 3, fmt.Sprintf("%+v", ds.Status)
	})
	controllertest.Update(e, func() (*appsv1.DaemonSet, error) { return daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent") },
		func(ds *appsv1.DaemonSet) (*appsv1.DaemonSet, error) {
			return daemon.DaemonSets(e.Client).Update(e.Ctx, ds)
		},
		func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "hello:2.0" })
	count := func() (old, updated int) {
		for _, images := range podsByNode(e) {
			for _, im := range images {
				if im == "hello" {
					old++
				} else {
					updated++
				}
			}
		}
		return old, updated
	}
	e.Eventually("one node updated", func() (bool, string) {
		o, u := count()
		return o == 2 && u == 1, fmt.Sprintf("old %d new %d", o, u)
	})
	for range 50 {
		e.Clock.Step(time.Second)
		time.Sleep(2 * time.Millisecond)
	}
	if o, u := count(); o != 2 || u != 1 {
		t.Errorf("old %d new %d, want 2 and 1 while the new pod is unavailable", o, u)
	}
}

func names(revs []*appsv1.ControllerRevision) []string {
	var out []string
	for _, r := range revs {
		out = append(out, fmt.Sprintf("%s(%d)", r.Name, r.Revision))
	}
	return out
}

// TestMaxSurge: with maxSurge 1 and maxUnavailable 0 the new pod starts
// beside the old one, which goes once the new one is available; the
// update completes on every node.
func TestMaxSurge(t *testing.T) {
	e := controllertest.NewEnv(t)
	for i := 1; i <= 3; i++ {
		addNode(t, e, fmt.Sprintf("node-%d", i), nil)
	}
	e.RunReadyKubelet()
	start(t, e)
	ds := makeDS("agent")
	surge, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: &surge, MaxUnavailable: &zero}}
	if _, err := daemon.DaemonSets(e.Client).Create(e.Ctx, ds); err != nil {
		t.Fatal(err)
	}
	e.Eventually("3 available", func() (bool, string) {
		ds, _ := daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent")
		return ds.Status.NumberAvailable == 3, fmt.Sprintf("%+v", ds.Status)
	})
	controllertest.Update(e, func() (*appsv1.DaemonSet, error) { return daemon.DaemonSets(e.Client).Get(e.Ctx, "default", "agent") },
		func(ds *appsv1.DaemonSet) (*appsv1.DaemonSet, error) {
			return daemon.DaemonSets(e.Client).Update(e.Ctx, ds)
		},
		func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "hello:2.0" })
	sawTwo := false
	e.Eventually("every node on hello:2.0", func() (bool, string) {
		byNode := podsByNode(e)
		for _, images := range byNode {
			if len(images) == 2 {
				sawTwo = true
			}
		}
		got := fmt.Sprint(byNode)
		return got == "map[node-1:[hello:2.0] node-2:[hello:2.0] node-3:[hello:2.0]]", got
	})
	if !sawTwo {
		t.Log("never saw an old and a new pod on one node (the surge may have been quicker than the polls)")
	}
}
