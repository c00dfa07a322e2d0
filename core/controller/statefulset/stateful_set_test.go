package statefulset_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/statefulset"
)

func start(t *testing.T, e *controllertest.Env) {
	t.Helper()
	ssc, err := statefulset.New(statefulset.Config{Client: e.ClientFor(statefulset.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("statefulset", ssc.Run)
}

func makeSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template:    controllertest.PodTemplate(map[string]string{"app": name}, "hello"),
		},
	}
}

// podList is "name:image" of the live pods, sorted by name.
func podList(e *controllertest.Env) string {
	var out []string
	for _, p := range e.ActivePods("default") {
		out = append(out, p.Name+":"+p.Spec.Containers[0].Image)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func get(e *controllertest.Env, name string) *appsv1.StatefulSet {
	s, err := statefulset.StatefulSets(e.Client).Get(e.Ctx, "default", name)
	if err != nil {
		e.T.Fatal(err)
	}
	return s
}

func update(e *controllertest.Env, name string, mutate func(*appsv1.StatefulSet)) {
	controllertest.Update(e, func() (*appsv1.StatefulSet, error) {
		return statefulset.StatefulSets(e.Client).Get(e.Ctx, "default", name)
	},
		func(s *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
			return statefulset.StatefulSets(e.Client).Update(e.Ctx, s)
		},
		mutate)
}

func TestOrderedReadyWaitsForEachPod(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	if _, err := statefulset.StatefulSets(e.Client).Create(e.Ctx, makeSet("web", 3)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		want := []string{}
		for j := 0; j <= i; j++ {
			want = append(want, fmt.Sprintf("web-%d:hello", j))
		}
		e.Eventually(fmt.Sprintf("web-%d created", i), func() (bool, string) {
			got := podList(e)
			return got == strings.Join(want, " "), got
		})
		// Nothing more until this pod is Running and Ready.
		for range 20 {
			e.Clock.Step(e.Step)
		}
		if got := podList(e); got != strings.Join(want, " ") {
			t.Fatalf("before web-%d is Ready: %s, want %s", i, got, strings.Join(want, " "))
		}
		p, err := e.Client.Pods().Get(e.Ctx, "default", fmt.Sprintf("web-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "web" || p.Labels[statefulset.PodNameLabel] != p.Name ||
			p.Labels[statefulset.PodIndexLabel] != fmt.Sprint(i) || !strings.HasPrefix(p.Labels[statefulset.RevisionLabel], "web-") {
			t.Errorf("pod %s: hostname %q subdomain %q labels %v", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
		}
		e.SetPodStatus(p, corev1.PodRunning, true)
	}
	e.Eventually("status", func() (bool, string) {
		s := get(e, "web")
		st := s.Status
		got := fmt.Sprintf("replicas=%d ready=%d current=%d updated=%d observed=%d/%d same-revision=%v", st.Replicas, st.ReadyReplicas, st.CurrentReplicas, st.UpdatedReplicas, st.ObservedGeneration, s.Generation, st.CurrentRevision == st.UpdateRevision && st.UpdateRevision != "")
		return got == "replicas=3 ready=3 current=3 updated=3 observed=1/1 same-revision=true", got
	})
	for i := range 3 {
		msg := fmt.Sprintf("create Pod web-%d in StatefulSet web successful", i)
		e.Eventually(msg, func() (bool, string) { return e.HasEvent("default", "SuccessfulCreate", msg) })
	}
	// Scale down: the highest ordinal first.
	update(e, "web", func(s *appsv1.StatefulSet) { n := int32(1); s.Spec.Replicas = &n })
	e.Eventually("web-0 left", func() (bool, string) {
		got := podList(e)
		return got == "web-0:hello", got
	})
	// The deletions came one at a time, highest ordinal first: the events
	// were written in that order (resourceVersions rise).
	e.Eventually("delete events in order", func() (bool, string) {
		var dels []*corev1.Event
		for _, ev := range e.Events("default") {
			if ev.Reason == "SuccessfulDelete" {
				dels = append(dels, ev)
			}
		}
		sort.Slice(dels, func(i, j int) bool { return rv(dels[i]) < rv(dels[j]) })
		var msgs []string
		for _, ev := range dels {
			msgs = append(msgs, ev.Message)
		}
		got := strings.Join(msgs, ", ")
		return got == "delete Pod web-2 in StatefulSet web successful, delete Pod web-1 in StatefulSet web successful", got
	})
}

func rv(ev *corev1.Event) int {
	n, _ := strconv.Atoi(ev.ResourceVersion)
	return n
}

func TestRollingUpdatePartitionAndRollback(t *testing.T) {
	e := controllertest.NewEnv(t)
	e.RunReadyKubelet()
	start(t, e)
	set := makeSet("web", 3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	if _, err := statefulset.StatefulSets(e.Client).Create(e.Ctx, set); err != nil {
		t.Fatal(err)
	}
	e.Eventually("3 ready", func() (bool, string) {
		s := get(e, "web")
		return s.Status.ReadyReplicas == 3, fmt.Sprintf("%+v", s.Status)
	})
	first := get(e, "web").Status.CurrentRevision
	// A canary: partition 2 updates only web-2.
	update(e, "web", func(s *appsv1.StatefulSet) {
		two := int32(2)
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &two}
		s.Spec.Template.Spec.Containers[0].Image = "hello:2.0"
	})
	e.Eventually("web-2 updated", func() (bool, string) {
		got := podList(e)
		s := get(e, "web")
		return got == "web-0:hello web-1:hello web-2:hello:2.0" && s.Status.UpdatedReplicas == 1 && s.Status.CurrentRevision == first && s.Status.UpdateRevision != first, got + fmt.Sprintf(" %+v", s.Status)
	})
	update(e, "web", func(s *appsv1.StatefulSet) { zero := int32(0); s.Spec.UpdateStrategy.RollingUpdate.Partition = &zero })
	e.Eventually("all updated, currentRevision moved", func() (bool, string) {
		got := podList(e)
		s := get(e, "web")
		return got == "web-0:hello:2.0 web-1:hello:2.0 web-2:hello:2.0" && s.Status.CurrentRevision == s.Status.UpdateRevision && s.Status.CurrentReplicas == 3, got + fmt.Sprintf(" %+v", s.Status)
	})
	// Back to the first template: revision 1 is renumbered 3.
	update(e, "web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "hello" })
	e.Eventually("rolled back", func() (bool, string) {
		got := podList(e)
		s := get(e, "web")
		return got == "web-0:hello web-1:hello web-2:hello" && s.Status.UpdateRevision == first && s.Status.CurrentRevision == first, got + fmt.Sprintf(" %+v", s.Status)
	})
	cr, err := e.Client.Registry().MustLookup("apps", "controllerrevisions").Get(e.Ctx, "default", first)
	if err != nil {
		t.Fatal(err)
	}
	if r := cr.(*appsv1.ControllerRevision).Revision; r != 3 {
		t.Errorf("revision of %s = %d, want 3 (renumbered by the rollback)", first, r)
	}
}

func TestOnDeleteKeepsPods(t *testing.T) {
	e := controllertest.NewEnv(t)
	e.RunReadyKubelet()
	start(t, e)
	set := makeSet("web", 2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if _, err := statefulset.StatefulSets(e.Client).Create(e.Ctx, set); err != nil {
		t.Fatal(err)
	}
	e.Eventually("2 ready", func() (bool, string) {
		s := get(e, "web")
		return s.Status.ReadyReplicas == 2, fmt.Sprintf("%+v", s.Status)
	})
	update(e, "web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "hello:2.0" })
	e.Eventually("observed", func() (bool, string) {
		s := get(e, "web")
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdateRevision != s.Status.CurrentRevision, fmt.Sprintf("%+v", s.Status)
	})
	for range 20 {
		e.Clock.Step(e.Step)
	}
	if got := podList(e); got != "web-0:hello web-1:hello" {
		t.Fatalf("OnDelete replaced pods by itself: %s", got)
	}
	if err := e.Client.Pods().Delete(e.Ctx, "default", "web-1", nil); err != nil {
		t.Fatal(err)
	}
	e.Eventually("web-1 recreated on the new template", func() (bool, string) {
		got := podList(e)
		return got == "web-0:hello web-1:hello:2.0", got
	})
}

func TestVolumeClaimTemplatesWithoutClaims(t *testing.T) {
	e := controllertest.NewEnv(t)
	start(t, e)
	set := makeSet("db", 1)
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	if _, err := statefulset.StatefulSets(e.Client).Create(e.Ctx, set); err != nil {
		t.Fatal(err)
	}
	msg := "create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: the server could not find the requested resource"
	e.Eventually("FailedCreate", func() (bool, string) { return e.HasEvent("default", "FailedCreate", msg) })
	if got := podList(e); got != "" {
		t.Errorf("pods %s, want none without their claims", got)
	}
}
