package kubectl

import (
	"strings"
	"testing"
)

// TestApplyDryRun: apply --dry-run=server sends its writes with dryRun=All
// (admission and validation run, nothing is stored); --dry-run=client sends
// no write at all.
func TestApplyDryRun(t *testing.T) {
	const web = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: %s\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: web:1.0}\n"
	tests := []struct {
		name, replicas, line string
		existing             bool
		code                 int
		out, errs            string
		writes               int
		stored               string // spec.replicas afterwards, "" for no object
	}{
		{name: "server, new", replicas: "2", line: "apply -f web.yaml --dry-run=server", out: "deployment.apps/web created (server dry run)\n", writes: 1},
		{name: "client, new", replicas: "2", line: "apply -f web.yaml --dry-run=client", out: "deployment.apps/web created (dry run)\n"},
		{name: "server, existing", replicas: "5", existing: true, line: "apply -f web.yaml --dry-run=server", out: "deployment.apps/web configured (server dry run)\n", writes: 1, stored: "1"},
		{name: "client, existing", replicas: "5", existing: true, line: "apply -f web.yaml --dry-run", out: "deployment.apps/web configured (dry run)\n", stored: "1"},
		{name: "server validates", replicas: "-1", line: "apply -f web.yaml --dry-run=server", code: 1, errs: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`, writes: 1},
		{name: "bad value", replicas: "2", line: "apply -f web.yaml --dry-run=maybe", code: 1, errs: `Invalid dry-run value (maybe). Must be "none", "server", or "client".`},
		{name: "client with server-side", replicas: "2", line: "apply -f web.yaml --dry-run=client --server-side", code: 1, errs: "--dry-run=client doesn't work with --server-side"},
		{name: "server-side, server", replicas: "2", line: "apply -f web.yaml --dry-run=server --server-side", out: "deployment.apps/web serverside-applied (server dry run)\n", writes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.existing {
				e.files["web.yaml"] = strings.Replace(web, "%s", "1", 1)
				e.mustRun("apply -f web.yaml")
			}
			e.files["web.yaml"] = strings.Replace(web, "%s", tc.replicas, 1)
			e.takeWrites()
			out, errs, code := e.run(tc.line)
			if code != tc.code || out != tc.out || !strings.Contains(errs, tc.errs) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
			if w := e.takeWrites(); len(w) != tc.writes {
				t.Errorf("writes %v, want %d", w, tc.writes)
			}
			got, _, _ := e.run("get deployment web -o jsonpath={.spec.replicas}")
			if got != tc.stored {
				t.Errorf("stored replicas %q, want %q", got, tc.stored)
			}
		})
	}
}
