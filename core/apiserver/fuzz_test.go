package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/apiserver/registry"
	"github.com/kubetab/kubetab/core/store"
)

// FuzzDecodeAndValidate feeds arbitrary bodies through what a create does
// with them: decode (JSON with the Strict unknown-field check), then the
// registry's defaulting, validation and admission with dryRun. Whatever the
// input, the answer is an object or a Kubernetes status error: never a
// panic, never a write.
func FuzzDecodeAndValidate(f *testing.F) {
	for _, seed := range []string{
		podJSON,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":-1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"hello"}]}}}}`,
		`{"metadata":{"name":"Web_1","labels":{"-bad":"x"}},"spec":{"containers":[]}}`,
		`{"spec":{"containers":[{"name":"c","image":"hello","resources":{"requests":{"cpu":"-1"},"limits":{"cpu":"1x"}}}]}}`,
		`null`, `[]`, `{"kind":1}`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	reg, err := registry.Default(registry.Config{Store: store.New(store.Config{})})
	if err != nil {
		f.Fatal(err)
	}
	if err := reg.Bootstrap(context.Background(), registry.BootstrapConfig{}); err != nil {
		f.Fatal(err)
	}
	before := reg.KV().Revision()
	f.Fuzz(func(t *testing.T, data []byte, pod bool) {
		st := reg.MustLookup("apps", "deployments")
		if pod {
			st = reg.MustLookup("", "pods")
		}
		obj := st.Resource.New()
		err := decodeJSON(httptest.NewRecorder(), "Strict", data, st.Resource.GroupVersionKind(), obj)
		if err == nil {
			_, err = st.Create(context.Background(), "default", obj, registry.CreateOptions{DryRun: true})
		}
		var strict strictDecodingError
		if err != nil && !errors.As(err, &strict) { // decode words strict errors as a 400
			if _, ok := err.(apierrors.APIStatus); !ok {
				t.Fatalf("not a status error: %T %v", err, err)
			}
		}
		if rev := reg.KV().Revision(); rev != before {
			t.Fatalf("a dry run wrote to the store: revision %d -> %d", before, rev)
		}
	})
}

// FuzzApplyPatch applies arbitrary JSON, merge and strategic merge patches
// to a pod and a deployment. A patch either fails with a 400 (a 422 for a
// JSON patch that does not apply, a 413 for one of too many operations, as
// upstream) or yields JSON that decodes again; it never panics.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"labels":{"app":"web"}}}`,
		`{"spec":{"containers":[{"name":"hello","image":"hello:2.0"}]}}`,
		`{"spec":{"containers":[{"$patch":"delete","name":"hello"}]}}`,
		`{"$setElementOrder/containers":[{"name":"x"}]}`,
		`[{"op":"replace","path":"/spec/replicas","value":3}]`,
		`[{"op":"move","from":"/metadata","path":"/metadata/x"}]`,
		`null`, `[]`, `{}`,
	} {
		for pt := uint8(0); pt < 3; pt++ {
			f.Add([]byte(seed), pt, pt%2 == 0)
		}
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal([]byte(podJSON), pod); err != nil {
		f.Fatal(err)
	}
	n := int32(2)
	dep := &appsv1.Deployment{}
	dep.Name, dep.Spec.Replicas = "web", &n
	dep.Spec.Template.Spec.Containers = pod.Spec.Containers
	podData, _ := json.Marshal(pod)
	depData, _ := json.Marshal(dep)
	types3 := []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType}
	f.Fuzz(func(t *testing.T, patch []byte, pt uint8, onPod bool) {
		var cur []byte = depData
		var schema runtime.Object = &appsv1.Deployment{}
		if onPod {
			cur, schema = podData, &corev1.Pod{}
		}
		out, err := applyPatch(types3[int(pt)%3], cur, patch, schema)
		if err != nil {
			if !apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) && !apierrors.IsRequestEntityTooLargeError(err) {
				t.Fatalf("patch error is not a 400, 422 or 413: %v", err)
			}
			return
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("patched document is not JSON: %v: %q", err, out)
		}
	})
}
