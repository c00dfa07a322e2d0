package resourcequota

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/client"
	"github.com/kubetab/kubetab/core/controller/internal/controllertest"
)

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func newPod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "hello:1.0", Resources: corev1.ResourceRequirements{
			Requests: rl("cpu", cpu), Limits: rl("cpu", cpu)}}},
	}}
}

// usedIs waits until the quota's status.used reads want (every key).
func usedIs(e *controllertest.Env, name string, want corev1.ResourceList) {
	e.T.Helper()
	quotas := client.For[*corev1.ResourceQuota](e.Client, "", "resourcequotas")
	e.Eventually(fmt.Sprintf("quota %s used %v", name, want), func() (bool, string) {
		q, err := quotas.Get(e.Ctx, "default", name)
		if err != nil {
			return false, err.Error()
		}
		for k, v := range want {
			got, ok := q.Status.Used[k]
			if !ok || got.Cmp(v) != 0 {
				return false, fmt.Sprintf("status %+v", q.Status)
			}
		}
		return len(q.Status.Hard) == len(q.Spec.Hard), fmt.Sprintf("status %+v", q.Status)
	})
}

func TestQuotaUsage(t *testing.T) {
	e := controllertest.NewEnv(t)
	c, err := New(Config{Client: e.ClientFor(Component), Clock: e.Clock})
	if err != nil {
		t.Fatal(err)
	}
	for i, cpu := range []string{"100m", "250m", "500m"} {
		if _, err := e.Client.Pods().Create(e.Ctx, newPod(fmt.Sprintf("p%d", i), cpu)); err != nil {
			t.Fatal(err)
		}
	}
	e.Start("resourcequota", c.Run)
	quotas := client.For[*corev1.ResourceQuota](e.Client, "", "resourcequotas")
	if _, err := quotas.Create(e.Ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"},
		Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "5", "count/pods", "10", "requests.cpu", "2", "limits.cpu", "2", "configmaps", "10")}}); err != nil {
		t.Fatal(err)
	}
	// configmaps: the namespace's kube-root-ca.crt, which the API server
	// published with it.
	usedIs(e, "q", rl("pods", "3", "count/pods", "3", "requests.cpu", "850m", "limits.cpu", "850m", "configmaps", "1"))

	// A new pod is charged by admission; the controller's recount agrees.
	if _, err := e.Client.Pods().Create(e.Ctx, newPod("p3", "100m")); err != nil {
		t.Fatal(err)
	}
	usedIs(e, "q", rl("pods", "4", "requests.cpu", "950m"))

	// A finished pod frees its compute quota but still counts as an object.
	p, _ := e.Client.Pods().Get(e.Ctx, "default", "p2")
	p.Status.Phase = corev1.PodSucceeded
	if _, err := e.Client.Pods().UpdateStatus(e.Ctx, p); err != nil {
		t.Fatal(err)
	}
	usedIs(e, "q", rl("pods", "3", "count/pods", "4", "requests.cpu", "450m"))

	// A deleted pod frees everything.
	if err := e.Client.Pods().Delete(e.Ctx, "default", "p0", &metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	usedIs(e, "q", rl("pods", "2", "count/pods", "3", "requests.cpu", "350m"))

	// A raised hard limit is copied to status.hard.
	q, _ := quotas.Get(e.Ctx, "default", "q")
	q.Spec.Hard["pods"] = resource.MustParse("6")
	if _, err := quotas.Update(e.Ctx, q); err != nil {
		t.Fatal(err)
	}
	e.Eventually("status.hard follows spec.hard", func() (bool, string) {
		q, _ := quotas.Get(e.Ctx, "default", "q")
		h := q.Status.Hard["pods"]
		return h.String() == "6", h.String()
	})
}
