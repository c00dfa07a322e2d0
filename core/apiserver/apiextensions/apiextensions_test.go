package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/kubetab/kubetab/core/apiserver"
	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

const crontabCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              cronSpec: {type: string, pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'}
              image: {type: string, maxLength: 20}
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
              mode: {type: string, enum: [fast, slow]}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              tags: {type: array, items: {type: string, minLength: 2}}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

type fixture struct {
	t    *testing.T
	reg  *registry.Registry
	ctl  *Controller
	srv  *httptest.Server
	crds *registry.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := Install(reg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := reg.MustLookup("", "namespaces").Create(context.Background(), "", ns, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := apiserver.New(apiserver.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &fixture{t: t, reg: reg, ctl: ctl, srv: srv, crds: reg.MustLookup(Group, "customresourcedefinitions")}
}

func parseCRD(t *testing.T, y string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(y), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func (f *fixture) createCRD(y string) *apiextensionsv1.CustomResourceDefinition {
	f.t.Helper()
	crd := parseCRD(f.t, y)
	if _, err := f.crds.Create(context.Background(), "", crd, registry.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if err := f.ctl.Sync(context.Background(), crd.Name); err != nil {
		f.t.Fatal(err)
	}
	obj, err := f.crds.Get(context.Background(), "", crd.Name)
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*apiextensionsv1.CustomResourceDefinition)
}

func (f *fixture) do(method, path, ctype, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) crontabs() *registry.Store {
	st, ok := f.reg.LookupVersion(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"})
	if !ok {
		f.t.Fatal("crontabs are not served")
	}
	return st
}

func TestCRDStatus(t *testing.T) {
	f := newFixture(t)
	crd := f.createCRD(crontabCRD)
	for _, c := range []struct {
		typ    apiextensionsv1.CustomResourceDefinitionConditionType
		reason string
	}{{apiextensionsv1.NamesAccepted, "NoConflicts"}, {apiextensionsv1.Established, "InitialNamesAccepted"}} {
		got := condition(crd, c.typ)
		if got == nil || got.Status != apiextensionsv1.ConditionTrue || got.Reason != c.reason {
			t.Errorf("condition %s = %+v, want True/%s", c.typ, got, c.reason)
		}
	}
	if crd.Status.AcceptedNames.Kind != "CronTab" || crd.Status.AcceptedNames.ListKind != "CronTabList" {
		t.Errorf("acceptedNames = %+v", crd.Status.AcceptedNames)
	}
	if len(crd.Status.StoredVersions) != 1 || crd.Status.StoredVersions[0] != "v1" {
		t.Errorf("storedVersions = %v", crd.Status.StoredVersions)
	}
	// A second CRD of the group with a taken short name is not served.
	other := f.createCRD(strings.NewReplacer("crontabs", "crontabz", "crontab,", "crontabz,", "CronTab", "CronTabZ").Replace(crontabCRD))
	c := condition(other, apiextensionsv1.NamesAccepted)
	if c == nil || c.Status != apiextensionsv1.ConditionFalse || c.Message != `"ct" is already in use` {
		t.Errorf("conflicting CRD's NamesAccepted = %+v", c)
	}
	if isEstablished(other) {
		t.Error("a CRD whose names conflict is Established")
	}
}

func TestValidateCRD(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"two storage versions", "  versions:\n", "  versions:\n  - {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n",
			`".spec.replicas"}]}]: must have exactly one version marked as storage version`},
		{"no schema", "    schema:\n      openAPIV3Schema:", "    x-schema:\n      openAPIV3Schema:", ""},
		{"wrong name", "name: crontabs.stable.example.com", "name: crontab.stable.example.com",
			`metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group`},
		{"bad scope", "scope: Namespaced", "scope: Global",
			`spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"`},
		{"group without a dot", "group: stable.example.com", "group: stable",
			`spec.group: Invalid value: "stable": should be a domain with at least one dot`},
		{"untyped field", "cronSpec: {type: string,", "cronSpec: {",
			`spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].type: Required value: must not be empty for specified object fields`},
		{"bad default", "default: 1}", "default: 11}",
			`spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: 11: default in body should be less than or equal to 10`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(crontabCRD, tc.from, tc.to, 1)
			if tc.name == "no schema" {
				y = strings.Replace(crontabCRD, "    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:", "    x:\n      y:\n        type: object\n        properties:\n          spec:", 1)
				crd := &apiextensionsv1.CustomResourceDefinition{}
				_ = yaml.Unmarshal([]byte(y), crd)
				errs := validateCRD(crd)
				if got := errs.ToAggregate().Error(); !strings.Contains(got, "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required") {
					t.Fatalf("errors: %s", got)
				}
				return
			}
			crd := parseCRD(t, y)
			setDefaults(crd)
			errs := validateCRD(crd)
			if len(errs) == 0 {
				t.Fatal("no errors")
			}
			if got := errs.ToAggregate().Error(); !strings.Contains(got, tc.want) {
				t.Fatalf("errors:\n%s\nwant one with:\n%s", got, tc.want)
			}
		})
	}
	if errs := validateCRD(func() *apiextensionsv1.CustomResourceDefinition {
		c := parseCRD(t, crontabCRD)
		setDefaults(c)
		return c
	}()); len(errs) > 0 {
		t.Fatalf("the valid CRD: %v", errs)
	}
}

func TestCustomResourceValidation(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	base := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"pattern", `{"image":"i","cronSpec":"* * * *"}`, `spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'`},
		{"type", `{"image":5}`, `spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer"`},
		{"maximum", `{"image":"i","replicas":15}`, `spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10`},
		{"minimum", `{"image":"i","replicas":0}`, `spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`},
		{"required", `{"replicas":2}`, `spec.image: Required value`},
		{"enum", `{"image":"i","mode":"medium"}`, `spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`},
		{"maxLength", `{"image":"aaaaaaaaaaaaaaaaaaaaaaaaa"}`, `spec.image: Too long: may not be more than 20 bytes`},
		{"items minLength", `{"image":"i","tags":["ok","x"]}`, `spec.tags[1]: Invalid value: "x": spec.tags[1] in body should be at least 2 chars long`},
		{"null", `{"image":null}`, `spec.image: Invalid value: "null": spec.image in body must be of type string: "null"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":` + tc.spec + `}`
			code, out := f.do("POST", base, "application/json", body)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("code %d: %s", code, out)
			}
			var st metav1.Status
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatal(err)
			}
			if want := `CronTab.stable.example.com "x" is invalid: ` + tc.want; st.Message != want {
				t.Fatalf("message:\n%s\nwant:\n%s", st.Message, want)
			}
		})
	}
	if list, _ := f.crontabs().List(context.Background(), "", registry.ListOptions{}); len(list.(*unstructured.UnstructuredList).Items) != 0 {
		t.Fatal("an invalid custom resource was stored")
	}
}

func TestPruneAndDefault(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	body := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},
		"spec":{"image":"i","unknown":1,"extra":{"kept":{"deep":true}}},"status":{"replicas":3},"top":"dropped"}`
	code, out := f.do("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json", body)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if _, ok := spec["unknown"]; ok {
		t.Error("spec.unknown was not pruned")
	}
	if _, ok := got["top"]; ok {
		t.Error("top was not pruned")
	}
	if spec["replicas"] != float64(1) {
		t.Errorf("spec.replicas = %v, want the default 1", spec["replicas"])
	}
	if _, ok := spec["extra"].(map[string]any)["kept"]; !ok {
		t.Error("x-kubernetes-preserve-unknown-fields did not keep spec.extra.kept")
	}
	if _, ok := got["status"]; ok {
		t.Error("a create kept status although the status subresource is served")
	}
	// Status goes through the subresource; scale reads and writes the paths.
	code, out = f.do("PATCH", "/apis/stable.example.com/v1/namespaces/default/crontabs/a/status", "application/merge-patch+json", `{"status":{"replicas":2},"spec":{"image":"ignored"}}`)
	if code != http.StatusOK || !strings.Contains(out, `"status":{"replicas":2}`) || !strings.Contains(out, `"image":"i"`) {
		t.Fatalf("status patch: %d %s", code, out)
	}
	code, out = f.do("PUT", "/apis/stable.example.com/v1/namespaces/default/crontabs/a/scale", "application/json",
		`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":4}}`)
	if code != http.StatusOK || !strings.Contains(out, `"spec":{"replicas":4},"status":{"replicas":2}`) {
		t.Fatalf("scale: %d %s", code, out)
	}
	obj, _ := f.crontabs().Get(context.Background(), "default", "a")
	if n, _, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "replicas"); n != 4 {
		t.Fatalf("spec.replicas after scale = %d", n)
	}
	if g := obj.(*unstructured.Unstructured).GetGeneration(); g != 2 {
		t.Errorf("generation after a spec change = %d, want 2", g)
	}
}

func TestPrinterColumns(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	f.do("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"image":"i","cronSpec":"* * * * */5"}}`)
	req, _ := http.NewRequest("GET", f.srv.URL+"/apis/stable.example.com/v1/namespaces/default/crontabs", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Name,Spec,Replicas" {
		t.Fatalf("columns %v", names)
	}
	if len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != "a" || tbl.Rows[0].Cells[1] != "* * * * */5" || tbl.Rows[0].Cells[2] != float64(1) {
		t.Fatalf("rows %+v", tbl.Rows)
	}
}

func TestDeleteCRDStopsServing(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	ctx := context.Background()
	if code, out := f.do("GET", "/apis/stable.example.com/v1", "", ""); code != 200 || !strings.Contains(out, `"name":"crontabs"`) {
		t.Fatalf("discovery: %d %s", code, out)
	}
	if code, out := f.do("GET", "/apis", "", ""); !strings.Contains(out, `"name":"stable.example.com"`) {
		t.Fatalf("/apis: %d %s", code, out)
	}
	if code, out := f.do("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"image":"i"}}`); code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	if _, _, err := f.crds.Delete(ctx, "", "crontabs.stable.example.com", nil); err != nil {
		t.Fatal(err)
	}
	// The first delete only marks the CRD; it stays, terminating, with
	// the cleanup finalizer until the controller has deleted the objects.
	obj, err := f.crds.Get(ctx, "", "crontabs.stable.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if crd := obj.(*apiextensionsv1.CustomResourceDefinition); !hasFinalizer(crd) || condition(crd, apiextensionsv1.Terminating) == nil {
		t.Fatalf("deleted CRD: finalizers %v, conditions %+v", crd.Finalizers, crd.Status.Conditions)
	}
	if err := f.ctl.Sync(ctx, "crontabs.stable.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.crds.Get(ctx, "", "crontabs.stable.example.com"); !apierrors.IsNotFound(err) {
		t.Fatalf("CRD after cleanup: %v", err)
	}
	if code, _ := f.do("GET", "/apis/stable.example.com/v1", "", ""); code != 404 {
		t.Fatalf("discovery of the deleted group version: %d", code)
	}
	if _, out := f.do("GET", "/apis", "", ""); strings.Contains(out, "stable.example.com") {
		t.Fatalf("/apis still lists the group: %s", out)
	}
	if code, _ := f.do("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs", "", ""); code != 404 {
		t.Fatalf("list after delete: %d", code)
	}
	if kvs, _ := f.reg.KV().List("/registry/stable.example.com/"); len(kvs) != 0 {
		t.Fatalf("%d objects left in the store", len(kvs))
	}
	// Created again, it serves an empty collection.
	f.createCRD(crontabCRD)
	if code, out := f.do("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs", "", ""); code != 200 || !strings.Contains(out, `"items":[]`) {
		t.Fatalf("list after re-create: %d %s", code, out)
	}
}

func TestClusterScoped(t *testing.T) {
	f := newFixture(t)
	f.createCRD(strings.Replace(crontabCRD, "scope: Namespaced", "scope: Cluster", 1))
	if code, out := f.do("POST", "/apis/stable.example.com/v1/crontabs", "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"image":"i"}}`); code != 201 {
		t.Fatalf("create: %d %s", code, out)
	}
	if code, _ := f.do("GET", "/apis/stable.example.com/v1/namespaces/default/crontabs/a", "", ""); code != 404 {
		t.Fatalf("namespaced path of a cluster-scoped resource: %d", code)
	}
	if code, out := f.do("GET", "/apis/stable.example.com/v1/crontabs?fieldSelector=metadata.name%3Da", "", ""); code != 200 || !strings.Contains(out, `"name":"a"`) {
		t.Fatalf("field selector: %d %s", code, out)
	}
	if code, out := f.do("GET", "/apis/stable.example.com/v1/crontabs?fieldSelector=metadata.name%3Db", "", ""); code != 200 || strings.Contains(out, `"name":"a"`) {
		t.Fatalf("field selector: %d %s", code, out)
	}
}

func TestOpenAPIv3(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	code, out := f.do("GET", "/openapi/v3/apis/stable.example.com/v1", "", "")
	if code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				GVK        []any          `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	ct, ok := doc.Components.Schemas["com.example.stable.v1.CronTab"]
	if !ok || ct.Properties["spec"] == nil || ct.Properties["metadata"] == nil || len(ct.GVK) != 1 {
		t.Fatalf("CronTab definition: %+v", ct)
	}
}

// A CRD whose schema combines value validations with allOf, anyOf, oneOf
// and not.
const junctorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: backups, singular: backup, kind: Backup}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            oneOf:
            - required: [cron]
            - required: [interval]
            properties:
              cron: {type: string}
              interval: {type: integer}
              port:
                x-kubernetes-int-or-string: true
                anyOf: [{type: integer}, {type: string}]
              size: {type: integer, allOf: [{minimum: 1}, {maximum: 5}]}
              owner: {type: string, not: {enum: [root, admin]}}
              target:
                type: string
                anyOf: [{pattern: '^s3://'}, {pattern: '^gs://'}]
`

func TestValidateCRDJunctors(t *testing.T) {
	const at = "spec.versions[0].schema.openAPIV3Schema"
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"type in oneOf", "- required: [cron]", "- {required: [cron], type: object}",
			at + ".properties[spec].oneOf[0].type: Forbidden: must be empty to be structural"},
		{"description in not", "not: {enum: [root, admin]}", "not: {enum: [root], description: no root}",
			at + ".properties[spec].properties[owner].not.description: Forbidden: must be empty to be structural"},
		{"default in allOf", "allOf: [{minimum: 1}, {maximum: 5}]", "allOf: [{minimum: 1, default: 2}, {maximum: 5}]",
			at + ".properties[spec].properties[size].allOf[0].default: Forbidden: must be undefined to be structural"},
		{"additionalProperties in anyOf", "anyOf: [{pattern: '^s3://'}, {pattern: '^gs://'}]", "anyOf: [{additionalProperties: {type: string}}]",
			at + ".properties[spec].properties[target].anyOf[0].additionalProperties: Forbidden: must be undefined to be structural"},
		{"nullable in oneOf", "- required: [interval]", "- {required: [interval], nullable: true}",
			at + ".properties[spec].oneOf[1].nullable: Forbidden: must be false to be structural"},
		{"preserve unknown fields in not", "not: {enum: [root, admin]}", "not: {x-kubernetes-preserve-unknown-fields: true}",
			at + ".properties[spec].properties[owner].not.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural"},
		{"type nested deeper", "- required: [interval]", "- {properties: {interval: {type: integer}}}",
			at + ".properties[spec].oneOf[1].properties[interval].type: Forbidden: must be empty to be structural"},
		{"metadata in a junctor", "        type: object\n        properties:\n          spec:", "        type: object\n        anyOf: [{properties: {metadata: {}}}]\n        properties:\n          spec:",
			at + ".anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"},
		{"a field only a junctor names", "        type: object\n        properties:\n          spec:", "        type: object\n        anyOf: [{properties: {extra: {minLength: 1}}}]\n        properties:\n          spec:",
			at + ".properties[extra]: Required value: because it is defined in " + at + ".anyOf[0].properties[extra]"},
		{"bad pattern in anyOf", "{pattern: '^gs://'}", "{pattern: '('}",
			at + ".properties[spec].properties[target].anyOf[1].pattern: Invalid value: \"(\": must be a valid regular expression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(junctorCRD, tc.from, tc.to, 1)
			if y == junctorCRD {
				t.Fatalf("%q is not in the CRD", tc.from)
			}
			crd := parseCRD(t, y)
			setDefaults(crd)
			errs := validateCRD(crd)
			if got := errs.ToAggregate(); got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Fatalf("errors:\n%v\nwant one with:\n%s", got, tc.want)
			}
		})
	}
	// The schema as written is structural: the int-or-string anyOf may
	// name types.
	crd := parseCRD(t, junctorCRD)
	setDefaults(crd)
	if errs := validateCRD(crd); len(errs) > 0 {
		t.Fatalf("the valid CRD: %v", errs)
	}
}

func TestCustomResourceJunctors(t *testing.T) {
	f := newFixture(t)
	f.createCRD(junctorCRD)
	base := "/apis/stable.example.com/v1/namespaces/default/backups"
	post := func(name, spec string) (int, string) {
		t.Helper()
		code, out := f.do("POST", base, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"Backup","metadata":{"name":"`+name+`"},"spec":`+spec+`}`)
		var st metav1.Status
		_ = json.Unmarshal([]byte(out), &st)
		return code, st.Message
	}
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"oneOf: none", `{}`, `[<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid, spec.cron: Required value]`},
		{"oneOf: two", `{"cron":"@daily","interval":5}`, `<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives`},
		{"allOf: one fails", `{"cron":"@daily","size":7}`,
			`[spec.size: Invalid value: 7: spec.size in body should be less than or equal to 5, <nil>: Invalid value: "": "spec.size" must validate all the schemas (allOf)]`},
		{"not", `{"cron":"@daily","owner":"admin"}`, `<nil>: Invalid value: "": "spec.owner" must not validate the schema (not)`},
		{"anyOf: none", `{"cron":"@daily","target":"ftp://x"}`,
			`[<nil>: Invalid value: "": "spec.target" must validate at least one schema (anyOf), spec.target: Invalid value: "ftp://x": spec.target in body should match '^s3://']`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := post("x", tc.spec)
			if want := `Backup.stable.example.com "x" is invalid: ` + tc.want; code != http.StatusUnprocessableEntity || msg != want {
				t.Fatalf("%d %s\nwant 422 %s", code, msg, want)
			}
		})
	}
	for i, spec := range []string{`{"interval":3,"port":8080,"size":5,"owner":"me","target":"gs://b"}`, `{"cron":"@daily","port":"http"}`} {
		if code, msg := post(fmt.Sprint("ok-", i), spec); code != http.StatusCreated {
			t.Errorf("%s: %d %s", spec, code, msg)
		}
	}
}

// waitCRD waits, on a watch, until the CRD named name satisfies ok (nil:
// until it is deleted).
func (f *fixture) waitCRD(ctx context.Context, name string, ok func(*apiextensionsv1.CustomResourceDefinition) bool) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// From the CRD as it is now: the watch misses no change after it.
	cur, err := f.crds.Get(ctx, "", name)
	if apierrors.IsNotFound(err) && ok == nil {
		return
	}
	if err != nil {
		f.t.Fatal(err)
	}
	if crd := cur.(*apiextensionsv1.CustomResourceDefinition); ok != nil && ok(crd) {
		return
	}
	w, err := f.crds.Watch(ctx, "", registry.ListOptions{ResourceVersion: cur.(*apiextensionsv1.CustomResourceDefinition).ResourceVersion})
	if err != nil {
		f.t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		crd, isCRD := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
		if !isCRD || crd.Name != name {
			continue
		}
		if ok == nil && ev.Type == watch.Deleted || ok != nil && ev.Type != watch.Deleted && ok(crd) {
			return
		}
	}
	f.t.Fatalf("CRD %s: the condition did not come within 10s", name)
}

// Deleting a CRD deletes its objects while the resource is still served
// (creates refused), waits for the ones with finalizers, and then ends the
// open watches of the resource.
func TestDeleteCRDWaitsForObjectsAndEndsWatches(t *testing.T) {
	f := newFixture(t)
	f.createCRD(crontabCRD)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.ctl.Run(ctx) }()
	base := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	for _, body := range []string{
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"held","finalizers":["example.com/hold"]},"spec":{"image":"i"}}`,
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"free"},"spec":{"image":"i"}}`,
	} {
		if code, out := f.do("POST", base, "application/json", body); code != 201 {
			t.Fatalf("create: %d %s", code, out)
		}
	}
	// Two watchers: a component in-process, kubectl get -w over HTTP.
	inproc, err := f.crontabs().Watch(ctx, "default", registry.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.srv.URL + base + "?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	httpDone := make(chan string)
	go func() { b, _ := io.ReadAll(resp.Body); httpDone <- string(b) }()

	if _, _, err := f.crds.Delete(ctx, "", "crontabs.stable.example.com", nil); err != nil {
		t.Fatal(err)
	}
	// The in-process watcher sees free go, and held marked for deletion.
	deadline := time.After(10 * time.Second)
	for seen := map[string]bool{}; !seen["free"] || !seen["held"]; {
		select {
		case ev := <-inproc.ResultChan():
			u, _ := ev.Object.(*unstructured.Unstructured)
			switch {
			case u == nil:
			case ev.Type == watch.Deleted && u.GetName() == "free":
				seen["free"] = true
			case ev.Type == watch.Modified && u.GetName() == "held" && u.GetDeletionTimestamp() != nil:
				seen["held"] = true
			}
		case <-deadline:
			t.Fatal("the objects were not deleted")
		}
	}
	obj, err := f.crds.Get(ctx, "", "crontabs.stable.example.com")
	if err != nil {
		t.Fatal(err)
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if c := condition(crd, apiextensionsv1.Terminating); c.Status != apiextensionsv1.ConditionTrue || c.Message != "CustomResource deletion is in progress" || !hasFinalizer(crd) {
		t.Fatalf("terminating CRD: %+v, finalizers %v", c, crd.Finalizers)
	}
	// Still served: the held object is there, being deleted; the other is gone.
	code, out := f.do("GET", base, "", "")
	if code != 200 || !strings.Contains(out, `"name":"held"`) || !strings.Contains(out, `"deletionTimestamp"`) || strings.Contains(out, `"name":"free"`) {
		t.Fatalf("list while terminating: %d %s", code, out)
	}
	code, out = f.do("POST", base, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"late"},"spec":{"image":"i"}}`)
	if code != 403 || !strings.Contains(out, `crontabs.stable.example.com \"late\" is forbidden: create not allowed while custom resource definition is terminating`) {
		t.Fatalf("create while terminating: %d %s", code, out)
	}
	select {
	case b := <-httpDone:
		t.Fatalf("the HTTP watch ended while the CRD was terminating: %s", b)
	default:
	}

	// The last finalizer goes: the object, then the CRD.
	code, out = f.do("PATCH", base+"/held", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	if code != 200 {
		t.Fatalf("remove the finalizer: %d %s", code, out)
	}
	f.waitCRD(ctx, "crontabs.stable.example.com", nil)

	// Both watches end.
	deadline = time.After(10 * time.Second)
	for open := true; open; {
		select {
		case _, ok := <-inproc.ResultChan():
			open = ok
		case <-deadline:
			t.Fatal("the in-process watch did not end")
		}
	}
	select {
	case b := <-httpDone:
		if !strings.Contains(b, `"type":"DELETED"`) {
			t.Errorf("the HTTP watch saw no deletion: %s", b)
		}
	case <-deadline:
		t.Fatal("the HTTP watch did not end")
	}
	if code, _ := f.do("GET", base, "", ""); code != 404 {
		t.Fatalf("list after the CRD is gone: %d", code)
	}
	// Created again, its objects may be created again.
	f.createCRD(crontabCRD)
	if code, out := f.do("POST", base, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"late"},"spec":{"image":"i"}}`); code != 201 {
		t.Fatalf("create after re-create: %d %s", code, out)
	}
}
