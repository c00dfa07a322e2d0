package kubectl

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/internal/syncbuf"
)

func TestCreate(t *testing.T) {
	e := newEnv(t)
	e.files["pod.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\nspec:\n  containers:\n  - name: app\n    image: hello\n"
	golden(t, "create", e.transcript(
		"create deployment web --image=hello",
		"create deployment api --image=registry.example/team/hello-api:2.1 --replicas=3 --port=8080",
		"create deployment web --image=hello",
		"create deployment",
		"create deployment nameless",
		"create deployment bad --image=hello --replicas=-1",
		"create deployment preview --image=hello:1.0 --replicas=2 --dry-run=client -o yaml",
		"create deployment preview --image=hello --dry-run=server",
		"create deployment preview --image=hello --dry-run=maybe",
		"create namespace team-b",
		"create ns team-b",
		"create ns Bad_Name",
		"create -f pod.yaml",
		"create -f pod.yaml",
		"create",
	))
	d := e.get(&appsv1.Deployment{}, "default", "api").(*appsv1.Deployment)
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 3 || d.Labels["app"] != "api" || d.Spec.Selector.MatchLabels["app"] != "api" ||
		d.Spec.Template.Labels["app"] != "api" || c.Name != "hello-api" || c.Image != "registry.example/team/hello-api:2.1" ||
		len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
		t.Fatalf("create deployment made %+v", d)
	}
	if _, err := e.store(d).Get(context.Background(), "default", "preview"); err == nil {
		t.Fatal("a dry run created the deployment")
	}
}

func TestApply(t *testing.T) {
	e := newEnv(t)
	const web = `# a namespace and a deployment
apiVersion: v1
kind: Namespace
metadata:
  name: prod
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels:
    app: web
    tier: front
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: hello
        image: hello:1.0
`
	e.files["web.yaml"] = web
	out := e.transcript("apply -f web.yaml", "apply -f web.yaml")

	// Edit the file: three replicas, no tier label, a new image.
	e.files["web.yaml"] = strings.NewReplacer("replicas: 2", "replicas: 3", "    tier: front\n", "", "hello:1.0", "hello:2.0").Replace(web)
	out += e.transcript("apply -f web.yaml")
	d := e.get(&appsv1.Deployment{}, "prod", "web").(*appsv1.Deployment)
	if *d.Spec.Replicas != 3 || d.Labels["tier"] != "" || d.Spec.Template.Spec.Containers[0].Image != "hello:2.0" {
		t.Fatalf("apply did not update: replicas %d labels %v image %s", *d.Spec.Replicas, d.Labels, d.Spec.Template.Spec.Containers[0].Image)
	}
	if !strings.Contains(d.Annotations[lastAppliedAnnotation], `"replicas":3`) {
		t.Fatalf("last-applied annotation: %q", d.Annotations[lastAppliedAnnotation])
	}

	// A change made by someone else (kubectl scale) survives an apply that
	// does not mention it... unless the file sets the field, as here.
	out += e.transcript("scale deployment web -n prod --replicas=5", "apply -f web.yaml")
	d = e.get(&appsv1.Deployment{}, "prod", "web").(*appsv1.Deployment)
	if *d.Spec.Replicas != 3 {
		t.Fatalf("replicas after apply: %d", *d.Spec.Replicas)
	}

	// Objects made by create have no last-applied configuration.
	e.mustRun("create deployment made --image=hello")
	e.files["made.json"] = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"made"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"made"}},"template":{"metadata":{"labels":{"app":"made"}},"spec":{"containers":[{"name":"hello","image":"hello"}]}}}}`
	out += e.transcript("apply -f made.json")

	// Standard input.
	stdout, stderr, code := e.runCtx(context.Background(), "apply -f -", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n")
	out += "$ kubectl apply -f - <<EOF ... EOF\n" + stdout + stderr
	if code != 0 {
		t.Fatalf("apply -f -: exit %d", code)
	}
	golden(t, "apply", out)
}

// TestBadInputSendsNothing: manifests that cannot be read, parsed or mapped
// fail with kubectl's message before any request changes the cluster.
func TestBadInputSendsNothing(t *testing.T) {
	e := newEnv(t)
	good := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fine\n---\n"
	e.files["syntax.yaml"] = good + "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  labels: [a\n"
	e.files["tabs.yaml"] = good + "apiVersion: v1\nkind: Namespace\nmetadata:\n\tname: x\n"
	e.files["nokind.yaml"] = good + "metadata:\n  name: x\n"
	e.files["unknown.yaml"] = good + "apiVersion: v1\nkind: Widget\nmetadata:\n  name: x\n"
	e.files["badversion.yaml"] = good + "apiVersion: apps/v9\nkind: Deployment\nmetadata:\n  name: x\n"
	e.files["scalar.yaml"] = "just a string\n"
	e.files["other-ns.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  namespace: a\nspec:\n  containers: []\n"
	e.files["empty.yaml"] = "# nothing here\n"
	e.takeWrites()
	out := e.transcript(
		"apply -f syntax.yaml",
		"apply -f tabs.yaml",
		"apply -f nokind.yaml",
		"apply -f unknown.yaml",
		"apply -f badversion.yaml",
		"apply -f scalar.yaml",
		"apply -f other-ns.yaml -n b",
		"apply -f empty.yaml",
		"apply -f missing.yaml",
		"apply",
		"create -f syntax.yaml",
		"delete -f nokind.yaml",
	)
	if w := e.takeWrites(); len(w) > 0 {
		t.Fatalf("bad input sent %v", w)
	}
	golden(t, "bad-input", out)
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	e.pod("a", map[string]string{"app": "web"}, "hello")
	e.pod("b", map[string]string{"app": "web"}, "hello")
	e.pod("c", map[string]string{"app": "db"}, "hello")
	e.files["d.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: hello\n        image: hello\n"
	e.mustRun("apply -f d.yaml")
	out := e.transcript(
		"delete pod c",
		"delete pods -l app=web",
		"delete pods -l app=none",
		"delete pod nope",
		"delete pod nope --ignore-not-found",
		"delete pods",
		"delete",
		"delete -f d.yaml -o name",
		"delete deploy web",
		"delete pod x --now --grace-period=3",
	)
	golden(t, "delete", out)

	// A pod on a node is not gone at once: it turns Terminating, and kubectl
	// waits until its kubelet (here, the test) finishes the deletion.
	p := e.runPod(e.pod("bound", nil, "hello"), "node-1", "10.244.1.2")
	done := make(chan string)
	go func() {
		stdout, _, code := e.run("delete pod bound")
		if code != 0 {
			stdout += " (failed)"
		}
		done <- stdout
	}()
	waitFor(t, func() bool {
		cur, err := e.store(p).Get(context.Background(), "default", "bound")
		return err == nil && cur.(*corev1.Pod).DeletionTimestamp != nil
	})
	select {
	case out := <-done:
		t.Fatalf("delete returned before the pod was gone: %q", out)
	default:
	}
	zero := int64(0)
	if _, _, err := e.store(p).Delete(context.Background(), "default", "bound", &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if out != "pod \"bound\" deleted\n" {
			t.Fatalf("delete printed %q", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("delete did not return after the pod was gone")
	}

	// Waiting is bounded: by --timeout, and by the context (Ctrl-C).
	e.runPod(e.pod("stuck", nil, "hello"), "node-1", "10.244.1.3")
	e.pod("stuck2", nil, "hello")
	e.runPod(e.get(&corev1.Pod{}, "default", "stuck2").(*corev1.Pod), "node-1", "10.244.1.4")
	stdout, stderr, code := e.run("delete pod stuck --timeout=50ms")
	if code != 1 || stdout != "pod \"stuck\" deleted\n" || stderr != "error: timed out waiting for the condition on pods/stuck\n" {
		t.Fatalf("timeout: %d %q %q", code, stdout, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, func() bool {
			cur, err := e.store(p).Get(context.Background(), "default", "stuck2")
			return err == nil && cur.(*corev1.Pod).DeletionTimestamp != nil
		})
		cancel()
	}()
	if _, _, code := e.runCtx(ctx, "delete pod stuck2", ""); code != 0 {
		t.Fatalf("cancelled delete: exit %d", code)
	}
}

func TestScale(t *testing.T) {
	e := newEnv(t)
	e.mustRun("create deployment web --image=hello")
	e.pod("p", nil, "hello")
	e.takeWrites()
	out := e.transcript(
		"scale deployment web --replicas=3",
		"scale --replicas=3 --current-replicas=1 deploy/web",
		"scale deploy/web --replicas=0 --current-replicas=3",
		"scale deploy web",
		"scale deploy nope --replicas=1",
		"scale pod p --replicas=2",
		"scale deploy --replicas=2",
	)
	golden(t, "scale", out)
	writes := e.takeWrites()
	if len(writes) == 0 || writes[0] != "PATCH /apis/apps/v1/namespaces/default/deployments/web/scale" {
		t.Fatalf("scale sent %v", writes)
	}
	if d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment); *d.Spec.Replicas != 0 {
		t.Fatalf("replicas %d", *d.Spec.Replicas)
	}
}

func TestLogs(t *testing.T) {
	e := newEnv(t)
	e.node("node-1", true)
	e.mustRun("create deployment web --image=hello")
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	for _, name := range []string{"web-1", "web-2"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: ptr(true)}}}}
		p.Spec = *d.Spec.Template.Spec.DeepCopy()
		p = e.create(p).(*corev1.Pod)
		if name == "web-2" {
			e.runPod(p, "node-1", "10.244.1.5")
		}
	}
	two := e.runPod(e.pod("two", nil, "app", "sidecar"), "node-1", "10.244.1.6")
	e.pod("pending", nil, "hello")
	e.logs["web-2/hello"] = "Hello from web-2\nline 2\nline 3\n"
	e.logs["two/app"] = "app says hi\n"
	e.logs["two/sidecar"] = "sidecar says hi\n"
	_ = two
	out := e.transcript(
		"logs web-2",
		"logs web-2 --tail=1",
		"logs web-2 --timestamps --tail 1",
		"logs deployment/web",
		"logs two",
		"logs two sidecar",
		"logs two -c nope",
		"logs nope",
		"logs pending",
		"logs",
		"logs -l app=web web-2",
		"logs -l app=nomatch",
		"logs -l app=web --ignore-errors",
		"logs -l app=web --prefix --tail=1",
		"logs two --all-containers --prefix",
		"logs deployment/web --all-pods --ignore-errors",
		"logs -f -l app=web --max-log-requests=1",
	)
	golden(t, "logs", out)

	// -f streams until Ctrl-C.
	ctx, cancel := context.WithCancel(context.Background())
	buf := &syncbuf.Buffer{}
	done := make(chan int)
	go func() {
		done <- e.cli.Run(ctx, []string{"logs", "-f", "web-2"}, IOStreams{Out: buf, ErrOut: buf})
	}()
	waitFor(t, func() bool { return strings.Contains(buf.String(), "line 3") })
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("logs -f exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not end after cancel")
	}
}

func TestInfoCommands(t *testing.T) {
	e := newEnv(t)
	golden(t, "info", e.transcript(
		"version",
		"version --client",
		"version -o json",
		"version -o xml",
		"api-resources",
		"api-resources -o wide",
		"api-resources --namespaced=false",
		"api-resources --api-group=apps -o name",
		"cluster-info",
		"foo",
		"help get",
	))
	if out := e.mustRun(""); !strings.Contains(out, "kubectl controls the Kubernetes cluster manager") || !strings.Contains(out, "Basic Commands:") {
		t.Fatalf("kubectl with no arguments printed %q", out)
	}
}
