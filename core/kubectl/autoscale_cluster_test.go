package kubectl_test

import (
	"strings"
	"testing"
	"time"
)

// TestQuotaAndAutoscaleOnCluster: create quota, the quota admission's
// refusal, and autoscale with get hpa, against a
// whole cluster (the resource quota and HPA controllers run in it).
func TestQuotaAndAutoscaleOnCluster(t *testing.T) {
	run := startCluster(t)
	waitFor := func(line, want string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			out, _, _ := run(line)
			if out == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q, want %q", line, out, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	must := func(line, want string) {
		t.Helper()
		if out, errs, code := run(line); code != 0 || out != want {
			t.Fatalf("%s: exit %d, printed %q %q; want %q", line, code, out, errs, want)
		}
	}
	must("create namespace q", "namespace/q created\n")
	// A quota of requests.cpu wants every container to say its request.
	must("create quota cpu -n q --hard=requests.cpu=1", "resourcequota/cpu created\n")
	waitFor(`get quota cpu -n q -o 'jsonpath={.status.used.requests\.cpu}'`, "0")
	if out, errs, code := run("run x -n q --image=hello --restart=Never"); code != 1 ||
		errs != "Error from server (Forbidden): pods \"x\" is forbidden: failed quota: cpu: must specify requests.cpu for: x\n" {
		t.Errorf("pod without requests: exit %d, printed %q %q", code, out, errs)
	}
	must("delete quota cpu -n q", "resourcequota \"cpu\" deleted\n")
	must("create quota pods -n q --hard=pods=2", "resourcequota/pods created\n")
	// The controller fills the status before the quota limits anything.
	waitFor("get quota pods -n q -o jsonpath={.status.used.pods}", "0")
	must("run a -n q --image=hello --restart=Never", "pod/a created\n")
	must("run b -n q --image=hello --restart=Never", "pod/b created\n")
	out, errs, code := run("run c -n q --image=hello --restart=Never")
	if want := "Error from server (Forbidden): pods \"c\" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2\n"; code != 1 || errs != want {
		t.Errorf("third pod: exit %d, printed %q %q; want %q", code, out, errs, want)
	}
	out, _, _ = run("get quota -n q")
	if !strings.HasPrefix(out, "NAME   AGE   REQUEST     LIMIT\npods   ") || !strings.HasSuffix(out, "   pods: 2/2   \n") {
		t.Errorf("get quota:\n%s", out)
	}
	must("describe quota pods -n q", "Name:       pods\nNamespace:  q\nResource    Used  Hard\n--------    ----  ----\npods        2     2\n")
	if out, errs, code = run("create quota bad -n q --hard=pods"); code != 1 || errs != "error: Invalid argument syntax pods, expected <resource>=<value>\n" {
		t.Errorf("bad --hard: exit %d, printed %q %q", code, out, errs)
	}

	must("create deployment web --image=hello", "deployment.apps/web created\n")
	must("autoscale deployment web --max=3 --cpu-percent=50", "horizontalpodautoscaler.autoscaling/web autoscaled\n")
	out, _, _ = run("get hpa")
	if !strings.HasPrefix(out, "NAME   REFERENCE        TARGETS              MINPODS   MAXPODS   REPLICAS   AGE\nweb    Deployment/web   cpu: <unknown>/50%   1         3         ") {
		t.Errorf("get hpa:\n%s", out)
	}
	must("get hpa.v1.autoscaling web -o jsonpath={.spec.targetCPUUtilizationPercentage}", "50")
	must("get hpa.v2.autoscaling web -o jsonpath={.spec.metrics[0].resource.target.averageUtilization}", "50")
	// hello requests no cpu: the controller says why it cannot scale.
	waitFor(`get hpa web -o 'jsonpath={.status.conditions[?(@.type=="ScalingActive")].reason}'`, "FailedGetResourceMetric")
	out, _, _ = run("describe hpa web")
	for _, want := range []string{"Reference:                                             Deployment/web\n",
		"  resource cpu on pods  (as a percentage of request):  <unknown> / 50%\n", "Min replicas:                                          1\n",
		"Conditions:\n  Type           Status  Reason                   Message\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe hpa: no %q in\n%s", want, out)
		}
	}
	if out, errs, code = run("autoscale pod a -n q --max=2"); code != 1 || !strings.HasPrefix(errs, "error: cannot autoscale a Pod: ") {
		t.Errorf("autoscale a pod: exit %d, printed %q %q", code, out, errs)
	}
	if out, errs, code = run("autoscale deployment web --max=0"); code != 1 || errs != "error: --max=MAXPODS is required and must be at least 1, max: 0\n" {
		t.Errorf("--max=0: exit %d, printed %q %q", code, out, errs)
	}
}
