package kubectl

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestLabelAnnotate: label and annotate with KEY=VAL, KEY-, --overwrite,
// -l, --all, --list, --resource-version and dry runs, and their errors.
func TestLabelAnnotate(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	golden(t, "label", e.transcript(
		"label deployment web tier=front",
		"label deployment web tier=back",
		"label deployment web tier=back --overwrite",
		"label deployment web tier=back",
		"label deployment/web tier- env=prod",
		"label deployment web tier-",
		"label pods -l app=web stage=canary",
		"label pods --all -A owner=team",
		"label deployment web --list",
		"label deployment web x=1 --dry-run=client",
		"label deployment web y=1 --dry-run=server",
		"label deployment web y=1 -o jsonpath={.metadata.labels.y}",
		"label deployment web z=1 --resource-version=1",
		"label deployment web",
		"label tier=front",
		"label deployment web a=b c",
		"label deployment web a=b=c",
		"label deployment web a=-bad-",
		"label deployment web a=b a-",
		"label deployment nope a=b",
		"label pods --all -l app=web a=b",
		"label deployment web 'bad key!=x'",
		"annotate deployment web note=hello",
		"annotate deployment web note=again",
		"annotate deployment web note='hello world' --overwrite",
		"annotate deployment web note- 'json={\"a\":1}'",
		"annotate deployment web --list",
		"annotate deployment web =x",
		"annotate deployment web a=1 a-",
	))
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	if d.Labels["tier"] != "" || d.Labels["env"] != "prod" || d.Labels["y"] != "1" || d.Labels["x"] != "" || d.Labels["z"] != "" {
		t.Errorf("labels after the transcript: %v", d.Labels)
	}
	if d.Annotations["note"] != "" || d.Annotations["json"] != `{"a":1}` {
		t.Errorf("annotations after the transcript: %v", d.Annotations)
	}
	p := e.get(&corev1.Pod{}, "team-a", "db").(*corev1.Pod)
	if p.Labels["owner"] != "team" {
		t.Errorf("label --all -A missed team-a/db: %v", p.Labels)
	}
}

// TestPatch: strategic, merge and JSON patches, no-change detection, the
// scale subresource, client and server dry runs, and bad input.
func TestPatch(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	e.files["patch.yaml"] = "spec:\n  replicas: 4\n"
	golden(t, "patch", e.transcript(
		`patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"hello:2.0"}]}}}}'`,
		`patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"hello","image":"hello:2.0"}]}}}}'`,
		`patch deployment web --type merge -p '{"spec":{"replicas":3}}'`,
		`patch deployment web --type json -p '[{"op":"replace","path":"/spec/replicas","value":1}]'`,
		`patch deployment web --patch-file patch.yaml`,
		`patch deployment web --subresource scale --type merge -p '{"spec":{"replicas":2}}'`,
		`patch deployment web --type merge -p '{"spec":{"replicas":9}}' --dry-run=client -o jsonpath={.spec.replicas}`,
		`patch deployment web --type merge -p '{"spec":{"replicas":9}}' --dry-run=server`,
		`patch node node-1 -p 'spec: {unschedulable: true}'`,
		`patch deployment web --type merge -p '{"spec":{"replicas":-1}}'`,
		`patch deployment web --type json -p '[{"op":"remove","path":"/spec/nope"}]'`,
		`patch deployment web --type foo -p '{}'`,
		`patch deployment web`,
		`patch deployment web -p '{}' --patch-file patch.yaml`,
		`patch deployment web -p '{"spec":'`,
		`patch deployment nope -p '{}'`,
		`patch deployment web --subresource=log -p '{}'`,
		`patch -p '{}'`,
	))
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "hello:2.0" {
		t.Errorf("after the transcript: replicas %d, image %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
}

// TestCordon: cordon and uncordon patch spec.unschedulable.
func TestCordon(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	golden(t, "cordon", e.transcript(
		"cordon node-1",
		"cordon node-1",
		"uncordon node-1",
		"uncordon node-1",
		"uncordon node-2 --dry-run=client",
		"cordon -l kubernetes.io/hostname=node-1",
		"cordon nope",
		"cordon",
	))
	if n := e.get(&corev1.Node{}, "", "node-2").(*corev1.Node); !n.Spec.Unschedulable {
		t.Error("a client dry run uncordoned node-2")
	}
	if n := e.get(&corev1.Node{}, "", "node-1").(*corev1.Node); !n.Spec.Unschedulable {
		t.Error("cordon -l did not cordon node-1")
	}
}

// TestCreateGenerators: create configmap|secret generic|service|job build
// the objects upstream's generators build (shown with --dry-run=client)
// and refuse bad input before sending anything.
func TestCreateGenerators(t *testing.T) {
	e := newEnv(t)
	e.files["app.properties"] = "color=blue\n"
	e.files["app.env"] = "# settings\nMODE=fast\n\nLEVEL=3\n"
	e.files["logo.bin"] = "\x89PNG\x00\x01"
	golden(t, "create-generators", e.transcript(
		"create configmap settings --from-literal=color=blue --from-literal=size=L --from-file=app.properties --from-file=logo=logo.bin --dry-run=client -o yaml",
		"create configmap env --from-env-file=app.env --dry-run=client -o jsonpath={.data}",
		"create cm bad --from-literal=noequals",
		"create cm bad --from-literal='bad key=1'",
		"create cm bad --from-literal=a=1 --from-literal=a=2",
		"create cm bad --from-file=missing.txt",
		"create cm bad --from-env-file=app.env --from-literal=a=1",
		"create configmap",
		"create secret generic creds --from-literal=password=s3cret --type=kubernetes.io/basic-auth --dry-run=client -o yaml",
		"create secret generic bad --from-literal=a=1 --from-literal=a=2",
		"create service clusterip front --tcp=80:8080 --tcp=443:https --dry-run=client -o yaml",
		"create svc nodeport np --tcp=80 --node-port=30080 --dry-run=client -o jsonpath={.spec.ports[0].nodePort}",
		"create service clusterip headless --clusterip=None --dry-run=client -o name",
		"create service externalname ext --external-name example.com --dry-run=client -o jsonpath={.spec.externalName}",
		"create service clusterip noports",
		"create service clusterip bad --tcp=99999:80",
		"create service clusterip bad --tcp=80:Bad_Name",
		"create service externalname ext --external-name 'not a name'",
		"create service nodeport np --clusterip=None",
		"create job once --image=hello --dry-run=client -o yaml -- /bin/hello --once",
		"create job once",
		"create job once --from=cronjob/x -- echo",
		"create job once --from=deployment/web",
		"create cronjob tick --image=hello --schedule='*/1 * * * *' --dry-run=client -o yaml -- /bin/hello --once",
		"create cj tick --image=hello --schedule='@hourly' --restart=Never --dry-run=client -o jsonpath={.spec.jobTemplate.spec.template.spec.restartPolicy}",
		"create cronjob tick",
		"create cronjob tick --image=hello",
		"create cronjob tick --image=hello --schedule=''",
	))
	if w := e.takeWrites(); len(w) != 0 {
		t.Errorf("dry runs and bad input sent writes: %v", w)
	}
}

// create serviceaccount, poddisruptionbudget and priorityclass, with
// upstream's checks of their flags (no write for bad input) and the API
// server's own refusals.
func TestCreatePolicyGenerators(t *testing.T) {
	e := newEnv(t)
	golden(t, "create-policy", e.transcript(
		"create serviceaccount robot --dry-run=client -o yaml",
		"create pdb web-pdb --selector=app=web --min-available=50% --dry-run=client -o yaml",
		"create pdb bad --min-available=1",
		"create pdb bad --selector=app=web",
		"create pdb bad --selector=app=web --min-available=1 --max-unavailable=1",
		"create pdb bad --selector=app=web --min-available=10Gb",
		"create pdb bad --selector=app=web --max-unavailable=one",
		"create priorityclass high --value=1000 --description='high priority' --dry-run=client -o yaml",
		"create sa",
	))
	if w := e.takeWrites(); len(w) != 0 {
		t.Errorf("dry runs and bad input sent writes: %v", w)
	}
	golden(t, "create-policy-server", e.transcript(
		"create serviceaccount robot",
		"create sa robot",
		"create poddisruptionbudget web-pdb --selector=app=web --max-unavailable=1",
		"get pdb web-pdb -o jsonpath={.spec.maxUnavailable}",
		"create priorityclass high --value=1000 --preemption-policy=Never",
		"get pc high -o jsonpath={.value}/{.preemptionPolicy}",
		"create pc too-high --value=2000000000",
	))
}
