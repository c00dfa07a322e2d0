package kubectl

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTaint: taint adds, replaces (--overwrite) and removes node taints with
// upstream's messages; the transcript was checked line by line against
// kubectl v1.32 on `kubetab cluster`. Bad input changes nothing.
func TestTaint(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"node-1", "node-2", "node-3"} {
		e.node(n, true)
	}
	golden(t, "taint", e.transcript(
		"taint nodes node-1 dedicated=gpu:NoSchedule",
		"taint nodes node-1 dedicated=gpu:NoSchedule",
		"taint nodes node-1 dedicated=cpu:NoSchedule --overwrite",
		"taint nodes node-1 other:PreferNoSchedule",
		"taint nodes node-1 dedicated:NoSchedule-",
		"taint nodes node-1 dedicated:NoSchedule-",
		"taint nodes node-1 other-",
		"taint nodes node-1 a=b:Bogus",
		"taint nodes node-1 a=b",
		"taint pods x a=b:NoSchedule",
		"taint nodes a=b:NoSchedule",
		"taint nodes",
		"taint nodes node-1 a=b:NoSchedule node-2",
		"taint nodes --all a=b:NoExecute",
		"taint nodes -l kubernetes.io/hostname=node-2 a-",
		"taint nodes node-1 x=1:NoSchedule x-",
		"taint nodes node-1 x=1:NoSchedule x=2:NoSchedule",
		"taint nodes nope x=1:NoSchedule",
		"taint nodes node-3 c=d:NoSchedule --dry-run=client",
		"taint nodes node-3 c=d:NoSchedule -o jsonpath={.spec.taints}",
		"taint node node-1 node-2 a-",
		"taint nodes --all -l a=b x=1:NoSchedule",
		"taint nodes node-1 'bad key=1:NoSchedule'",
	))
	taints := func(name string) string {
		var s []string
		for _, t := range e.get(&corev1.Node{}, "", name).(*corev1.Node).Spec.Taints {
			s = append(s, t.ToString())
		}
		return strings.Join(s, ",")
	}
	for node, want := range map[string]string{
		"node-1": "",
		"node-2": "",
		"node-3": "c=d:NoSchedule,a=b:NoExecute",
	} {
		if got := taints(node); got != want {
			t.Errorf("%s taints = %q, want %q", node, got, want)
		}
	}
}
