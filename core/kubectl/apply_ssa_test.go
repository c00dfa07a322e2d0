package kubectl

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

const applyWeb = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: hello
        image: hello
`

// TestApplyServerSideAndConflicts: --server-side sends an apply patch
// (serverside-applied), a field another manager owns is a conflict with
// upstream's advice unless --force-conflicts; client-side apply of a file
// with a stale resourceVersion retries, then fails with upstream's
// "error when applying patch: ... to: ... for:" wording. Each message was
// compared with kubectl v1.32's against `kubetab cluster`.
func TestApplyServerSideAndConflicts(t *testing.T) {
	e := newEnv(t)
	e.files["web.yaml"] = applyWeb
	e.files["stale.yaml"] = strings.Replace(strings.Replace(applyWeb, "  name: web\n", "  name: web\n  resourceVersion: \"1\"\n", 1), "replicas: 2", "replicas: 3", 1)
	e.files["ssa2.yaml"] = strings.Replace(applyWeb, "replicas: 2", "replicas: 4", 1)
	golden(t, "apply-ssa", e.transcript(
		"apply -f web.yaml",
		"apply -f stale.yaml",
		"apply -f web.yaml --server-side",
		"apply -f ssa2.yaml --server-side --field-manager=other",
		"apply -f ssa2.yaml --server-side --field-manager=other --force-conflicts",
		"apply -f ssa2.yaml --server-side --field-manager=other",
		"apply -f ssa2.yaml --force-conflicts",
	))
	d := e.get(&appsv1.Deployment{}, "default", "web").(*appsv1.Deployment)
	if *d.Spec.Replicas != 4 {
		t.Errorf("replicas = %d, want 4 (the forced apply)", *d.Spec.Replicas)
	}
	owners := map[string]bool{}
	for _, mf := range d.ManagedFields {
		owners[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if !owners["other/Apply"] || !owners["kubectl/Apply"] {
		t.Errorf("managed fields %v, want kubectl/Apply and other/Apply", owners)
	}
}

// TestApplyConflictRetries: a stale file conflicts on every try; kubectl
// sends the PATCH 1+5 times before giving up, as upstream's patcher.
func TestApplyConflictRetries(t *testing.T) {
	e := newEnv(t)
	e.files["web.yaml"] = applyWeb
	e.files["stale.yaml"] = strings.Replace(applyWeb, "  name: web\n", "  name: web\n  resourceVersion: \"1\"\n", 1)
	e.mustRun("apply -f web.yaml")
	e.files["stale.yaml"] = strings.Replace(e.files["stale.yaml"], "replicas: 2", "replicas: 3", 1)
	_, errs, code := e.run("apply -f stale.yaml -v=6")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if n := strings.Count(errs, "round_trippers.go:560] PATCH "); n != 1+maxPatchRetry {
		t.Errorf("%d PATCH requests, want %d:\n%s", n, 1+maxPatchRetry, errs)
	}
}

// TestApplyServerSideOneConflict: two appliers, one field: the message
// kubectl v1.32 prints against `kubetab cluster`.
func TestApplyServerSideOneConflict(t *testing.T) {
	e := newEnv(t)
	e.files["web.yaml"] = applyWeb
	e.files["ssa2.yaml"] = strings.Replace(applyWeb, "replicas: 2", "replicas: 4", 1)
	e.mustRun("apply --server-side -f web.yaml --field-manager=a")
	_, errs, code := e.run("apply --server-side -f ssa2.yaml --field-manager=b")
	want := "error: Apply failed with 1 conflict: conflict with \"a\": .spec.replicas\nPlease review the fields above--they currently have other managers. Here\n"
	if code != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", code, errs, want)
	}
}
