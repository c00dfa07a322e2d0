package kubectl

import (
	"strings"
	"testing"
)

func TestSetImage(t *testing.T) {
	e := newEnv(t)
	if _, errs, code := e.run("create deployment web --image=hello --replicas=2"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	for _, tc := range []struct {
		line, out, err string
		code           int
	}{
		{"set image deployment/web hello=hello:2.0", "deployment.apps/web image updated\n", "", 0},
		{"set image deployment/web hello=hello:2.0", "", "", 0}, // nothing changes: nothing printed
		{"set image deployment web *=hello:1.0", "deployment.apps/web image updated\n", "", 0},
		{"set image deployment/web nope=hello:2.0", "", `unable to find container named "nope"`, 1},
		{"set image deployment/web", "", "at least one image update is required", 1},
		{"set image hello=hello:2.0", "", "one or more resources must be specified", 1},
		{"set image deployment/missing hello=hello:2.0", "", `deployments.apps "missing" not found`, 1},
		{"set image deployment/web hello=hello:2.0 --dry-run=client", "deployment.apps/web image updated (dry run)\n", "", 0},
	} {
		out, errs, code := e.run(tc.line)
		if code != tc.code || out != tc.out || (tc.err != "" && !strings.Contains(errs, tc.err)) {
			t.Errorf("%s: exit %d out %q err %q; want exit %d out %q err containing %q", tc.line, code, out, errs, tc.code, tc.out, tc.err)
		}
	}
	out, _, _ := e.run("get deployment web -o jsonpath={.spec.template.spec.containers[0].image}")
	if out != "hello:1.0" {
		t.Fatalf("image after updates = %q, want hello:1.0 (the dry run must not change it)", out)
	}
}
