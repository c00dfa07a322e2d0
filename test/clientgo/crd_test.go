package clientgo_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
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
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              replicas: {type: integer, default: 1}
`

// TestCustomResourceDynamicInformer: a CRD created through the dynamic
// client becomes Established; a dynamic informer on the new resource lists
// and watches its objects (JSON, as client-go sends custom resources),
// sees the defaulted field, and sees the objects go when the CRD does.
func TestCustomResourceDynamicInformer(t *testing.T) {
	tc := startCluster(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dc, err := dynamic.NewForConfig(tc.cfg)
	if err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(crontabCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the CRD's Established condition", func() bool {
		u, err := dc.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})
	gvr := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	inf := f.ForResource(gvr)
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		t.Fatal("the dynamic informer did not sync")
	}
	ct := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "nightly"},
		"spec":     map[string]any{"cronSpec": "0 3 * * *"},
	}}
	if _, err := dc.Resource(gvr).Namespace("default").Create(ctx, ct, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the informer's CronTab, defaulted", func() bool {
		obj, err := inf.Lister().ByNamespace("default").Get("nightly")
		if err != nil {
			return false
		}
		n, ok, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "replicas")
		return ok && n == 1
	})
	if err := dc.Resource(crdGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the CronTab's DELETED event", func() bool {
		objs, err := inf.Lister().List(labels.Everything())
		return err == nil && len(objs) == 0
	})
	waitFor(t, "the CRD to go", func() bool {
		_, err := dc.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		return err != nil
	})
	if _, err := tc.cs.Discovery().ServerResourcesForGroupVersion("stable.example.com/v1"); err == nil {
		t.Fatal("discovery still serves stable.example.com/v1")
	}
}
