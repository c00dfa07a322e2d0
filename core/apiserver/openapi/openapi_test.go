package openapi

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func testResources() []Resource {
	return []Resource{
		{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true, Verbs: allVerbs,
			Object: &corev1.Pod{}, List: &corev1.PodList{},
			Subresources: []Subresource{
				{Name: "status", Verbs: []string{"get", "patch", "update"}},
				{Name: "binding", Verbs: []string{"create"}, Object: &corev1.Binding{}, Version: "v1", Kind: "Binding"},
				{Name: "log", Verbs: []string{"get"}, Object: corev1.PodLogOptions{}},
			}},
		{Version: "v1", Kind: "Node", Resource: "nodes", Verbs: allVerbs, Object: &corev1.Node{}, List: &corev1.NodeList{}},
		{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespaced: true, Verbs: allVerbs,
			Object: &appsv1.Deployment{}, List: &appsv1.DeploymentList{},
			Subresources: []Subresource{
				{Name: "status", Verbs: []string{"get", "patch", "update"}},
				{Name: "scale", Verbs: []string{"get", "patch", "update"}, Object: &autoscalingv1.Scale{}, Group: "autoscaling", Version: "v1", Kind: "Scale"},
			}},
	}
}

func newTestSpec(t testing.TB) *Spec {
	s, err := New(Config{Resources: testResources})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func v3Doc(t *testing.T, s *Spec, path string) *spec3.OpenAPI {
	t.Helper()
	data, hash, ok, err := s.V3(path)
	if err != nil || !ok || hash == "" {
		t.Fatalf("%s: ok=%v hash=%q err=%v", path, ok, hash, err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// property follows an allOf-wrapped $ref the way clients do.
func resolve(doc *spec3.OpenAPI, s spec.Schema) *spec.Schema {
	ref := s.Ref.String()
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref.String()
	}
	if ref == "" {
		return &s
	}
	return doc.Components.Schemas[strings.TrimPrefix(ref, refPrefix)]
}

func TestV3Documents(t *testing.T) {
	s := newTestSpec(t)
	paths, err := s.V3Paths()
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.HasPrefix(paths["apis/apps/v1"], "/openapi/v3/apis/apps/v1?hash=") || paths["api/v1"] == "" {
		t.Fatalf("paths %v", paths)
	}
	doc := v3Doc(t, s, "apis/apps/v1")
	if doc.Version != "3.0.0" {
		t.Fatalf("openapi %q", doc.Version)
	}
	dep := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if dep == nil {
		t.Fatal("no Deployment schema")
	}
	gvks, _ := dep.Extensions["x-kubernetes-group-version-kind"].([]any)
	if len(gvks) != 1 || gvks[0].(map[string]any)["kind"] != "Deployment" || gvks[0].(map[string]any)["group"] != "apps" {
		t.Fatalf("gvk %v", dep.Extensions)
	}
	if dep.Description != (appsv1.Deployment{}).SwaggerDoc()[""] {
		t.Fatalf("description %q", dep.Description)
	}
	depSpec := resolve(doc, dep.Properties["spec"])
	if got := strings.Join(depSpec.Required, ","); got != "selector,template" {
		t.Fatalf("DeploymentSpec required %s", got)
	}
	replicas := depSpec.Properties["replicas"]
	if !replicas.Type.Contains("integer") || replicas.Format != "int32" || replicas.Description != (appsv1.DeploymentSpec{}).SwaggerDoc()["replicas"] {
		t.Fatalf("replicas %+v", replicas)
	}
	if ps := depSpec.Properties["strategy"].Extensions["x-kubernetes-patch-strategy"]; ps != "retainKeys" {
		t.Fatalf("strategy patch strategy %v", ps)
	}
	podSpec := resolve(doc, resolve(doc, depSpec.Properties["template"]).Properties["spec"])
	containers := podSpec.Properties["containers"]
	if containers.Extensions["x-kubernetes-patch-strategy"] != "merge" || containers.Extensions["x-kubernetes-patch-merge-key"] != "name" {
		t.Fatalf("containers extensions %v", containers.Extensions)
	}
	if rp := podSpec.Properties["restartPolicy"]; !rp.Type.Contains("string") || rp.Description == "" {
		t.Fatalf("restartPolicy %+v", rp)
	}
	container := resolve(doc, *containers.Items.Schema)
	if strings.Join(container.Required, ",") != "name" {
		t.Fatalf("container required %v", container.Required)
	}
	ios := doc.Components.Schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
	if ios == nil || ios.Format != "int-or-string" || len(ios.OneOf) != 2 {
		t.Fatalf("IntOrString %+v", ios)
	}
	q := doc.Components.Schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]
	if q == nil || len(q.OneOf) != 2 {
		t.Fatalf("Quantity %+v", q)
	}
	if tm := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]; tm == nil || !tm.Type.Contains("string") || tm.Format != "date-time" {
		t.Fatalf("Time %+v", tm)
	}
	// Only what apps/v1 reaches: no Node.
	if doc.Components.Schemas["io.k8s.api.core.v1.Node"] != nil {
		t.Fatal("apps/v1 document holds core/v1 Node")
	}

	// The PATCH kubectl looks for before apply.
	item := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
	if item == nil || item.Patch == nil {
		t.Fatalf("no PATCH for deployments: %v", keys(doc.Paths.Paths))
	}
	if item.Patch.Extensions["x-kubernetes-action"] != "patch" {
		t.Fatalf("action %v", item.Patch.Extensions)
	}
	var names []string
	for _, p := range item.Patch.Parameters {
		names = append(names, p.In+":"+p.Name)
	}
	if strings.Join(names, ",") != "query:dryRun,query:fieldManager,query:fieldValidation,query:force" {
		t.Fatalf("patch parameters %v", names)
	}
	if _, ok := item.Patch.RequestBody.Content["application/strategic-merge-patch+json"]; !ok {
		t.Fatal("PATCH does not take strategic merge patches")
	}
	scale := doc.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
	if scale == nil || scale.Get.Extensions["x-kubernetes-group-version-kind"].(map[string]any)["kind"] != "Scale" {
		t.Fatalf("scale path %+v", scale)
	}
	list := doc.Paths.Paths["/apis/apps/v1/deployments"]
	if list == nil || list.Get.OperationId != "listAppsV1DeploymentForAllNamespaces" {
		t.Fatalf("all-namespaces list %+v", list)
	}

	core := v3Doc(t, s, "api/v1")
	logPath := core.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}/log"]
	if logPath == nil || logPath.Get.OperationId != "readCoreV1NamespacedPodLog" || len(logPath.Get.Parameters) == 0 {
		t.Fatalf("log path %+v", logPath)
	}
	if _, _, ok, _ := s.V3("apis/nope/v1"); ok {
		t.Fatal("unknown group version served")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// kubectl apply computes its strategic merge patch from the v3 document
// (strategicpatch.NewPatchMetaFromOpenAPIV3): containers must merge by name.
func TestV3DrivesStrategicMergePatch(t *testing.T) {
	s := newTestSpec(t)
	doc := v3Doc(t, s, "apis/apps/v1")
	// What kubectl's patcher does: find the kind's schema, look up patch
	// metadata through the document's schemas.
	meta := strategicpatch.PatchMetaFromOpenAPIV3{Schema: doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"], SchemaList: doc.Components.Schemas}
	toJSON := func(y string) []byte {
		j, err := yaml.YAMLToJSON([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	original := toJSON("spec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: one}\n")
	modified := toJSON("spec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: two}\n")
	current := toJSON("spec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: one}\n      - {name: sidecar, image: s}\n")
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), `"$setElementOrder/containers":[{"name":"a"}]`) || strings.Contains(string(patch), "sidecar") {
		t.Fatalf("patch does not merge containers by name: %s", patch)
	}
}

// Server-side apply builds its type converter from the definitions.
func TestDefinitionsMakeATypeConverter(t *testing.T) {
	s := newTestSpec(t)
	defs, _ := s.Definitions()
	tc, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "a", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
		}}},
	}
	if _, err := tc.ObjectToTyped(dep); err != nil {
		t.Fatal(err)
	}
}

func TestV2Document(t *testing.T) {
	s := newTestSpec(t)
	jsonData, pb, hash, err := s.V2()
	if err != nil || hash == "" {
		t.Fatal(err)
	}
	var doc struct {
		Swagger     string
		Definitions map[string]map[string]any
		Paths       map[string]map[string]any
	}
	if err := json.Unmarshal(jsonData, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" || doc.Definitions["io.k8s.api.core.v1.Pod"] == nil || doc.Paths["/api/v1/nodes/{name}"] == nil {
		t.Fatalf("v2: %s %d definitions", doc.Swagger, len(doc.Definitions))
	}
	if strings.Contains(string(jsonData), "#/components/") || strings.Contains(string(jsonData), `"oneOf"`) {
		t.Fatal("v3 forms in the v2 document")
	}
	if runtime.GOOS == "js" {
		if pb != nil {
			t.Fatal("the browser build encodes protobuf")
		}
		return
	}
	var gd openapi_v2.Document
	if err := proto.Unmarshal(pb, &gd); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range gd.GetDefinitions().GetAdditionalProperties() {
		if p.GetName() == "io.k8s.api.apps.v1.Deployment" {
			found = true
		}
	}
	if gd.GetSwagger() != "2.0" || !found {
		t.Fatalf("protobuf document: swagger %q, deployment found %v", gd.GetSwagger(), found)
	}
}

// The documents are rebuilt when the served resources change, and only then.
func TestRebuildOnChange(t *testing.T) {
	rs := testResources()[:1]
	s, _ := New(Config{Resources: func() []Resource { return rs }})
	p1, _ := s.V3Paths()
	p2, _ := s.V3Paths()
	if len(p1) != 1 || p1["api/v1"] != p2["api/v1"] {
		t.Fatalf("%v %v", p1, p2)
	}
	rs = testResources()
	p3, _ := s.V3Paths()
	if len(p3) != 2 || p3["api/v1"] == p1["api/v1"] {
		t.Fatalf("not rebuilt: %v", p3)
	}
}

// BenchmarkGenerate measures building every document from scratch: the cost
// of the first /openapi request.
func BenchmarkGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := newTestSpec(b)
		if _, err := s.V3Paths(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerateV2 adds the Swagger 2.0 document and its protobuf form.
func BenchmarkGenerateV2(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := newTestSpec(b)
		if _, _, _, err := s.V2(); err != nil {
			b.Fatal(err)
		}
	}
}
