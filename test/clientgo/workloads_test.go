package clientgo_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// TestWorkloadInformersSync: client-go's shared informers for DaemonSets,
// StatefulSets, ControllerRevisions, ReplicationControllers and
// PodTemplates list and watch kubetab (in protobuf, client-go's default),
// and see what the controllers write: a DaemonSet's revision and an
// RC's status.
func TestWorkloadInformersSync(t *testing.T) {
	tc := startCluster(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(tc.cs, 0)
	ds := f.Apps().V1().DaemonSets()
	sts := f.Apps().V1().StatefulSets()
	crs := f.Apps().V1().ControllerRevisions()
	rcs := f.Core().V1().ReplicationControllers()
	pts := f.Core().V1().PodTemplates()
	synced := []cache.InformerSynced{ds.Informer().HasSynced, sts.Informer().HasSynced, crs.Informer().HasSynced, rcs.Informer().HasSynced, pts.Informer().HasSynced}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers did not sync")
	}
	sel := map[string]string{"app": "agent"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "hello"}}}}
	if _, err := tc.cs.AppsV1().DaemonSets("default").Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rcTmpl := tmpl.DeepCopy()
	rcTmpl.Labels = map[string]string{"app": "legacy"}
	if _, err := tc.cs.CoreV1().ReplicationControllers("default").Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr(int32(1)), Template: rcTmpl},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.cs.CoreV1().PodTemplates("default").Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tmpl"}, Template: tmpl}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the DaemonSet's revision in the informer", func() bool {
		list, _ := crs.Lister().ControllerRevisions("default").List(everything())
		for _, cr := range list {
			if ref := metav1.GetControllerOf(cr); ref != nil && ref.Kind == "DaemonSet" && ref.Name == "agent" && cr.Revision == 1 {
				return true
			}
		}
		return false
	})
	waitFor(t, "the DaemonSet's status", func() bool {
		d, err := ds.Lister().DaemonSets("default").Get("agent")
		return err == nil && d.Status.ObservedGeneration == 1 && d.Status.DesiredNumberScheduled == 1
	})
	waitFor(t, "the RC's status", func() bool {
		rc, err := rcs.Lister().ReplicationControllers("default").Get("legacy")
		return err == nil && rc.Status.Replicas == 1 && rc.Status.ObservedGeneration == 1
	})
	waitFor(t, "the pod template", func() bool {
		_, err := pts.Lister().PodTemplates("default").Get("tmpl")
		return err == nil
	})
}

func everything() labels.Selector { return labels.Everything() }
