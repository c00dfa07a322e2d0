package registry

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

func TestPriorityAdmission(t *testing.T) {
	reg := newRegistry(t)
	p := mustCreate(t, reg, pod("plain"))
	if p.Spec.Priority == nil || *p.Spec.Priority != 0 || p.Spec.PriorityClassName != "" ||
		p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("no class, no default: priority %v class %q policy %v", p.Spec.Priority, p.Spec.PriorityClassName, p.Spec.PreemptionPolicy)
	}
	never := corev1.PreemptNever
	mustCreate(t, reg, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 100, PreemptionPolicy: &never})
	p = mustCreate(t, reg, pod("batch", func(p *corev1.Pod) { p.Spec.PriorityClassName = "batch" }))
	if *p.Spec.Priority != 100 || *p.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("class batch: priority %d policy %v", *p.Spec.Priority, p.Spec.PreemptionPolicy)
	}
	p = mustCreate(t, reg, pod("critical", func(p *corev1.Pod) {
		p.Namespace = "kube-system"
		p.Spec.PriorityClassName = SystemNodeCritical
	}))
	if *p.Spec.Priority != 2000001000 {
		t.Errorf("system-node-critical: priority %d", *p.Spec.Priority)
	}
	// A global default applies to pods without a class and names itself.
	mustCreate(t, reg, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "normal"}, Value: 10, GlobalDefault: true})
	p = mustCreate(t, reg, pod("defaulted"))
	if *p.Spec.Priority != 10 || p.Spec.PriorityClassName != "normal" {
		t.Errorf("global default: priority %d class %q", *p.Spec.Priority, p.Spec.PriorityClassName)
	}
	// Updates keep the priority even if the client drops it.
	p.Spec.Priority = nil
	p.Spec.Containers[0].Image = "hello:2.0"
	if p = mustUpdate(t, reg, p); p.Spec.Priority == nil || *p.Spec.Priority != 10 {
		t.Errorf("priority after update %v", p.Spec.Priority)
	}
	// The system classes may not be deleted; the user's may.
	wantStatus(t, del(t, reg, &schedulingv1.PriorityClass{}, "", SystemClusterCritical), 403,
		`priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted`)
	if err := del(t, reg, &schedulingv1.PriorityClass{}, "", "batch"); err != nil {
		t.Fatal(err)
	}
	// Marking a second class default is refused on update too; the default
	// itself may be updated.
	pc := mustCreate(t, reg, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Value: 20})
	pc.GlobalDefault = true
	_, err := update(t, reg, pc)
	wantStatus(t, err, 403, "PriorityClass normal is already marked as default. Only one default can exist")
	def := get(t, reg, &schedulingv1.PriorityClass{}, "", "normal")
	def.Description = "the usual"
	mustUpdate(t, reg, def)
}

func TestServiceAccountAdmission(t *testing.T) {
	reg := newRegistry(t)
	for _, ns := range BootstrapNamespaces {
		get(t, reg, &corev1.ServiceAccount{}, ns, "default")
	}
	p := mustCreate(t, reg, pod("web", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "hello:1.0"}}
	}))
	if p.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName %q", p.Spec.ServiceAccountName)
	}
	if len(p.Spec.Volumes) != 1 || !strings.HasPrefix(p.Spec.Volumes[0].Name, "kube-api-access-") || len(p.Spec.Volumes[0].Name) != len("kube-api-access-")+5 {
		t.Fatalf("token volume: %+v", p.Spec.Volumes)
	}
	v := p.Spec.Volumes[0].Projected
	if v == nil || len(v.Sources) != 3 || *v.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
		v.Sources[1].ConfigMap.Name != "kube-root-ca.crt" || v.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" || *v.DefaultMode != 420 {
		t.Errorf("projected volume: %+v", v)
	}
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != DefaultAPITokenMountPath || !c.VolumeMounts[0].ReadOnly || c.VolumeMounts[0].Name != p.Spec.Volumes[0].Name {
			t.Errorf("container %s mounts %+v", c.Name, c.VolumeMounts)
		}
	}
	// automountServiceAccountToken: false on the account or the pod.
	mustCreate(t, reg, &corev1.ServiceAccount{ObjectMeta: objMeta("quiet"), AutomountServiceAccountToken: ptr(false),
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry-key"}}})
	p = mustCreate(t, reg, pod("quiet", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" }))
	if len(p.Spec.Volumes) != 0 || len(p.Spec.ImagePullSecrets) != 1 || p.Spec.ImagePullSecrets[0].Name != "registry-key" {
		t.Errorf("quiet account: volumes %v pull secrets %v", p.Spec.Volumes, p.Spec.ImagePullSecrets)
	}
	p = mustCreate(t, reg, pod("no-token", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(false) }))
	if len(p.Spec.Volumes) != 0 {
		t.Errorf("automount false on the pod: volumes %v", p.Spec.Volumes)
	}
	// The deprecated serviceAccount field names the account too.
	p = mustCreate(t, reg, pod("old-client", func(p *corev1.Pod) { p.Spec.DeprecatedServiceAccount = "quiet" }))
	if p.Spec.ServiceAccountName != "quiet" {
		t.Errorf("serviceAccount: quiet gave serviceAccountName %q", p.Spec.ServiceAccountName)
	}
	// A new namespace gets its default account and the CA bundle the token
	// volume projects.
	mustCreate(t, reg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	get(t, reg, &corev1.ServiceAccount{}, "team-a", "default")
	if cm := get(t, reg, &corev1.ConfigMap{}, "team-a", RootCAConfigMapName); cm.Data == nil {
		t.Errorf("kube-root-ca.crt %+v", cm)
	}
	mustCreate(t, reg, pod("web", func(p *corev1.Pod) { p.Namespace = "team-a" }))
	// Without it, pods are refused.
	if err := del(t, reg, &corev1.ServiceAccount{}, "team-a", "default"); err != nil {
		t.Fatal(err)
	}
	_, err := create(t, reg, pod("web2", func(p *corev1.Pod) { p.Namespace = "team-a" }))
	wantStatus(t, err, 403, `pods "web2" is forbidden: error looking up service account team-a/default: serviceaccount "default" not found`)
}

func TestNamespaceTermination(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	nss := storeOf(t, reg, "", "namespaces")
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		wantStatus(t, del(t, reg, &corev1.Namespace{}, "", ns), 403, `namespaces "`+ns+`" is forbidden: this namespace may not be deleted`)
	}
	ns := mustCreate(t, reg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes ||
		ns.Labels[corev1.LabelMetadataName] != "team-a" || ns.Generation != 0 {
		t.Fatalf("new namespace %+v", ns)
	}
	mustCreate(t, reg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "team-a"}})
	obj, gone, err := nss.Delete(ctx, "", "team-a", nil)
	if err != nil || gone {
		t.Fatalf("delete: gone %v err %v", gone, err)
	}
	ns = obj.(*corev1.Namespace)
	if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("deleted namespace %+v", ns)
	}
	// Deleting again changes nothing; it stays until finalized.
	rv := get(t, reg, &corev1.Namespace{}, "", "team-a").ResourceVersion
	if _, gone, err := nss.Delete(ctx, "", "team-a", nil); err != nil || gone {
		t.Fatalf("second delete: gone %v err %v", gone, err)
	}
	if got := get(t, reg, &corev1.Namespace{}, "", "team-a"); got.ResourceVersion != rv {
		t.Errorf("second delete wrote the namespace")
	}
	_, err = create(t, reg, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "team-a"}})
	wantStatus(t, err, 403, `configmaps "after" is forbidden: unable to create new content in namespace team-a because it is being terminated`)
	// Events may still be recorded.
	mustCreate(t, reg, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "team-a"},
		InvolvedObject: corev1.ObjectReference{Kind: "Namespace", Name: "team-a", Namespace: "team-a"}})
	// A plain update or status update may not change spec.finalizers, and
	// does not remove the namespace.
	ns = get(t, reg, &corev1.Namespace{}, "", "team-a")
	ns.Spec.Finalizers = nil
	ns.Labels["x"] = "y"
	ns = mustUpdate(t, reg, ns)
	if len(ns.Spec.Finalizers) != 1 {
		t.Errorf("an update changed spec.finalizers: %v", ns.Spec.Finalizers)
	}
	ns.Status.Phase = corev1.NamespaceActive
	_, err = nss.Update(ctx, ns, UpdateOptions{Subresource: "status"})
	wantStatus(t, err, 422, "status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty")
	// The namespace controller empties it, then finalizes: it is gone.
	ns = get(t, reg, &corev1.Namespace{}, "", "team-a")
	ns.Spec.Finalizers = nil
	if _, err := nss.Update(ctx, ns, UpdateOptions{Subresource: "finalize"}); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx, "", "team-a"); err == nil {
		t.Error("namespace still there after /finalize emptied its finalizers")
	}
}

func TestEventsBothAPIs(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	v1 := mustCreate(t, reg, eventV1("scale.1", func(e *eventsv1.Event) {
		e.Regarding = corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: "default"}
		e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(testNow)}
	}))
	core := get(t, reg, &corev1.Event{}, "default", "scale.1")
	if core.Message != "a note" || core.InvolvedObject.Kind != "Deployment" || core.ReportingController != "kubetab.io/test" ||
		core.Series == nil || core.Series.Count != 2 || core.ResourceVersion != v1.ResourceVersion || core.UID != v1.UID {
		t.Errorf("the events.k8s.io event as core/v1: %+v", core)
	}
	if reg.KV().Count("/registry/events/") != 1 {
		t.Errorf("%d keys under /registry/events, want 1", reg.KV().Count("/registry/events/"))
	}
	// A core/v1 event shows in the events.k8s.io list, with its deprecated fields.
	mustCreate(t, reg, &corev1.Event{ObjectMeta: objMeta("web-1.1"), Reason: "Scheduled", Message: "assigned", Count: 1,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", Namespace: "default"}, Source: corev1.EventSource{Component: "default-scheduler"}})
	sel, _ := fields.ParseSelector("regarding.kind=Pod")
	list, err := storeFor(t, reg, &eventsv1.Event{}).List(ctx, "default", ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	items := list.(*eventsv1.EventList).Items
	if len(items) != 1 || items[0].Note != "assigned" || items[0].DeprecatedSource.Component != "default-scheduler" || items[0].DeprecatedCount != 1 ||
		items[0].APIVersion != "" && items[0].APIVersion != "events.k8s.io/v1" {
		t.Errorf("events.k8s.io list: %+v", items)
	}
	if list.GetObjectKind().GroupVersionKind().Group != "events.k8s.io" {
		t.Errorf("list kind %v", list.GetObjectKind().GroupVersionKind())
	}
	sel, _ = fields.ParseSelector("source=kubetab.io/test")
	cl, _ := storeFor(t, reg, &corev1.Event{}).List(ctx, "default", ListOptions{FieldSelector: sel})
	if n := len(cl.(*corev1.EventList).Items); n != 1 {
		t.Errorf("source= falls back to reportingController: %d events", n)
	}
	// An events.k8s.io update may change the series only.
	v1.Series.Count = 3
	v1 = mustUpdate(t, reg, v1)
	if get(t, reg, &corev1.Event{}, "default", "scale.1").Series.Count != 3 {
		t.Error("series update not seen through core/v1")
	}
}

func TestFieldSelectors(t *testing.T) {
	reg := newRegistry(t)
	want := map[string][]string{
		"services":                          {"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"},
		"secrets":                           {"metadata.name", "metadata.namespace", "type"},
		"jobs.batch":                        {"metadata.name", "metadata.namespace", "status.successful"},
		"events":                            {"involvedObject.kind", "involvedObject.name", "reason", "reportingComponent", "source", "type"},
		"events.events.k8s.io":              {"regarding.kind", "regarding.name", "reason", "reportingController", "type"},
		"priorityclasses.scheduling.k8s.io": {"metadata.name"},
		"configmaps":                        {"metadata.name", "metadata.namespace"},
	}
	for gr, keys := range want {
		s := storeOf(t, reg, groupOf(gr), resourceOf(gr))
		got := s.Resource.Strategy.Fields(s.Resource.New())
		got["metadata.namespace"] = "" // the HTTP layer adds it for every resource
		for _, k := range keys {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: no field selector %s (have %v)", gr, k, got)
			}
		}
	}
	mustCreate(t, reg, &corev1.Secret{ObjectMeta: objMeta("tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}})
	mustCreate(t, reg, &corev1.Secret{ObjectMeta: objMeta("plain")})
	sel, _ := fields.ParseSelector("type=kubernetes.io/tls")
	list, _ := storeOf(t, reg, "", "secrets").List(context.Background(), "default", ListOptions{FieldSelector: sel})
	if items := list.(*corev1.SecretList).Items; len(items) != 1 || items[0].Name != "tls" {
		t.Errorf("type=kubernetes.io/tls: %v", items)
	}
	sel, _ = fields.ParseSelector("spec.clusterIP=10.96.0.1")
	list, _ = storeOf(t, reg, "", "services").List(context.Background(), "", ListOptions{FieldSelector: sel})
	if items := list.(*corev1.ServiceList).Items; len(items) != 1 || items[0].Name != "kubernetes" {
		t.Errorf("spec.clusterIP=10.96.0.1: %v", items)
	}
}

func groupOf(gr string) string {
	if i := strings.IndexByte(gr, '.'); i >= 0 {
		return gr[i+1:]
	}
	return ""
}

func resourceOf(gr string) string {
	if i := strings.IndexByte(gr, '.'); i >= 0 {
		return gr[:i]
	}
	return gr
}

// TestDiscoveryNames pins short names, categories, subresources and keys
// to upstream's.
func TestDiscoveryNames(t *testing.T) {
	reg := newRegistry(t)
	cases := []struct {
		gr, short, categories, subresources, prefix string
		namespaced                                  bool
	}{
		{"services", "svc", "all", "status", "/registry/services/specs", true},
		{"endpoints", "ep", "", "", "/registry/services/endpoints", true},
		{"configmaps", "cm", "", "", "/registry/configmaps", true},
		{"secrets", "", "", "", "/registry/secrets", true},
		{"serviceaccounts", "sa", "", "", "/registry/serviceaccounts", true},
		{"events", "ev", "", "", "/registry/events", true},
		{"events.events.k8s.io", "ev", "", "", "/registry/events", true},
		{"endpointslices.discovery.k8s.io", "", "", "", "/registry/endpointslices", true},
		{"leases.coordination.k8s.io", "", "", "", "/registry/leases", true},
		{"daemonsets.apps", "ds", "all", "status", "/registry/daemonsets", true},
		{"statefulsets.apps", "sts", "all", "status,scale", "/registry/statefulsets", true},
		{"jobs.batch", "", "all", "status", "/registry/jobs", true},
		{"cronjobs.batch", "cj", "all", "status", "/registry/cronjobs", true},
		{"priorityclasses.scheduling.k8s.io", "pc", "", "", "/registry/priorityclasses", false},
		{"namespaces", "ns", "", "status,finalize", "/registry/namespaces", false},
	}
	for _, tc := range cases {
		r := storeOf(t, reg, groupOf(tc.gr), resourceOf(tc.gr)).Resource
		if got := strings.Join(r.ShortNames, ","); got != tc.short {
			t.Errorf("%s short names %q, want %q", tc.gr, got, tc.short)
		}
		if got := strings.Join(r.Categories, ","); got != tc.categories {
			t.Errorf("%s categories %q, want %q", tc.gr, got, tc.categories)
		}
		if got := strings.Join(r.Subresources, ","); got != tc.subresources {
			t.Errorf("%s subresources %q, want %q", tc.gr, got, tc.subresources)
		}
		if r.KeyPrefix != tc.prefix || r.Namespaced != tc.namespaced {
			t.Errorf("%s key prefix %q namespaced %v", tc.gr, r.KeyPrefix, r.Namespaced)
		}
	}
}

func TestBootstrapIdempotent(t *testing.T) {
	reg := newRegistry(t)
	rev := reg.KV().Revision()
	if err := reg.Bootstrap(context.Background(), BootstrapConfig{}); err != nil {
		t.Fatal(err)
	}
	if got := reg.KV().Revision(); got != rev {
		t.Errorf("a second Bootstrap wrote %d revisions", got-rev)
	}
	svc := get(t, reg, &corev1.Service{}, "default", "kubernetes")
	if svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntValue() != 6443 || svc.Labels["component"] != "apiserver" {
		t.Errorf("kubernetes Service %+v", svc)
	}
	ep := get(t, reg, &corev1.Endpoints{}, "default", "kubernetes")
	if ep.Subsets[0].Addresses[0].IP != DefaultAPIServerIP || ep.Subsets[0].Ports[0].Port != 6443 {
		t.Errorf("kubernetes Endpoints %+v", ep.Subsets)
	}
	es := get(t, reg, &discoveryv1.EndpointSlice{}, "default", "kubernetes")
	if es.Labels[discoveryv1.LabelServiceName] != "kubernetes" || es.Endpoints[0].Addresses[0] != DefaultAPIServerIP {
		t.Errorf("kubernetes EndpointSlice %+v", es)
	}
	for _, pc := range SystemPriorityClasses() {
		if got := get(t, reg, &schedulingv1.PriorityClass{}, "", pc.Name); got.Value != pc.Value {
			t.Errorf("%s value %d", pc.Name, got.Value)
		}
	}
}

func TestMetricsAPI(t *testing.T) {
	ctx := context.Background()
	plain, _ := Default(Config{Store: newRegistry(t).KV()})
	if plain.Metrics() != nil {
		t.Fatal("metrics served without a provider")
	}
	ms := NewMetricsStore()
	reg, err := Default(Config{Store: newRegistry(t).KV(), Metrics: ms})
	if err != nil {
		t.Fatal(err)
	}
	api := reg.Metrics()
	usage := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	ms.SetNodeMetrics(metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: "node-2", Labels: map[string]string{"zone": "b"}}, Usage: usage})
	ms.SetNodeMetrics(metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"zone": "a"}}, Usage: usage})
	ms.SetPodMetrics(metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: "app", Usage: usage}}})
	ms.SetPodMetrics(metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "kube-system"}})
	nodes, err := api.ListNodes(ctx, nil, nil)
	if err != nil || len(nodes.Items) != 2 || nodes.Items[0].Name != "node-1" || nodes.Kind != "NodeMetricsList" || nodes.APIVersion != "metrics.k8s.io/v1beta1" {
		t.Fatalf("nodes %+v %v", nodes, err)
	}
	n, err := api.GetNode(ctx, "node-2")
	if err != nil || n.Kind != "NodeMetrics" || n.Usage.Cpu().String() != "250m" {
		t.Errorf("node-2 %+v %v", n, err)
	}
	_, err = api.GetNode(ctx, "node-9")
	wantStatus(t, err, 404, `nodemetrics.metrics.k8s.io "node-9" not found`)
	pods, _ := api.ListPods(ctx, "", nil, nil)
	if len(pods.Items) != 2 {
		t.Errorf("%d pod metrics in all namespaces", len(pods.Items))
	}
	ls, _ := labels.Parse("app=web")
	pods, _ = api.ListPods(ctx, "default", ls, nil)
	if len(pods.Items) != 1 || pods.Items[0].Containers[0].Usage.Memory().String() != "64Mi" {
		t.Errorf("default pods app=web: %+v", pods.Items)
	}
	_, err = api.GetPod(ctx, "default", "dns")
	wantStatus(t, err, 404, `podmetrics.metrics.k8s.io "default/dns" not found`)
	ms.DeletePodMetrics("default", "web")
	if pods, _ = api.ListPods(ctx, "default", nil, nil); len(pods.Items) != 0 {
		t.Errorf("deleted pod metrics still listed")
	}
}

// keep the imports of kinds only some tests name
var _ = []runtime.Object{&appsv1.Deployment{}, &batchv1.Job{}, &coordinationv1.Lease{}}
