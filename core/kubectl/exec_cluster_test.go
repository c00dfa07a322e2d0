package kubectl_test

import (
	"strings"
	"testing"
)

// TestExecTypeName: `kubectl exec TYPE/NAME` runs in the first pod of the
// workload, and without -c in the first container, saying so when the pod
// has others (upstream attachablePodForObject, FindOrDefaultContainerByName).
func TestExecTypeName(t *testing.T) {
	run := startCluster(t)
	for _, line := range []string{
		"create deployment x --image=web",
		`run two --image=web --overrides='{"spec":{"containers":[{"name":"a","image":"web"},{"name":"b","image":"web"}]}}'`,
		"create configmap cm",
		"wait --for=condition=available deploy/x --timeout=2m",
		"wait --for=condition=ready pod/two --timeout=2m",
	} {
		if out, errs, code := run(line); code != 0 {
			t.Fatalf("%s: exit %d, printed %q %q", line, code, out, errs)
		}
	}
	for _, tc := range []struct {
		line, outHas, errs string
		code               int
	}{
		{"exec deploy/x -- ls", "bin\n", "", 0},
		{"exec deployment/x -- ls", "bin\n", "", 0},
		{"exec two -- ls", "bin\n", "Defaulted container \"a\" out of: a, b\n", 0},
		{"exec -q two -- ls", "bin\n", "", 0},
		{"exec pod/two -c b -- ls", "bin\n", "", 0},
		{"exec configmap/cm -- ls", "", "error: cannot attach to *v1.ConfigMap: selector for *v1.ConfigMap not implemented\n", 1},
		{"exec svc/kubernetes -- ls", "", "error: cannot attach to *v1.Service: invalid service 'kubernetes': Service is defined without a selector\n", 1},
		{"exec deploy/nope -- ls", "", "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1},
	} {
		out, errs, code := run(tc.line)
		if code != tc.code || !strings.Contains(out, tc.outHas) || errs != tc.errs {
			t.Errorf("%s: exit %d, printed %q %q; want exit %d, %q in stdout, stderr %q", tc.line, code, out, errs, tc.code, tc.outHas, tc.errs)
		}
	}
}
