package apiserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The real kubectl (v1.32, /usr/bin/kubectl) against the handler: the
// requests it makes before it does anything (aggregated discovery, OpenAPI
// v3) and the features that depend on them. test/conformance/kubectl.sh
// drives it against a whole cluster; this checks the API server alone.

const kubectlPath = "/usr/bin/kubectl"

type kubectlEnv struct {
	t          *testing.T
	kubeconfig string
	cacheDir   string
	dir        string
}

func newKubectlEnv(t *testing.T) *kubectlEnv {
	t.Helper()
	if runtime.GOOS == "js" {
		t.Skip("no processes under js/wasm")
	}
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skipf("the real kubectl is not installed at %s (install kubectl v1.32 to run this test)", kubectlPath)
	}
	srv, _ := newTestServer(t)
	return newKubectlEnvFor(t, srv.URL)
}

// newKubectlEnvFor is a kubectl environment against the server at serverURL.
func newKubectlEnvFor(t *testing.T, serverURL string) *kubectlEnv {
	t.Helper()
	if runtime.GOOS == "js" {
		t.Skip("no processes under js/wasm")
	}
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skipf("the real kubectl is not installed at %s (install kubectl v1.32 to run this test)", kubectlPath)
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: t
  cluster: {server: %s}
users:
- name: t
  user: {}
contexts:
- name: t
  context: {cluster: t, user: t, namespace: default}
current-context: t
`, serverURL)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &kubectlEnv{t: t, kubeconfig: kc, cacheDir: filepath.Join(dir, "cache"), dir: dir}
}

// run runs kubectl and returns its combined output and exit code.
func (e *kubectlEnv) run(args ...string) (string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, append([]string{"--kubeconfig", e.kubeconfig, "--cache-dir", e.cacheDir}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+e.dir)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("kubectl %v: %v", args, err)
	}
	return string(out), code
}

func (e *kubectlEnv) file(name, content string) string {
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestRealKubectl(t *testing.T) {
	e := newKubectlEnv(t)
	manifest := applyDeployment("2", "hello")
	f := e.file("web.yaml", manifest)
	cases := []struct {
		name string
		args []string
		code int
		want string // a pattern of upstream kubectl's output
	}{
		{"apply creates", []string{"apply", "-f", f}, 0, "deployment.apps/web created"},
		{"apply again", []string{"apply", "-f", f}, 0, "deployment.apps/web unchanged"},
		{"apply a change", []string{"apply", "-f", e.file("web3.yaml", strings.Replace(manifest, "replicas: 2", "replicas: 3", 1))}, 0, "deployment.apps/web configured"},
		{"apply validates on the server", []string{"apply", "-f", e.file("bad.yaml", strings.Replace(manifest, "replicas: 2", "replicas: 2\n  bogus: 1", 1))},
			1, `strict decoding error: unknown field "spec.bogus"`},
		{"explain", []string{"explain", "deployment.spec.replicas"}, 0, "FIELD: replicas <integer>"},
		{"explain nested", []string{"explain", "pods.spec.containers.resources.limits"}, 0, "<map[string]Quantity>"},
		{"server-side apply", []string{"apply", "--server-side", "-f", e.file("ssa.yaml", strings.Replace(manifest, "name: web", "name: ssa", 1))}, 0, "deployment.apps/ssa serverside-applied"},
		{"server-side apply conflict", []string{"apply", "--server-side", "--field-manager=other", "-f", e.file("ssa2.yaml", strings.Replace(strings.Replace(manifest, "name: web", "name: ssa", 1), "replicas: 2", "replicas: 4", 1))},
			1, `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`},
		{"server-side apply force", []string{"apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", filepath.Join(e.dir, "ssa2.yaml")}, 0, "serverside-applied"},
		{"diff", []string{"diff", "-f", filepath.Join(e.dir, "web3.yaml")}, 0, ""},
		{"api-resources", []string{"api-resources"}, 0, `deployments\s+deploy\s+apps/v1\s+true\s+Deployment`},
	}
	for _, tc := range cases {
		out, code := e.run(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) && !matches(tc.want, out) {
			t.Errorf("%s: kubectl %v: exit %d (want %d)\n%s", tc.name, tc.args, code, tc.code, out)
		}
	}
}

func matches(pattern, s string) bool {
	ok, _ := regexp.MatchString(pattern, s)
	return ok
}

// kubectl get --chunk-size pages through continue tokens; -w streams until
// the client's timeout.
func TestRealKubectlChunksAndWatch(t *testing.T) {
	e := newKubectlEnv(t)
	for i := 0; i < 5; i++ {
		out, code := e.run("create", "configmap", "-n", "default", fmt.Sprintf("cm-%d", i), "--from-literal=a=b")
		if code != 0 {
			t.Fatalf("create configmap: %s", out)
		}
	}
	out, code := e.run("get", "configmaps", "--chunk-size=2", "-v=6")
	if code != 0 || strings.Count(out, "cm-") != 5 || strings.Count(out, "continue=") != 2 {
		t.Fatalf("chunked get (exit %d):\n%s", code, out)
	}
	out, _ = e.run("get", "configmaps", "-w", "--request-timeout=2s")
	if strings.Count(out, "cm-") != 5 {
		t.Fatalf("watch:\n%s", out)
	}
}
