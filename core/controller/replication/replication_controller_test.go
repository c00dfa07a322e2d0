package replication_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
	"github.com/kubetab/kubetab/core/controller/replication"
)

func TestReplicationController(t *testing.T) {
	e := controllertest.NewEnv(t)
	rm, err := replication.New(replication.Config{Client: e.ClientFor(replication.Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	e.Start("replication", rm.Run)
	tmpl := controllertest.PodTemplate(map[string]string{"app": "legacy", "tier": "web"}, "hello")
	rcs := replication.ReplicationControllers(e.Client)
	// No selector: the API server defaults it to the template's labels.
	rc, err := rcs.Create(e.Ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "default"},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr(int32(3)), Template: &tmpl},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rc.Spec.Selector); got != "map[app:legacy tier:web]" {
		t.Errorf("defaulted selector %s", got)
	}
	// An orphan with every selector label is adopted; one with a subset is not.
	for _, p := range []*corev1.Pod{
		controllertest.MakePod("orphan").Label("app", "legacy").Label("tier", "web").Obj(),
		controllertest.MakePod("other").Label("app", "legacy").Obj(),
	} {
		if _, err := e.Client.Pods().Create(e.Ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	e.Eventually("3 pods of the rc", func() (bool, string) {
		var owned []string
		for _, p := range e.ActivePods("default") {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "ReplicationController" && ref.APIVersion == "v1" && ref.Name == "legacy" {
				owned = append(owned, p.Name)
			}
		}
		return len(owned) == 3 && strings.Contains(strings.Join(owned, " "), "orphan"), fmt.Sprint(owned)
	})
	for _, p := range e.ActivePods("default") {
		if p.Name != "other" {
			e.SetPodStatus(p, corev1.PodRunning, true)
		}
	}
	e.Eventually("status", func() (bool, string) {
		rc, _ := rcs.Get(e.Ctx, "default", "legacy")
		s := rc.Status
		got := fmt.Sprintf("replicas=%d fullyLabeled=%d ready=%d available=%d observed=%d", s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration)
		return got == "replicas=3 fullyLabeled=3 ready=3 available=3 observed=1", got
	})
	e.Eventually("a SuccessfulCreate event", func() (bool, string) {
		for _, ev := range e.Events("default") {
			if ev.Reason == "SuccessfulCreate" && strings.HasPrefix(ev.Message, "Created pod: legacy-") && ev.Source.Component == "replication-controller" {
				return true, ""
			}
		}
		return false, "none"
	})
	controllertest.Update(e, func() (*corev1.ReplicationController, error) { return rcs.Get(e.Ctx, "default", "legacy") },
		func(rc *corev1.ReplicationController) (*corev1.ReplicationController, error) {
			return rcs.Update(e.Ctx, rc)
		},
		func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr(int32(1)) })
	e.Eventually("scaled to 1", func() (bool, string) {
		rc, _ := rcs.Get(e.Ctx, "default", "legacy")
		return rc.Status.Replicas == 1 && rc.Status.ObservedGeneration == 2, fmt.Sprintf("%+v", rc.Status)
	})
}

func TestValidation(t *testing.T) {
	e := controllertest.NewEnv(t)
	rcs := replication.ReplicationControllers(e.Client)
	tmpl := controllertest.PodTemplate(map[string]string{"app": "a"}, "hello")
	for _, tc := range []struct {
		name string
		spec corev1.ReplicationControllerSpec
		want string
	}{
		{"no template", corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "a"}}, "spec.template: Required value"},
		{"selector does not match", corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "b"}, Template: &tmpl}, "spec.template.metadata.labels: Invalid value: {\"app\":\"a\"}: `selector` does not match template `labels`"},
		{"negative replicas", corev1.ReplicationControllerSpec{Replicas: ptr(int32(-1)), Template: &tmpl}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
	} {
		_, err := rcs.Create(e.Ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}, Spec: tc.spec})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
