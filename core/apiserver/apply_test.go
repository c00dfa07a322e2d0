package apiserver

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const applyType = "application/apply-patch+yaml"

func applyDeployment(replicas, container string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: ` + container + `
        image: hello
`
}

func decodeDeployment(t *testing.T, body string) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return &d
}

func managers(d *appsv1.Deployment) string {
	var out []string
	for _, m := range d.ManagedFields {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	return strings.Join(out, ",")
}

func TestServerSideApply(t *testing.T) {
	srv, reg := newTestServer(t)
	url := srv.URL + "/apis/apps/v1/namespaces/default/deployments/web"

	// Absent: apply creates.
	code, body, _ := do(t, "PATCH", url+"?fieldManager=alice", applyType, applyDeployment("2", "hello"))
	if code != 201 {
		t.Fatalf("create by apply: %d %s", code, body)
	}
	d := decodeDeployment(t, body)
	if *d.Spec.Replicas != 2 || d.UID == "" || managers(d) != "alice/Apply" {
		t.Fatalf("created: replicas %d uid %q managers %s", *d.Spec.Replicas, d.UID, managers(d))
	}
	// The same apply again changes nothing.
	rv := d.ResourceVersion
	code, body, _ = do(t, "PATCH", url+"?fieldManager=alice", applyType, applyDeployment("2", "hello"))
	if code != 200 || decodeDeployment(t, body).ResourceVersion != rv {
		t.Fatalf("idempotent apply: %d %s", code, body)
	}

	// Another manager setting alice's field to another value conflicts.
	before := reg.KV().Revision()
	code, body, _ = do(t, "PATCH", url+"?fieldManager=bob", applyType, applyDeployment("5", "hello"))
	var st metav1.Status
	_ = json.Unmarshal([]byte(body), &st)
	if code != 409 || st.Reason != metav1.StatusReasonConflict || st.Message != `Apply failed with 1 conflict: conflict with "alice": .spec.replicas` {
		t.Fatalf("conflict: %d %s", code, body)
	}
	if len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".spec.replicas" || reg.KV().Revision() != before {
		t.Fatalf("conflict details %+v, stored %v", st.Details, reg.KV().Revision() != before)
	}
	// force takes the field over.
	code, body, _ = do(t, "PATCH", url+"?fieldManager=bob&force=true", applyType, applyDeployment("5", "hello"))
	if d := decodeDeployment(t, body); code != 200 || *d.Spec.Replicas != 5 || managers(d) != "alice/Apply,bob/Apply" {
		t.Fatalf("force: %d replicas %d managers %s", code, *d.Spec.Replicas, managers(d))
	}

	// Lists with a merge key merge: carol's container joins the others.
	code, body, _ = do(t, "PATCH", url+"?fieldManager=carol", applyType, applyDeployment("5", "sidecar"))
	if code != 200 {
		t.Fatalf("sidecar: %d %s", code, body)
	}
	var names []string
	for _, c := range decodeDeployment(t, body).Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "hello,sidecar" {
		t.Fatalf("containers %v", names)
	}

	// An ordinary write records its manager, and a later apply names it.
	code, body, _ = do(t, "PATCH", url+"?fieldManager=dave", "application/merge-patch+json", `{"spec":{"replicas":7}}`)
	if d := decodeDeployment(t, body); code != 200 || !strings.Contains(managers(d), "dave/Update") {
		t.Fatalf("update manager: %d %s", code, managers(decodeDeployment(t, body)))
	}
	code, body, _ = do(t, "PATCH", url+"?fieldManager=bob", applyType, applyDeployment("5", "hello"))
	_ = json.Unmarshal([]byte(body), &st)
	if code != 409 || st.Message != `Apply failed with 1 conflict: conflict with "dave" using apps/v1: .spec.replicas` {
		t.Fatalf("conflict with an update: %d %s", code, body)
	}
}

func TestServerSideApplyErrors(t *testing.T) {
	srv, reg := newTestServer(t)
	url := srv.URL + "/apis/apps/v1/namespaces/default/deployments/web"
	cases := []struct {
		name, query, body string
		code              int
		msg               string
	}{
		{"no field manager", "", applyDeployment("1", "a"), 422, "fieldManager: Required value: is required for apply patch"},
		{"wrong version", "?fieldManager=m", strings.Replace(applyDeployment("1", "a"), "apps/v1", "apps/v1beta1", 1), 400,
			"invalid object type: apps/v1beta1, Kind=Deployment"},
		{"not yaml", "?fieldManager=m", "a: [b", 400, "error decoding YAML"},
		{"managed fields in the patch", "?fieldManager=m", strings.Replace(applyDeployment("1", "a"), "  name: web\n", "  name: web\n  managedFields: [{manager: x}]\n", 1), 400, "metadata.managedFields must be nil"},
		{"name differs from the URL", "?fieldManager=m", strings.Replace(applyDeployment("1", "a"), "name: web", "name: other", 1), 400, "does not match the name on the URL"},
		{"duplicate field under Strict", "?fieldManager=m&fieldValidation=Strict", applyDeployment("1", "a") + "  replicas: 2\n", 400, "error strict decoding YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, "PATCH", url+tc.query, applyType, tc.body)
			var st metav1.Status
			_ = json.Unmarshal([]byte(body), &st)
			if code != tc.code || !strings.Contains(st.Message, tc.msg) {
				t.Fatalf("%d %s; want %d containing %q", code, body, tc.code, tc.msg)
			}
		})
	}
	// A dry-run apply answers as a real one would, and stores nothing.
	before := reg.KV().Revision()
	code, body, _ := do(t, "PATCH", url+"?fieldManager=m&dryRun=All", applyType, applyDeployment("3", "a"))
	if code != 201 || *decodeDeployment(t, body).Spec.Replicas != 3 || reg.KV().Revision() != before {
		t.Fatalf("dry run: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", url, "", ""); code != 404 {
		t.Fatalf("dry run stored the deployment: %d", code)
	}
}

// Creates record their manager: the fieldManager parameter, else the
// User-Agent up to its first "/".
func TestCreateRecordsManager(t *testing.T) {
	srv, _ := newTestServer(t)
	base := srv.URL + "/apis/apps/v1/namespaces/default/deployments"
	code, body, _ := do(t, "POST", base, "application/json", deploymentJSON, "User-Agent", "kubectl/v1.32.4 (linux/amd64) kubernetes/abc")
	if d := decodeDeployment(t, body); code != 201 || managers(d) != "kubectl/Update" {
		t.Fatalf("%d %s", code, managers(decodeDeployment(t, body)))
	}
	code, body, _ = do(t, "POST", base+"?fieldManager=kubectl-create", "application/json", strings.Replace(deploymentJSON, `"name":"web"`, `"name":"web2"`, 1))
	if d := decodeDeployment(t, body); code != 201 || managers(d) != "kubectl-create/Update" {
		t.Fatalf("%d %s", code, managers(decodeDeployment(t, body)))
	}
}

// TestManagedFieldsAcrossVersions: an HPA written through autoscaling/v1
// (kubectl autoscale) and then through v2 keeps both managers, each entry in
// its own version; the field manager converts between the two, so neither
// write loses its record.
func TestManagedFieldsAcrossVersions(t *testing.T) {
	srv, _ := newTestServer(t)
	v1 := srv.URL + "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	v2 := srv.URL + "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
	code, body, _ := do(t, "POST", v1+"?fieldManager=kubectl-autoscale", "application/json",
		`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":50}}`)
	if code != 201 {
		t.Fatalf("create through v1: %d %s", code, body)
	}
	code, body, _ = do(t, "PATCH", v2+"/web?fieldManager=bob", "application/merge-patch+json", `{"spec":{"maxReplicas":7}}`)
	if code != 200 {
		t.Fatalf("patch through v2: %d %s", code, body)
	}
	code, body, _ = do(t, "PATCH", v1+"/web?fieldManager=carol", "application/merge-patch+json", `{"spec":{"minReplicas":2}}`)
	if code != 200 {
		t.Fatalf("patch through v1: %d %s", code, body)
	}
	var got metav1.PartialObjectMetadata
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, m := range got.ManagedFields {
		entries = append(entries, m.Manager+"@"+m.APIVersion)
	}
	sort.Strings(entries)
	want := "bob@autoscaling/v2,carol@autoscaling/v1,kubectl-autoscale@autoscaling/v1"
	if strings.Join(entries, ",") != want {
		t.Errorf("managedFields %v, want %s", entries, want)
	}
}
