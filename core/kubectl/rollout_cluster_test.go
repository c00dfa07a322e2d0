package kubectl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRolloutRevisionsOnCluster: rollout status, history and undo of a
// DaemonSet and a StatefulSet, whose history is ControllerRevisions, with
// upstream's texts.
func TestRolloutRevisionsOnCluster(t *testing.T) {
	run := startCluster(t)
	dir := t.TempDir()
	manifest := func(kind, name, extra string) string {
		p := filepath.Join(dir, name+".yaml")
		body := "apiVersion: apps/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n" + extra +
			"  selector:\n    matchLabels: {app: " + name + "}\n  template:\n    metadata:\n      labels: {app: " + name + "}\n    spec:\n      containers:\n      - name: hello\n        image: hello\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		line       string
		code       int
		out, errs  string // suffix of stdout, stderr
		outContain string
	}{
		{line: "apply -f " + manifest("DaemonSet", "agent", ""), out: "daemonset.apps/agent created\n"},
		{line: "rollout status ds/agent --timeout=2m", out: "daemon set \"agent\" successfully rolled out\n"},
		{line: "rollout undo ds/agent", code: 1, errs: "error: no last revision to roll back to\n"},
		{line: "set image ds/agent hello=hello:2.0", out: "daemonset.apps/agent image updated\n"},
		{line: "rollout status ds/agent --timeout=2m", out: "daemon set \"agent\" successfully rolled out\n"},
		{line: "rollout history ds/agent", out: "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"},
		{line: "rollout history ds/agent --revision=2", outContain: "Image:         hello:2.0"},
		{line: "rollout history ds/agent --revision=7", code: 1, errs: "error: unable to find the specified revision\n"},
		{line: "rollout undo ds/agent --to-revision=2", out: "daemonset.apps/agent skipped rollback (current template already matches revision 2)\n"},
		{line: "rollout undo ds/agent", out: "daemonset.apps/agent rolled back\n"},
		{line: "rollout status ds/agent --timeout=2m", out: "daemon set \"agent\" successfully rolled out\n"},
		{line: "rollout history ds/agent", out: "REVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"},
		{line: "apply -f " + manifest("StatefulSet", "web", "  serviceName: web\n  replicas: 2\n"), out: "statefulset.apps/web created\n"},
		{line: "rollout status sts/web --timeout=2m", out: "partitioned roll out complete: 2 new pods have been updated...\n"},
		{line: "get pods -l app=web -o name", out: "pod/web-0\npod/web-1\n"},
		{line: "set image sts/web hello=hello:2.0", out: "statefulset.apps/web image updated\n"},
		{line: "rollout status sts/web --timeout=2m", out: "partitioned roll out complete: 2 new pods have been updated...\n"},
		{line: "rollout history sts/web", out: "statefulset.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"},
		{line: "rollout undo sts/web", out: "statefulset.apps/web rolled back\n"},
		{line: "rollout status sts/web --timeout=2m", out: "partitioned roll out complete: 2 new pods have been updated...\n"},
		{line: "rollout history sts/web", out: "REVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"},
		{line: "rollout pause sts/web", code: 1, errs: "error: no pauser has been implemented for StatefulSet.apps\n"},
		{line: "rollout restart ds/agent", out: "daemonset.apps/agent restarted\n"},
		{line: "rollout status ds/agent --timeout=2m", out: "daemon set \"agent\" successfully rolled out\n"},
		{line: "get ds agent -o jsonpath={.status.updatedNumberScheduled}:{.status.observedGeneration}", out: "3:4"},
	} {
		out, errs, code := run(tc.line)
		if code != tc.code || !strings.HasSuffix(out, tc.out) || !strings.HasSuffix(errs, tc.errs) || !strings.Contains(out, tc.outContain) {
			t.Errorf("%s: exit %d (want %d)\nstdout %q\nstderr %q", tc.line, code, tc.code, out, errs)
		}
	}
}
