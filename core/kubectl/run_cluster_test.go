package kubectl_test

import (
	"strings"
	"testing"
	"time"
)

// TestRunExposeOnCluster: kubectl run and expose against a whole cluster,
// where the scheduler places the pod, a kubelet runs the hello image, its
// log follow ends when the container exits, and the endpoints controllers
// fill in the exposed service (TestRunAttach plays those parts by hand).
func TestRunExposeOnCluster(t *testing.T) {
	run := startCluster(t)

	// run -i attaches to the container's process: its output from then on
	// (the greeting may come before, as upstream), then its exit.
	out, errs, code := run("run -i --rm --restart=Never once --image=hello --pod-running-timeout=2m -- --ticks=2")
	if code != 0 || !strings.Contains(out, "tick 2") || errs != "If you don't see a command prompt, try pressing enter.\n" ||
		!strings.HasSuffix(out, "pod \"once\" deleted\n") {
		t.Errorf("run -i --rm: exit %d, printed %q %q", code, out, errs)
	}
	out, errs, code = run("run --attach --restart=Never fails --image=hello --pod-running-timeout=2m -- --ticks=0 --exit=3")
	if code != 3 || !strings.HasSuffix(errs, "pod default/fails terminated (Error)\n") {
		t.Errorf("run --attach exiting 3: exit %d, printed %q %q", code, out, errs)
	}

	if out, errs, code = run("run site --image=web --port=8080 --expose"); code != 0 || out != "service/site created\npod/site created\n" {
		t.Fatalf("run --expose: exit %d, printed %q %q", code, out, errs)
	}
	if out, errs, code = run("expose pod site --name=site-80 --port=80 --target-port=8080"); code != 0 || out != "service/site-80 exposed\n" {
		t.Fatalf("expose: exit %d, printed %q %q", code, out, errs)
	}
	// The endpoints controller finds the pod through the copied selector.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _, _ = run("get endpoints site-80 -o jsonpath={.subsets[*].addresses[*].targetRef.name}:{.subsets[*].ports[*].port}")
		if out == "site:8080" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoints of service site-80: %q, want site:8080", out)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The API server's proxy reaches the pod, by name or through the
	// Service; get --raw prints the answer as it comes.
	for line, want := range map[string]string{
		"get --raw /api/v1/namespaces/default/pods/site:8080/proxy/":             "web: hello from site ",
		"get --raw /api/v1/namespaces/default/services/site-80:80/proxy/healthz": "ok\n",
		"get --raw /api/v1/namespaces/default/pods/site/proxy/healthz?x=1":       "ok\n",
	} {
		if out, errs, code := run(line); code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("%s: exit %d, printed %q %q; want %q", line, code, out, errs, want)
		}
	}

	// logs of a Service are its first pod's (upstream: the Service's
	// selector picks the pods).
	if out, errs, code := run("logs svc/site-80"); code != 0 || !strings.HasPrefix(out, "web: site ") || errs != "" {
		t.Errorf("logs svc/site-80: exit %d, printed %q %q; want the logs of pod site alone", code, out, errs)
	}

	// port-forward finds the pod and port (a Service port becomes its
	// targetPort) and says how to reach them from inside the cluster.
	ip, _, _ := run("get pod site -o jsonpath={.status.podIP}")
	for _, tt := range []struct{ line, want string }{
		{"port-forward svc/site-80 8080:80", "pod/site (IP " + ip + ") would serve:\n  localhost:8080 -> 8080: from inside the cluster, curl http://" + ip + ":8080/\n"},
		{"port-forward site :8080", "  a free local port -> 8080: from inside the cluster, curl http://" + ip + ":8080/\n"},
		{"port-forward svc/site-80 8080:81", "error: Service site-80 does not have a service port 81\n"},
		{"port-forward site", "error: TYPE/NAME and list of ports are required for port-forward\nSee 'kubectl port-forward -h' for help and examples\n"},
		{"port-forward site x:80", "error: error parsing local port 'x': strconv.ParseUint: parsing \"x\": invalid syntax\n"},
		{"port-forward site 80:0", "error: remote port must be > 0\n"},
		{"port-forward pod/nope 80", "Error from server (NotFound): pods \"nope\" not found\n"},
		{"port-forward configmap/kube-root-ca.crt 80", "error: cannot attach to *v1.ConfigMap: not implemented\n"},
		{"get --raw /api/v1/namespaces/default/pods/nope/proxy/", "Error from server (NotFound): pods \"nope\" not found\n"},
		{"get --raw /api/v1/namespaces/default/services/site-80:81/proxy/", "Error from server (ServiceUnavailable): no service port 81 found for service \"site-80\"\n"},
		{"get pods --raw /api", "error: arguments may not be passed when --raw is specified\n"},
		{"get --raw /api -o json", "error: --raw and --output are mutually exclusive\n"},
		{"get --raw /api -w", "error: --raw may not be specified with other flags that filter the server request or alter the output\n"},
	} {
		out, errs, code := run(tt.line)
		if code != 1 || out != "" || !strings.Contains(errs, tt.want) {
			t.Errorf("%s: exit %d, printed %q %q; want exit 1 and %q", tt.line, code, out, errs, tt.want)
		}
	}
}
